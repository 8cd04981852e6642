"""The consumption model (SPEC §10.2): for each quota window of a connection, the percent one
token unit takes and the percent an hour goes with no request of this gateway behind it,
fitted from the window's recorded readings against the token units the connection served.

The fit rests on **intervals**: two consecutive readings that carry the window within one
cycle. An interval's drop (the earlier figure less the later) is modelled as
``percent_per_unit × units + background_percent_per_hour × hours``, where ``units`` are the
token units the connection served after the earlier reading up to and including the later
one, and ``hours`` the time between them; both coefficients are at least 0 and chosen by least
squares. A connection with no readings, or a seat a scenario adds, takes a like connection's
fit scaled by the seats' sizes (``like_fit``), marked assumed.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate
from typing import NamedTuple

from omniladder.analyses.forecast.pace import SAME_RESET_SECONDS
from omniladder.analyses.whatif.report import Consumption
from omniladder.models import Connection, Reading, Window

RISE_POINTS = 1.0
"""A figure that rises by more than this between two readings of a window has started a new
cycle: a reset the readings did not tell (no ``reset_at``), or a window that gave back what
it had taken (a rolling window, whatever its ``reset_at`` says). Telemetry rounds figures to
whole percents, so a rise of one point is rounding; a figure within a cycle never rises
otherwise."""

COLLINEAR = 1e-9
"""Units and hours are taken as proportional across the intervals (the fit cannot tell the
traffic's share of a drop from the background's) when the squared sine of the angle between
the two columns, ``1 − (Σuh)² / (Σu² Σh²)``, is at most this."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """Two consecutive readings of one window within one cycle: one equation of the fit."""

    start: datetime
    """The earlier reading's instant; where the window was at rest there (``_at_rest``),
    the first request after it, which began the cycle: the background burns from then on."""
    end: datetime
    """The later reading's instant."""
    drop: float
    """The earlier figure less the later, percent points (negative when it rose, by at most
    ``RISE_POINTS``)."""
    units: float
    """Token units the connection served after the earlier reading, up to and including the
    later one."""

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600.0


class Served:
    """The token units one connection served, summed over any span in two bisections."""

    __slots__ = ("_instants", "_totals")

    def __init__(self, served: Sequence[tuple[datetime, float]]) -> None:
        self._instants = [at for at, _ in served]
        self._totals = [0.0, *accumulate(units for _, units in served)]

    def first_after(self, start: datetime) -> datetime | None:
        """The instant of the first request after ``start``; None when there is none."""
        first = bisect_right(self._instants, start)
        return self._instants[first] if first < len(self._instants) else None

    def between(self, start: datetime, end: datetime) -> float:
        """Units served after ``start``, up to and including ``end``."""
        first = bisect_right(self._instants, start)
        last = bisect_right(self._instants, end)
        return self._totals[last] - self._totals[first]


def _shown(reading: Reading, window: str) -> Window | None:
    """The window of that name in a reading, unless absent or unlimited (no figure)."""
    for candidate in reading.all_windows():
        if candidate.name == window:
            return None if candidate.unlimited else candidate
    return None


def _at_rest(shown: Window) -> bool:
    """A window full with no reset instant: a first-use window whose cycle has not begun.
    Nothing burns it until a request starts its cycle: the hours before that burn no
    background."""
    return shown.reset_at is None and shown.figure >= 100.0


def _same_cycle(earlier: Window, later: Window, later_at: datetime) -> bool:
    """Whether two readings of a window, in time order, show one cycle of it."""
    if earlier.reset_at is not None and earlier.reset_at <= later_at:
        return False  # the earlier reading's reset came between them
    if earlier.reset_at is not None and later.reset_at is not None and abs(
            (earlier.reset_at - later.reset_at).total_seconds()) > SAME_RESET_SECONDS:
        return False  # another reset: another cycle
    return later.figure - earlier.figure <= RISE_POINTS


