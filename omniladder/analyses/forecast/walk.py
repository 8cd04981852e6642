"""The ladder's forecast: the stepping engine walked over the recorded and projected
readings at the middle burn, the high and low burns for the band, and the answers (first
paid, pool empty, escalations, budgets) with their p10 / p50 / p90 (docs/forecast.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import NamedTuple

from omniladder import timefmt
from omniladder.analyses.forecast.pace import (
    SPEND_BASIS_HOURS,
    ConnectionOutlook,
    WindowLength,
    no_lengths,
    outlook,
)
from omniladder.analyses.forecast.projection import (
    cutoff_crossings,
    projected_readings,
    recorded_instants,
    wanted_parts,
    with_projection,
)
from omniladder.analyses.simulate import Point, Transition, step_instants, walk
from omniladder.engine import readings as rules
from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import (
    BudgetPosition,
    next_period_start,
    period_start,
    total_usd,
)
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import in_force, readings_until
from omniladder.engine.report import empty_fleet_warning
from omniladder.engine.stepping import Stepper
from omniladder.models import (
    PAID_RUNGS,
    RUNGS,
    LadderSettings,
    Reading,
    Rung,
)

# --- the forecast ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Unprojected:
    """A window whose burn cannot be projected, on a connection whose decisions it could
    move: every answer is unknown from now (docs/forecast.md#unknown)."""

    connection_id: str
    window: str | None
    """None for a reading with no window (a status alone)."""
    reason: str


FIXED_REASONS = frozenset({
    "inactive", "terminal-status", "billing-not-subscription", "billing-uncurated",
    "keyless-not-subscription", "not-in-category", "no-models", "budget-disabled"})
"""Exclusions no reading changes over the horizon: a connection whose every pair of the
auto id is excluded for one of them moves no answer, whatever its windows do."""


def _can_move(stepper: Stepper, index: int, now: datetime, projected: bool,
              budgets: dict[str, BudgetPosition]) -> bool:
    """Whether a connection's decisions could move the auto id's answers: some pair of it
    lands on a rung of the id, and is not excluded for a reason no reading changes (nor,
    for a projected connection, whose readings carry R2a's observation over the horizon,
    for its overage)."""
    fixed = FIXED_REASONS | {"overage-not-hard-stop"} if projected else FIXED_REASONS
    tier_subscription = stepper.auto_id.tier == "subscription"
    decisions = stepper.decide(index, now, budgets)
    for pair, decision in zip(stepper.pairs[index], decisions, strict=True):
        if not stepper.in_category[pair.candidate]:
            continue
        if tier_subscription and pair.rung != "subscription":
            continue
        if decision.admitted or decision.reason not in fixed:
            return True
    return False


def unprojected_windows(outlooks: Sequence[ConnectionOutlook], stepper: Stepper,
                        now: datetime) -> tuple[Unprojected, ...]:
    """The windows whose burn cannot be projected (no burn rate, a stale reading, a reading
    whose status is unknown) on connections that could move the answers."""
    index_of = {c.id: i for i, c in enumerate(stepper.fleet.connections)}
    budgets = stepper.budgets(now)
    found: list[Unprojected] = []
    for item in outlooks:
        if item.projected:
            missing = [Unprojected(connection_id=item.connection_id, window=p.window,
                                   reason=p.note)
                       for p in item.paces
                       if p.burn_percent_per_hour is None and p.lasts_to_reset is None]
        elif item.unknown:
            missing = [Unprojected(connection_id=item.connection_id, window=p.window,
                                   reason=item.note)
                       for p in item.paces] or [
                Unprojected(connection_id=item.connection_id, window=None, reason=item.note)]
        else:
            continue
        index = index_of.get(item.connection_id)
        if missing and index is not None and _can_move(stepper, index, now, item.projected,
                                                       budgets):
            found += missing
    return tuple(found)


class Band(NamedTuple):
    """An answer's instant at p10 (the earliest of the low, middle and high burns), p50
    (the middle burn's) and p90 (the latest); None: not within the horizon."""

    p10: datetime | None
    p50: datetime | None
    p90: datetime | None


@dataclass(frozen=True, kw_only=True)
class Escalation:
    """One step up the ladder and when the head comes back down (within the horizon)."""

    at: datetime
    previous: Rung | None
    head: Rung | None
    cause: str
    back_at: datetime | None
    """The first later step whose head is back at ``previous`` or below (a reset or a regain
    of a connection there); None when not within the horizon."""
    back_cause: str | None

    @property
    def paid(self) -> bool:
        return self.head in PAID_RUNGS


@dataclass(frozen=True, kw_only=True)
class BudgetOutlook:
    """A paid rung's R8 budget against the estimate: what is left of it at now, and the
    instant the estimate's dollars per hour, over the time the rung heads the pool, reach
    it. Report only: the forecast does not project spend, so its plan keeps the rung open
    after that instant (docs/forecast.md)."""

    budget_usd: float
    period: str
    left_usd: float
    """Left in the budget period that contains now (0 when R8 already closes the rung)."""
    reached_at: datetime | None
    """None without a cost per hour, or when the estimate does not reach it in the
    horizon."""


@dataclass(frozen=True, kw_only=True)
class PaidEstimate:
    rung: Rung
    hours: float
    usd_per_hour: float | None
    usd: float | None
    basis: str
    budget: BudgetOutlook | None = None
    """None without a budget, or one of 0 or less (R8 disables the rung outright)."""


@dataclass(frozen=True, kw_only=True)
class Forecast:
    auto_id: AutoId
    now: datetime
    now_source: str
    horizon: timedelta
    step: timedelta
    outlooks: tuple[ConnectionOutlook, ...]
    points: tuple[Point, ...]
    """The listed points: now, every ``step`` after it, and the horizon's end."""
    timeline: tuple[Point, ...]
    """Every point the plan was decided at: the listed ones and each instant a decision can
    change (a crossing, a reset, a cooldown's end, a budget step). The head is the same
    between two of them, so the answers read off it are exact, whatever the step."""
    transitions: tuple[Transition, ...]
    escalations: tuple[Escalation, ...]
    first_paid_at: datetime | None
    pool_empty_at: datetime | None
    hours_by_head: dict[str, float]
    """Hours each rung heads the pool over the horizon (``empty``: no pool)."""
    paid: tuple[PaidEstimate, ...] | None
    """None without a spend ledger: hours only."""
    projected_readings: int
    warnings: tuple[str, ...]
    unprojected: tuple[Unprojected, ...] = ()
    """Windows that cannot be projected; when any, ``first_paid_at`` and ``pool_empty_at``
    are None and ``answers_known`` is False."""
    projected_pool_empty_at: datetime | None = None
    """What the projection shows of the pool's emptying, holding the unprojected windows at
    their figures (the same as ``pool_empty_at`` when the answers are known)."""
    first_paid_band: Band | None = None
    """p10 / p50 / p90 of ``first_paid_at`` over the low, middle and high burns; None when
    the answers are unknown."""
    pool_empty_band: Band | None = None
    paid_hours_band: tuple[float, float, float] | None = None
    """Paid hours at the p10 (the most), p50 and p90 (the fewest) edges."""

    @property
    def end(self) -> datetime:
        return self.points[-1].at

    @property
    def answers_known(self) -> bool:
        return not self.unprojected


def _rank(rung: str | None) -> int:
    return RUNGS.index(rung) if rung in RUNGS else len(RUNGS)


def listed_instants(now: datetime, end: datetime, step: timedelta) -> list[datetime]:
    """Now, every ``step`` after it before ``end``, and ``end`` itself (the last interval is
    shorter when the step does not divide the horizon)."""
    instants = step_instants(now, end, step)
    if instants[-1] < end:
        instants.append(end)
    return instants


class _Heads(NamedTuple):
    """Which rung heads the pool at each instant a walk decided (None: no pool): all the
    band's answers read of a walk."""

    heads: tuple[tuple[datetime, Rung | None], ...]

    @property
    def first_paid_at(self) -> datetime | None:
        return next((at for at, head in self.heads if head in PAID_RUNGS), None)

    @property
    def pool_empty_at(self) -> datetime | None:
        return next((at for at, head in self.heads if head is None), None)

    def hours(self) -> dict[str, float]:
        """Hours each head (``empty``: no pool) holds the pool over the horizon."""
        hours: dict[str, float] = {}
        for (at, head), (later, _) in pairwise(self.heads):
            key = head or "empty"
            hours[key] = hours.get(key, 0.0) + (later - at).total_seconds() / 3600.0
        if len(self.heads) == 1:
            hours[self.heads[0][1] or "empty"] = 0.0
        return hours


Log = dict[int, list[tuple[datetime, tuple[int, ...]]]]
"""Per connection index, each decision a walk made of it: (instant, admitted pairs per rung,
``Stepper.seats``)."""


class _Walk(NamedTuple):
    """One projection of the fleet stepped over the horizon (one burn of the band)."""

    timeline: tuple[Point, ...]
    transitions: tuple[Transition, ...]
    stepper: Stepper
    projected_readings: int
    recorded: set[datetime]
    """The instants the recorded inputs alone decide at (``recorded_instants``)."""
    wanted: dict[str, set[datetime]]
    fixed: dict[str, set[datetime]]
    """The part of ``wanted`` that does not depend on the burn."""
    added: dict[str, list[Reading]]
    log: Log | None
    """Each connection's decisions, when the walk was asked to keep them."""

    @property
    def heads(self) -> _Heads:
        return _Heads(tuple((point.at, point.head) for point in self.timeline))


def _walk_projection(inputs: LoadedInputs, auto_id: AutoId, now: datetime, end: datetime,
                     listed: Sequence[datetime], outlooks: Sequence[ConnectionOutlook],
                     dense: bool, keep_log: bool = False) -> _Walk:
    """Project the outlooks' windows at their rates and decide the plan at every instant a
    decision can change (and at the listed ones)."""
    recorded = recorded_instants(
        inputs, {o.connection_id for o in outlooks if not o.projected}
        | {c.id for c in inputs.connections if not inputs.readings.get(c.id)}, now, end)
    parts = wanted_parts(inputs, outlooks, now, end)
    wanted = {cid: fixed | crossed for cid, (fixed, crossed) in parts.items()}
    events = set(recorded)
    for found in wanted.values():
        events |= found
    instants = sorted(events.union(listed))
    projected, added = with_projection(inputs, outlooks, instants, dense, kept_fresh=True,
                                       wanted=wanted)
    fresh = () if dense else [o.connection_id for o in outlooks if o.projected]
    stepper = Stepper(projected, auto_id, instants, kept_fresh=fresh, seated_at=listed)
    log: Log | None = {} if keep_log else None
    stepper.log = log
    timeline, transitions = walk(stepper)
    return _Walk(timeline=timeline, transitions=transitions, stepper=stepper,
                 projected_readings=sum(len(r) for r in added.values()),
                 recorded=recorded, wanted=wanted,
                 fixed={cid: fixed for cid, (fixed, _) in parts.items()}, added=added, log=log)


def _sides(reading: Reading, cutoff: float, floor: float) -> tuple[object, ...]:
    """What a decision reads of a projected reading, its figures only as the side of the
    exit cutoff and of the re-entry floor each falls on (R6, R6.4, R7 and R9 compare a
    figure with nothing else); ``cutoff`` and ``floor`` are ``readings.threshold_of`` in
    play and out."""
    # An inline copy of ``readings.below`` in play and out: this runs for every window of
    # every projected reading of both edge burns (through the function, the forecast of
    # 1,000 burning connections retired 0.8% more instructions); tests/test_readings.py
    # holds the two together.
    return (reading.status, reading.reset_at, reading.overage, reading.windows is None,
            tuple((w.name, w.models, w.reset_at, w.unlimited, w.window_seconds,
                   w.figure <= cutoff, w.figure <= floor) for w in reading.all_windows()))


def _moved_log(log: list[tuple[datetime, tuple[int, ...]]], middle: Sequence[Reading],
               edge: Sequence[Reading], fixed: Collection[datetime], now: datetime,
               ladder: LadderSettings
               ) -> tuple[list[tuple[datetime, tuple[int, ...]]], datetime | None]:
    """A connection's decisions at another burn, as far as the middle walk's (``log``) give
    them, and the instant from which it must be decided again (None: never; now: wholly).

    The middle walk's decisions give them while the projected readings at the two burns
    differ only in the instants of cutoff crossings and in figures on the same side of the
    cutoff and of the floor: each reading of one burn then stands where the other's does
    among the connection's instants that do not depend on the burn (``fixed``: resets, its
    recorded history's instants, budget instants, now), and a decision, made at a reading
    (the stepper re-decides a projected connection only at its own readings, at now and at
    budget instants, all written), reads only the readings up to it: the same sides in the
    same order, so it admits the same pairs, at the other burn's instant. From the first
    reading where the two part, the connection is decided again."""
    moved = {now: now}
    cutoff, floor = rules.threshold_of(True, ladder), rules.threshold_of(False, ladder)
    part_middle: datetime | None = None
    part_edge: datetime | None = None
    for one, other in zip(middle, edge, strict=False):
        if ((one.checked_at in fixed or other.checked_at in fixed)
                and one.checked_at != other.checked_at) or (
                _sides(one, cutoff, floor) != _sides(other, cutoff, floor)):
            part_middle, part_edge = one.checked_at, other.checked_at
            break
        moved[one.checked_at] = other.checked_at
    else:
        if len(middle) > len(edge):
            part_middle = middle[len(edge)].checked_at
        elif len(edge) > len(middle):
            part_edge = edge[len(middle)].checked_at
    out: list[tuple[datetime, tuple[int, ...]]] = []
    for at, seats in log:
        if part_middle is not None and at >= part_middle:
            break
        to = moved.get(at)
        if to is None:  # a decision away from its readings: decided again, to be sure
            return [], now
        out.append((to, seats))
    return out, part_edge


def _band_heads(inputs: LoadedInputs, auto_id: AutoId, now: datetime, end: datetime,
                listed: Sequence[datetime], middle: _Walk,
                outlooks: Sequence[ConnectionOutlook],
                burnt: Sequence[ConnectionOutlook]) -> _Heads:
    """The heads of the walk of ``burnt`` (the outlooks at a band edge), equal to
    ``_walk_projection``'s (``tests/test_forecast_band.py`` holds the two to the same
    answers), deciding again only what the middle walk's decisions do not give.

    A pair's admission depends on no other connection but through the budgets (R8), which
    the burn does not move, and the head is the cheapest rung with an admitted pair. So a
    connection whose outlook is the middle walk's keeps its decisions, one whose readings
    only move (``_moved_log``) keeps them at the moved instants, and only the others are
    decided, by a stepper that decides only them; the heads are read at every instant the
    whole walk would decide at."""
    assert middle.log is not None
    fleet = middle.stepper.fleet
    wanted = dict(middle.wanted)
    logs: Log = dict(middle.log)
    again: dict[str, list[Reading]] = {}
    since: dict[int, datetime | None] = {}
    for same, other in zip(outlooks, burnt, strict=True):
        if other is same:
            continue
        cid = same.connection_id
        index = fleet.index[cid]
        ladder = fleet.ladders[index]  # R16: a reserve raises the connection's thresholds
        cutoff = ladder.exit_cutoff_percent
        history = readings_until(inputs.readings.get(cid, ()), now)
        fixed = middle.fixed.get(cid, set())
        in_force_now = in_force(history, now, cutoff)
        wanted[cid] = fixed | (cutoff_crossings(in_force_now[-1], other, now, end, cutoff)
                               if other.projected and in_force_now else set())
        edge = projected_readings(cid, history, other, (now,), inputs, wanted=wanted[cid],
                                  kept_fresh=True)
        logs[index], since[index] = _moved_log(middle.log[index], middle.added.get(cid, ()),
                                               edge, fixed, now, ladder)
        if since[index] is not None:
            again[cid] = edge
    events = set(middle.recorded)
    for found in wanted.values():
        events |= found
    instants = sorted(events.union(listed))
    if again:
        readings = dict(middle.stepper.inputs.readings)
        for cid, edge in again.items():
            history = tuple(readings_until(inputs.readings.get(cid, ()), now))
            readings[cid] = (*history, *edge) if edge else history
        projected = middle.stepper.inputs._replace(readings=readings)
        fresh = [o.connection_id for o in outlooks if o.projected]
        stepper = Stepper(projected, auto_id, instants, kept_fresh=fresh,
                          fleet=fleet.with_readings(projected), seated_at=listed,
                          only=[fleet.index[cid] for cid in again])
        for index, decided in stepper.admissions(
                {i: at for i, at in since.items() if at is not None}).items():
            logs[index] = logs[index] + decided
    return _Heads(_heads_at(logs, instants))


def _heads_at(logs: Log, instants: Sequence[datetime]) -> tuple[tuple[datetime, Rung | None],
                                                                  ...]:
    """The head at each instant from every connection's decisions: the cheapest rung with
    an admitted pair, each decision counting from its instant on."""
    width = len(RUNGS)
    deltas: dict[datetime, list[int]] = {}
    for decisions in logs.values():
        before: tuple[int, ...] = (0,) * width
        for at, seats in decisions:
            if seats != before:
                delta = deltas.get(at)
                if delta is None:
                    delta = deltas[at] = [0] * width
                for rung in range(width):
                    delta[rung] += seats[rung] - before[rung]
                before = seats
    changes = sorted(deltas.items())
    counts = [0] * width
    out: list[tuple[datetime, Rung | None]] = []
    position, last = 0, len(changes)
    head: Rung | None = None
    for at in instants:
        if position < last and changes[position][0] <= at:
            while position < last and changes[position][0] <= at:
                for rung, moved in enumerate(changes[position][1]):
                    counts[rung] += moved
                position += 1
            head = next((RUNGS[r] for r in range(width) if counts[r] > 0), None)
        out.append((at, head))
    return tuple(out)


def _at_burn(outlooks: Sequence[ConnectionOutlook], edge: str) -> tuple[ConnectionOutlook, ...]:
    """The outlooks with each window burning at the low or high edge of its band."""
    out: list[ConnectionOutlook] = []
    for item in outlooks:
        if not item.projected or all(p.burn_band is None for p in item.paces):
            out.append(item)
            continue
        paces = tuple(p if p.burn_band is None else dataclasses.replace(
            p, burn_percent_per_hour=p.burn_band[0 if edge == "low" else 1])
            for p in item.paces)
        out.append(dataclasses.replace(item, paces=paces))
    return tuple(out)


def _band(values: Sequence[datetime | None]) -> Band:
    """p10 / p50 / p90 of an instant over the three burns: the earliest, the middle burn's
    and the latest (None, never within the horizon, counts as the latest)."""
    middle = values[0]
    found = [v for v in values if v is not None]
    early = min(found) if found else None
    late = None if None in values else max(found)
    return Band(early, middle, late)


def forecast(inputs: LoadedInputs, auto_id: AutoId, now: datetime, horizon: timedelta,
             step: timedelta, *, now_source: str = "flag",
             lengths: WindowLength = no_lengths, dense: bool = False,
             band: bool = True) -> Forecast:
    """Project every fresh connection's windows and decide the plan at every instant a
    decision can change (docs/forecast.md#instants); ``step`` spaces the listed points
    only. With ``band``, the projection is also walked at each window's low and high burn
    (docs/forecast.md#band), for the p10 / p90 of the answers."""
    end = now + horizon
    listed = listed_instants(now, end, step)
    outlooks = tuple(
        outlook(c.id, c.provider, inputs.readings.get(c.id, ()), now, inputs, lengths,
                c.reserve_percent)
        for c in inputs.connections if inputs.readings.get(c.id))
    spread = band and any(p.burn_band is not None and p.burn_band[0] != p.burn_band[1]
                          for o in outlooks for p in o.paces)
    middle = _walk_projection(inputs, auto_id, now, end, listed, outlooks, dense,
                              keep_log=spread and not dense)
    timeline, transitions, stepper = middle.timeline, middle.transitions, middle.stepper
    on_list = set(listed)
    points = tuple(p for p in timeline if p.at in on_list)
    escalations = _escalations(timeline, transitions)
    heads = middle.heads
    first_paid, empty = heads.first_paid_at, heads.pool_empty_at
    hours = heads.hours()
    paid = _paid(inputs, stepper, hours, now, heads.heads)
    warnings = tuple(inputs.warnings)
    if not inputs.connections:
        warnings = (empty_fleet_warning(inputs.files.get("connections",
                                                         "the connections file")), *warnings)
    unknown = unprojected_windows(outlooks, stepper, now)
    walks = [heads]
    if spread and not unknown:
        walks += [_walk_projection(inputs, auto_id, now, end, listed, _at_burn(outlooks, edge),
                                   dense).heads if dense else
                  _band_heads(inputs, auto_id, now, end, listed, middle, outlooks,
                              _at_burn(outlooks, edge))
                  for edge in ("high", "low")]
    first_band = pool_band = hours_band = None
    if not unknown:
        first_band = _band([w.first_paid_at for w in walks])
        pool_band = _band([w.pool_empty_at for w in walks])
        paid_hours = [sum(h for rung, h in w.hours().items() if rung in PAID_RUNGS)
                      for w in walks]
        hours_band = (max(paid_hours), paid_hours[0], min(paid_hours))
    return Forecast(auto_id=auto_id, now=now, now_source=now_source, horizon=horizon, step=step,
                    outlooks=outlooks, points=points, timeline=timeline, transitions=transitions,
                    escalations=escalations, first_paid_at=None if unknown else first_paid,
                    pool_empty_at=None if unknown else empty, hours_by_head=hours, paid=paid,
                    projected_readings=middle.projected_readings, warnings=warnings,
                    unprojected=unknown, projected_pool_empty_at=empty, first_paid_band=first_band,
                    pool_empty_band=pool_band, paid_hours_band=hours_band)


def _escalations(points: Sequence[Point], transitions: Sequence[Transition]
                 ) -> tuple[Escalation, ...]:
    out: list[Escalation] = []
    for index, transition in enumerate(transitions):
        if not transition.escalation:
            continue
        back = next((later for later in transitions[index + 1:]
                     if _rank(later.head) <= _rank(transition.previous)), None)
        out.append(Escalation(at=transition.at, previous=transition.previous, head=transition.head,
                              cause=transition.cause, back_at=back.at if back else None,
                              back_cause=back.cause if back else None))
    return tuple(out)


def _paid(inputs: LoadedInputs, stepper: Stepper, hours: dict[str, float], now: datetime,
          heads: Sequence[tuple[datetime, Rung | None]]) -> tuple[PaidEstimate, ...] | None:
    """Paid dollars from each paid rung's recent cost per hour (with a spend ledger), and
    where that cost reaches the rung's budget (``heads``: each step's instant and head)."""
    if inputs.spend is None:
        return None
    positions = stepper.budgets(now)
    try:
        since: datetime | None = now - timedelta(hours=SPEND_BASIS_HOURS)
    except OverflowError:  # now is within those hours of the calendar's start
        since = None
    costs: dict[str, list[float]] = {}
    for event in inputs.spend:
        if event.at > now or (since is not None and event.at <= since):
            continue
        rung = event.rung or stepper.fleet.rung_of_event(event)
        if rung is not None:
            costs.setdefault(rung, []).append(event.cost_usd)
    out: list[PaidEstimate] = []
    for rung in PAID_RUNGS:
        on = hours.get(rung, 0.0)
        listed = costs.get(rung)
        position = positions[rung]
        if listed is None:
            out.append(PaidEstimate(rung=rung, hours=on, usd_per_hour=None, usd=None,
                                    basis=f"no {rung} spend in the {SPEND_BASIS_HOURS}h "
                                    "before now: hours only",
                                    budget=_budget_outlook(position, None, heads)))
            continue
        # added as R8 adds a budget's spend: 0.1 + 0.7 is 0.8
        cost = total_usd(listed)
        per_hour = cost / SPEND_BASIS_HOURS
        out.append(PaidEstimate(rung=rung, hours=on, usd_per_hour=per_hour,
                                usd=per_hour * on,
                                basis=f"{timefmt.usd(cost)} of {rung} spend in the "
                                f"{SPEND_BASIS_HOURS}h before now = "
                                f"{timefmt.usd(per_hour)}/h",
                                budget=_budget_outlook(position, per_hour, heads)))
    return tuple(out)


def _budget_outlook(position: BudgetPosition, usd_per_hour: float | None,
                    heads: Sequence[tuple[datetime, Rung | None]]) -> BudgetOutlook | None:
    """The budget R8 enforces on the rung, against the estimate (None: no budget to reach,
    or one of 0 or less, which closes the rung whatever the spend)."""
    budget, left = position.budget_usd, position.remaining_usd
    if position.state not in ("within", "spent") or budget is None or left is None:
        return None
    reached = None
    if usd_per_hour is not None:
        reached = budget_reached_at(heads, position.rung, usd_per_hour=usd_per_hour,
                                    left_usd=left, budget_usd=budget, period=position.period)
    return BudgetOutlook(budget_usd=budget, period=position.period, left_usd=left,
                         reached_at=reached)


def budget_reached_at(heads: Sequence[tuple[datetime, Rung | None]], rung: str, *,
                      usd_per_hour: float, left_usd: float, budget_usd: float,
                      period: str) -> datetime | None:
    """The first instant at which the estimate's spend reaches the rung's budget: the rung
    spends ``usd_per_hour`` while it heads the pool (from a step's instant to the next
    step's, as the hours per rung count), out of ``left_usd`` in the period that contains
    the first instant and out of the whole budget in each period that starts later (R8
    counts only the period's spend). None when that is not within the steps.

    Nothing left at the first instant is R8's doing, not the estimate's: that period is
    skipped."""
    if usd_per_hour <= 0 or not heads:
        return None
    left = left_usd
    period_of = period_start(heads[0][0], period)
    for (start, head), (end, _) in pairwise(heads):
        while start < end:
            here = period_start(start, period)
            if here != period_of:
                period_of, left = here, budget_usd
            piece_end = min(end, _period_end(start, period))
            if head == rung and left > 0:
                hours = (piece_end - start).total_seconds() / 3600.0
                if usd_per_hour * hours >= left:
                    return start + timedelta(hours=left / usd_per_hour)
                left -= usd_per_hour * hours
            start = piece_end
    return None


def _period_end(at: datetime, period: str) -> datetime:
    """The start of the next budget period; the calendar's last instant in its last period
    (December 9999 has no next start)."""
    try:
        return next_period_start(at, period)
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=at.tzinfo)


