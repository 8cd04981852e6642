"""``whatif`` (SPEC §10): the recorded demand, the consumption model fitted to the history,
each scenario replayed, the ``as-is`` replay held to what happened, and the bound."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from omniladder import timefmt
from omniladder.analyses.forecast.pace import WindowLength, catalog_lengths, no_lengths
from omniladder.analyses.traffic import requested_ids
from omniladder.analyses.whatif.bound import (
    BoundFailed,
    BoundProblem,
    BoundUnavailable,
    QuotaOption,
    QuotaWindow,
    solve,
)
from omniladder.analyses.whatif.demand import UNIT_WEIGHTS, Request
from omniladder.analyses.whatif.fit import fit_connection, like_connection, like_fit
from omniladder.analyses.whatif.money import Price, pricer
from omniladder.analyses.whatif.recorded import Recorded, read_recorded
from omniladder.analyses.whatif.replay import Outcome, Replay, WindowModel, next_reset
from omniladder.analyses.whatif.report import (
    AddedSeat,
    Bound,
    Consumption,
    Fidelity,
    Scenario,
    WhatifReport,
)
from omniladder.analyses.whatif.scenario import AS_IS, Added, ScenarioSpec, apply
from omniladder.engine.autoid import AutoId
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import carries_quota
from omniladder.engine.records import PairDecision
from omniladder.engine.report import rung_state
from omniladder.errors import InputError
from omniladder.inputs.ledger.read import Ledger
from omniladder.inputs.scopes import WindowScopes, window_anchor
from omniladder.models import PAID_RUNGS, QUOTA_RUNGS, Connection, Reading

PERIOD_SECONDS = {"day": 86_400.0, "week": 7 * 86_400.0, "month": 365.25 / 12 * 86_400.0}
"""A seat period's length; a month is the mean calendar month."""
MAE_TRUSTED = 5.0
"""Percent points of mean absolute error in the replayed readings past which the ``as-is``
replay says it misses its own history."""
PAID_TRUSTED = 0.10
"""The share of the recorded paid dollars past which it says so too."""
_RESET_JITTER = timedelta(minutes=10)

Anchor = Callable[[str, str], tuple[str, bool]]
"""(provider, window) → (``first-use`` or ``fixed``, whether the catalog named it)."""


def _fixed(provider: str, window: str) -> tuple[str, bool]:
    return "fixed", False


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """What the window catalog says of a window: its length and its anchor."""

    lengths: WindowLength = no_lengths
    anchor: Anchor = _fixed


def catalog_of(scopes: WindowScopes) -> Catalog:
    """The window catalog's lengths and anchors."""
    return Catalog(lengths=catalog_lengths(scopes),
                   anchor=lambda provider, window: window_anchor(scopes, provider, window))


def _replay_price(price: Price) -> Price:
    """A replayed paid request costs what the gateway recorded when it goes where it went,
    else its tokens' price."""

    def priced(connection: Connection, model: str, request: Request) -> float | None:
        if (request.cost_usd and request.connection == connection.id
                and request.model == model):
            return request.cost_usd
        return price(connection, model, request)

    return priced


# --- the windows at the span's start --------------------------------------------------------


def _resets(history: Sequence[Reading], name: str, after: datetime) -> tuple[datetime, ...]:
    """The recorded resets of a window after ``after``, a reset the readings move by a few
    minutes counted once (the latest word)."""
    found = sorted({w.reset_at for r in history for w in r.all_windows()
                    if w.name == name and w.reset_at is not None and w.reset_at > after})
    kept: list[datetime] = []
    for reset in found:
        if kept and reset - kept[-1] < _RESET_JITTER:
            kept[-1] = reset
        else:
            kept.append(reset)
    return tuple(kept)


