"""`why`: the step-by-step trace of one connection, read from the plans of one or more ids.

Nothing here decides anything. The trace reads billing, gates, tiers, rungs, quota verdicts
with their R7 replay, and budget positions from ``Plan`` objects made by ``make_plan``. The
earliest comeback of a connection that is out is found the same way: by planning at the
instants where something could change (a cooldown end, a window reset, a reading going
stale, a budget period starting), first with no new reading and then with a fresh one.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from omniladder import timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.billing import BillingInfo
from omniladder.engine.budgets import BudgetPosition, next_period_start
from omniladder.engine.changes import change_instants
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import focus, make_plan, unknown_connection
from omniladder.engine.pool import rate_text
from omniladder.engine.quota import (
    Cooldown,
    ReplayStep,
    Verdict,
    readings_until,
    window_views,
)
from omniladder.engine.readings import (
    age_seconds,
    held_to,
    is_fresh,
    low_windows,
    stale_after,
)
from omniladder.engine.records import ConnectionFacts, OrderPlace, PairDecision, Plan
from omniladder.engine.tiers import TierInfo
from omniladder.errors import UsageError
from omniladder.models import (
    DEFAULT_SEAT_PERIOD,
    Connection,
    LadderSettings,
    Reading,
    Rung,
    Window,
)

if TYPE_CHECKING:
    from omniladder.analyses.forecast.pace import ConnectionOutlook, WindowLength

R1_STEPS: dict[int, str] = {
    1: "R1.1 auth_type none: keyless",
    2: "R1.2 catalog entry for the provider and auth type",
    3: "R1.3 provider-wide catalog entry",
    4: "R1.4 no catalog entry: uncurated, treated as metered",
}

COMEBACK_REASONS: frozenset[str] = frozenset({
    "cooldown", "quota-missing", "quota-unknown", "quota-stale", "quota-reset-since-reading",
    "quota-exhausted", "quota-below-cutoff", "quota-below-reentry", "quota-below-reserve",
    "budget-spent",
})
"""Reasons a connection can come back from by time passing or a fresh reading."""

_EPSILON = timedelta(microseconds=1)


# --- the trace -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WindowMark:
    """One window of the reading, as R6 sees it for one model at now."""

    window: Window
    applies: bool
    current: bool
    limiting: bool

    @property
    def mark(self) -> str:
        if not self.applies:
            return "not applicable"
        return "current" if self.current else "outdated"


@dataclass(frozen=True, kw_only=True)
class ModelTrace:
    model: str
    tier: TierInfo
    rung: Rung
    verdict: Verdict | None
    windows: tuple[WindowMark, ...]
    budget: BudgetPosition | None
    """The budget position of the rung; None on a quota rung (R8 gates only paid rungs)."""

    @property
    def replay(self) -> Sequence[ReplayStep]:
        return self.verdict.replay if self.verdict is not None else ()


@dataclass(frozen=True, kw_only=True)
class PoolSeat:
    model: str
    position: int
    rung: Rung
    unverified: bool
    order: str | None = None
    """R15 ``expiring-first``: the connection's place in the entry's allowlist and why
    (``seat_order``); None under ``declared``."""


@dataclass(frozen=True, kw_only=True)
class Left:
    model: str
    rung: Rung
    reason: str
    detail: str
    fix: str | None = None
    """The remedy the plan's exclusion carries (omniladder.engine.remedies)."""


ThresholdKind = Literal["exit cutoff", "reserve", "re-entry floor"]
"""What the threshold a verdict held a figure to is (R7, R16): the ladder's exit cutoff, the
connection's reserve where it raised the cutoff, or the re-entry floor above either."""


def threshold_kind(floor_applied: bool, raised: bool) -> ThresholdKind:
    """The kind of threshold a verdict applied: the re-entry floor while the pair is out
    (R7), else the exit cutoff, which is the connection's reserve when ``raised`` (R16,
    ``readings.held_to`` gave the connection thresholds of its own)."""
    if floor_applied:
        return "re-entry floor"
    return "reserve" if raised else "exit cutoff"


