"""`forecast`: when each auto id steps up a rung, and when it starts paying.

Two parts, both plain functions over the loaded inputs:

* **Pace** of every window of each connection's latest reading (the reading R6 judges at
  now, R6.4's held windows included): the elapsed part of the window, the use an even pace
  would have reached, the actual use, the burn rate over the readings of the window's current
  cycle, the instant the window reaches the exit cutoff at that rate, and whether it lasts to
  its reset. Guardrails give a reason instead of a number: fewer than two readings in the
  cycle, less than 5% of the window elapsed (when its length and reset are known), a stale,
  unknown or exhausted reading. Nothing runs out after its own reset.
* **The ladder's forecast.** Each connection whose latest reading is fresh at now gets
  projected readings: its windows burnt at their rates, back to 100% at each reset, as if
  its telemetry kept arriving. The projected readings join the recorded history and the
  stepping engine (``omniladder.engine.stepping``, the one ``simulate`` runs) decides the
  plan at every instant a decision can change (docs/forecast.md#instants): each projected
  reset and cutoff crossing, computed as an instant, each change of the recorded inputs
  (a reading's reset or turning stale, a cooldown's end, a budget period, a spend event)
  and the listed steps. The forecast *is* a simulation of recorded-plus-projected readings,
  so R6, R7 (hysteresis), R8, R9 and R10/R11 are never re-derived here, and its answers do
  not depend on the step. A connection whose reading is stale, unknown or exhausted gets
  no projection, and a window that cannot be projected makes the answers unknown
  (docs/forecast.md#unknown). The projection is walked at each window's middle, high and
  low burn for the answers' p10 / p50 / p90 (docs/forecast.md#band). Spend is not
  projected (the engine counts the ledger's recorded spend only): with a ledger, each paid
  rung's estimate reports where its cost per hour reaches the rung's R8 budget
  (``budget_reached_at``), and the plan keeps the rung open after it.

A projected reading is written at now and at each instant where a decision can change;
between two of them a window only falls and stays on the same side of the cutoff, so the
engine decides as with a reading at every instant (a test holds the two to the same walk).
"""

from __future__ import annotations

import dataclasses
from calendar import monthrange
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import NamedTuple

from omniladder import timefmt
from omniladder.analyses.simulate import Point, Transition, step_instants, walk
from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import (
    BudgetPosition,
    next_period_start,
    period_start,
    total_usd,
)
from omniladder.engine.changes import connection_changes
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import HeldWindow, in_force, readings_until
from omniladder.engine.report import empty_fleet_warning
from omniladder.engine.stepping import Stepper
from omniladder.models import (
    CALENDAR_MONTH,
    PAID_RUNGS,
    RUNGS,
    ObservedOverage,
    Reading,
    Rung,
    Window,
    duration_seconds,
)

DEFAULT_HORIZON = "24h"
DEFAULT_STEP = "5m"
MIN_ELAPSED_FRACTION = 0.05
"""No pace before 5% of the window has elapsed: a burst at the start says little."""
MIN_CYCLE_READINGS = 2
SAME_RESET_SECONDS = 60.0
"""Two readings whose reset instants differ by at most this belong to one window cycle
(sources round or jitter the reset by a few seconds)."""
SPEND_BASIS_HOURS = 24
"""The recent cost per hour of a paid rung: its spend in this many hours before now."""

WindowLength = Callable[[str, Window], tuple[float | None, str]]
"""(provider, window) → (length in seconds or None, where the length came from)."""


def no_lengths(provider: str, window: Window) -> tuple[float | None, str]:
    """Lengths from the readings only (``window_seconds``)."""
    if window.window_seconds is not None:
        return float(window.window_seconds), "reading"
    return None, "unknown"


def month_before(instant: datetime) -> datetime:
    """The same wall time one calendar month earlier (the day clamped to the month)."""
    year, month = (instant.year, instant.month - 1) if instant.month > 1 else (
        instant.year - 1, 12)
    day = min(instant.day, monthrange(year, month)[1])
    return instant.replace(year=year, month=month, day=day)