def window_models(connection: Connection, history: Sequence[Reading], start: datetime,
                  fits: dict[str, Consumption], catalog: Catalog
                  ) -> tuple[WindowModel, ...] | None:
    """The connection's windows as the replay starts them: those of its last reading at or
    before the start (else its first after it), at their figure then (full when their reset
    has passed), with their fitted consumption; None without a reading that carries quota."""
    carrying = [r for r in history if carries_quota(r)]
    if not carrying:
        return None
    before = [r for r in carrying if r.checked_at <= start]
    base = before[-1] if before else carrying[0]
    models: list[WindowModel] = []
    for window in base.all_windows():
        length, _ = catalog.lengths(connection.provider, window)
        anchor, _ = catalog.anchor(connection.provider, window.name)
        first_use = anchor == "first-use" and length is not None
        resets = _resets(history, window.name, start)
        remaining = window.figure
        reset_at = window.reset_at
        if reset_at is not None and reset_at <= start:
            remaining = 100.0
            reset_at = None if first_use else (resets[0] if resets else (
                _after(reset_at, length, start) if length else None))
        fit = fits.get(window.name)
        models.append(WindowModel(
            name=window.name, models=window.models,
            window_seconds=None if window.window_seconds is None else int(window.window_seconds),
            length_seconds=length, first_use=first_use,
            percent_per_unit=fit.percent_per_unit if fit else 0.0,
            background_percent_per_hour=fit.background_percent_per_hour if fit else 0.0,
            remaining=100.0 if window.unlimited else remaining,
            reset_at=None if window.unlimited else reset_at,
            resets=() if first_use or window.unlimited else resets))
    return tuple(models)


def _after(reset: datetime, length: float, start: datetime) -> datetime:
    """The first reset after ``start`` of a window that reset at ``reset`` and lasts
    ``length`` seconds."""
    step = timedelta(seconds=length)
    cycles = int((start - reset) / step) + 1
    return reset + cycles * step


def fresh_models(models: tuple[WindowModel, ...], start: datetime, scale: float
                 ) -> tuple[WindowModel, ...]:
    """An added seat's windows: full at the start, its cycles starting there (a fixed one
    resets a length later, a first-use one at rest), its consumption ``scale`` times the
    copied one's."""
    out = []
    for model in models:
        length = model.length_seconds
        out.append(WindowModel(
            name=model.name, models=model.models, window_seconds=model.window_seconds,
            length_seconds=length, first_use=model.first_use,
            percent_per_unit=model.percent_per_unit * scale,
            background_percent_per_hour=model.background_percent_per_hour * scale,
            remaining=100.0,
            reset_at=None if model.first_use or not length else start + timedelta(
                seconds=length)))
    return tuple(out)


def _scaled(models: tuple[WindowModel, ...], scale: float) -> tuple[WindowModel, ...]:
    return tuple(dataclasses.replace(
        m, percent_per_unit=m.percent_per_unit * scale,
        background_percent_per_hour=m.background_percent_per_hour * scale) for m in models)


# --- the consumption model --------------------------------------------------------------------


def consumption(inputs: LoadedInputs, recorded: Recorded) -> dict[str, dict[str, Consumption]]:
    """Per connection with readings, per window, its fit (SPEC §10.2); a window no interval
    fits takes a like connection's, marked assumed."""
    fitted: dict[str, dict[str, Consumption]] = {}
    for connection in inputs.connections:
        history = inputs.readings.get(connection.id, ())
        if history:
            fitted[connection.id] = fit_connection(
                connection, history, recorded.served.get(connection.id, ()),
                served_by_model=recorded.served_by_model.get(connection.id, {}))
    by_id = {c.id: c for c in inputs.connections}
    with_fits = [by_id[i] for i, fits in fitted.items() if any(
        f.intervals for f in fits.values())]
    for connection in inputs.connections:
        history = inputs.readings.get(connection.id, ())
        names = {w.name for r in history for w in r.all_windows()}
        fits = fitted.setdefault(connection.id, {})
        missing = [name for name in names if name not in fits or not fits[name].intervals]
        if not missing:
            continue
        like = like_connection(connection, with_fits)
        for name in missing:
            source = fitted.get(like.id, {}).get(name) if like is not None else None
            if source is not None and like is not None:
                fits[name] = like_fit(source, connection=connection.id,
                                      like_weight=like.weight, weight=connection.weight)
            elif name not in fits:
                fits[name] = Consumption(connection=connection.id, window=name,
                                         percent_per_unit=0.0, background_percent_per_hour=0.0,
                                         intervals=0, error_points=None, assumed=True)
    return fitted


# --- the bound --------------------------------------------------------------------------------


def _eligible(decision: PairDecision) -> bool:
    """Whether a schedule may use the pair at all: admitted, or held out only by quota, a
    cooldown or a budget (capacity and policy, which the bound relaxes)."""
    reason = decision.reason or ""
    return decision.admitted or reason.startswith(("quota-", "budget-")) or reason == "cooldown"


