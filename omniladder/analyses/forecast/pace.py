"""The pace of each window: its burn rate over the readings of its current cycle, the
spread of that rate from its history (the band's low and high burn), the guardrails that give
a reason instead of a number, and the window lengths a pace may need (docs/forecast.md)."""

from __future__ import annotations

import dataclasses
from calendar import monthrange
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from omniladder import timefmt
from omniladder.analyses.forecast.profile import DayProfile, ProfileLearner
from omniladder.engine import readings as rules
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import HeldWindow, in_force
from omniladder.engine.readings import held_to
from omniladder.models import (
    CALENDAR_MONTH,
    Reading,
    Window,
    duration_seconds,
)

DEFAULT_HORIZON = "24h"
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
    """One window of a connection's latest reading, against an even pace."""

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
    profile: DayProfile | None = None
    """The burn over the hours of the day the projection follows, scaled so that the rate
    times it burns what the cycle burnt over its readings (docs/forecast.md#profile); None:
    the rate is constant (less than a day of history, or a flat one)."""

    @property
    def rate(self) -> float:
        """The burn the projection uses: none without a forecast."""
        return self.burn_percent_per_hour or 0.0

    def burnt(self, start: datetime, end: datetime) -> float:
        """The percent the projection burns from ``start`` to ``end``: the rate times the
        hours, or times the profile's hours (more in its busy hours, fewer in its quiet)."""
        if self.profile is None:
            return self.rate * (end - start).total_seconds() / 3600.0
        return self.rate * self.profile.hours(start, end)


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
    reserve_percent: float | None = None
    """The connection's reserve (R16): the paces and the projection read the thresholds it
    is held to (``readings.held_to``), so a window is projected to its reserve."""


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
                lengths: WindowLength, *, reserve: bool = False) -> Pace:
    """The pace of one window of the latest reading (``readings[-1]``); ``reserve`` when
    ``cutoff`` is the connection's reserve (R16), which the notes then name."""
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
    if rules.is_low(window, cutoff):
        until = timefmt.short(reset_at, now) if reset_at is not None else "a higher reading"
        return dataclasses.replace(
            blank, lasts_to_reset=False,
            note=f"at or below the {'reserve' if reserve else 'cutoff'} {timefmt.pct(cutoff)} "
                 f"until {until}")
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
    (first_at, first), (last_at, last) = cycle[0], cycle[-1]
    rate = max(first - last, 0.0) / hours
    series = window_series(readings, window)
    profile = cycle_profile(window_profile(series, last_at), first_at, last_at)
    if profile is not None:
        followed = f"burn by the hour of the day ({profile.days:.1f} days of readings)"
        assumed = f"{assumed}; {followed}" if assumed else followed
    blank = dataclasses.replace(blank, note=assumed,
                                burn_band=burn_band(series, rate, now),
                                profile=profile)
    paced = dataclasses.replace(blank, burn_percent_per_hour=rate, lasts_to_reset=True)
    # The reset always wins; a crossing past it is never placed on the calendar (a burn of
    # a sliver an hour puts it past year 9999). The instant is the one the projection shows.
    first_cycle = dataclasses.replace(paced, window_seconds=None)
    found = crossings(window, first_cycle, last_at, cutoff,
                      reset_at or datetime.max.replace(tzinfo=UTC))
    if found:
        return dataclasses.replace(paced, cutoff_at=found[0], lasts_to_reset=False)
    return paced


Shown = tuple[datetime, float | None, datetime | None]
"""A reading's instant and what it shows of one window: its figure and reset (None, None:
the window is absent or unlimited there)."""


def window_series(readings: Sequence[Reading], window: Window) -> list[Shown]:
    """What each reading shows of ``window``, oldest first: the history the band and the
    profile are both read from."""
    series: list[Shown] = []
    for reading in readings:
        mine = next((w for w in reading.all_windows() if _same_window(w, window)), None)
        if mine is None or mine.unlimited:
            series.append((reading.checked_at, None, None))
        else:
            series.append((reading.checked_at, mine.figure, mine.reset_at))
    return series


def window_profile(series: Sequence[Shown], now: datetime) -> DayProfile | None:
    """The window's profile over the hours of the day at ``now``, learned from its history
    (``ProfileLearner``)."""
    learner = ProfileLearner(_same_reset)
    for checked_at, figure, reset_at in series:
        learner.see(checked_at, figure, reset_at)
    return learner.learned(now)


