"""`forecast AUTO_ID --backtest`: the forecast replayed over recorded history and held against
what the later readings showed (docs/forecast.md#backtest).

At every recorded reading of a connection that serves the auto id, inside the span, each
window of that reading is forecast from the readings up to it (the later ones hidden), as
``forecast`` paces it at that instant: its burn rate over the current cycle, its band from
the history's span-to-span ratios, its time-of-day profile, and the instants it reaches the
exit cutoff at the high, middle and low burn (p10, p50, p90; none when that burn lasts to
the reset). A forecast with a burn rate is then judged by the readings after it
(``Series``):

* **crossed** — a later reading of the same cycle shows the window at or below the cutoff:
  that reading's ``checked_at`` is the true crossing, and the forecast is a *sample*;
* **lasted** — a reading at or after the window's reset comes first (or a new cycle within
  ``SAME_RESET_SECONDS`` of it): the window lasted;
* **excluded** — the readings cannot say: the cycle ended before its reset
  (``reset-early``), a cycle began where the forecast's reading showed none running
  (``new-cycle``), the figure rose with no reset or the deciding reading came after a gap
  longer than ``max_reading_age_seconds`` (``reading-jump``), or the history ends first
  (``no-later-reading``).

The pace at each reading is computed incrementally (one pass over each window's readings,
not one pass per reading); a property test holds it to ``forecast.outlook`` given the
readings cut at that instant, and another holds ``Series`` to a walk of the later readings.
"""

from __future__ import annotations

import dataclasses
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate, pairwise
from typing import NamedTuple

from omniladder import timefmt
from omniladder.analyses.forecast.pace import (
    BAND_QUANTILES,
    HALF_LIFE_HOURS,
    MIN_CYCLE_READINGS,
    MIN_ELAPSED_FRACTION,
    MIN_SPREAD,
    RATE_SPAN_HOURS,
    SAME_RESET_SECONDS,
    Pace,
    WindowLength,
    crossings,
    cycle_profile,
    no_lengths,
)
from omniladder.analyses.forecast.profile import DayProfile, ProfileLearner
from omniladder.engine.autoid import AutoId
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import quota_readings
from omniladder.models import Reading, Window

LEADS: tuple[tuple[str, float, float | None], ...] = (
    ("< 1h", 0.0, 3600.0), ("1-3h", 3600.0, 3 * 3600.0), ("3-6h", 3 * 3600.0, 6 * 3600.0),
    ("> 6h", 6 * 3600.0, None))
"""Lead-time buckets: from the forecast's instant to the true crossing, [low, high)."""
EXCLUSIONS = ("reset-early", "new-cycle", "reading-jump", "no-later-reading")
_FAR = datetime.max.replace(tzinfo=UTC)
WindowKey = tuple[str, tuple[str, ...] | None]


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One forecast of a window's crossing, judged by the crossing that followed."""

    connection_id: str
    window: str
    at: datetime
    """The forecast's instant: the reading it was made at."""
    truth: datetime
    """The first later reading of the cycle at or below the cutoff."""
    seen_above: datetime
    """The reading before it, the last that showed the window above the cutoff: the
    crossing lies after this instant and at or before ``truth``."""
    reset_at: datetime | None
    p10: datetime | None
    p50: datetime | None
    p90: datetime | None
    """Each None when that burn lasts to the reset (no crossing before it)."""

    @property
    def lead_seconds(self) -> float:
        return (self.truth - self.at).total_seconds()

    @property
    def inside(self) -> bool:
        """The band p10–p90 meets the span the readings bound the crossing to (after
        ``seen_above``, at or before ``truth``). A p90 that lasts to the reset is no upper
        bound; a p10 that lasts is later than any crossing of the cycle."""
        return (self.p10 is not None and self.p10 <= self.truth
                and (self.p90 is None or self.p90 > self.seen_above))

    @property
    def error_seconds(self) -> float:
        """p50 less the truth (positive: the forecast came late). A p50 that lasts to the
        reset counts as the reset (the least error it can have); with no reset, as the
        truth's lead again (it said "not in this cycle")."""
        p50 = self.p50 if self.p50 is not None else self.reset_at
        if p50 is None:
            return self.lead_seconds
        return (p50 - self.truth).total_seconds()