def bound_problem(replay: Replay, auto_id: AutoId, demand: Sequence[Request],
                  outcome: Outcome, price: Price, bucket_seconds: float) -> BoundProblem:
    """The scenario's fleet as the bound sees it: every quota connection a schedule may use
    with its windows' consumption and cycles, the cheapest paid option of each request."""
    fleet = replay.fleet
    quota: list[QuotaOption] = []
    paid: dict[tuple[str, str], Connection] = {}
    for index, decisions in enumerate(replay.initial):
        uses_quota = False
        for pair, decision in zip(fleet.pairs[index], decisions, strict=True):
            if rung_state(auto_id, pair.rung, None, True, True) == "not-in-id":
                continue
            if not _eligible(decision):
                continue
            if pair.rung in QUOTA_RUNGS:
                uses_quota = True
            else:
                paid.setdefault((fleet.connections[index].provider, pair.model),
                                fleet.connections[index])
        if not uses_quota:
            continue
        seen = replay.observed.get(index)
        windows = () if seen is None else tuple(
            _bound_window(w.model, replay.start, replay.end) for w in seen.windows)
        quota.append(QuotaOption(connection=fleet.connections[index].id, windows=windows))
    costs: list[float | None] = []
    for request in demand:
        if not paid:
            costs.append(None)
            continue
        prices = [price(connection, model, request) for (_, model), connection in paid.items()]
        known = [p for p in prices if p is not None]
        # an unknown price counts 0: the bound may only be lower for it
        costs.append(min(known) if len(known) == len(prices) else 0.0)
    return BoundProblem(start=replay.start, end=replay.end, at=[r.at for r in demand],
                        units=[r.units for r in demand], paid_usd=costs, quota=quota,
                        may_block=outcome.blocked, bucket_seconds=bucket_seconds)


def _bound_window(model: WindowModel, start: datetime, end: datetime) -> QuotaWindow:
    if model.first_use:
        return QuotaWindow(name=model.name, percent_per_unit=model.percent_per_unit,
                           cycles=(), first_use_seconds=model.length_seconds,
                           start_capacity=model.remaining if model.reset_at else 100.0,
                           start_reset=model.reset_at)
    cycles: list[tuple[datetime, datetime, float]] = []
    begin, capacity, reset = start, model.remaining, model.reset_at
    skip = 0
    while begin < end:
        finish = reset if reset is not None and reset < end else end
        cycles.append((begin, finish, capacity))
        if finish >= end:
            break
        begin, capacity = finish, 100.0
        reset, skip = next_reset(model, begin, skip)
    return QuotaWindow(name=model.name, percent_per_unit=model.percent_per_unit,
                       cycles=tuple(cycles), first_use_seconds=None,
                       start_capacity=model.remaining, start_reset=model.reset_at)


# --- the whole ----------------------------------------------------------------------------------


def whatif(inputs: LoadedInputs, auto_id: AutoId, ledger: Ledger, *,
           scenarios: Sequence[ScenarioSpec] = (), start: datetime | None = None,
           end: datetime | None = None, all_requests: bool = False,
           catalog: Catalog = Catalog(), bound: bool = True,
           bucket_seconds: float = 3600.0) -> WhatifReport:
    """SPEC §10: ``as-is`` and each scenario replayed over [start, end] (default: the
    ledger's span), each with its bound."""
    fleet = Fleet(inputs)
    price = pricer(inputs)
    recorded = read_recorded(ledger, requested_ids(auto_id), all_requests, start, end, fleet,
                             lambda index, model, request: price(
                                 fleet.connections[index], model, request))
    begin = start if start is not None else recorded.first
    finish = end if end is not None else recorded.last
    if begin is None or finish is None or not recorded.requests:
        shown = ledger.shown
        span = (f" between {timefmt.iso(begin)} and {timefmt.iso(finish)}"
                if begin is not None and finish is not None else "")
        raise InputError(f"{shown}: no request of {auto_id.text} in the span{span}: nothing to "
                         "replay (requests that name no id count only with --all-requests)")
    if not any(inputs.readings.get(c.id) for c in inputs.connections) and any(
            pair.rung in QUOTA_RUNGS for pairs in fleet.pairs for pair in pairs):
        raise InputError("no quota history to fit: the quota file has no reading of any "
                         "connection; give --quota with the readings of the span")
    fits = consumption(inputs, recorded)
    base_models: dict[str, tuple[WindowModel, ...]] = {}
    for connection in inputs.connections:
        found = window_models(connection, inputs.readings.get(connection.id, ()), begin,
                              fits.get(connection.id, {}), catalog)
        if found is not None:
            base_models[connection.id] = found
    rows: list[Consumption] = [fit for by_window in fits.values() for fit in by_window.values()]
    specs = [ScenarioSpec(name=AS_IS), *scenarios]
    results: list[Scenario] = []
    fidelity: Fidelity | None = None
    bounds: list[tuple[float | None, Bound | None, str | None]] = []
    as_is_paid = 0.0
    for spec in specs:
        scenario_inputs, seats = apply(inputs, spec)
        models, extra = _scenario_models(inputs, scenario_inputs, seats, base_models, fits,
                                         begin)
        rows += [row for row in extra if row not in rows]
        replay = Replay(scenario_inputs, auto_id, begin, finish, models, _replay_price(price),
                        seat_share=_seat_share(scenario_inputs),
                        probes=_probes(inputs, begin, finish) if spec.name == AS_IS else ())
        outcome = replay.run(recorded.requests)
        if spec.name == AS_IS:
            fidelity = _fidelity(recorded, outcome)
            as_is_paid = outcome.paid_usd
        bounded = _bound(replay, auto_id, recorded.requests, outcome, price, bucket_seconds,
                         bound)
        bounds.append(bounded)
        results.append(_scenario(spec, outcome, bounded[0], scenario_inputs, seats,
                                 as_is_paid, begin, finish))
    assert fidelity is not None
    first = bounds[0]
    return WhatifReport(
        auto_id=auto_id.text, start=begin, end=finish, requests=len(recorded.requests),
        token_units=sum(r.units for r in recorded.requests),
        consumption=tuple(sorted(rows, key=lambda r: (r.connection, r.window))),
        fidelity=fidelity, bound_usd=first[0], bound=first[1], bound_note=first[2],
        scenarios=tuple(results), assumptions=assumptions(),
        warnings=_warnings(recorded, base_models, catalog, inputs))