@dataclass(frozen=True, kw_only=True)
class Route:
    """One way back: the instant, whether a fresh reading is needed, and what happens first."""

    at: datetime
    exclusive: bool
    """True when it is back only just after ``at`` (a reading goes stale after its max age)."""
    needs_reading: bool
    unverified: bool
    """It comes back unverified (quota unknown), admitted by auto/thrifty's fail-open rule."""
    threshold: float | None
    """The figure a fresh reading must exceed (R7), when one is needed."""
    threshold_kind: ThresholdKind | None
    steps: tuple[str, ...]
    """What must happen first, in order."""


@dataclass(frozen=True, kw_only=True)
class Comeback:
    """The earliest instant a left-out (connection, model) could be back, and what first."""

    model: str
    reason: str
    without_reading: Route | None
    """Back by time alone (a cooldown end, a reset, a stale reading, a new budget period)."""
    with_reading: Route | None
    """Back on a fresh reading (one showing every window full is what is tried)."""

    @property
    def earliest(self) -> Route | None:
        routes = [r for r in (self.without_reading, self.with_reading) if r is not None]
        return min(routes, key=lambda r: (r.at, r.exclusive, r.needs_reading), default=None)


@dataclass(frozen=True, kw_only=True)
class IdVerdict:
    auto_id: str
    seats: tuple[PoolSeat, ...]
    left: tuple[Left, ...]
    comebacks: tuple[Comeback, ...]

    @property
    def in_pool(self) -> bool:
        return bool(self.seats)


@dataclass(frozen=True, kw_only=True)
class Trace:
    connection_id: str
    now: datetime
    now_source: str
    facts: ConnectionFacts
    reading: Reading | None
    reading_age_seconds: float | None
    reading_stale: bool | None
    max_reading_age_seconds: float
    exit_cutoff_percent: float
    reentry_floor_percent: float
    """The ladder's thresholds (the settings)."""
    models: tuple[ModelTrace, ...]
    verdicts: tuple[IdVerdict, ...]
    files: dict[str, str]
    pace: ConnectionOutlook | None = None
    """The pace of each window of the latest reading (``forecast``'s), when asked for."""
    seat: Seat | None = None
    """The connection's own reserve and seat price, when it sets either."""

    @property
    def billing(self) -> BillingInfo:
        return self.facts.billing

    @property
    def cooldown(self) -> Cooldown | None:
        return self.facts.cooldown


@dataclass(frozen=True, kw_only=True)
class Seat:
    """A connection's own reserve (R16) and seat price (SPEC §9), as ``why`` shows them."""

    reserve_percent: float | None
    """The share of each window kept for use outside the gateway, as configured."""
    exit_cutoff_percent: float
    """The exit cutoff the connection is held to: the reserve when above the ladder's."""
    reentry_floor_percent: float
    """Its re-entry floor: the ladder's hysteresis gap above that cutoff."""
    raised: bool
    """Whether the reserve raised the thresholds (it is above the ladder's exit cutoff)."""
    price_usd: float | None
    period: str | None
    """The period of the price: the one given, a month for a price without one."""


def seat_of(connection: Connection, ladder: LadderSettings) -> Seat | None:
    """The seat facts ``why`` shows; None for a connection that sets none of them."""
    if (connection.reserve_percent is None and connection.seat_price_usd is None
            and connection.seat_period is None):
        return None
    held = held_to(ladder, connection.reserve_percent)
    period = connection.seat_period
    if period is None and connection.seat_price_usd is not None:
        period = DEFAULT_SEAT_PERIOD  # SPEC §9: a price without a period is a month's
    return Seat(reserve_percent=connection.reserve_percent,
                exit_cutoff_percent=held.exit_cutoff_percent,
                reentry_floor_percent=held.reentry_floor, raised=held is not ladder,
                price_usd=connection.seat_price_usd, period=period)


def find_connection(plan: Plan, connection_id: str) -> ConnectionFacts:
    """The connection's facts, or a UsageError suggesting the closest known ids."""
    for facts in plan.facts:
        if facts.connection.id == connection_id:
            return facts
    raise unknown_connection(connection_id, [f.connection.id for f in plan.facts])