def window_intervals(history: Sequence[Reading], connection: str, window: str,
                     served: Served) -> list[Interval]:
    """The intervals of one window of ``connection`` in ``history`` (sorted by
    ``checked_at``; other connections' readings are passed over), oldest first.

    A reading that does not carry the window, or shows it unlimited, is passed over: its
    neighbours still pair. A pair is broken by a reset between them (the earlier reading's
    ``reset_at`` at or before the later one's instant), by two ``reset_at`` more than
    ``SAME_RESET_SECONDS`` apart (sources jitter a reset by a few seconds), and by a rise of
    more than ``RISE_POINTS``. Two readings at one instant make no interval, and neither
    does a pair whose later figure is 0: a window cannot show more use than it had left, so
    such a drop understates the use behind it. A pair whose earlier reading shows the window
    at rest (``_at_rest``) counts its hours from the first request between them, which began
    the cycle, and makes no interval without one (another client began the cycle, no reading
    says when).
    """
    found: list[Interval] = []
    previous: tuple[datetime, Window] | None = None
    for reading in history:
        if reading.connection != connection:
            continue
        shown = _shown(reading, window)
        if shown is None:
            continue
        at = reading.checked_at
        if previous is not None:
            start, earlier = previous
            if at > start and shown.figure > 0.0 and _same_cycle(earlier, shown, at):
                units = served.between(start, at)
                begun: datetime | None = start
                if _at_rest(earlier):
                    # its cycle began at the first request after the earlier reading; with
                    # none, another client began it, at an instant no reading tells
                    begun = served.first_after(start) if units > 0.0 else None
                if begun is not None:
                    found.append(Interval(start=begun, end=at,
                                          drop=earlier.figure - shown.figure, units=units))
        previous = (at, shown)
    return found


class Coefficients(NamedTuple):
    """The least-squares answer of ``nonnegative_fit``."""

    percent_per_unit: float
    background_percent_per_hour: float
    fitted: int
    """How many coefficients the data let the fit move: 2, or 1 when it could fit only one
    (no traffic, units proportional to hours, or a coefficient held at 0); 0 without data."""


def nonnegative_fit(intervals: Sequence[Interval]) -> Coefficients:
    """The least-squares solution ``(a, b)`` of ``drop ≈ a·units + b·hours`` over the
    intervals with ``a, b ≥ 0``: ``a`` percent per unit, ``b`` background percent per hour.

    Two unknowns give a closed form, not a solver. The sum of squared residuals is a convex
    quadratic in ``(a, b)``, so its least value over the quadrant ``a, b ≥ 0`` lies either at
    the unconstrained minimum (the normal equations' solution) when that is in the quadrant,
    or else on one of its two edges: ``b = 0`` with the best ``a ≥ 0`` (``Σud / Σu²``,
    clamped at 0) or ``a = 0`` with the best ``b ≥ 0`` (``Σhd / Σh²``, clamped). The better
    of those two is the answer; the origin is on both edges, so it is covered.

    Degenerate data has a defined answer, never a division by zero. Every interval is
    longer than zero, so ``Σh² > 0``. No traffic (``Σu² = 0``): background only, ``a = 0``.
    Units proportional to hours (one interval, or traffic at a steady rate: ``COLLINEAR``):
    the data cannot split a drop between traffic and background, and the drop goes to the
    traffic (``b = 0``), the one cause the data shows; the background is what the traffic
    does not explain, and here it explains all of it.
    """
    suu = sum(i.units * i.units for i in intervals)
    shh = sum(i.hours * i.hours for i in intervals)
    suh = sum(i.units * i.hours for i in intervals)
    sud = sum(i.units * i.drop for i in intervals)
    shd = sum(i.hours * i.drop for i in intervals)
    if shh <= 0.0:
        return Coefficients(percent_per_unit=0.0, background_percent_per_hour=0.0, fitted=0)
    background = Coefficients(percent_per_unit=0.0,
                              background_percent_per_hour=max(0.0, shd / shh), fitted=1)
    if suu <= 0.0:
        return background
    traffic = Coefficients(percent_per_unit=max(0.0, sud / suu),
                           background_percent_per_hour=0.0, fitted=1)
    det = suu * shh - suh * suh
    if det <= COLLINEAR * suu * shh:
        return traffic
    a = (shh * sud - suh * shd) / det
    b = (suu * shd - suh * sud) / det
    if a >= 0.0 and b >= 0.0:
        return Coefficients(percent_per_unit=a, background_percent_per_hour=b, fitted=2)
    # Each edge's sum of squares less Σd²: a² Σu² − 2a Σud, and b² Σh² − 2b Σhd.
    a = traffic.percent_per_unit
    b = background.background_percent_per_hour
    return traffic if a * a * suu - 2.0 * a * sud <= b * b * shh - 2.0 * b * shd else background