def cycle_profile(profile: DayProfile | None, first_at: datetime,
                  last_at: datetime) -> DayProfile | None:
    """The profile scaled so that its mean over the cycle's readings (from ``first_at`` to
    ``last_at``) is 1: the cycle's rate times it burns what the cycle burnt, and a flat
    profile burns at the rate."""
    if profile is None:
        return None
    return profile.scaled((last_at - first_at).total_seconds() / 3600.0
                          / profile.hours(first_at, last_at))


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


def history_rates(series: Sequence[Shown], now: datetime) -> list[tuple[float, float]]:
    """(ratio, weight): for each span of the window's history (at least ``RATE_SPAN_HOURS``
    of consecutive readings of one cycle: same reset, no regain), its burn rate divided by
    the rate of the span just before it in the same cycle, when that one burnt: how far
    the burn over the next span strayed from the burn the span before showed. Over the
    current and past cycles; the weight is the span's hours, halved for every
    ``HALF_LIFE_HOURS`` before now."""
    out: list[tuple[float, float]] = []
    start: tuple[datetime, float, datetime | None] | None = None
    last: tuple[float, datetime] | None = None
    for checked_at, shown, shown_reset in series:
        if shown is None:
            start = last = None
            continue
        here = (checked_at, shown, shown_reset)
        if start is None:
            start = here
            continue
        at, figure, reset_at = start
        hours = (checked_at - at).total_seconds() / 3600.0
        if shown > figure or not _same_reset(reset_at, shown_reset):
            start, last = here, None  # a regain or a reset: a new cycle
            continue
        if hours < RATE_SPAN_HOURS:
            continue
        rate = (figure - shown) / hours
        if last is not None and last[1] == at and last[0] > 0:
            age = max((now - checked_at).total_seconds() / 3600.0, 0.0)
            out.append((rate / last[0], hours * 0.5 ** (age / HALF_LIFE_HOURS)))
        start, last = here, (rate, checked_at)
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


def burn_band(series: Sequence[Shown], rate: float, now: datetime) -> tuple[float, float]:
    """The low and high burn around ``rate``: the rate times the 10th and 90th weighted
    percentiles of the window's history of span-to-span ratios (``history_rates``), widened
    to at least ``MIN_SPREAD`` of the rate either side and never excluding the rate."""
    ratios = history_rates(series, now)
    low, high = rate * (1.0 - MIN_SPREAD), rate * (1.0 + MIN_SPREAD)
    if ratios and sum(weight for _, weight in ratios) > 0:
        low = min(low, rate * _quantile(ratios, BAND_QUANTILES[0]))
        high = max(high, rate * _quantile(ratios, BAND_QUANTILES[1]))
    return max(low, 0.0), high


def _before_reset(start: datetime, hours: float, reset_at: datetime | None) -> bool:
    """Whether ``hours`` after ``start`` can fall before the reset (always without one)."""
    return reset_at is None or hours * 3600.0 <= (reset_at - start).total_seconds()


def outlook(connection_id: str, provider: str, history: Sequence[Reading], now: datetime,
            inputs: LoadedInputs, lengths: WindowLength,
            reserve_percent: float | None = None) -> ConnectionOutlook:
    """The paces of a connection's latest reading and whether it can be projected; a window
    is paced to the connection's exit cutoff, its reserve when it has one above the
    ladder's (R16)."""
    found = _outlook(connection_id, provider, history, now, inputs, lengths, reserve_percent)
    return found if reserve_percent is None else dataclasses.replace(
        found, reserve_percent=reserve_percent)


def _outlook(connection_id: str, provider: str, history: Sequence[Reading], now: datetime,
             inputs: LoadedInputs, lengths: WindowLength,
             reserve_percent: float | None) -> ConnectionOutlook:
    ladder = held_to(inputs.settings.ladder, reserve_percent)
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
    raised = ladder is not inputs.settings.ladder  # held_to's own object when not raised
    paces = tuple(window_pace(connection_id, provider, readings, window, now,
                              ladder.exit_cutoff_percent, lengths, reserve=raised)
                  for window in latest.all_windows())
    if not rules.is_fresh(latest.checked_at, now, ladder.max_reading_age_seconds):
        age = rules.age_seconds(latest.checked_at, now)
        stale = (f"reading at {seen} is "
                 f"{timefmt.age_beside(age, ladder.max_reading_age_seconds)} old (max "
                 f"{timefmt.duration(ladder.max_reading_age_seconds)}): stale, no forecast")
        paces = tuple(dataclasses.replace(
            pace, burn_percent_per_hour=None, cutoff_at=None, lasts_to_reset=None,
            note=f"{stale}; {pace.note}" if pace.past_reset else stale) for pace in paces)
        return ConnectionOutlook(connection_id=connection_id, projected=False, note=stale,
                                 paces=paces, unknown=True)
    return ConnectionOutlook(connection_id=connection_id, projected=True, note="", paces=paces)



