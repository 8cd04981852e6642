"""`simulate`: plan at every step between two instants, and read the day off the plans.

``now`` moves (R14); at each step only the readings and spend events at or before it count,
which ``make_plan`` already guarantees. The series records which rung heads the pool and how
many pool entries each rung has; transitions of the head rung are explained from the
difference between two consecutive plans. Flaps avoided by the re-entry floor are counted by
planning the same steps once more with a single threshold (the floor set to the cutoff).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from omniladder import timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.records import PairDecision, Plan, PlanSettings
from omniladder.engine.stepping import Stepper
from omniladder.errors import UsageError
from omniladder.models import RUNGS, Rung, duration_count

MAX_STEPS = 100_000
MAX_STEP_SECONDS = 3_652_058 * 86_400
"""Year 1 to year 9999: a longer step cannot be added to any instant."""

_STEP = re.compile(r"(?P<count>\d+)(?P<unit>[smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_step(text: str) -> timedelta:
    """``30s``, ``5m``, ``1h``, ``1d`` (or several, ``1h30m``) as a positive duration."""
    cleaned = text.strip()
    parts = list(_STEP.finditer(cleaned))
    if not parts or "".join(p.group(0) for p in parts) != cleaned:
        raise UsageError(f"not a step: {text!r} (expected e.g. 30s, 5m, 1h or 1h30m)",
                         field="--step")
    seconds = sum(duration_count(p.group("count")) * _UNITS[p.group("unit")] for p in parts)
    if seconds <= 0:
        raise UsageError(f"the step must be longer than zero, got {text!r}", field="--step")
    if seconds > MAX_STEP_SECONDS:
        raise UsageError(f"the step {text!r} is longer than the calendar (at most "
                         f"{MAX_STEP_SECONDS // 86400:,}d)", field="--step")
    return timedelta(seconds=seconds)


def step_instants(start: datetime, end: datetime, step: timedelta) -> list[datetime]:
    """Every instant from start to end inclusive, ``step`` apart; usage errors when absurd."""
    if end < start:
        raise UsageError(f"--to {timefmt.iso(end)} is before --from {timefmt.iso(start)}",
                         field="--to")
    count = int((end - start) / step) + 1
    if count > MAX_STEPS:
        raise UsageError(f"{count:,} steps from {timefmt.iso(start)} to {timefmt.iso(end)} "
                         f"every {timefmt.duration(step.total_seconds())}; at most "
                         f"{MAX_STEPS:,} — use a longer --step", field="--step")
    return [start + step * index for index in range(count)]


# --- the series ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RungPoint:
    rung: Rung
    state: str
    entries: int
    """Pool entries on the rung."""
    connections: int


@dataclass(frozen=True, kw_only=True)
class Point:
    """One step: which rung heads the pool and the pool per rung."""

    at: datetime
    head: Rung | None
    """The rung of the first pool entry; None when the pool is empty."""
    pool_size: int
    rungs: tuple[RungPoint, ...]
    eligible: tuple[str, ...]
    unverified: tuple[str, ...]

    def entries_on(self, rung: str) -> int:
        return next((r.entries for r in self.rungs if r.rung == rung), 0)


@dataclass(frozen=True, kw_only=True)
class Change:
    """One (connection, model) pair that entered or left the head rung, and why."""

    connection_id: str
    model: str
    rung: Rung
    admitted: bool
    """True when it entered (or came back), False when it left."""
    cause: str


@dataclass(frozen=True, kw_only=True)
class Transition:
    at: datetime
    previous: Rung | None
    head: Rung | None
    cause: str
    changes: tuple[Change, ...]

    @property
    def escalation(self) -> bool:
        return _rank(self.head) > _rank(self.previous)


@dataclass(frozen=True, kw_only=True)
class Flaps:
    """Head-rung transitions with the re-entry floor and with a single threshold."""

    with_floor: int
    single_threshold: int
    suppressed: tuple[Transition, ...]
    """Single-threshold transitions with no same transition at the same step with the floor."""

    @property
    def avoided(self) -> int:
        return max(self.single_threshold - self.with_floor, 0)


@dataclass(frozen=True, kw_only=True)
class Series:
    auto_id: AutoId
    start: datetime
    end: datetime
    step: timedelta
    points: tuple[Point, ...]
    transitions: tuple[Transition, ...]
    flaps: Flaps
    settings: PlanSettings
    warnings: tuple[str, ...]
    files: dict[str, str]


def _rank(rung: str | None) -> int:
    """Escalation order; an empty pool ranks past premium."""
    return RUNGS.index(rung) if rung in RUNGS else len(RUNGS)


def _point(plan: Plan) -> Point:
    head = plan.pool[0].rung if plan.pool else None
    rungs = tuple(RungPoint(rung=r.rung, state=r.state, entries=r.candidates,
                            connections=r.connections) for r in plan.rungs)
    return Point(at=plan.now, head=head, pool_size=len(plan.pool), rungs=rungs,
                 eligible=plan.eligible_connection_ids, unverified=plan.unverified_connection_ids)


def single_threshold(inputs: LoadedInputs) -> LoadedInputs:
    """The same inputs with the re-entry floor at the exit cutoff: no hysteresis."""
    settings = inputs.settings
    ladder = settings.ladder.model_copy(
        update={"reentry_min_remaining_percent": settings.ladder.exit_cutoff_percent})
    return inputs._replace(settings=settings.model_copy(update={"ladder": ladder}),
                   warnings=())


def simulate(inputs: LoadedInputs, auto_id: AutoId, start: datetime, end: datetime,
             step: timedelta, *, replan: bool = False) -> Series:
    """Plan at every step; the series, its head-rung transitions with causes, and flaps.

    Each step re-decides only the connections whose inputs changed since the step before
    (``omniladder.engine.stepping``); ``replan=True`` plans the whole fleet at every step instead,
    which gives the same series (the tests hold the two to it).
    """
    instants = step_instants(start, end, step)
    fleet = Fleet(inputs)
    if replan:
        points, transitions = _walk(inputs, auto_id, instants)
        _, flat_transitions = _walk(single_threshold(inputs), auto_id, instants)
    else:
        points, transitions = walk(Stepper(inputs, auto_id, instants, fleet=fleet))
        _, flat_transitions = _walk_stepping(single_threshold(inputs), auto_id, instants)
    ours = {(t.at, t.previous, t.head) for t in transitions}
    suppressed = tuple(t for t in flat_transitions if (t.at, t.previous, t.head) not in ours)
    flaps = Flaps(with_floor=len(transitions), single_threshold=len(flat_transitions),
                  suppressed=suppressed)

    first = make_plan(inputs, auto_id, instants[0], "flag", fleet)
    last = (make_plan(inputs, auto_id, instants[-1], "flag", fleet) if len(instants) > 1
            else first)
    warnings: dict[str, None] = {}
    for plan in (first, last):
        for warning in plan.warnings:
            warnings[warning] = None
    return Series(auto_id=auto_id, start=start, end=end, step=step, points=points,
                  transitions=transitions, flaps=flaps, settings=first.settings,
                  warnings=tuple(warnings), files=dict(first.files))


def _walk(inputs: LoadedInputs, auto_id: AutoId, instants: Sequence[datetime]
          ) -> tuple[tuple[Point, ...], tuple[Transition, ...]]:
    """Plan the whole fleet at each instant, keeping only the previous plan: the points and
    the head-rung transitions with their causes."""
    points: list[Point] = []
    transitions: list[Transition] = []
    previous: Plan | None = None
    for at in instants:
        plan = make_plan(inputs, auto_id, at, "flag")
        point = _point(plan)
        if previous is not None and points[-1].head != point.head:
            before = points[-1]
            changes = explain_change(previous, plan, before.head, point.head)
            transitions.append(Transition(at=point.at, previous=before.head, head=point.head,
                                          cause=_cause(changes, point.head), changes=changes))
        points.append(point)
        previous = plan
    return tuple(points), tuple(transitions)


def _walk_stepping(inputs: LoadedInputs, auto_id: AutoId, instants: Sequence[datetime]
                   ) -> tuple[tuple[Point, ...], tuple[Transition, ...]]:
    """``_walk``, re-deciding at each instant only the connections whose inputs changed."""
    return walk(Stepper(inputs, auto_id, instants))


def walk(stepper: Stepper) -> tuple[tuple[Point, ...], tuple[Transition, ...]]:
    """One stepping walk: the points and the head-rung transitions with their causes (what
    ``simulate`` and ``forecast`` read)."""
    points: list[Point] = []
    transitions: list[Transition] = []
    rungs: tuple[RungPoint, ...] = ()
    for state in stepper.steps():
        if not points or state.rungs != tuple(
                (r.rung, r.state, r.entries, r.connections) for r in rungs):
            rungs = tuple(RungPoint(rung=rung, state=kind, entries=entries, connections=serving)
                          for rung, kind, entries, serving in state.rungs)
        point = Point(at=state.at, head=state.head, pool_size=state.pool_size, rungs=rungs,
                      eligible=state.eligible, unverified=state.unverified)
        if points and points[-1].head != point.head:
            before = points[-1]
            changes = changes_between(state.changed, before.head, point.head, state.at)
            transitions.append(Transition(at=point.at, previous=before.head, head=point.head,
                                          cause=_cause(changes, point.head), changes=changes))
        points.append(point)
    return tuple(points), tuple(transitions)


def explain_change(previous: Plan, current: Plan, old_head: Rung | None,
                   new_head: Rung | None) -> tuple[Change, ...]:
    """Which pairs made the head rung change, read from the two plans' decisions.

    On an escalation, the pairs of the old head rung that left; on a return, the pairs of the
    new head rung that came in.
    """
    was = {(d.connection_id, d.model): d for d in previous.decisions}
    pairs = [(prior, decision) for decision in current.decisions
             if (prior := was.get((decision.connection_id, decision.model))) is not None]
    return changes_between(pairs, old_head, new_head, current.now)


def changes_between(pairs: Iterable[tuple[PairDecision, PairDecision]], old_head: Rung | None,
                    new_head: Rung | None, now: datetime) -> tuple[Change, ...]:
    """``explain_change`` over (previous, current) decisions in the plan's decision order."""
    changes: list[Change] = []
    escalation = _rank(new_head) > _rank(old_head)
    watched = old_head if escalation else new_head
    for prior, decision in pairs:
        if decision.rung != watched:
            continue
        if escalation and prior.admitted and not decision.admitted:
            changes.append(Change(connection_id=decision.connection_id, model=decision.model,
                                  rung=decision.rung, admitted=False, cause=_left_cause(decision)))
        elif not escalation and decision.admitted and not prior.admitted:
            changes.append(Change(connection_id=decision.connection_id, model=decision.model,
                                  rung=decision.rung, admitted=True,
                                  cause=_back_cause(prior, decision, now)))
    return tuple(changes)


