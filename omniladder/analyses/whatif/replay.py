"""The replay (SPEC §10.3): the demand served request by request under one scenario, by the
engine's own rules, on readings the replay writes from its consumption model.

The replay observes every modelled window all the time: at any instant each one has a
figure (what it showed at the span's start, less what the requests the replay sent it took,
less its background burn, refilled at each reset) and the replayed readings are those
figures. ``make_plan`` at a request's instant, on the replayed readings up to it and one
reading of every modelled window at that instant, is the plan in force; the replay does not
plan every request, it re-decides a connection (with the very functions ``Stepper`` uses)
only where its decisions can change:

* a window's reset, and a first-use window's cycle starting at the replay's first request
  to it (``anchor = "first-use"``, SPEC §10.3);
* a window reaching the connection's exit cutoff, by a request or by its background burn
  (whose instant is computed, not sampled);
* the connection's own state changing (``engine.changes.state_changes``);
* a rung's budget (R8) moving with the dollars the replay paid.

Within one cycle a replayed figure only falls, so R7 sees a pair leave play at the crossing
and come back only at a reset: the replay keeps the readings written at those instants and
the latest one (``_Observed``), which R7 and R6.4 judge alike to a reading at every request.
Under R15's ``expiring-first`` the order within a quota rung reads every figure at the
request's instant, so the seated connections of the head rung are observed at each request.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import count
from typing import cast

from omniladder.analyses.whatif.demand import Request
from omniladder.analyses.whatif.report import Expired
from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import BudgetPosition, budget_positions, period_start
from omniladder.engine.changes import state_changes
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.pool import (
    QUOTA_RUNG_INDEXES,
    RUNG_INDEX,
    Entry,
    Seating,
    expiring_first,
    rate_at,
    urgency_terms,
)
from omniladder.engine.readings import below, threshold_of
from omniladder.engine.records import PairDecision
from omniladder.engine.stepping import Stepper
from omniladder.models import (
    PAID_RUNGS,
    RUNGS,
    Connection,
    LadderSettings,
    Reading,
    Rung,
    SpendEvent,
    Window,
)

_HOUR = 3600.0
_NUDGE = timedelta(milliseconds=1)
"""A computed crossing is re-decided this much after it: the figure is then past the
cutoff, whatever the rounding of the instant."""

_NEVER_HOURS = 1e6
"""A background crossing later than this (over a century) is none: no span reaches it, and
an instant that far off may be past what a datetime holds."""

Price = Callable[[Connection, str, Request], float | None]
"""The price of a request served by a paid pair (connection, model), or None when it cannot
be priced."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowModel:
    """One modelled window of a connection: its consumption and its cycles."""

    name: str
    models: tuple[str, ...] | None
    window_seconds: int | None
    """As the readings carry it (written back into the replayed readings)."""
    length_seconds: float | None
    """The cycle's length (the reading's ``window_seconds``, else the catalog's
    ``duration``); None: unknown, so no cycle is added past the recorded resets."""
    first_use: bool
    percent_per_unit: float
    background_percent_per_hour: float
    remaining: float
    """The figure at the span's start."""
    reset_at: datetime | None
    """The end of the cycle in progress at the span's start; None: a first-use window at
    rest, or no reset known."""
    resets: tuple[datetime, ...] = ()
    """The recorded resets after the span's start (a fixed window keeps them)."""


def next_reset(model: WindowModel, after: datetime, skip: int = 0
               ) -> tuple[datetime | None, int]:
    """The reset that ends a fixed window's cycle starting at ``after``: the next recorded
    one (searched from ``model.resets[skip]``), else one cycle's length later (None: no
    length known); with the index to search from next time."""
    resets = model.resets
    while skip < len(resets) and resets[skip] <= after:
        skip += 1
    if skip < len(resets):
        return resets[skip], skip
    length = model.length_seconds
    return (after + timedelta(seconds=length) if length else None), skip