# --- a window projected at its pace -------------------------------------------------------


def projected_window(window: Window, pace: Pace, origin: datetime, at: datetime
                      ) -> Window:
    """The window as a reading at ``at`` would show it, burnt from ``origin`` at the rate."""
    reset_at = window.reset_at
    if reset_at is None or at < reset_at:
        if window.unlimited or pace.rate == 0:
            return _plain(window, window.remaining_percent, reset_at)
        left = max(window.figure - pace.burnt(origin, at), 0.0)
        return _plain(window, left, reset_at)
    length = pace.window_seconds
    if length is None:  # no length: the window is full again, and no further reset is known
        return _plain(window, None if window.unlimited else 100.0, None)
    cycles = int((at - reset_at).total_seconds() // length)
    start = reset_at + timedelta(seconds=length * cycles)
    if window.unlimited:
        return _plain(window, None, start + timedelta(seconds=length))
    left = max(100.0 - pace.burnt(start, at), 0.0)
    return _plain(window, left, start + timedelta(seconds=length))


def _plain(window: Window, remaining: float | None, reset_at: datetime | None) -> Window:
    return Window(name=window.name, remaining_percent=remaining,
                  unlimited=remaining is None, reset_at=reset_at, models=window.models,
                  window_seconds=window.window_seconds)


def window_resets(window: Window, pace: Pace, end: datetime) -> list[datetime]:
    """Every reset of the window from its own until ``end`` (one without a known length)."""
    reset_at = window.reset_at
    found: list[datetime] = []
    while reset_at is not None and reset_at <= end:
        found.append(reset_at)
        if pace.window_seconds is None:
            break
        reset_at = reset_at + timedelta(seconds=pace.window_seconds)
    return found


TICK = timedelta(microseconds=1)
_NUDGES = 1_000
_CALENDAR_HOURS = 3_652_058 * 24
"""Year 1 to year 9999: a crossing further off is never on the calendar."""


def whole_second(at: datetime) -> datetime:
    """The first whole second at or after ``at``: the forecast's instants are given to the
    second (readings are), the first second at which the decision has changed."""
    if not at.microsecond:
        return at
    return timefmt.shifted(at, timedelta(microseconds=1_000_000 - at.microsecond)) or at


def _reached(pace: Pace, start: datetime, hours: float, reset_at: datetime | None
             ) -> datetime | None:
    """Where ``hours`` at the pace's rate have burnt since ``start`` (its profile
    followed), when that is on the calendar and not after the reset."""
    if pace.profile is None:
        if hours < _CALENDAR_HOURS and _before_reset(start, hours, reset_at):
            return timefmt.shifted(start, timedelta(hours=hours))
        return None
    reached = pace.profile.after(start, hours)
    if reached is None or (reset_at is not None and reached > reset_at):
        return None
    return reached


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
        reached = _reached(pace, start, hours, reset_at) if figure > threshold else None
        if reached is not None:
            at = reached

            def low(instant: datetime) -> bool:
                return rules.is_low(projected_window(window, pace, origin, instant), threshold)

            # a few microseconds either way: the float error of the arithmetic instant (a
            # crossing that lands on the reset is none: the window is full again there)
            for _ in range(_NUDGES):
                if low(at) or (reset_at is not None and at >= reset_at):
                    break
                at += TICK
            for _ in range(_NUDGES):
                if not (at - TICK > start and low(at - TICK)):
                    break
                at -= TICK
            at = whole_second(at)
            if at <= end and (reset_at is None or at < reset_at) and low(at):
                found.append(at)
        if reset_at is None or pace.window_seconds is None:
            break
        start, figure = reset_at, 100.0
        reset_at = reset_at + timedelta(seconds=pace.window_seconds)
    return found