def _scenario_models(inputs: LoadedInputs, scenario_inputs: LoadedInputs,
                     added_seats: Sequence[Added],
                     base: dict[str, tuple[WindowModel, ...]],
                     fits: dict[str, dict[str, Consumption]], start: datetime
                     ) -> tuple[dict[str, tuple[WindowModel, ...]], list[Consumption]]:
    """The windows of the scenario's connections: a kept one's as fitted (its consumption
    scaled when the scenario changes its weight), an added one's fresh, from the one it
    copies."""
    weights = {c.id: c.weight for c in inputs.connections}
    models: dict[str, tuple[WindowModel, ...]] = {}
    extra: list[Consumption] = []
    seats = {seat.id: seat.like for seat in added_seats}
    for connection in scenario_inputs.connections:
        like = seats.get(connection.id)
        source = base.get(like if like is not None else connection.id)
        if source is None:
            continue
        was = weights[like if like is not None else connection.id]
        scale = was / connection.weight
        if like is None:
            models[connection.id] = source if scale == 1.0 else _scaled(source, scale)
            continue
        models[connection.id] = fresh_models(source, start, scale)
        for fit in fits.get(like, {}).values():
            extra.append(like_fit(fit, connection=connection.id, like_weight=was,
                                  weight=connection.weight))
    return models, extra


def _seat_share(inputs: LoadedInputs) -> Callable[[str, WindowModel], float | None]:
    """A window cycle's share of its seat's price."""
    seats = {c.id: c for c in inputs.connections}

    def share(connection: str, model: WindowModel) -> float | None:
        seat = seats[connection]
        if seat.seat_price_usd is None or not model.length_seconds:
            return None
        period = PERIOD_SECONDS[seat.seat_period or "month"]
        return seat.seat_price_usd * min(1.0, model.length_seconds / period)

    return share


def _probes(inputs: LoadedInputs, start: datetime, end: datetime) -> list[Reading]:
    return [r for history in inputs.readings.values() for r in history
            if start < r.checked_at <= end and carries_quota(r)]


def _fidelity(recorded: Recorded, outcome: Outcome) -> Fidelity:
    errors = [abs(recorded_figure - replayed)
              for _, _, _, recorded_figure, replayed in outcome.probes]
    mae = statistics.fmean(errors) if errors else None
    paid_rec, paid_rep = recorded.paid_usd, outcome.paid_usd
    warning = None
    off = abs(paid_rep - paid_rec) / paid_rec if paid_rec > 0 else (1.0 if paid_rep > 0.005
                                                                     else 0.0)
    if (mae is not None and mae > MAE_TRUSTED) or off > PAID_TRUSTED:
        warning = (f"the as-is replay misses its own history: paid "
                   f"{timefmt.usd(paid_rep)} replayed against {timefmt.usd(paid_rec)} recorded"
                   + (f", readings {mae:.1f} points off on average" if mae is not None else "")
                   + "; compare the scenarios with each other, not with the bill")
    return Fidelity(paid_usd_recorded=paid_rec, paid_usd_replayed=paid_rep,
                    served_by_rung_recorded=dict(recorded.served_by_rung),
                    served_by_rung_replayed=dict(outcome.served_by_rung),
                    readings_mae_points=mae, readings_compared=len(errors), warning=warning)