@dataclass(slots=True)
class _Window:
    model: WindowModel
    remaining: float
    at: datetime
    reset_at: datetime | None
    next_reset: int = 0
    """The index in ``model.resets`` of the first recorded reset after ``reset_at``."""

    def running(self) -> bool:
        return self.reset_at is not None or not self.model.first_use

    def advance(self, now: datetime) -> None:
        """Its background burn up to now (within the cycle: resets are events)."""
        if now > self.at:
            if self.running() and self.model.background_percent_per_hour > 0:
                burnt = self.model.background_percent_per_hour * (
                    (now - self.at).total_seconds() / _HOUR)
                self.remaining = max(0.0, self.remaining - burnt)
            self.at = now

    def following_reset(self, after: datetime) -> datetime | None:
        """The reset that ends the cycle starting at ``after`` (``next_reset``)."""
        reset, self.next_reset = next_reset(self.model, after, self.next_reset)
        return reset

    def crossing(self, threshold: float) -> datetime | None:
        """When the background burn alone brings the figure to ``threshold``, if before the
        reset."""
        rate = self.model.background_percent_per_hour
        if rate <= 0 or not self.running() or self.remaining <= threshold:
            return None
        hours = (self.remaining - threshold) / rate
        if hours > _NEVER_HOURS:  # a fitted background of next to nothing
            return None
        at = self.at + timedelta(hours=hours) + _NUDGE
        if self.reset_at is not None and at >= self.reset_at:
            return None
        return at

    def window(self) -> Window:
        model = self.model
        return Window(name=model.name, remaining_percent=min(100.0, max(0.0, self.remaining)),
                      reset_at=self.reset_at, models=model.models,
                      window_seconds=model.window_seconds)


@dataclass(slots=True, kw_only=True)
class _Observed:
    """One modelled connection: its windows, and the readings the replay wrote (the
    recorded ones up to the span's start first)."""

    index: int
    id: str
    windows: list[_Window]
    history: list[Reading]
    ladder: LadderSettings
    """The thresholds the connection is held to (its reserve's, R16: ``Fleet.ladders``)."""
    kept: int
    """How many readings of ``history`` stay whatever comes after (the recorded ones and
    those written at a reset or a crossing)."""
    version: int = 0
    due: datetime | None = None
    """The instant of the event last scheduled."""

    def observe(self, now: datetime, keep: bool) -> Reading:
        """Write the reading of now (replacing the latest one when nothing kept it)."""
        reading = self.reading_at(now)
        if len(self.history) > self.kept and self.history[-1].checked_at <= now:
            self.history[-1] = reading
        else:
            self.history.append(reading)
        if keep:
            self.kept = len(self.history)
        return reading

    def reading_at(self, now: datetime) -> Reading:
        """The reading of now, not written."""
        for window in self.windows:
            window.advance(now)
        return Reading(connection=self.id, checked_at=now,
                       windows=tuple(window.window() for window in self.windows))

    def low(self, model: str) -> bool:
        """Whether a window limiting ``model`` is at or below the exit cutoff (R7's one
        comparison: a pair in play leaves there)."""
        return any(below(window.remaining, True, self.ladder) for window in self.windows
                   if window.model.models is None or model in window.model.models)


@dataclass(slots=True, kw_only=True)
class Outcome:
    """What one replay did."""

    paid_usd: float = 0.0
    paid_by_rung: dict[str, float] = field(default_factory=dict)
    served_by_rung: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RUNGS, 0))
    blocked: int = 0
    unpriced: int = 0
    expired: list[Expired] = field(default_factory=list)
    paid_seconds: float = 0.0
    paid_over_time: list[tuple[datetime, float]] = field(default_factory=list)
    served_by: list[tuple[int, Rung, str] | None] = field(default_factory=list)
    """Per request, (connection index, rung, model) that served it; None when blocked (kept
    only when asked for: the tests' and the bound's)."""
    probes: list[tuple[str, str, datetime, float, float]] = field(default_factory=list)
    """(connection, window, instant, recorded, replayed) of each recorded reading compared."""
    samples: list[Reading] = field(default_factory=list)
    """The readings asked for (``Replay``'s ``samples``), in time order."""


_RESET, _STATE, _PROBE, _SAMPLE = range(4)