def explain(inputs: LoadedInputs, plans: Sequence[Plan], connection_id: str,
            model: str | None = None, lengths: WindowLength | None = None,
            fleet: Fleet | None = None) -> Trace:
    """The trace of one connection across the plans of one or more auto ids (same now).

    ``inputs`` are the ones the plans were made from (``fleet``, when given, their fleet
    model); each left-out (connection, model) of a quota, cooldown or budget reason also
    gets its earliest comeback. With ``lengths`` (the window lengths), the trace carries the
    pace of the latest reading's windows.
    """
    if not plans:
        raise ValueError("explain needs at least one plan")
    first = plans[0]
    facts = find_connection(first, connection_id)
    if model is not None and model not in facts.models:
        close = difflib.get_close_matches(model, facts.models, n=3, cutoff=0.5)
        serves = ", ".join(facts.models) or "no model"
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"connection {connection_id!r} does not serve model {model!r}{hint} "
                         f"(it serves {serves})", field="--model")
    wanted = (model,) if model is not None else facts.models
    decisions = {d.model: d for d in first.decisions if d.connection_id == connection_id}

    ladder = inputs.settings.ladder
    connection = facts.connection
    models: list[ModelTrace] = []
    reading: Reading | None = None
    for name in wanted:
        decision = decisions.get(name)
        if decision is None:  # pragma: no cover - every served model has a decision
            continue
        verdict = decision.verdict
        if verdict is not None and verdict.reading is not None:
            reading = verdict.reading
        marks: tuple[WindowMark, ...] = ()
        if verdict is not None and verdict.reading is not None:
            marks = tuple(
                WindowMark(window=view.window, applies=view.applies, current=view.current,
                           limiting=verdict.window is not None and view.window == verdict.window)
                for view in window_views(verdict.reading, name, first.now))
        budget = first.budgets.get(decision.rung)
        models.append(ModelTrace(model=name, tier=decision.tier, rung=decision.rung,
                                 verdict=verdict, windows=marks, budget=budget))

    age: float | None = None
    stale: bool | None = None
    max_age = ladder.max_reading_age_seconds
    if reading is not None:
        age = age_seconds(reading.checked_at, first.now)
        stale = not is_fresh(reading.checked_at, first.now, max_age)

    # Comeback probes re-plan again and again: plan the connection alone, which decides its
    # pairs exactly as the whole fleet does.
    narrowed = focus(inputs, connection_id, first.now, fleet)
    verdicts = tuple(_id_verdict(p, connection_id, wanted, narrowed) for p in plans)
    pace: ConnectionOutlook | None = None
    if lengths is not None:
        from omniladder.analyses.forecast.pace import outlook

        pace = outlook(connection_id, connection.provider,
                       inputs.readings.get(connection_id, ()), first.now, inputs, lengths,
                       connection.reserve_percent)
    return Trace(connection_id=connection_id, now=first.now, now_source=first.now_source,
                 facts=facts, reading=reading, reading_age_seconds=age, reading_stale=stale,
                 max_reading_age_seconds=max_age, exit_cutoff_percent=ladder.exit_cutoff_percent,
                 reentry_floor_percent=ladder.reentry_floor, models=tuple(models),
                 verdicts=verdicts, files=dict(first.files), pace=pace,
                 seat=seat_of(connection, ladder))


_PLACES = ("first", "second", "third")


def seat_order(places: Sequence[OrderPlace], connection_id: str) -> str | None:
    """R15: ``first in its allowlist: 5h resets in 1h57m with 40% left: 20.5%/h; before
    claude-max-extra, 12.0%/h`` — a connection's place in a pool entry, its reason, and
    its neighbours'; None when the entry carries no order (``declared``)."""
    at = next((i for i, place in enumerate(places) if place.connection_id == connection_id),
              None)
    if at is None:
        return None
    nth = _PLACES[at] if at < len(_PLACES) else f"number {at + 1}"
    text = f"{nth} in its allowlist of {len(places)}: {places[at].reason}"
    if at > 0:
        text += f"; after {_neighbour(places[at - 1])}"
    if at + 1 < len(places):
        text += f"; before {_neighbour(places[at + 1])}"
    return text


def _neighbour(place: OrderPlace) -> str:
    if place.urgency is None:
        return place.connection_id
    return f"{place.connection_id}, {rate_text(place.urgency)}"