def catalog_lengths(scopes: object) -> WindowLength:
    """Lengths from ``window_seconds``, else from the window catalog's ``duration``."""
    from omniladder.inputs.scopes import WindowScopes

    assert isinstance(scopes, WindowScopes)

    def length(provider: str, window: Window) -> tuple[float | None, str]:
        if window.window_seconds is not None:
            return float(window.window_seconds), "reading"
        sourced = scopes.match(provider, window.name)
        if sourced is None or sourced.entry.duration is None:
            return None, "unknown"
        text = sourced.entry.duration
        if text == CALENDAR_MONTH:
            if window.reset_at is None:
                return None, "unknown"
            seconds = (window.reset_at - month_before(window.reset_at)).total_seconds()
        else:
            seconds = duration_seconds(text) or 0.0
        return seconds, f"catalog {sourced.file}"

    return length


# --- pace -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Pace:
    """One window of a connection's latest reading, against an even pace (issue item 2)."""

    connection_id: str
    window: str
    models: tuple[str, ...] | None
    checked_at: datetime
    remaining_percent: float | None
    """None for an unlimited window."""
    reset_at: datetime | None
    window_seconds: float | None
    length_source: str
    readings: int
    """Readings of the window's current cycle, the latest included."""
    elapsed_fraction: float | None
    expected_used_percent: float | None
    used_percent: float | None
    ahead_percent: float | None
    """Actual use less the even-pace use: positive burns faster than the window lasts."""
    burn_percent_per_hour: float | None
    cutoff_at: datetime | None
    """When the window reaches the exit cutoff at the burn rate; None when it does not
    before its reset (or has no rate)."""
    lasts_to_reset: bool | None
    note: str
    """Why a figure is missing (a guardrail), or what holds the window; empty otherwise."""
    burn_band: tuple[float, float] | None = None
    """The low and high burn (%/h) around ``burn_percent_per_hour``: the spread of the rates
    the window's history shows, at least ``MIN_SPREAD`` either side (docs/forecast.md#band);
    None without a burn rate."""
    past_reset: bool = False
    """The window's reset lies at or before now: its figure is of a past cycle (the row
    says so instead of looking current)."""

    @property
    def rate(self) -> float:
        """The burn the projection uses: none without a forecast."""
        return self.burn_percent_per_hour or 0.0


@dataclass(frozen=True, kw_only=True)
class ConnectionOutlook:
    """Whether a connection's readings are projected, and why not when not."""

    connection_id: str
    projected: bool
    note: str
    paces: tuple[Pace, ...]
    unknown: bool = False
    """Not projected because what it holds is unknown at now (a stale reading, a status of
    unknown, no figure): its windows are unprojected (docs/forecast.md#unknown)."""


def _same_window(a: Window, b: Window) -> bool:
    return a.name == b.name and a.models == b.models