@dataclass(frozen=True, kw_only=True)
class LeadRow:
    label: str
    samples: int
    inside: int
    mae_seconds: float | None
    """Median absolute error of the p50."""
    bias_seconds: float | None
    """Median signed error of the p50 (positive: late)."""

    @property
    def coverage(self) -> float | None:
        return None if not self.samples else self.inside / self.samples


@dataclass(frozen=True, kw_only=True)
class WindowRow(LeadRow):
    connection_id: str
    window: str


@dataclass(frozen=True, kw_only=True)
class Backtest:
    auto_id: AutoId
    start: datetime
    end: datetime
    cutoff_percent: float
    max_reading_age_seconds: float
    instants: int
    """Distinct reading instants in the span at which a window was forecast."""
    forecasts: int
    """Windows forecast with a burn rate (judged, lasted and excluded alike)."""
    no_rate: int
    """Windows of readings in the span above the cutoff with no burn rate (a guardrail)."""
    samples: tuple[Sample, ...]
    lasted: int
    lasted_p50: int
    """Lasted windows whose p50 said so (no crossing before the reset)."""
    lasted_p90: int
    """Lasted windows whose band allowed it (the p90 lasts)."""
    excluded: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """The inputs' warnings."""
    reserved: int = 0
    """Connections forecast and judged at their reserve (R16), above ``cutoff_percent``."""

    @property
    def covered(self) -> int:
        return sum(1 for s in self.samples if s.inside)

    @property
    def coverage(self) -> float | None:
        return None if not self.samples else self.covered / len(self.samples)

    def overall(self) -> LeadRow:
        return LeadRow(**_figures("all", self.samples)._asdict())

    def by_lead(self) -> tuple[LeadRow, ...]:
        return tuple(LeadRow(**_figures(label, [
            s for s in self.samples
            if low <= s.lead_seconds and (high is None or s.lead_seconds < high)])._asdict())
            for label, low, high in LEADS)

    def by_window(self) -> tuple[WindowRow, ...]:
        keys: dict[tuple[str, str], list[Sample]] = {}
        for sample in self.samples:
            keys.setdefault((sample.connection_id, sample.window), []).append(sample)
        return tuple(WindowRow(connection_id=c, window=w, **_figures(w, samples)._asdict())
                     for (c, w), samples in keys.items())


class _Figures(NamedTuple):
    label: str
    samples: int
    inside: int
    mae_seconds: float | None
    bias_seconds: float | None


def _figures(label: str, samples: Sequence[Sample]) -> _Figures:
    errors = [s.error_seconds for s in samples]
    return _Figures(label, len(samples), sum(1 for s in samples if s.inside),
                    statistics.median(abs(e) for e in errors) if errors else None,
                    statistics.median(errors) if errors else None)


# --- the pace at each reading, incrementally ---------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WindowForecast:
    """A window of one reading, forecast at its ``checked_at`` from the readings up to it."""

    index: int
    """The reading's position in the connection's quota readings."""
    window: Window
    rate: float | None
    """%/h; None: a guardrail gave no burn rate."""
    band: tuple[float, float] | None
    cycle_readings: int
    profile: DayProfile | None = None
    """The burn over the hours of the day the projection follows (``Pace.profile``)."""