def _id_verdict(plan: Plan, connection_id: str, models: Sequence[str],
                inputs: LoadedInputs) -> IdVerdict:
    seats: list[PoolSeat] = []
    for entry in plan.pool:
        if connection_id in entry.allowed_connection_ids and entry.model in models:
            seats.append(PoolSeat(model=entry.model, position=entry.position, rung=entry.rung,
                                  unverified=connection_id in entry.unverified_connection_ids,
                                  order=seat_order(entry.order, connection_id)))
    left: list[Left] = []
    comebacks: list[Comeback] = []
    fixes = {x.model: x.fix for x in plan.excluded if x.connection_id == connection_id}
    for decision in plan.decisions:
        if (decision.connection_id != connection_id or decision.admitted
                or decision.model not in models):
            continue
        assert decision.reason is not None
        fix = fixes[decision.model] if decision.model in fixes else fixes.get(None)
        left.append(Left(model=decision.model, rung=decision.rung, reason=decision.reason,
                         detail=decision.detail, fix=fix))
        if decision.reason in COMEBACK_REASONS:
            comebacks.append(earliest_comeback(inputs, plan, decision))
    return IdVerdict(auto_id=plan.auto_id.text, seats=tuple(seats), left=tuple(left),
                     comebacks=tuple(comebacks))


# --- earliest comeback ---------------------------------------------------------------------


def _frozen_at(inputs: LoadedInputs, now: datetime) -> LoadedInputs:
    """The inputs as they stand at now: no reading or spend event from after it."""
    readings = {cid: tuple(readings_until(history, now))
                for cid, history in inputs.readings.items()}
    spend = (tuple(e for e in inputs.spend if e.at <= now)
             if inputs.spend is not None else None)
    return inputs._replace(readings=readings, spend=spend)


def _with_reading(inputs: LoadedInputs, reading: Reading) -> LoadedInputs:
    readings = dict(inputs.readings)
    readings[reading.connection] = (*readings.get(reading.connection, ()), reading)
    return inputs._replace(readings=readings)


def _decision_at(inputs: LoadedInputs, auto_id: AutoId, at: datetime, connection_id: str,
                 model: str) -> PairDecision:
    plan = make_plan(inputs, auto_id, at, "flag")
    for decision in plan.decisions:
        if decision.connection_id == connection_id and decision.model == model:
            return decision
    raise AssertionError("a served model always has a decision")  # pragma: no cover


def _probe_instants(inputs: LoadedInputs, plan: Plan, connection: Connection,
                    ladder: LadderSettings) -> list[tuple[datetime, bool]]:
    """Every instant after now where the plan of this connection could change by time alone,
    as (instant, exclusive): the connection's ``change_instants`` from its readings up to now
    and its cooldown (a reset, a reading going stale, the cooldown's end), and the start of
    the next budget period."""
    now = plan.now
    history = readings_until(inputs.readings.get(connection.id, ()), now)
    found = change_instants(history, connection, ladder, now)
    found.add((next_period_start(now, inputs.settings.budgets.period), False))
    return sorted(found)


def earliest_comeback(inputs: LoadedInputs, plan: Plan, decision: PairDecision) -> Comeback:
    """Plan forward to find when a left-out pair could be back, and what must happen first.

    ``inputs`` may be narrowed to the connection (``plan.focus``). First with no new reading,
    at each instant where something changes by time alone; then with a fresh reading (every
    window at 100%) at now and at each of those instants. The earlier of the two wins; the
    plan decides each probe, nothing is recomputed here.
    """
    frozen = _frozen_at(inputs, plan.now)
    cid, model = decision.connection_id, decision.model
    ladder = inputs.settings.ladder
    connection = find_connection(plan, cid).connection
    held = held_to(ladder, connection.reserve_percent)  # R16: the connection's thresholds
    raised = held is not ladder
    instants = _probe_instants(frozen, plan, connection, held)

    without: tuple[datetime, bool, PairDecision] | None = None
    for at, exclusive in instants:
        probe = _decision_at(frozen, plan.auto_id, at + _EPSILON if exclusive else at, cid,
                             model)
        if probe.admitted:
            without = (at, exclusive, probe)
            break

    fresh: tuple[datetime, bool, PairDecision] | None = None
    for at, exclusive in [(plan.now, False), *instants]:
        when = at + _EPSILON if exclusive else at
        probed = _with_reading(frozen, _fresh_reading(frozen, cid, when))
        probe = _decision_at(probed, plan.auto_id, when, cid, model)
        if probe.admitted:
            fresh = (at, exclusive, probe)
            break

    without_route: Route | None = None
    if without is not None:
        at, exclusive, probe = without
        without_route = Route(at=at, exclusive=exclusive, needs_reading=False,
                              unverified=probe.unverified, threshold=None, threshold_kind=None,
                              steps=_steps(plan, decision, probe, at, fresh_reading=False,
                                           raised=raised))
    fresh_route: Route | None = None
    if fresh is not None:
        at, exclusive, probe = fresh
        verdict = probe.verdict
        threshold = verdict.threshold if verdict is not None else None
        kind: ThresholdKind | None = None
        if verdict is not None and threshold is not None:
            kind = threshold_kind(verdict.floor_applied, raised)
        fresh_route = Route(at=at, exclusive=exclusive, needs_reading=True,
                            unverified=probe.unverified, threshold=threshold, threshold_kind=kind,
                            steps=_steps(plan, decision, probe, at, fresh_reading=True,
                                         raised=raised))
    return Comeback(model=model, reason=decision.reason or "", without_reading=without_route,
                    with_reading=fresh_route)