def _bound(replay: Replay, auto_id: AutoId, demand: Sequence[Request], outcome: Outcome,
           price: Price, bucket_seconds: float, wanted: bool
           ) -> tuple[float | None, Bound | None, str | None]:
    if not wanted:
        return None, None, "the bound was not asked for (--no-bound)"
    problem = bound_problem(replay, auto_id, demand, outcome, price, bucket_seconds)
    try:
        solved = solve(problem)
    except BoundUnavailable as missing:
        return None, None, str(missing)
    except BoundFailed as failed:  # the rest of the answer stands without it
        return None, None, f"no bound: {failed}"
    return solved.usd, Bound(solver=solved.solver, bucket_seconds=solved.bucket_seconds,
                             variables=solved.variables, constraints=solved.constraints,
                             seconds=solved.seconds, relaxed=solved.relaxed), None


def _scenario(spec: ScenarioSpec, outcome: Outcome, bound_usd: float | None,
              inputs: LoadedInputs, seats: Sequence[Added], as_is_paid: float,
              start: datetime, end: datetime) -> Scenario:
    span = (end - start).total_seconds()
    by_id = {c.id: c for c in inputs.connections}
    added_seats: list[AddedSeat] = []
    saved = as_is_paid - outcome.paid_usd
    for seat in seats:
        connection = by_id[seat.id]
        period = connection.seat_period or "month"
        per_period = (saved / max(1, len(seats))) * PERIOD_SECONDS[period] / span if span > 0 \
            else 0.0
        added_seats.append(AddedSeat(connection=connection.id, like=seat.like,
                                     seat_price_usd=connection.seat_price_usd,
                                     seat_period=period, break_even_usd=per_period))
    paid = outcome.paid_usd
    return Scenario(
        name=spec.name, changes=spec.changes(), paid_usd=paid,
        paid_by_rung={rung: outcome.paid_by_rung.get(rung, 0.0) for rung in PAID_RUNGS},
        served_by_rung=dict(outcome.served_by_rung), blocked=outcome.blocked,
        unpriced=outcome.unpriced, expired_unused=tuple(outcome.expired),
        paid_hours=outcome.paid_seconds / 3600.0, bound_usd=bound_usd,
        regret_usd=None if bound_usd is None else paid - bound_usd,
        added=tuple(added_seats), paid_over_time=tuple(outcome.paid_over_time))


def assumptions() -> tuple[str, ...]:
    weights = ", ".join(f"{key} {value:g}" for key, value in UNIT_WEIGHTS.items())
    return (
        "a request keeps its tokens whichever model serves it",
        f"a token unit weighs tokens as {weights} (input tokens 1)",
        "a window's drop is its requests' units times the fitted percent per unit, plus its "
        "background burn per hour while its cycle runs",
        "a replayed request goes to the first pool entry's first connection; a request with "
        "no pool entry is blocked",
        "a paid request costs what the gateway recorded when it goes where it went, else its "
        "tokens at the model catalog's (or the price database's) prices",
        "the bound knows the future and ignores exit cutoffs, reserves, cooldowns and "
        "budgets: no schedule pays less",
    )


def _warnings(recorded: Recorded, models: dict[str, tuple[WindowModel, ...]],
              catalog: Catalog, inputs: LoadedInputs) -> tuple[str, ...]:
    out: list[str] = []
    if recorded.unknown:
        out.append(f"{recorded.unknown} recorded requests were served by a pair the "
                   "connections file does not have; the fidelity counts them under no rung")
    if recorded.failed_everywhere:
        out.append(f"{recorded.failed_everywhere} requests failed everywhere; the replay "
                   "serves them like the others")
    by_id = {c.id: c for c in inputs.connections}
    unnamed = sorted({f"{by_id[cid].provider}/{m.name}" for cid, ms in models.items()
                      for m in ms if not catalog.anchor(by_id[cid].provider, m.name)[1]})
    if unnamed:
        out.append("the window catalog does not say when these windows' cycles start, so "
                   "they keep their recorded resets (fixed): " + ", ".join(unnamed))
    return tuple(out)