def _same_reset(a: datetime | None, b: datetime | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs((a - b).total_seconds()) <= SAME_RESET_SECONDS


def _key(window: Window) -> WindowKey:
    return window.name, window.models


def _find(reading: Reading, key: WindowKey) -> Window | None:
    return next((w for w in reading.all_windows() if _key(w) == key), None)


class _Rates:
    """The window's history of span-to-span ratios (``forecast.history_rates``), each
    weighted by its hours and halved per ``HALF_LIFE_HOURS`` before a fixed instant: the
    weighted quantiles are the same as with the weights at now (a common factor), kept
    sorted as they come."""

    REBASE_HOURS = 400 * HALF_LIFE_HOURS
    """A ratio this long after the anchor moves the anchor to it (the weights so far
    scaled alike), before its weight outgrows a float."""

    def __init__(self, anchor: datetime) -> None:
        self.anchor = anchor
        self.keys: list[tuple[float, float]] = []
        self.weights: list[float] = []

    def add(self, rate: float, hours: float, at: datetime) -> None:
        age = (self.anchor - at).total_seconds() / 3600.0
        if age < -self.REBASE_HOURS:
            factor = 0.5 ** (-age / HALF_LIFE_HOURS)
            self.weights = [weight * factor for weight in self.weights]
            self.keys = [(value, weight * factor) for value, weight in self.keys]
            self.anchor, age = at, 0.0
        weight = hours * 0.5 ** (age / HALF_LIFE_HOURS)
        item = (rate, weight)
        place = bisect_right(self.keys, item)
        self.keys.insert(place, item)
        self.weights.insert(place, weight)

    def band(self, rate: float) -> tuple[float, float]:
        """``forecast.burn_band`` over the ratios added so far."""
        low, high = rate * (1.0 - MIN_SPREAD), rate * (1.0 + MIN_SPREAD)
        if self.keys:
            reached = list(accumulate(self.weights))
            total = reached[-1]
            if total > 0:
                low = min(low, rate * self._quantile(reached, total, BAND_QUANTILES[0]))
                high = max(high, rate * self._quantile(reached, total, BAND_QUANTILES[1]))
        return max(low, 0.0), high

    def _quantile(self, reached: list[float], total: float, share: float) -> float:
        place = bisect_left(reached, share * total)
        return self.keys[min(place, len(self.keys) - 1)][0]


class _Cycle:
    """The readings of a window since it was last absent or unlimited (a *run*), and where
    its current cycle starts: the longest tail of the run whose resets are each within
    ``SAME_RESET_SECONDS`` of the latest's and whose figure never rises, as
    ``forecast.cycle_readings`` walks back from the latest. Two monotonic stacks of the
    resets (the later maxima and minima) find the first reset too far off in log time."""

    def __init__(self) -> None:
        self.figures: list[float] = []
        self.times: list[datetime] = []
        self.rise = 0
        """The position after the last rise of the figure."""
        self.last_none = -1
        self.last_some = -1
        self.highs: list[tuple[float, int]] = []
        """(-reset, position) of the resets greater than every later one, by position."""
        self.lows: list[tuple[float, int]] = []
        """(reset, position) of the resets less than every later one, by position."""

    def add(self, at: datetime, figure: float, reset_at: datetime | None) -> tuple[int, int]:
        """Add the latest reading; return (readings in its cycle, position of the first)."""
        position = len(self.figures)
        if self.figures and figure > self.figures[-1]:
            self.rise = position
        self.figures.append(figure)
        self.times.append(at)
        start = max(self.rise, 0)
        if reset_at is None:
            self.last_none = position
            start = max(start, self.last_some + 1)
        else:
            self.last_some = position
            start = max(start, self.last_none + 1)
            value = reset_at.timestamp()
            while self.highs and -self.highs[-1][0] <= value:
                self.highs.pop()
            self.highs.append((-value, position))
            while self.lows and self.lows[-1][0] >= value:
                self.lows.pop()
            self.lows.append((value, position))
            # the last stack entry too far off is the last reset too far off
            far = bisect_left(self.highs, (-(value + SAME_RESET_SECONDS), -1))
            if far:
                start = max(start, self.highs[far - 1][1] + 1)
            far = bisect_left(self.lows, (value - SAME_RESET_SECONDS, -1))
            if far:
                start = max(start, self.lows[far - 1][1] + 1)
        return position - start + 1, start


def window_forecasts(provider: str, readings: Sequence[Reading], key: WindowKey,
                     cutoff: float, lengths: WindowLength, start: datetime, end: datetime
                     ) -> Iterator[WindowForecast]:
    """The window ``key`` forecast at each reading up to ``end`` that shows it above the
    cutoff, not held (R6.4), in a reading whose status is neither unknown nor exhausted:
    what ``forecast.window_pace`` gives at that reading's instant (``readings``: the
    connection's quota readings, sorted). ``start``: where the forecasts begin to count."""
    rates = _Rates(start)
    span: tuple[datetime, float, datetime | None] | None = None
    last: tuple[float, datetime] | None = None
    cycle = _Cycle()
    learner = ProfileLearner(_same_reset)
    hold: tuple[datetime, float] | None = None
    """R6.4: the reset and figure of the last low window that later readings hold."""
    for index, reading in enumerate(readings):
        now = reading.checked_at
        if now > end:
            break
        if hold is not None and hold[0] <= now:
            hold = None
        mine = _find(reading, key)
        if mine is None or mine.unlimited:
            span = last = None
            cycle = _Cycle()
            learner.see(now, None, None)
            continue
        figure = mine.figure
        learner.see(now, figure, mine.reset_at)
        # the history of span-to-span ratios, as forecast.history_rates reads it
        here = (now, figure, mine.reset_at)
        if span is None:
            span = here
        else:
            at, was, reset_at = span
            hours = (now - at).total_seconds() / 3600.0
            if figure > was or not _same_reset(reset_at, mine.reset_at):
                span, last = here, None
            elif hours >= RATE_SPAN_HOURS:
                rate = (was - figure) / hours
                if last is not None and last[1] == at and last[0] > 0:
                    rates.add(rate / last[0], hours, now)
                span, last = here, (rate, now)
        count, first = cycle.add(now, figure, mine.reset_at)
        held = hold is not None and figure > hold[1]
        if figure <= cutoff and not held and mine.reset_at is not None \
                and mine.reset_at > now:
            hold = (mine.reset_at, figure)
        if held or figure <= cutoff or reading.status in ("unknown", "exhausted"):
            continue
        yield _forecast_at(index, provider, mine, now, count,
                           cycle.times[first], cycle.figures[first], rates, learner, lengths)


def _forecast_at(index: int, provider: str, window: Window, now: datetime, count: int,
                 first_at: datetime, first: float, rates: _Rates, learner: ProfileLearner,
                 lengths: WindowLength) -> WindowForecast:
    blank = WindowForecast(index=index, window=window, rate=None, band=None,
                           cycle_readings=count)
    hours = (now - first_at).total_seconds() / 3600.0
    if count < MIN_CYCLE_READINGS or hours <= 0:
        return blank
    length, _ = lengths(provider, window)
    if length is not None and window.reset_at is not None:
        elapsed = min(max(1.0 - (window.reset_at - now).total_seconds() / length, 0.0), 1.0)
        if elapsed < MIN_ELAPSED_FRACTION:
            return blank
    rate = max(first - window.figure, 0.0) / hours
    return dataclasses.replace(blank, rate=rate, band=rates.band(rate),
                               profile=cycle_profile(learner.learned(now), first_at, now))


# --- judging -----------------------------------------------------------------------------------


def _pace(window: Window, rate: float, at: datetime, profile: DayProfile | None) -> Pace:
    return Pace(connection_id="", window=window.name, models=window.models, checked_at=at,
                remaining_percent=window.figure, reset_at=window.reset_at,
                window_seconds=None, length_source="", readings=0, elapsed_fraction=None,
                expected_used_percent=None, used_percent=None, ahead_percent=None,
                burn_percent_per_hour=rate, cutoff_at=None, lasts_to_reset=None, note="",
                profile=profile)


def crossing_at(window: Window, rate: float, at: datetime, cutoff: float,
                profile: DayProfile | None = None) -> datetime | None:
    """Where the window, burnt at ``rate`` (following ``profile``) from its reading at
    ``at``, first shows the cutoff before its reset (``forecast.crossings``, as the pace's
    ``cutoff_at``)."""
    found = crossings(window, _pace(window, rate, at, profile), at, cutoff,
                      window.reset_at or _FAR)
    return found[0] if found else None


class Judged(NamedTuple):
    """What the later readings show: ``crossed`` (with the first reading at or below the
    cutoff and the one before it), ``lasted``, or an exclusion's code (``EXCLUSIONS``)."""

    kind: str
    truth: datetime | None = None
    seen_above: datetime | None = None


class Series:
    """One window's readings of a connection, to judge each forecast by the readings after
    it (docs/forecast.md#backtest) without walking them again for each.

    Walked from a forecast's reading, the later readings decide at the first of: a reading
    at or after the window's reset (``lasted``, or ``reading-jump`` when the last reading
    before the reset is older than ``max_age``); a reading showing the window unlimited
    (``reading-jump``), with another reset (``reset-early``; ``new-cycle`` when the forecast's
    reading showed none; ``lasted`` when it comes within ``SAME_RESET_SECONDS`` of the
    reset, by which sources jitter), higher than the reading before (``reading-jump``: a
    regain with no reset), or at or below the cutoff (``crossed``, or ``reading-jump`` after
    a gap longer than ``max_age``). A reading without the window says nothing of it. With
    none of these, ``no-later-reading``."""

    def __init__(self, readings: Sequence[Reading], key: WindowKey, cutoff: float,
                 max_age: float) -> None:
        self.max_age = max_age
        self.all_times = [r.checked_at for r in readings]
        self.where: list[int] = []
        """The position in ``readings`` of each reading that shows the window."""
        self.times: list[datetime] = []
        self.figures: list[float] = []
        self.resets: list[datetime | None] = []
        self.unlimited: list[bool] = []
        for index, reading in enumerate(readings):
            mine = _find(reading, key)
            if mine is None:
                continue
            self.where.append(index)
            self.times.append(reading.checked_at)
            self.figures.append(mine.figure)
            self.resets.append(mine.reset_at)
            self.unlimited.append(mine.unlimited)
        count = len(self.where)
        self.stop = [count] * count
        """The first later reading that shows the window unlimited, higher than the one
        before it, or at or below the cutoff (``count``: none)."""
        upcoming = count
        for position in range(count - 1, -1, -1):
            self.stop[position] = upcoming
            if (self.unlimited[position] or self.figures[position] <= cutoff
                    or (position and self.figures[position] > self.figures[position - 1])):
                upcoming = position
        # runs of resets: consecutive readings within SAME_RESET_SECONDS of each other
        self.run: list[int] = []
        self.run_end: list[int] = []
        self.run_low: list[datetime | None] = []
        self.run_high: list[datetime | None] = []
        for position, reset in enumerate(self.resets):
            if position and _same_reset(self.resets[position - 1], reset):
                low, high = self.run_low[-1], self.run_high[-1]
                if reset is not None and low is not None and high is not None:
                    self.run_low[-1], self.run_high[-1] = min(low, reset), max(high, reset)
                self.run_end[-1] = position + 1
            else:
                self.run_low.append(reset)
                self.run_high.append(reset)
                self.run_end.append(position + 1)
            self.run.append(len(self.run_end) - 1)

    def position(self, index: int) -> int:
        """The position of the reading at ``index`` of the readings (it shows the window)."""
        return bisect_left(self.where, index)

    def _first_change(self, position: int, last: int) -> int | None:
        """The first reading after ``position``, up to ``last``, whose reset is not the
        same as that reading's."""
        reset_at = self.resets[position]
        here = position + 1
        while here <= last:
            run = self.run[here]
            end = min(self.run_end[run], last + 1)
            low, high = self.run_low[run], self.run_high[run]
            if low is None or high is None or reset_at is None:
                if (low is None) != (reset_at is None):
                    return here
            elif not (_same_reset(low, reset_at) and _same_reset(high, reset_at)):
                for inner in range(here, end):
                    if not _same_reset(self.resets[inner], reset_at):
                        return inner
            here = end
        return None

    def judge(self, position: int) -> Judged:
        """What the readings after the one at ``position`` show."""
        count = len(self.where)
        stop = self.stop[position]
        change = self._first_change(position, min(stop, count - 1))
        decided = stop if change is None else min(change, stop)
        reset_at = self.resets[position]
        if reset_at is not None:
            after = bisect_left(self.all_times, reset_at)
            if after < len(self.all_times) and (
                    decided >= count or after <= self.where[decided]):
                before = self.times[bisect_left(self.where, after) - 1]
                gap = (reset_at - before).total_seconds()
                return Judged("reading-jump" if gap > self.max_age else "lasted")
        if decided >= count:
            return Judged("no-later-reading")
        if self.unlimited[decided]:
            return Judged("reading-jump")
        if decided == change:
            if reset_at is None:
                return Judged("new-cycle")
            at = self.times[decided]
            if (reset_at - at).total_seconds() > SAME_RESET_SECONDS:
                return Judged("reset-early")
            # the reset, within the seconds a source's reset instant jitters by
            gap = (at - self.times[decided - 1]).total_seconds()
            return Judged("reading-jump" if gap > self.max_age else "lasted")
        if self.figures[decided] > self.figures[decided - 1]:
            return Judged("reading-jump")
        at, before = self.times[decided], self.times[decided - 1]
        if (at - before).total_seconds() > self.max_age:
            return Judged("reading-jump")
        return Judged("crossed", at, before)


def serving_connections(inputs: LoadedInputs, auto_id: AutoId) -> list[str]:
    """The connections with a pair of the auto id: in its category, on one of its rungs (the
    subscription rung only for ``auto/subscription``)."""
    fleet = Fleet(inputs)
    return [fleet.connections[index].id for index in _serving(fleet, auto_id)]


def _serving(fleet: Fleet, auto_id: AutoId) -> list[int]:
    """The positions in the fleet of ``serving_connections``."""
    member = fleet.in_category(auto_id.category)
    subscription_only = auto_id.tier == "subscription"
    return [index for index, pairs in enumerate(fleet.pairs)
            if any(member[p.candidate] and (not subscription_only or p.rung == "subscription")
                   for p in pairs)]


def reading_instants(inputs: LoadedInputs, ids: Sequence[str]) -> list[datetime]:
    """Every reading instant of the connections, sorted."""
    return sorted({r.checked_at for cid in ids for r in inputs.readings.get(cid, ())})


def backtest(inputs: LoadedInputs, auto_id: AutoId, start: datetime, end: datetime, *,
             lengths: WindowLength = no_lengths) -> Backtest:
    """The forecast at every reading in [start, end] of each connection serving the auto
    id, judged by the readings after it. Each connection's windows are forecast to, and
    judged at, the exit cutoff it is held to: its reserve when above the ladder's (R16)."""
    ladder = inputs.settings.ladder
    max_age = ladder.max_reading_age_seconds
    fleet = Fleet(inputs)
    samples: list[Sample] = []
    excluded = dict.fromkeys(EXCLUSIONS, 0)
    forecasts = no_rate = lasted = lasted_p50 = lasted_p90 = reserved = 0
    instants: set[datetime] = set()
    histories: list[Sequence[Reading]] = []
    for index in _serving(fleet, auto_id):
        connection = fleet.connections[index]
        cid = connection.id
        cutoff = fleet.ladders[index].exit_cutoff_percent  # R16: its reserve when higher
        reserved += cutoff != ladder.exit_cutoff_percent
        readings = quota_readings(inputs.readings.get(cid, ()))
        histories.append(readings)
        keys = dict.fromkeys(_key(w) for r in readings for w in r.all_windows())
        for key in keys:
            series = Series(readings, key, cutoff, max_age)
            for item in window_forecasts(connection.provider, readings, key, cutoff, lengths,
                                         start, end):
                at = readings[item.index].checked_at
                if not start <= at <= end:
                    continue
                if item.rate is None or item.band is None:
                    no_rate += 1
                    continue
                forecasts += 1
                instants.add(at)
                kind, truth, seen_above = series.judge(series.position(item.index))
                if kind in excluded:
                    excluded[kind] += 1
                    continue
                low, high = item.band
                shape = item.profile
                p50 = crossing_at(item.window, item.rate, at, cutoff, shape)
                p90 = crossing_at(item.window, low, at, cutoff, shape)
                if kind == "lasted":
                    lasted += 1
                    lasted_p50 += p50 is None
                    lasted_p90 += p90 is None
                    continue
                assert truth is not None
                assert seen_above is not None
                samples.append(Sample(
                    connection_id=cid, window=key[0], at=at, truth=truth, seen_above=seen_above,
                    reset_at=item.window.reset_at,
                    p10=crossing_at(item.window, high, at, cutoff, shape),
                    p50=p50, p90=p90))
    return Backtest(auto_id=auto_id, start=start, end=end,
                    cutoff_percent=ladder.exit_cutoff_percent,
                    max_reading_age_seconds=max_age, instants=len(instants),
                    forecasts=forecasts, no_rate=no_rate, samples=tuple(samples),
                    lasted=lasted, lasted_p50=lasted_p50, lasted_p90=lasted_p90,
                    excluded=excluded, reserved=reserved,
                    warnings=(*inputs.warnings, *_polling_warning(histories, max_age, excluded)))


def _polling_warning(histories: Sequence[Sequence[Reading]], max_age: float,
                     excluded: dict[str, int]) -> tuple[str, ...]:
    """A warning when the readings are further apart than R6.5's maximum age: each outcome
    seen after such a gap is a ``reading-jump`` (the source was not watched in between), so
    most forecasts are excluded for a setting, not for what the source did."""
    if not excluded.get("reading-jump"):
        return ()
    gaps = [(later.checked_at - earlier.checked_at).total_seconds()
            for readings in histories for earlier, later in pairwise(readings)]
    if not gaps:
        return ()
    typical = statistics.median(gaps)
    if typical <= max_age:
        return ()
    return (f"the readings are {timefmt.age_beside(typical, max_age)} apart (median) but "
            f"[ladder] max_reading_age_seconds is {max_age:g}: an outcome seen after a longer "
            f"gap is a reading jump, so {excluded['reading-jump']} forecasts were excluded "
            "for it; set max_reading_age_seconds to at least the polling interval to judge "
            "them",)