def _left_cause(decision: PairDecision) -> str:
    verdict = decision.verdict
    reason = decision.reason or ""
    if reason.startswith("quota-below") and verdict is not None and verdict.window is not None \
            and verdict.figure is not None:
        return f"{verdict.window.name} window at {timefmt.pct(verdict.figure)}"
    if reason == "quota-exhausted":
        return "reading says exhausted"
    if reason == "cooldown":
        return "rate limited"
    if reason in ("budget-spent", "budget-disabled"):
        return reason.replace("-", " ")
    return reason


def _back_cause(prior: PairDecision, decision: PairDecision, now: datetime) -> str:
    old, new = prior.verdict, decision.verdict
    if prior.reason == "cooldown":
        text = "cooldown over"
    elif prior.reason in ("budget-spent", "budget-disabled"):
        text = "budget period restarted"
    elif (old is not None and old.window is not None and old.window.reset_at is not None
          and old.window.reset_at <= now):
        text = f"{old.window.name} window reset"
    elif (old is not None and old.reading is not None and old.reading.reset_at is not None
          and old.reading.reset_at <= now):
        text = "reset since the exhausted reading"
    elif (new is not None and new.figure is not None and new.window is not None
          and old is not None and new.reading is not old.reading):
        floor = (f", above the re-entry floor {timefmt.pct(new.threshold)}"
                 if new.floor_applied and new.threshold is not None else "")
        text = f"{new.window.name} window at {timefmt.pct(new.figure)}{floor}"
    elif new is not None and new.reason is not None:
        text = f"{new.reason}"
    else:
        text = f"{prior.reason} cleared"
    if decision.unverified:
        text += ", unverified"
    return text


def _cause(changes: tuple[Change, ...], head: Rung | None) -> str:
    if not changes:
        return "pool empty" if head is None else "the ladder changed"
    by_connection: dict[str, list[Change]] = {}
    for change in changes:
        by_connection.setdefault(change.connection_id, []).append(change)
    parts: list[str] = []
    for cid, mine in by_connection.items():
        causes = list(dict.fromkeys(c.cause for c in mine))
        parts.append(f"{cid} {'; '.join(causes)}")
    return ", ".join(parts)