class Replay:
    """One scenario's replay over [start, end] (``run``); the engine's inputs are the
    scenario's, with ``readings`` holding the replayed histories of the modelled
    connections."""

    def __init__(self, inputs: LoadedInputs, auto_id: AutoId, start: datetime, end: datetime,
                 models: dict[str, tuple[WindowModel, ...]], price: Price,
                 seat_share: Callable[[str, WindowModel], float | None] | None = None,
                 probes: Sequence[Reading] = (), keep_served: bool = False,
                 samples: Sequence[tuple[datetime, str]] = ()) -> None:
        """``probes``: recorded readings to compare with the replayed figures (the
        fidelity); ``samples``: (instant, connection) of the readings to write down as the
        replay shows them (the generated week's telemetry)."""
        self.start, self.end = start, end
        self.auto_id = auto_id
        self.price = price
        self.seat_share = seat_share
        self.keep_served = keep_served
        histories: dict[str, list[Reading]] = {}
        for connection in inputs.connections:
            if connection.id in models:
                recorded = inputs.readings.get(connection.id, ())
                histories[connection.id] = [r for r in recorded if r.checked_at < start]
        readings = {**inputs.readings, **histories}
        spent = ([e for e in inputs.spend or () if e.at < start] if _budgeted(inputs)
                 else None)
        # The histories and the spend are lists the replay appends to: the fleet and the
        # stepper read them as they grow (a tuple's reader reads a list alike).
        self.inputs = inputs._replace(readings=cast(dict[str, tuple[Reading, ...]], readings),
                                      spend=cast(tuple[SpendEvent, ...] | None, spent))
        self.fleet = Fleet(self.inputs)
        self.stepper = Stepper(self.inputs, auto_id, [start], fleet=self.fleet)
        fleet = self.fleet
        self.observed: dict[int, _Observed] = {}
        for index, connection in enumerate(fleet.connections):
            windows = models.get(connection.id)
            if windows is None:
                continue
            history = histories[connection.id]
            self.observed[index] = _Observed(
                index=index, id=connection.id, history=history, kept=len(history),
                ladder=fleet.ladders[index],
                windows=[_Window(model=w, remaining=w.remaining, at=start, reset_at=w.reset_at)
                         for w in windows])
        self.spend = spent
        self.queue: list[tuple[datetime, int, int, int, int]] = []
        self.sequence = count()
        self.reorders = fleet.ladder.within_rung_order == "expiring-first"
        self.probe_readings = probes
        self.samples = samples
        self.outcome = Outcome()
        self.watch: Callable[[Request, tuple[int, Rung, int] | None], None] | None = None
        """Called with each request and where it goes, before it is served (the tests hold
        the replay to ``make_plan`` there)."""

    # --- the queue ----------------------------------------------------------------------

    def _push(self, at: datetime, kind: int, index: int, version: int = 0) -> None:
        heapq.heappush(self.queue, (at, next(self.sequence), kind, index, version))

    def _schedule(self, seen: _Observed) -> None:
        """The observed connection's next reset and crossing, under a new version (the
        ones pushed before are dropped when they come up)."""
        soonest: datetime | None = None
        cutoff = threshold_of(True, seen.ladder)
        for window in seen.windows:
            for at in (window.reset_at, window.crossing(cutoff)):
                if at is not None and (soonest is None or at < soonest):
                    soonest = at
        if soonest == seen.due:
            return
        seen.version += 1
        seen.due = soonest
        if soonest is not None and soonest <= self.end:
            self._push(soonest, _RESET, seen.index, seen.version)

    # --- deciding -------------------------------------------------------------------------

    def _budgets(self, now: datetime) -> dict[str, BudgetPosition]:
        return budget_positions(self.inputs.settings.budgets, self.spend, now,
                                self.fleet.rung_of_event)

    def _decide(self, index: int, now: datetime) -> None:
        """Decide one connection again at now and seat it anew."""
        new = self.stepper.decide(index, now, self.budgets)
        old = self.decided[index]
        self.decided[index] = new
        self._place(index, old, -1)
        self._place(index, new, 1)
        self.dirty = True

    def _place(self, index: int, decisions: tuple[PairDecision, ...], sign: int) -> None:
        pairs = self.fleet.pairs[index]
        self.seating.place(index, [
            (RUNG_INDEX[pair.rung], pair.candidate, True if decision.unverified else None)
            for pair, decision in zip(pairs, decisions, strict=True) if decision.admitted],
            sign)

    def _refresh(self, seen: _Observed, now: datetime, keep: bool) -> None:
        seen.observe(now, keep)
        self._decide(seen.index, now)
        self._schedule(seen)

    # --- the walk -------------------------------------------------------------------------

    def run(self, demand: Sequence[Request]) -> Outcome:
        fleet = self.fleet
        start = self.start
        self.seating: Seating[bool] = Seating([c.id for c in fleet.connections], track=True)
        self.budgets = self._budgets(start)
        self.budget_key = (period_start(start, self.inputs.settings.budgets.period), 0)
        for seen in self.observed.values():
            seen.observe(start, keep=True)
        self.decided: list[tuple[PairDecision, ...]] = [
            self.stepper.decide(index, start, self.budgets)
            for index in range(len(fleet.connections))]
        self.initial = tuple(self.decided)
        """Every pair's decision at the span's start."""
        for index, decisions in enumerate(self.decided):
            self._place(index, decisions, 1)
        self.dirty = True
        for seen in self.observed.values():
            self._schedule(seen)
        for index, connection in enumerate(fleet.connections):
            for change in state_changes(connection):
                if start < change.at <= self.end:
                    self._push(change.at, _STATE, index)
        for reading in self.probe_readings:
            found = fleet.index.get(reading.connection)
            if found is not None and found in self.observed and (
                    start < reading.checked_at <= self.end):
                self._push(reading.checked_at, _PROBE, found, id(reading))
        self._probe_by_id = {id(r): r for r in self.probe_readings}
        for when, connection_id in self.samples:
            found = fleet.index.get(connection_id)
            if found is not None and found in self.observed and start <= when <= self.end:
                self._push(when, _SAMPLE, found)
        outcome = self.outcome
        self.head_since: tuple[datetime, Rung | None] = (start, self.seating.head())
        marks = _marks(start, self.end)
        mark = 0
        target: tuple[int, Rung, int] | None = None
        for request in demand:
            at = request.at
            self._events_until(at)
            while mark < len(marks) and marks[mark] <= at:
                outcome.paid_over_time.append((marks[mark], outcome.paid_usd))
                mark += 1
            if self.dirty or self.reorders:
                target = self._target(at)
                self.dirty = False
            if self.watch is not None:
                self.watch(request, target)
            self._serve(request, target, at)
        self._events_until(self.end)
        self._head_moved(self.end)
        while mark < len(marks):
            outcome.paid_over_time.append((marks[mark], outcome.paid_usd))
            mark += 1
        return outcome

    def _events_until(self, at: datetime) -> None:
        queue = self.queue
        while queue and (queue[0][0] <= at):
            when, _, kind, index, version = heapq.heappop(queue)
            if kind == _PROBE:
                self._probe(index, when, self._probe_by_id[version])
                continue
            if kind == _SAMPLE:
                self.outcome.samples.append(self.observed[index].reading_at(when))
                continue
            if kind == _STATE:
                self._decide(index, when)
                self._head_moved(when)
                continue
            seen = self.observed[index]
            if version != seen.version:
                continue
            seen.due = None
            for window in seen.windows:
                if window.reset_at is not None and window.reset_at <= when:
                    self._reset(seen, window, window.reset_at)
            self._refresh(seen, when, keep=True)
            self._head_moved(when)

    def _reset(self, seen: _Observed, window: _Window, at: datetime) -> None:
        window.advance(at)
        left = window.remaining
        if left > 0 and self.start < at <= self.end:
            share = self.seat_share(seen.id, window.model) if self.seat_share else None
            self.outcome.expired.append(Expired(
                connection=seen.id, window=window.model.name, reset_at=at, percent=left,
                usd=None if share is None else share * left / 100.0))
        window.remaining = 100.0
        window.reset_at = None if window.model.first_use else window.following_reset(at)

    def _probe(self, index: int, at: datetime, reading: Reading) -> None:
        seen = self.observed[index]
        by_name = {w.model.name: w for w in seen.windows}
        for recorded in reading.all_windows():
            replayed = by_name.get(recorded.name)
            if replayed is None or recorded.unlimited or recorded.remaining_percent is None:
                continue
            replayed.advance(at)
            self.outcome.probes.append((seen.id, recorded.name, at,
                                        float(recorded.remaining_percent), replayed.remaining))

    def readings_at(self, now: datetime) -> dict[str, tuple[Reading, ...]]:
        """The replayed readings up to now, and one of every observed connection at now:
        what ``make_plan`` at now reads for the plan in force."""
        readings = {**self.inputs.readings}
        for seen in self.observed.values():
            kept = [r for r in seen.history if r.checked_at < now]
            readings[seen.id] = (*kept, seen.reading_at(now))
        return readings

    def _head_moved(self, now: datetime) -> None:
        since, head = self.head_since
        if head in PAID_RUNGS:
            self.outcome.paid_seconds += (now - since).total_seconds()
        self.head_since = (now, self.seating.head())

    def _target(self, now: datetime) -> tuple[int, Rung, int] | None:
        """The first pool entry's first allowlisted connection: (connection, rung,
        candidate)."""
        pool = self.seating.pool()
        if not pool:
            return None
        head = pool[0]
        if self.reorders and RUNG_INDEX[head.rung] in QUOTA_RUNG_INDEXES:
            on_head = [entry for entry in pool if entry.rung == head.rung]
            head = self._expiring_first(on_head, now)[0]
        return head.members[0], head.rung, head.candidate

    def _expiring_first(self, entries: list[Entry[bool]], now: datetime) -> list[Entry[bool]]:
        """R15 on the head rung's entries, every figure as observed at now."""
        fleet = self.fleet
        readings: dict[int, Reading | None] = {}
        for entry in entries:
            for member in entry.members:
                if member in readings:
                    continue
                seen = self.observed.get(member)
                if seen is None:
                    readings[member] = _usable_reading(self.decided[member])
                else:
                    readings[member] = seen.observe(now, keep=False)
        weights = [c.weight for c in fleet.connections]

        def rates(entry: Entry[bool]) -> list[float]:
            model = fleet.keys[entry.candidate][1]
            return [rate_at(urgency_terms(readings[member], model, weights[member], now), now)
                    for member in entry.members]

        return expiring_first(entries, rates)

    def _serve(self, request: Request, target: tuple[int, Rung, int] | None,
               at: datetime) -> None:
        outcome = self.outcome
        if target is None:
            outcome.blocked += 1
            if self.keep_served:
                outcome.served_by.append(None)
            return
        index, rung, candidate = target
        model = self.fleet.keys[candidate][1]
        outcome.served_by_rung[rung] += 1
        if self.keep_served:
            outcome.served_by.append((index, rung, model))
        if rung in PAID_RUNGS:
            cost = self.price(self.fleet.connections[index], model, request)
            if cost is None:
                outcome.unpriced += 1
                return
            outcome.paid_usd += cost
            outcome.paid_by_rung[rung] = outcome.paid_by_rung.get(rung, 0.0) + cost
            if self.spend is not None:
                self.spend.append(SpendEvent(at=at, cost_usd=cost, rung=rung))
                self._budget_moved(at)
            return
        seen = self.observed.get(index)
        if seen is None:
            return
        units = request.units
        started = False
        for window in seen.windows:
            applies = window.model.models is None or model in window.model.models
            if not applies:
                continue
            window.advance(at)
            if window.reset_at is None and window.model.first_use:
                length = window.model.length_seconds
                if length:
                    window.reset_at = at + timedelta(seconds=length)
                    started = True
            window.remaining = max(0.0, window.remaining - units * window.model.percent_per_unit)
        if seen.low(model):
            self._refresh(seen, at, keep=True)
            self._head_moved(at)
            return
        if started:  # its reset is known from now on: a reading says so
            seen.observe(at, keep=True)
        self._schedule(seen)

    def _budget_moved(self, now: datetime) -> None:
        key = (period_start(now, self.inputs.settings.budgets.period), len(self.spend or ()))
        if key == self.budget_key:
            return
        self.budget_key = key
        fresh = self._budgets(now)
        for rung, moved_to in fresh.items():
            was = self.budgets.get(rung)
            if was != moved_to and (moved_to.gates or (was is not None and was.gates)):
                self.budgets = fresh
                for index in self.stepper.on_rung[rung]:
                    self._decide(index, now)
        self.budgets = fresh
        self._head_moved(now)


def _budgeted(inputs: LoadedInputs) -> bool:
    budgets = inputs.settings.budgets.rung_budget_usd
    return any(budgets.for_rung(rung) is not None for rung in PAID_RUNGS)


def _usable_reading(decisions: tuple[PairDecision, ...]) -> Reading | None:
    for decision in decisions:
        verdict = decision.verdict
        if decision.admitted and verdict is not None and verdict.kind == "usable":
            return verdict.reading
    return None


def _marks(start: datetime, end: datetime, points: int = 96) -> list[datetime]:
    """The instants ``paid_over_time`` is read at: the span in ``points`` equal parts."""
    span = (end - start).total_seconds()
    if span <= 0 or not math.isfinite(span):
        return [end]
    return [start + timedelta(seconds=span * k / points) for k in range(1, points + 1)]