def _fresh_reading(inputs: LoadedInputs, connection_id: str, at: datetime) -> Reading:
    """A hypothetical reading at ``at`` showing every window full (no reset known)."""
    history = inputs.readings.get(connection_id, ())
    names = [w.name for w in history[-1].all_windows()] if history else []
    windows = tuple(Window(name=name, remaining_percent=100.0) for name in names or ["quota"])
    return Reading(connection=connection_id, checked_at=at, windows=windows)


def _steps(plan: Plan, before: PairDecision, after: PairDecision, at: datetime,
           *, fresh_reading: bool, raised: bool) -> tuple[str, ...]:
    """What changes between now and the comeback, in order, as an operator reads it
    (``raised``: the connection's reserve is its exit cutoff, R16)."""
    now = plan.now
    max_age = plan.settings["max_reading_age_seconds"]
    steps: list[str] = []
    facts = find_connection(plan, before.connection_id)
    cool = facts.cooldown
    if cool is not None and cool.cooling and cool.end <= at:
        if fresh_reading and cool.clamped and cool.until <= at:
            steps.append(f"the cooldown runs to its configured end "
                         f"{timefmt.short(cool.until, now)}: a fresh reading with no exhausted "
                         "window leaves no reset to clamp it to (R9)")
        else:
            clamp = (f" (clamped from {timefmt.short(cool.until, now)} to its own reset)"
                     if cool.clamped else "")
            steps.append(f"the cooldown ends at {timefmt.short(cool.end, now)}{clamp}")
    verdict = before.verdict
    reading = verdict.reading if verdict is not None else None
    if reading is not None:
        if (reading.status == "exhausted" and reading.reset_at is not None
                and now < reading.reset_at <= at):
            steps.append(f"the exhausted reading's reset passes at "
                         f"{timefmt.short(reading.reset_at, now)}")
        threshold = verdict.threshold if verdict is not None else None
        if threshold is not None:
            for window in low_windows(reading, threshold, model=before.model, after=now,
                                      until=at):
                assert window.reset_at is not None
                steps.append(f"the {window.name} window resets at "
                             f"{timefmt.short(window.reset_at, now)}")
    if before.reason == "budget-spent" and not after.reason:
        steps.append(f"the {before.rung} budget period starts again at "
                     f"{timefmt.short(at, now)}")
    probe = after.verdict
    if fresh_reading:
        assert probe is not None
        kind = threshold_kind(probe.floor_applied, raised)
        when = "now" if at <= now else f"at or after {timefmt.short(at, now)}"
        steps.append(f"a fresh reading {when} whose figure is above the {kind} "
                     f"{timefmt.pct(probe.threshold or 0)}")
    elif probe is not None and after.unverified:
        if probe.reason == "quota-stale" and reading is not None:
            stale_at = stale_after(reading.checked_at, max_age)
            if stale_at is not None and stale_at >= at:
                steps.append(f"its reading of {timefmt.short(reading.checked_at, now)} goes "
                             f"stale just after {timefmt.short(stale_at, now)} (max age "
                             f"{timefmt.duration(max_age)})")
            steps.append(f"{plan.auto_id.text} then admits it unverified: quota unknown, "
                         "reading stale")
        else:
            steps.append(f"{plan.auto_id.text} then admits it unverified ({probe.reason}: "
                         f"{probe.detail})")
    if not steps:
        steps.append(f"admitted at {timefmt.short(at, now)}")
    return tuple(steps)
