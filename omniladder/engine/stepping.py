"""Planning one auto id at many instants, re-deciding only what can have changed.

A pair's admission never depends on another connection (R10, R11) except through the rung
budgets (R8), and a connection's decisions change only at instants where one of its inputs
changes: a reading arrives, a window (or an exhausted reading) resets, a reading turns stale
(which also ends a fresh R2a observation), a cooldown or its clamp ends, the connection's
state is observed or its recorded cooldown starts (SPEC §7.2 v1.4), and, through the
budgets, a spend event counts or a budget period starts (the per-connection instants come
from ``omniladder.engine.changes``, which ``why`` reads too). ``Stepper`` decides every
connection at the first instant, then at each later one re-decides only the connections with
such an instant since the previous step (all of a rung's when its budget position changed),
over the same ``Fleet`` (pairs, tiers, rungs, category membership, spend attribution) and
with the very functions ``make_plan`` uses (``connection_facts``, ``HistoryVerdicts``,
``decide``), and rebuilds what a step of ``simulate`` reads from per-pair counts.

``simulate(..., replan=True)`` plans the whole fleet at every step instead; the tests hold
the two to the same output.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain

from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import BudgetPosition, budget_positions, period_start
from omniladder.engine.changes import connection_changes, next_order_change
from omniladder.engine.decide import Moment, decide, facts_at
from omniladder.engine.fleet import Fleet, fleet_for
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.pool import (
    QUOTA_RUNG_INDEXES,
    RUNG_INDEX,
    Entry,
    Seating,
    Terms,
    expiring_first,
    pool_order,
    rate_at,
    verdict_terms,
)
from omniladder.engine.records import PairDecision
from omniladder.engine.report import rung_state
from omniladder.models import RUNGS, Connection, Reading, Rung


@dataclass(frozen=True)
class StepState:
    """What one step reads off the plan, without building the plan."""

    at: datetime
    head: Rung | None
    pool_size: int
    rungs: tuple[tuple[Rung, str, int, int], ...]
    """(rung, state, pool entries, connections) per rung, as ``RungStatus`` has them."""
    eligible: tuple[str, ...]
    unverified: tuple[str, ...]
    changed: tuple[tuple[PairDecision, PairDecision], ...]
    """(decision at the previous step, decision now) of every re-decided pair, in the plan's
    decision order; pairs not listed are decided as at the previous step."""
    leader: str | None = None
    """The connection seated first in the pool (``eligible``'s first), at every step, listed
    or not."""


def change_steps(history: Sequence[Reading], connection: Connection | None,
                 max_age_seconds: float, instants: Sequence[datetime],
                 cutoff: float = 0.0, ages: bool = True) -> set[int]:
    """The indexes of the steps at which a connection's decisions can differ from the step
    before: the first step at (or, for an exclusive change, after) each instant
    ``connection_changes`` lists, the first step excepted.

    ``ages=False`` leaves out the instants readings turn stale (the exclusive changes): for a
    connection whose telemetry is taken to keep arriving (``Stepper``'s ``kept_fresh``).
    """
    found: set[int] = set()
    count = len(instants)
    for change in connection_changes(history, connection, max_age_seconds, cutoff):
        if not change.counts() or (change.exclusive and not ages):
            continue  # a newer reading has arrived by then: its arrival re-decides
        if change.exclusive:
            index = bisect.bisect_right(instants, change.at)
        else:
            index = bisect.bisect_left(instants, change.at)
        if 0 < index < count:
            found.add(index)
    return found




class Stepper:
    """One auto id over a sorted sequence of instants; ``steps()`` yields each step's state.

    ``kept_fresh`` names connections whose telemetry is taken to keep arriving (the
    forecast's projected connections): their readings turning stale is no change step. The
    caller writes them a reading at every other step where their decisions can change (a
    reset, a window reaching the cutoff, the end of a cooldown, a budget period start or a
    spend event: ``forecast.budget_instants``), so each of their re-decisions reads a
    reading of its own step; between
    two, a reading at every step would decide alike (``forecast`` and its tests hold the two
    to the same walk). Without it, a reading every step re-decides the connection at every
    step, and each re-decision replays its whole history: quadratic in the steps.
    """

    def __init__(self, inputs: LoadedInputs, auto_id: AutoId,
                 instants: Sequence[datetime], kept_fresh: Collection[str] = (),
                 fleet: Fleet | None = None,
                 seated_at: Collection[datetime] | None = None,
                 only: Collection[int] | None = None) -> None:
        self.seated_at = None if seated_at is None else frozenset(seated_at)
        """The instants whose states list the seated and unverified connections (None:
        all); at the others they are left as at the step before (the forecast lists only
        its listed points, and a fleet-long tuple at each of thousands of decided
        instants is most of its memory)."""
        self.inputs = inputs
        self.auto_id = auto_id
        self.instants = instants
        fleet = fleet_for(inputs, fleet)
        self.fleet = fleet
        self.in_category = fleet.in_category(auto_id.category)
        self.pairs = fleet.pairs
        self.has_pairs = dict.fromkeys(RUNGS, False)
        """Whether any pair in the category lands on the rung (else the rung is empty)."""
        for member, rungs in zip(self.in_category, fleet.rungs, strict=True):
            if member:
                for rung in rungs:
                    self.has_pairs[rung] = True
        self.on_rung: dict[str, list[int]] = {rung: [] for rung in RUNGS}
        """The connections with a pair on the rung, in file order."""
        for index, pairs in enumerate(self.pairs):
            for pair in pairs:
                on = self.on_rung[pair.rung]
                if not on or on[-1] != index:
                    on.append(index)
        self.spend_ats = (sorted(e.at for e in inputs.spend)
                          if inputs.spend is not None else None)
        self.only: tuple[int, ...] | None = None if only is None else tuple(sorted(set(only)))
        """The connections ``admissions`` decides (None: all); only theirs are scheduled."""
        self.log: dict[int, list[tuple[datetime, tuple[int, ...]]]] | None = None
        """Set to a dict before ``steps()``, each decision of a connection is logged under its
        index as (instant, ``seats``) (what the forecast's band reuses)."""
        self.schedule: dict[int, list[int]] = {}
        ladders = fleet.ladders
        fresh = frozenset(kept_fresh)
        scheduled = range(len(fleet.connections)) if self.only is None else self.only
        for index in scheduled:
            connection = fleet.connections[index]
            ladder = ladders[index]
            for step in change_steps(fleet.histories[index], connection,
                                     ladder.max_reading_age_seconds, instants,
                                     ladder.exit_cutoff_percent,
                                     ages=connection.id not in fresh):
                self.schedule.setdefault(step, []).append(index)

    # --- one connection -----------------------------------------------------------------

    def decide(self, index: int, now: datetime,
               budgets: dict[str, BudgetPosition]) -> tuple[PairDecision, ...]:
        """Every pair of one connection at now, in candidate order."""
        fleet = self.fleet
        facts = facts_at(fleet, index, now)
        verdicts = fleet.verdicts(index, now)
        provider = facts.connection.provider
        member = self.in_category
        moment = Moment(self.auto_id, now, budgets)
        return tuple(
            decide(facts, provider, pair.model, pair.tier, pair.rung, verdicts,
                   member[pair.candidate], moment)
            for pair in self.pairs[index])

    def budgets(self, now: datetime) -> dict[str, BudgetPosition]:
        return budget_positions(self.inputs.settings.budgets, self.inputs.spend, now,
                                self.fleet.rung_of_event)

    def _budget_key(self, now: datetime) -> tuple[datetime, int]:
        """Budget positions are the same at two instants with the same key (R8)."""
        counted = bisect.bisect_right(self.spend_ats, now) if self.spend_ats else 0
        return period_start(now, self.inputs.settings.budgets.period), counted

    def seats(self, index: int, decisions: Sequence[PairDecision]) -> tuple[int, ...]:
        """A connection's admitted pairs per rung (``RUNGS`` order): what it adds to each
        rung's entries, and so to which rung heads the pool."""
        counts = [0] * len(RUNGS)
        for pair, decision in zip(self.pairs[index], decisions, strict=True):
            if decision.admitted:
                counts[RUNG_INDEX[pair.rung]] += 1
        return tuple(counts)

    # --- the walk -----------------------------------------------------------------------

    def _redecided(self, everyone: Sequence[int]
                   ) -> Iterator[tuple[int, datetime, dict[str, BudgetPosition], list[int]]]:
        """(step, instant, budget positions there, the connections to decide there in
        order): ``everyone`` at the first step, then the scheduled ones and, when a rung's
        budget position changes, every connection of ``everyone`` on the rung."""
        budgets: dict[str, BudgetPosition] = {}
        budget_key: tuple[datetime, int] | None = None
        among = None if len(everyone) == len(self.fleet.connections) else frozenset(everyone)
        for step, now in enumerate(self.instants):
            key = self._budget_key(now)
            if step == 0:
                budgets, budget_key = self.budgets(now), key
                yield step, now, budgets, list(everyone)
                continue
            redo = set(self.schedule.get(step, ()))
            if key != budget_key:
                fresh = self.budgets(now)
                for rung, moved_to in fresh.items():
                    was = budgets.get(rung)
                    # a pair reads its rung's budget only while the budget closes it
                    if was != moved_to and (moved_to.gates or (was is not None
                                                               and was.gates)):
                        redo.update(self.on_rung[rung] if among is None else
                                    (i for i in self.on_rung[rung] if i in among))
                budgets, budget_key = fresh, key
            yield step, now, budgets, sorted(redo)

    def admissions(self, since: dict[int, datetime] | None = None
                   ) -> dict[int, list[tuple[datetime, tuple[int, ...]]]]:
        """Each decision of the connections ``only`` names (all without it) at the steps
        ``steps()`` decides them, as (instant, ``seats``), without seating anyone; a
        connection ``since`` gives an instant is decided only from there on (the caller
        knows its decisions before, and the instant is one of its steps)."""
        everyone = self.only if self.only is not None else range(len(self.fleet.connections))
        log: dict[int, list[tuple[datetime, tuple[int, ...]]]] = {i: [] for i in everyone}
        starts = since or {}
        for _, now, budgets, redo in self._redecided(list(everyone)):
            for index in redo:
                start = starts.get(index)
                if start is None or now >= start:
                    log[index].append(
                        (now, self.seats(index, self.decide(index, now, budgets))))
        return log

    def _expiring_first(self, seating: Seating[bool],
                        decided: Sequence[tuple[PairDecision, ...]], now: datetime
                        ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[datetime, bool] | None]:
        """R15 ``expiring-first``: the seated and the unverified connections in the order of
        the pool ``make_plan`` reorders at now (``pool.expiring_first``), and the first
        instant after now at which that order can change by time alone
        (``changes.next_order_change``)."""
        fleet = self.fleet
        ids = [c.id for c in fleet.connections]
        terms: dict[tuple[int, int], Terms] = {}
        seated = seating.pool()
        for entry in seated:
            if RUNG_INDEX[entry.rung] not in QUOTA_RUNG_INDEXES:
                continue
            for member in entry.members:
                for pair, made in zip(self.pairs[member], decided[member], strict=True):
                    if pair.candidate == entry.candidate and pair.rung == entry.rung:
                        terms[(member, entry.candidate)] = verdict_terms(
                            made.verdict, pair.model, fleet.connections[member].weight, now)

        def rates(entry: Entry[bool]) -> list[float]:
            return [rate_at(terms[(member, entry.candidate)], now) for member in entry.members]

        ordered = expiring_first(seated, rates)
        groups: list[list[Terms]] = []
        by_rung: dict[Rung, list[Terms]] = {}
        for entry in ordered:
            if RUNG_INDEX[entry.rung] not in QUOTA_RUNG_INDEXES:
                continue
            members = [terms[(member, entry.candidate)] for member in entry.members]
            groups.append(members)
            by_rung.setdefault(entry.rung, []).append(tuple(chain.from_iterable(members)))
        groups += by_rung.values()
        first, shaky = pool_order(ordered)
        return (tuple(map(ids.__getitem__, first)), tuple(map(ids.__getitem__, shaky)),
                next_order_change(groups, now))

    def steps(self) -> Iterator[StepState]:
        count = len(self.fleet.connections)
        ids = [c.id for c in self.fleet.connections]
        seating: Seating[bool] = Seating(ids, track=True)
        entries, members = seating.entries, seating.connections
        decided: list[tuple[PairDecision, ...]] = [()] * count
        self.decided = decided
        """Per connection, its pairs' decisions at the step last yielded."""

        def apply(index: int, decisions: tuple[PairDecision, ...], sign: int) -> None:
            seating.place(index, [
                (RUNG_INDEX[pair.rung], pair.candidate, True if decision.unverified else None)
                for pair, decision in zip(self.pairs[index], decisions, strict=True)
                if decision.admitted], sign)

        previous: StepState | None = None
        dirty = False
        log = self.log
        reorders = self.fleet.ladder.within_rung_order == "expiring-first"
        ordered: tuple[str, ...] = ()
        ordered_shaky: tuple[str, ...] = ()
        order_change: tuple[datetime, bool] | None = None
        for step, now, budgets, redo in self._redecided(range(count)):
            changed: list[tuple[int, int, PairDecision, PairDecision]] = []
            moved = step == 0
            for index in redo:
                old = decided[index]
                new = self.decide(index, now, budgets)
                decided[index] = new
                if log is not None:
                    log.setdefault(index, []).append((now, self.seats(index, new)))
                if step == 0:
                    apply(index, new, 1)
                    continue
                if any((o.admitted, o.unverified) != (n.admitted, n.unverified)
                       for o, n in zip(old, new, strict=True)):
                    apply(index, old, -1)
                    apply(index, new, 1)
                    moved = True
                for pair, o, n in zip(self.pairs[index], old, new, strict=True):
                    changed.append((pair.candidate, index, o, n))
            changed.sort(key=lambda item: (item[0], item[1]))
            states: list[tuple[Rung, str, int, int]] = []
            for rung_index, rung in enumerate(RUNGS):
                state = rung_state(self.auto_id, rung, budgets.get(rung), self.has_pairs[rung],
                                   entries[rung_index] > 0)
                if state == "not-in-id":
                    states.append((rung, state, 0, 0))
                else:
                    states.append((rung, state, entries[rung_index], members[rung_index]))
            head = seating.head()
            dirty = dirty or moved
            listed = self.seated_at is None or now in self.seated_at
            if reorders:
                # R15: the order moves when a pair is re-decided (a reading, a reset) and at
                # the computed instants where two urgencies cross
                due = order_change is not None and (
                    now > order_change[0] or (now == order_change[0] and not order_change[1]))
                if step == 0 or moved or redo or due:
                    ordered, ordered_shaky, order_change = self._expiring_first(
                        seating, decided, now)
                if listed or previous is None:
                    seated, shaky = ordered, ordered_shaky
                else:
                    seated, shaky = previous.eligible, previous.unverified
                state_now = StepState(now, head, sum(entries), tuple(states), seated, shaky,
                                      tuple((o, n) for _, _, o, n in changed),
                                      ordered[0] if ordered else None)
                yield state_now
                previous = state_now
                continue
            if previous is None or (dirty and listed):
                seated, shaky = seating.eligible(), seating.unverified()
                dirty = False
            else:
                seated, shaky = previous.eligible, previous.unverified
            leader = (previous.leader if previous is not None and not moved
                      else seating.leader())
            state_now = StepState(now, head, sum(entries), tuple(states), seated, shaky,
                                  tuple((o, n) for _, _, o, n in changed), leader)
            yield state_now
            previous = state_now