def _same_reset(a: datetime | None, b: datetime | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs((a - b).total_seconds()) <= SAME_RESET_SECONDS


def cycle_readings(readings: Sequence[Reading], window: Window) -> list[tuple[datetime, float]]:
    """(checked_at, figure) of the window over its current cycle, oldest first: back from the
    latest reading while the window is shown with the same reset and no regain."""
    found: list[tuple[datetime, float]] = []
    later: float | None = None
    for reading in reversed(readings):
        mine = next((w for w in reading.all_windows() if _same_window(w, window)), None)
        if mine is None or mine.unlimited or not _same_reset(mine.reset_at, window.reset_at):
            break
        figure = mine.figure
        if later is not None and figure < later:
            break  # lower before a higher figure: a reset in between (a new cycle)
        found.append((reading.checked_at, figure))
        later = figure
    found.reverse()
    return found


def window_pace(connection_id: str, provider: str, readings: Sequence[Reading],
                window: Window, now: datetime, cutoff: float,
                lengths: WindowLength) -> Pace:
    """The pace of one window of the latest reading (``readings[-1]``)."""
    latest = readings[-1]
    length, source = lengths(provider, window)
    reset_at = window.reset_at
    elapsed: float | None = None
    if length is not None and reset_at is not None:
        elapsed = min(max(1.0 - (reset_at - now).total_seconds() / length, 0.0), 1.0)
    blank = Pace(connection_id=connection_id, window=window.name, models=window.models,
                 checked_at=latest.checked_at,
                 remaining_percent=None if window.unlimited else window.figure, reset_at=reset_at,
                 window_seconds=length, length_source=source, readings=0, elapsed_fraction=elapsed,
                 expected_used_percent=None if elapsed is None else elapsed * 100.0,
                 used_percent=None, ahead_percent=None, burn_percent_per_hour=None, cutoff_at=None,
                 lasts_to_reset=None, note="")
    if window.unlimited:
        return dataclasses.replace(blank, lasts_to_reset=True, note="unlimited")
    used = 100.0 - window.figure
    expected = blank.expected_used_percent
    blank = dataclasses.replace(
        blank, used_percent=used, ahead_percent=None if expected is None else used - expected)
    if isinstance(window, HeldWindow):
        until = timefmt.short(reset_at, now) if reset_at is not None else "its reset"
        return dataclasses.replace(
            blank, lasts_to_reset=False,
            note=f"held at {timefmt.pct(window.figure)} until {until}: no regain before a "
                 "reset (R6.4)")
    if reset_at is not None and reset_at <= now:
        ago = timefmt.duration((now - reset_at).total_seconds())
        return dataclasses.replace(
            blank, elapsed_fraction=None, expected_used_percent=None, ahead_percent=None,
            past_reset=True,
            note=f"reset at {timefmt.short(reset_at, now)}, {ago} before now: the figure is "
                 "of a past cycle and no longer counts; no newer reading, no forecast")
    if window.figure <= cutoff:
        until = timefmt.short(reset_at, now) if reset_at is not None else "a higher reading"
        return dataclasses.replace(
            blank, lasts_to_reset=False,
            note=f"at or below the cutoff {timefmt.pct(cutoff)} until {until}")
    cycle = cycle_readings(readings, window)
    blank = dataclasses.replace(blank, readings=len(cycle))
    hours = (cycle[-1][0] - cycle[0][0]).total_seconds() / 3600.0 if cycle else 0.0
    if len(cycle) < MIN_CYCLE_READINGS or hours <= 0:
        return dataclasses.replace(
            blank, note=f"{len(cycle)} reading in this cycle: no burn rate before "
                        f"{MIN_CYCLE_READINGS}")
    if elapsed is not None and elapsed < MIN_ELAPSED_FRACTION:
        return dataclasses.replace(
            blank, note=f"{elapsed * 100:.0f}% of the window elapsed: no burn rate before "
                        f"{MIN_ELAPSED_FRACTION * 100:.0f}%")
    # A burn rate needs two readings of one cycle and nothing else; without the window's
    # length (or its reset) only the early-cycle guardrail is skipped, and the note says so.
    assumed = ""
    if reset_at is None:
        assumed = (f"no reset instant: burn from {len(cycle)} readings of this cycle, "
                   "projected with no reset and without the early-cycle guardrail")
    elif length is None:
        assumed = (f"window length unknown (no window_seconds, no catalog duration): burn "
                   f"from {len(cycle)} readings of this cycle without the early-cycle "
                   "guardrail; full at its reset, which does not recur")
    (_, first), (last_at, last) = cycle[0], cycle[-1]
    rate = max(first - last, 0.0) / hours
    blank = dataclasses.replace(blank, note=assumed,
                                burn_band=burn_band(readings, window, rate, now))
    paced = dataclasses.replace(blank, burn_percent_per_hour=rate, lasts_to_reset=True)
    # The reset always wins; a crossing past it is never placed on the calendar (a burn of
    # a sliver an hour puts it past year 9999). The instant is the one the projection shows.
    first_cycle = dataclasses.replace(paced, window_seconds=None)
    found = crossings(window, first_cycle, last_at, cutoff,
                      reset_at or datetime.max.replace(tzinfo=UTC))
    if found:
        return dataclasses.replace(paced, cutoff_at=found[0], lasts_to_reset=False)
    return paced


MIN_SPREAD = 0.25
"""The band is at least this share of the burn rate either side of it: a short or steady
history does not make the forecast surer than a quarter of its rate."""
HALF_LIFE_HOURS = 24.0
"""A span of the history this many hours before now weighs half a span ending now."""
BAND_QUANTILES = (0.1, 0.9)
RATE_SPAN_HOURS = 1.0
"""The history is read in spans of at least this long (consecutive readings of one cycle
joined until they are): the band is about the burn over the hours ahead, not over the
minutes between two readings (docs/forecast.md#band)."""


def history_rates(readings: Sequence[Reading], window: Window,
                  now: datetime) -> list[tuple[float, float]]:
    """(ratio, weight): for each span of the window's history (at least ``RATE_SPAN_HOURS``
    of consecutive readings of one cycle: same reset, no regain), its burn rate divided by
    the rate of the span just before it in the same cycle, when that one burnt: how far
    the burn over the next span strayed from the burn the span before showed. Over the
    current and past cycles; the weight is the span's hours, halved for every
    ``HALF_LIFE_HOURS`` before now."""
    out: list[tuple[float, float]] = []
    start: tuple[datetime, float, datetime | None] | None = None
    last: tuple[float, datetime] | None = None
    for reading in readings:
        mine = next((w for w in reading.all_windows() if _same_window(w, window)), None)
        if mine is None or mine.unlimited:
            start = last = None
            continue
        here = (reading.checked_at, mine.figure, mine.reset_at)
        if start is None:
            start = here
            continue
        at, figure, reset_at = start
        hours = (reading.checked_at - at).total_seconds() / 3600.0
        if mine.figure > figure or not _same_reset(reset_at, mine.reset_at):
            start, last = here, None  # a regain or a reset: a new cycle
            continue
        if hours < RATE_SPAN_HOURS:
            continue
        rate = (figure - mine.figure) / hours
        if last is not None and last[1] == at and last[0] > 0:
            age = max((now - reading.checked_at).total_seconds() / 3600.0, 0.0)
            out.append((rate / last[0], hours * 0.5 ** (age / HALF_LIFE_HOURS)))
        start, last = here, (rate, reading.checked_at)
    return out


def _quantile(rates: Sequence[tuple[float, float]], share: float) -> float:
    """The weighted quantile: the least value whose cumulative weight reaches ``share``."""
    ordered = sorted(rates)
    total = sum(weight for _, weight in ordered)
    reached = 0.0
    for rate, weight in ordered:
        reached += weight
        if reached >= share * total:
            return rate
    return ordered[-1][0]


def burn_band(readings: Sequence[Reading], window: Window, rate: float,
              now: datetime) -> tuple[float, float]:
    """The low and high burn around ``rate``: the rate times the 10th and 90th weighted
    percentiles of the window's history of span-to-span ratios (``history_rates``), widened
    to at least ``MIN_SPREAD`` of the rate either side and never excluding the rate."""
    ratios = history_rates(readings, window, now)
    low, high = rate * (1.0 - MIN_SPREAD), rate * (1.0 + MIN_SPREAD)
    if ratios and sum(weight for _, weight in ratios) > 0:
        low = min(low, rate * _quantile(ratios, BAND_QUANTILES[0]))
        high = max(high, rate * _quantile(ratios, BAND_QUANTILES[1]))
    return max(low, 0.0), high


def _before_reset(start: datetime, hours: float, reset_at: datetime | None) -> bool:
    """Whether ``hours`` after ``start`` can fall before the reset (always without one)."""
    return reset_at is None or hours * 3600.0 <= (reset_at - start).total_seconds()


def outlook(connection_id: str, provider: str, history: Sequence[Reading], now: datetime,
            inputs: LoadedInputs, lengths: WindowLength) -> ConnectionOutlook:
    """The paces of a connection's latest reading and whether it can be projected."""
    ladder = inputs.settings.ladder
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    if not readings:
        return ConnectionOutlook(connection_id=connection_id, projected=False,
                                 note="no quota reading at or before now", paces=())
    latest = readings[-1]
    seen = timefmt.short(latest.checked_at, now)
    if latest.status == "unknown":
        return ConnectionOutlook(connection_id=connection_id, projected=False,
                                 note=f"reading at {seen} has status unknown:"
                                 " unknown remaining is never headroom, no projection",
                                 paces=(), unknown=True)
    if latest.status == "exhausted":
        resets = (f" until {timefmt.short(latest.reset_at, now)}"
                  if latest.reset_at is not None else "")
        return ConnectionOutlook(connection_id=connection_id, projected=False,
                                 note=f"reading at {seen} says exhausted{resets}: no projection",
                                 paces=())
    if not latest.all_windows():
        return ConnectionOutlook(connection_id=connection_id, projected=False,
                                 note=f"reading at {seen} has no window and "
                                 "no figure: nothing to project",
                                 paces=(), unknown=True)
    age = (now - latest.checked_at).total_seconds()
    paces = tuple(window_pace(connection_id, provider, readings, window, now,
                              ladder.exit_cutoff_percent, lengths)
                  for window in latest.all_windows())
    if age > ladder.max_reading_age_seconds:
        stale = (f"reading at {seen} is "
                 f"{timefmt.age_beside(age, ladder.max_reading_age_seconds)} old (max "
                 f"{timefmt.duration(ladder.max_reading_age_seconds)}): stale, no forecast")
        paces = tuple(dataclasses.replace(
            pace, burn_percent_per_hour=None, cutoff_at=None, lasts_to_reset=None,
            note=f"{stale}; {pace.note}" if pace.past_reset else stale) for pace in paces)
        return ConnectionOutlook(connection_id=connection_id, projected=False, note=stale,
                                 paces=paces, unknown=True)
    return ConnectionOutlook(connection_id=connection_id, projected=True, note="", paces=paces)


# --- projected readings ----------------------------------------------------------------------


def _projected_window(window: Window, pace: Pace, origin: datetime, at: datetime
                      ) -> Window:
    """The window as a reading at ``at`` would show it, burnt from ``origin`` at the rate."""
    reset_at = window.reset_at
    if reset_at is None or at < reset_at:
        if window.unlimited or pace.rate == 0:
            return _plain(window, window.remaining_percent, reset_at)
        left = max(window.figure - pace.rate * (at - origin).total_seconds() / 3600.0, 0.0)
        return _plain(window, left, reset_at)
    length = pace.window_seconds
    if length is None:  # no length: the window is full again, and no further reset is known
        return _plain(window, None if window.unlimited else 100.0, None)
    cycles = int((at - reset_at).total_seconds() // length)
    start = reset_at + timedelta(seconds=length * cycles)
    if window.unlimited:
        return _plain(window, None, start + timedelta(seconds=length))
    left = max(100.0 - pace.rate * (at - start).total_seconds() / 3600.0, 0.0)
    return _plain(window, left, start + timedelta(seconds=length))


def _plain(window: Window, remaining: float | None, reset_at: datetime | None) -> Window:
    return Window(name=window.name, remaining_percent=remaining,
                  unlimited=remaining is None, reset_at=reset_at, models=window.models,
                  window_seconds=window.window_seconds)


def _resets(window: Window, pace: Pace, end: datetime) -> list[datetime]:
    """Every reset of the window from its own until ``end`` (one without a known length)."""
    reset_at = window.reset_at
    found: list[datetime] = []
    while reset_at is not None and reset_at <= end:
        found.append(reset_at)
        if pace.window_seconds is None:
            break
        reset_at = reset_at + timedelta(seconds=pace.window_seconds)
    return found


_TICK = timedelta(microseconds=1)
_NUDGES = 1_000
_CALENDAR_HOURS = 3_652_058 * 24
"""Year 1 to year 9999: a crossing further off is never on the calendar."""


def whole_second(at: datetime) -> datetime:
    """The first whole second at or after ``at``: the forecast's instants are given to the
    second (readings are), the first second at which the decision has changed."""
    if not at.microsecond:
        return at
    return timefmt.shifted(at, timedelta(microseconds=1_000_000 - at.microsecond)) or at


def crossings(window: Window, pace: Pace, origin: datetime, threshold: float,
              end: datetime) -> list[datetime]:
    """Every instant, to the microsecond, at which the projected window first shows a
    figure at or below ``threshold`` in a cycle (the first cycle burnt from the reading at
    ``origin``, each later one from 100% at its start), up to ``end``.

    The instant is the one the projection itself shows first at or below the threshold:
    the arithmetic instant is rounded to the microsecond and the projected figure is float
    arithmetic, so it is moved a microsecond at a time until the figure there is at or below
    the threshold and the figure a microsecond earlier is not; then given to the second
    (``whole_second``). A crossing that lands on the reset is none."""
    rate = pace.rate
    if rate <= 0 or window.unlimited:
        return []
    found: list[datetime] = []
    start, figure, reset_at = origin, window.figure, window.reset_at
    while start <= end:
        hours = (figure - threshold) / rate
        reached = (timefmt.shifted(start, timedelta(hours=hours))
                   if figure > threshold and hours < _CALENDAR_HOURS
                   and _before_reset(start, hours, reset_at) else None)
        if reached is not None:
            at = reached

            def low(instant: datetime) -> bool:
                return _projected_window(window, pace, origin, instant).figure <= threshold

            # a few microseconds either way: the float error of the arithmetic instant (a
            # crossing that lands on the reset is none: the window is full again there)
            for _ in range(_NUDGES):
                if low(at) or (reset_at is not None and at >= reset_at):
                    break
                at += _TICK
            for _ in range(_NUDGES):
                if not (at - _TICK > start and low(at - _TICK)):
                    break
                at -= _TICK
            at = whole_second(at)
            if at <= end and (reset_at is None or at < reset_at) and low(at):
                found.append(at)
        if reset_at is None or pace.window_seconds is None:
            break
        start, figure = reset_at, 100.0
        reset_at = reset_at + timedelta(seconds=pace.window_seconds)
    return found


def projection_instants(connection_id: str, history: Sequence[Reading],
                        outlook_: ConnectionOutlook, now: datetime, end: datetime,
                        inputs: LoadedInputs, rate_limited_until: datetime | None
                        ) -> set[datetime]:
    """The instants after now at which a projected connection's decisions can change: each
    projected reset, each crossing of the exit cutoff, and each
    instant its recorded history alone re-decides it (an earlier window's reset R6.4 holds,
    the end of its cooldown). A projected reading is written at each (and at now)."""
    fixed, crossed = _projection_parts(history, outlook_, now, end, inputs, rate_limited_until)
    return fixed | crossed


def _projection_parts(history: Sequence[Reading], outlook_: ConnectionOutlook, now: datetime,
                      end: datetime, inputs: LoadedInputs, rate_limited_until: datetime | None
                      ) -> tuple[set[datetime], set[datetime]]:
    """``projection_instants`` in two parts: those that do not depend on the burn (the
    resets and the recorded history's instants) and the cutoff crossings, which do."""
    ladder = inputs.settings.ladder
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    if not outlook_.projected or not readings:
        return set(), set()
    latest = readings[-1]
    fixed: set[datetime] = set()
    for window, pace in zip(latest.all_windows(), outlook_.paces, strict=True):
        fixed.update(_resets(window, pace, end))
    for change in connection_changes(history, rate_limited_until,
                                     ladder.max_reading_age_seconds,
                                     ladder.exit_cutoff_percent):
        if change.counts() and not change.exclusive:
            fixed.add(change.at)
    return ({at for at in fixed if now < at <= end},
            _cutoff_crossings(latest, outlook_, now, end, ladder.exit_cutoff_percent))


def _cutoff_crossings(latest: Reading, outlook_: ConnectionOutlook, now: datetime,
                      end: datetime, cutoff: float) -> set[datetime]:
    """Each projected crossing of the exit cutoff of a connection's windows after now, up
    to ``end`` (``latest``: its reading in force at now)."""
    # The re-entry floor is crossed upwards only at a reset (a projected window only falls
    # between two), which is listed already: only the cutoff is an instant here.
    found: set[datetime] = set()
    for window, pace in zip(latest.all_windows(), outlook_.paces, strict=True):
        found.update(crossings(window, pace, latest.checked_at, cutoff, end))
    return {at for at in found if now < at <= end}


def recorded_instants(inputs: LoadedInputs, connection_ids: Collection[str], now: datetime,
                      end: datetime) -> set[datetime]:
    """The instants after now at which the recorded inputs alone change a decision: for
    each connection not projected, its readings' resets, their turning stale (the
    microsecond after their last fresh one) and its cooldown's end; for the fleet, each
    budget period start and each spend event (R8)."""
    ladder = inputs.settings.ladder
    found: set[datetime] = set()
    for connection in inputs.connections:
        if connection.id not in connection_ids:
            continue
        for change in connection_changes(inputs.readings.get(connection.id, ()),
                                         connection.rate_limited_until,
                                         ladder.max_reading_age_seconds,
                                         ladder.exit_cutoff_percent):
            if change.counts():
                at = change.at
                if change.exclusive:
                    at = whole_second(timefmt.shifted(at, _TICK) or at)
                found.add(at)
    found.update(budget_instants(inputs, now, end))
    return {at for at in found if now < at <= end}


def budget_instants(inputs: LoadedInputs, now: datetime, end: datetime) -> set[datetime]:
    """Each budget period start after now up to ``end``, and each spend event there; none
    without a budget above 0 on a paid rung (R8: no budget never gates, and a budget of 0
    or less closes its rung whatever the period or the spend)."""
    budgets = inputs.settings.budgets.rung_budget_usd
    if not any((budgets.for_rung(rung) or 0) > 0 for rung in PAID_RUNGS):
        return set()
    period = inputs.settings.budgets.period
    found = {e.at for e in inputs.spend or () if now < e.at <= end}
    at = now
    while True:
        try:
            at = next_period_start(at, period)
        except (OverflowError, ValueError):
            break
        if at > end:
            break
        found.add(at)
    return found


def projected_readings(connection_id: str, history: Sequence[Reading],
                       outlook_: ConnectionOutlook, instants: Sequence[datetime],
                       inputs: LoadedInputs, dense: bool = False,
                       wanted: Collection[datetime] = (), kept_fresh: bool = False
                       ) -> list[Reading]:
    """The readings the projection adds for one connection: one at now (``instants[0]``,
    the burn carried from the reading to now) unless the reading was taken at now, and one
    at each of the ``wanted`` instants (where a decision can change).

    ``dense`` writes one at every instant (what the sparse choice is tested against).
    Without ``kept_fresh`` the readings stand on their own, as if recorded: one also at
    each instant at which the previous one would have turned stale (keep-alive).
    """
    if not outlook_.projected or not instants:
        return []
    ladder = inputs.settings.ladder
    now = instants[0]
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    latest = readings[-1]
    windows = latest.all_windows()
    paces = outlook_.paces
    origin = latest.checked_at
    max_age = ladder.max_reading_age_seconds
    overage = _overage_in_force(history, now, max_age)
    out: list[Reading] = []
    last = origin
    # Kept fresh, only now and the wanted instants can get a reading: the loop need not
    # visit the others (the fleet's instants are many times a connection's own).
    visit = sorted({now, *wanted}) if kept_fresh and not dense else instants
    for at in visit:
        if at <= origin:
            continue
        if not dense and at != now and at not in wanted and (
                kept_fresh or (at - last).total_seconds() <= max_age):
            continue
        projected = tuple(_projected_window(window, pace, origin, at)
                          for window, pace in zip(windows, paces, strict=True))
        if latest.windows is None:  # a top-level figure stays one
            (only,) = projected
            reading = Reading(connection=connection_id, checked_at=at,
                              remaining_percent=only.remaining_percent, reset_at=only.reset_at,
                              overage=overage)
        else:
            reading = Reading(connection=connection_id, checked_at=at, windows=projected,
                              overage=overage)
        out.append(reading)
        last = at
    return out


def _overage_in_force(history: Sequence[Reading], now: datetime,
                      max_age: float) -> ObservedOverage | None:
    """R2a's observation at now, carried by the projected readings while it is fresh (the
    provider is assumed to keep saying it); a stale one is left to the recorded reading."""
    for reading in reversed(readings_until(history, now)):
        if reading.overage is not None:
            fresh = (now - reading.checked_at).total_seconds() <= max_age
            return reading.overage if fresh else None
    return None


def projections_wanted(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                       now: datetime, end: datetime) -> dict[str, set[datetime]]:
    """Per projected connection, the instants after now that need a projected reading: its
    own (``projection_instants``) and the budget instants, where the engine re-decides a
    whole rung."""
    return {cid: fixed | crossed
            for cid, (fixed, crossed) in _wanted_parts(inputs, outlooks, now, end).items()}


def _wanted_parts(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                  now: datetime, end: datetime
                  ) -> dict[str, tuple[set[datetime], set[datetime]]]:
    """``projections_wanted`` in two parts: the instants that do not depend on the burn
    (the budget instants among them) and the cutoff crossings."""
    by_id = {o.connection_id: o for o in outlooks}
    budgets = budget_instants(inputs, now, end)
    out: dict[str, tuple[set[datetime], set[datetime]]] = {}
    for connection in inputs.connections:
        found = by_id.get(connection.id)
        if found is None or not found.projected:
            continue
        history = readings_until(inputs.readings.get(connection.id, ()), now)
        fixed, crossed = _projection_parts(history, found, now, end, inputs,
                                           connection.rate_limited_until)
        out[connection.id] = (fixed | budgets, crossed)
    return out


def with_projection(inputs: LoadedInputs, outlooks: Sequence[ConnectionOutlook],
                    instants: Sequence[datetime], dense: bool = False,
                    kept_fresh: bool = False,
                    wanted: dict[str, set[datetime]] | None = None
                    ) -> tuple[LoadedInputs, dict[str, list[Reading]]]:
    """The inputs with every projected reading added to its connection's history.

    ``instants`` starts at now. By default the readings stand on their own, as if
    recorded: a keep-alive reading at each instant where the previous one would have
    turned stale. ``kept_fresh`` writes them for an engine told that the projected
    connections keep reporting (what ``forecast`` steps): a reading only where a decision
    can change (``projection_instants`` and the budget instants).
    """
    by_id = {o.connection_id: o for o in outlooks}
    now, end = instants[0], instants[-1]
    if wanted is None:
        wanted = projections_wanted(inputs, outlooks, now, end)
    # Only what was recorded at or before now counts: the rest is what the forecast projects.
    readings = {cid: tuple(readings_until(history, now))
                for cid, history in inputs.readings.items()}
    added: dict[str, list[Reading]] = {}
    for connection in inputs.connections:
        found = by_id.get(connection.id)
        if found is None or not found.projected:
            continue
        history = readings.get(connection.id, ())
        projected = projected_readings(connection.id, history, found, instants, inputs,
                                       dense, wanted.get(connection.id, ()), kept_fresh)
        if projected:
            readings[connection.id] = (*history, *projected)
            added[connection.id] = projected
    return inputs._replace(readings=readings), added


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
    projected_first_paid_at: datetime | None = None
    """What the projection shows, holding the unprojected windows at their figures (the
    same as ``first_paid_at`` when the answers are known)."""
    projected_pool_empty_at: datetime | None = None
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
    parts = _wanted_parts(inputs, outlooks, now, end)
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
    return _Walk(timeline, transitions, stepper, sum(len(r) for r in added.values()),
                 recorded, wanted, {cid: fixed for cid, (fixed, _) in parts.items()}, added,
                 log)


def _sides(reading: Reading, cutoff: float, floor: float) -> tuple[object, ...]:
    """What a decision reads of a projected reading, its figures only as the side of the
    exit cutoff and of the re-entry floor each falls on (R6, R6.4, R7 and R9 compare a
    figure with nothing else)."""
    return (reading.status, reading.reset_at, reading.overage, reading.windows is None,
            tuple((w.name, w.models, w.reset_at, w.unlimited, w.window_seconds,
                   w.figure <= cutoff, w.figure <= floor) for w in reading.all_windows()))


def _moved_log(log: list[tuple[datetime, tuple[int, ...]]], middle: Sequence[Reading],
               edge: Sequence[Reading], fixed: Collection[datetime], now: datetime,
               cutoff: float, floor: float
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
    ladder = inputs.settings.ladder
    cutoff, floor = ladder.exit_cutoff_percent, ladder.reentry_floor
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
        history = readings_until(inputs.readings.get(cid, ()), now)
        fixed = middle.fixed.get(cid, set())
        in_force_now = in_force(history, now, cutoff)
        wanted[cid] = fixed | (_cutoff_crossings(in_force_now[-1], other, now, end, cutoff)
                               if other.projected and in_force_now else set())
        edge = projected_readings(cid, history, other, (now,), inputs, wanted=wanted[cid],
                                  kept_fresh=True)
        logs[index], since[index] = _moved_log(middle.log[index], middle.added.get(cid, ()),
                                               edge, fixed, now, cutoff, floor)
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
        outlook(c.id, c.provider, inputs.readings.get(c.id, ()), now, inputs, lengths)
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
                    unprojected=unknown, projected_first_paid_at=first_paid,
                    projected_pool_empty_at=empty, first_paid_band=first_band,
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
