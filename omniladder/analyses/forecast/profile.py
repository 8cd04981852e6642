"""The burn of a window over the hours of the day: a profile learned from the window's own
history, which the projection follows instead of one constant rate (docs/forecast.md#profile).

The profile holds, for each hour of the UTC day, the window's burn in that hour relative to
its burn over the whole day, learned from the drops between consecutive readings of one cycle
(same reset, no regain), each spread evenly over the time between the two readings and
weighted by its time, halved for every ``HALF_LIFE_HOURS`` of age; the hours' burns are then
fitted by a smooth curve over the day (``HARMONICS``). The projection burns at a level times
the profile: a figure that is piecewise linear in time, with a bend at each hour, so a
crossing is solved on its piece in closed form (``DayProfile.after``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from operator import mul

from omniladder import timefmt

BIN_SECONDS = 3600
"""The profile's pieces: the hours of the UTC day."""
BINS = 86_400 // BIN_SECONDS
MIN_HOURS = 24.0
"""No profile from less history than a day of readings (the time between consecutive
readings of one cycle, added up): with less, some hours of the day are not seen at all and
the projection burns at its constant rate, as it did before profiles."""
FLOOR = 0.1
"""An hour of the profile burns at least this share of the day's mean: a quiet hour in the
history is not a promise that nothing will burn, and a crossing always comes."""
FLAT = 0.01
"""Hours whose burns differ by no more than this share of the busiest are a flat profile:
none, the constant rate exactly (a steady burn, read at the precision its source rounds
to, differs by less; following it would move a crossing by less than this share of its
lead)."""
HARMONICS = 3
"""The hours' burns are fitted by a Fourier series over the day with this many harmonics
(periods of 24, 12 and 8 hours), by least squares weighted by each hour's time: a working
day's ramp, peak and quiet night take three, and the hour-to-hour noise of a few days of
readings is left out (docs/forecast.md#profile)."""
RIDGE = 1e-3
"""The fit's harmonics are held towards a flat day by this much (against each hour's share
of the time, which adds up to 1): enough that hours never seen still get a bounded burn,
too little to move a fit that has seen the whole day."""
HALF_LIFE_HOURS = 24.0
"""A drop this many hours older weighs half as much (the band's history weighs alike)."""
REBASE_HOURS = 400 * HALF_LIFE_HOURS
"""A drop this long after the first one weighed moves the weights' anchor to it (the sums
so far scaled alike), before its weight outgrows a float."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HOURS_PER_BIN = BIN_SECONDS / 3600.0


def _place(at: datetime) -> tuple[int, float]:
    """(days since the epoch, seconds into that UTC day)."""
    delta = at - _EPOCH
    return delta.days, delta.seconds + delta.microseconds / 1e6


@dataclass(frozen=True, slots=True)
class DayProfile:
    """The burn over the hours of the UTC day, relative: ``weights[k]`` is the burn in hour
    ``k`` over the day's mean (the fitted curve's mean over the hour, from ``FLOOR`` to the
    busiest hour learned), and ``scale`` the factor that makes the profile's mean over a
    pace's cycle 1 (``scaled``), so the pace's rate times the profile burns what the cycle
    burnt over its readings."""

    weights: tuple[float, ...]
    prefix: tuple[float, ...]
    """The weighted hours from midnight to the start of each hour (``BINS + 1`` of them)."""
    learned_hours: float
    """The hours of history the profile was learned from."""
    scale: float = 1.0

    @classmethod
    def of(cls, weights: tuple[float, ...], learned_hours: float) -> DayProfile:
        prefix = [0.0]
        for weight in weights:
            prefix.append(prefix[-1] + weight * _HOURS_PER_BIN)
        return cls(weights=weights, prefix=tuple(prefix), learned_hours=learned_hours)

    def scaled(self, factor: float) -> DayProfile:
        return replace(self, scale=self.scale * factor)

    def _within(self, seconds: float) -> float:
        """The weighted hours from midnight to ``seconds`` into the day."""
        k = min(int(seconds // BIN_SECONDS), BINS - 1)
        return self.prefix[k] + self.weights[k] * (seconds - k * BIN_SECONDS) / 3600.0

    def hours(self, start: datetime, end: datetime) -> float:
        """The hours at the pace's rate that the profile burns from ``start`` to ``end``:
        the plain hours for a profile that is flat over the span."""
        day, seconds = _place(start)
        later_day, later_seconds = _place(end)
        return self.scale * ((later_day - day) * self.prefix[-1] + self._within(later_seconds)
                             - self._within(seconds))

    def after(self, start: datetime, hours: float) -> datetime | None:
        """The instant at which ``hours`` at the pace's rate have burnt since ``start``
        (the inverse of ``hours``, to the microsecond), found on the hour it falls in; None
        when it falls off the calendar."""
        day, seconds = _place(start)
        total = self.prefix[-1]
        target = self._within(seconds) + hours / self.scale
        if not target / total < 3_652_059:  # past year 9999 whatever the start (or inf)
            return None
        days = math.floor(target / total)
        rest = max(target - days * total, 0.0)
        k = min(max(bisect_right(self.prefix, rest) - 1, 0), BINS - 1)
        into = min((rest - self.prefix[k]) / self.weights[k] * 3600.0, float(BIN_SECONDS))
        return timefmt.shifted(_EPOCH, timedelta(days=day + days, seconds=k * BIN_SECONDS)
                               + timedelta(seconds=into))

    @property
    def days(self) -> float:
        return self.learned_hours / 24.0


SameReset = Callable[[datetime | None, datetime | None], bool]


class ProfileLearner:
    """A window's readings fed in order (``see``), the profile they teach at an instant
    (``learned``): from the drops that ended before that instant's hour began (the hour in
    progress is still being measured), so the profile changes once an hour at most. Fed
    the same readings, the forecast at an instant and the backtest, reading after reading,
    add the same drops in the same order: the same profile to the last bit."""

    def __init__(self, same_reset: SameReset) -> None:
        self.same_reset = same_reset
        self.previous: tuple[datetime, float, datetime | None] | None = None
        self.pending: deque[tuple[datetime, datetime, float]] = deque()
        self.anchor: datetime | None = None
        self.burn = [0.0] * BINS
        self.time = [0.0] * BINS
        self.learned_hours = 0.0
        self.profile: DayProfile | None = None

    def see(self, at: datetime, figure: float | None, reset_at: datetime | None) -> None:
        """The next reading's figure of the window (None: absent or unlimited). A drop
        between two readings of one cycle is kept; one that ends with the window spent is
        not (the burn stopped for want of quota, not of demand)."""
        previous = self.previous
        self.previous = None if figure is None else (at, figure, reset_at)
        if previous is None or figure is None:
            return
        was_at, was, was_reset = previous
        # a window shown full with no reset runs no cycle: a reading with a reset that
        # follows it shows the burn since the cycle began
        started = was_reset is None and was >= 100.0 and reset_at is not None
        if (figure > was or figure <= 0 or at <= was_at
                or not (started or self.same_reset(was_reset, reset_at))):
            return
        self.pending.append((was_at, at, was - figure))

    def learned(self, now: datetime) -> DayProfile | None:
        """The profile from the drops that ended before the hour of ``now`` began; None
        with less than ``MIN_HOURS`` of them, no burn, or a flat one."""
        day, seconds = _place(now)
        cut = _EPOCH + timedelta(days=day, seconds=seconds // BIN_SECONDS * BIN_SECONDS)
        pending = self.pending
        if pending and pending[0][1] < cut:
            while pending and pending[0][1] < cut:
                self._add(*pending.popleft())
            self.profile = self._shape()
        return self.profile

    def _add(self, start: datetime, end: datetime, drop: float) -> None:
        if self.anchor is None:
            self.anchor = end
        age = (end - self.anchor).total_seconds() / 3600.0
        if age > REBASE_HOURS:
            factor = 0.5 ** (age / HALF_LIFE_HOURS)
            self.burn = [value * factor for value in self.burn]
            self.time = [value * factor for value in self.time]
            self.anchor, age = end, 0.0
        weight = 2.0 ** (age / HALF_LIFE_HOURS)
        length = (end - start).total_seconds()
        self.learned_hours += length / 3600.0
        _, seconds = _place(start)
        k = min(int(seconds // BIN_SECONDS), BINS - 1)
        edge = float((k + 1) * BIN_SECONDS)
        left = length
        while left > 0:
            piece = min(edge - seconds, left)
            self.time[k] += piece / 3600.0 * weight
            self.burn[k] += drop * (piece / length) * weight
            left -= piece
            seconds += piece
            k += 1
            edge += BIN_SECONDS
            if k == BINS:
                k, seconds, edge = 0, 0.0, float(BIN_SECONDS)

    def _shape(self) -> DayProfile | None:
        if self.learned_hours < MIN_HOURS:
            return None
        time, burn = sum(self.time), sum(self.burn)
        if time <= 0 or burn <= 0:
            return None
        mean = burn / time
        hourly = [max((b / t if t > 0 else mean) / mean, FLOOR)
                  for b, t in zip(self.burn, self.time, strict=True)]
        if max(hourly) - min(hourly) <= FLAT * max(hourly):
            return None  # a steady burn: the constant rate
        highest = max(b / t / mean for b, t in zip(self.burn, self.time, strict=True) if t > 0)
        fitted = _fit(tuple(b / t / mean if t > 0 else 0.0
                            for b, t in zip(self.burn, self.time, strict=True)),
                      tuple(t / time for t in self.time))
        # the fit is bounded by the hours seen: at least FLOOR, at most the busiest hour
        return DayProfile.of(tuple(min(max(value, FLOOR), highest) for value in fitted),
                             self.learned_hours)


def _basis() -> tuple[tuple[float, ...], ...]:
    """Each hour's mean of the series' terms: 1, then the cosine and sine of each harmonic,
    averaged over the hour (the profile is piecewise constant by the hour)."""
    rows = []
    for k in range(BINS):
        row = [1.0]
        for harmonic in range(1, HARMONICS + 1):
            omega = 2.0 * math.pi * harmonic / BINS
            row.append((math.sin(omega * (k + 1)) - math.sin(omega * k)) / omega)
            row.append((math.cos(omega * k) - math.cos(omega * (k + 1))) / omega)
        rows.append(tuple(row))
    return tuple(rows)


_BASIS = _basis()
_TERMS = 1 + 2 * HARMONICS
_PAIRS = tuple((i, j) for i in range(_TERMS) for j in range(i + 1))
_TERM_COLUMNS = tuple(tuple(row[i] for row in _BASIS) for i in range(_TERMS))
"""Each term's hour means, hour by hour."""
_PAIR_COLUMNS = tuple(tuple(row[i] * row[j] for row in _BASIS) for i, j in _PAIRS)
"""Each product of two terms, hour by hour: the normal equations' entries are their sums
weighted by the hours' shares."""