def _consumption(connection: str, window: str,
                 intervals: Sequence[Interval]) -> Consumption | None:
    if not intervals:
        return None
    a, b, fitted = nonnegative_fit(intervals)
    error: float | None = None
    if len(intervals) > fitted:
        squares = sum((i.drop - a * i.units - b * i.hours) ** 2 for i in intervals)
        error = math.sqrt(squares / len(intervals))
    return Consumption(connection=connection, window=window, percent_per_unit=a,
                       background_percent_per_hour=b, intervals=len(intervals),
                       error_points=error, assumed=False)


def fit_window(connection: str, window: str, history: Sequence[Reading],
               served: Sequence[tuple[datetime, float]]) -> Consumption | None:
    """One window's consumption model, fitted (``nonnegative_fit``) from ``history`` (the
    connection's readings, sorted by ``checked_at``) and ``served`` (the instant and token
    units of each request the connection served, sorted by instant); None when the readings
    make no interval (``window_intervals``).

    ``error_points`` is the root mean square of the fit's residuals in percent points, over
    the intervals; None when there are no more intervals than the coefficients fitted, which
    the fit then meets exactly (one interval, or two with traffic and background apart).
    """
    return _consumption(connection, window,
                        window_intervals(history, connection, window, Served(served)))


def fit_connection(connection: Connection, history: Sequence[Reading],
                   served: Sequence[tuple[datetime, float]], *,
                   served_by_model: Mapping[str, Sequence[tuple[datetime, float]]] | None = None,
                   ) -> dict[str, Consumption]:
    """The fit of every window the connection's readings carry with a figure, by name in
    the order they first appear; a window whose readings make no interval is left out.

    ``served`` is every request the connection served (``fit_window``). With
    ``served_by_model`` (the same requests by model), a window that limits only some models
    (its latest reading's ``models``: Claude's weekly Opus window) is fitted against the
    units of those models alone: a request of another model takes nothing from it, and its
    drops are the background.
    """
    limits: dict[str, tuple[str, ...] | None] = {}
    for reading in history:
        if reading.connection == connection.id:
            limits.update((w.name, w.models) for w in reading.all_windows() if not w.unlimited)
    every = Served(served)
    found: dict[str, Consumption] = {}
    for name, models in limits.items():
        units = every
        if served_by_model is not None and models is not None:
            units = Served(sorted(request for model in dict.fromkeys(models)
                                  for request in served_by_model.get(model, ())))
        fit = _consumption(connection.id, name,
                           window_intervals(history, connection.id, name, units))
        if fit is not None:
            found[name] = fit
    return found


def like_fit(fit: Consumption, *, connection: str, like_weight: float,
             weight: float) -> Consumption:
    """An assumed fit for ``connection`` (one without readings, or a seat a scenario adds)
    from a like connection's ``fit``: one percent of a seat of ``weight`` is ``weight /
    like_weight`` percent of the like seat (SPEC §9's ``capacity_weight``), so the percent per
    unit and the background both scale by ``like_weight / weight``: a seat twice the size
    takes half the percent per unit. It rests on no interval of its own and has no error.
    A fit that was itself assumed passes on the connection it came from."""
    scale = like_weight / weight
    return Consumption(connection=connection, window=fit.window,
                       percent_per_unit=fit.percent_per_unit * scale,
                       background_percent_per_hour=fit.background_percent_per_hour * scale,
                       intervals=0, error_points=None, assumed=True,
                       like=fit.like if fit.assumed and fit.like else fit.connection)


def like_connection(connection: Connection,
                    fitted: Sequence[Connection]) -> Connection | None:
    """The first of ``fitted`` (connections with a fit) of the same provider and auth type
    as ``connection``, other than itself; None when there is none."""
    for other in fitted:
        if (other.id != connection.id and other.provider == connection.provider
                and other.auth_type == connection.auth_type):
            return other
    return None