def hours_text(hours: float) -> str:
    """``2.92h``: hours as the forecast's views and ``check``'s gates both word them."""
    return f"{hours:.2f}h"


def wait_text(escalation: Escalation, now: datetime) -> str:
    """``pay from 14:05Z until 17:00Z, or wait 2h55m`` for an escalation off a quota rung."""
    start = timefmt.short(escalation.at, now)
    if escalation.back_at is None:
        verb = "pay" if escalation.paid else "run" if escalation.head else "empty"
        return f"{verb} from {start} past the horizon"
    wait = timefmt.duration((escalation.back_at - escalation.at).total_seconds())
    until = timefmt.short(escalation.back_at, now)
    if escalation.head in PAID_RUNGS:
        return f"pay from {start} until {until}, or wait {wait}"
    if escalation.head is None:
        return f"empty from {start} until {until} ({wait})"
    return f"on {escalation.head} from {start} until {until} ({wait})"


def parse_span(text: str, option: str) -> timedelta:
    """A positive duration for ``option`` (``--horizon``, ``--step``), as simulate's step."""
    from omniladder.analyses.simulate import parse_step
    from omniladder.errors import UsageError

    try:
        return parse_step(text)
    except UsageError as exc:
        raise UsageError(exc.message.replace("step", option.lstrip("-")),
                         field=option) from None