def _fit(values: tuple[float, ...], shares: tuple[float, ...]) -> list[float]:
    """The hour means of the Fourier series fitted to ``values`` (one per hour) by least
    squares weighted by ``shares`` (adding up to 1; an hour of share 0 is not seen), its
    harmonics held towards 0 by ``RIDGE``."""
    matrix = [[0.0] * _TERMS for _ in range(_TERMS)]
    for (i, j), column in zip(_PAIRS, _PAIR_COLUMNS, strict=True):
        matrix[i][j] = matrix[j][i] = sum(map(mul, shares, column))
    for i in range(1, _TERMS):
        matrix[i][i] += RIDGE
    weighted = tuple(map(mul, shares, values))
    coefficients = _solve(matrix, [sum(map(mul, weighted, column))
                                   for column in _TERM_COLUMNS])
    return [sum(map(mul, coefficients, row)) for row in _BASIS]


def _solve(matrix: list[list[float]], right: list[float]) -> list[float]:
    """The solution of a symmetric positive definite system (Cholesky)."""
    size = len(right)
    lower = [[0.0] * size for _ in range(size)]
    for i in range(size):
        for j in range(i + 1):
            total = matrix[i][j] - sum(lower[i][k] * lower[j][k] for k in range(j))
            if i == j:
                lower[i][i] = math.sqrt(max(total, 1e-300))
            else:
                lower[i][j] = total / lower[j][j]
    forward = [0.0] * size
    for i in range(size):
        forward[i] = (right[i] - sum(lower[i][k] * forward[k] for k in range(i))) / lower[i][i]
    solution = [0.0] * size
    for i in reversed(range(size)):
        solution[i] = (forward[i] - sum(lower[k][i] * solution[k]
                                        for k in range(i + 1, size))) / lower[i][i]
    return solution
