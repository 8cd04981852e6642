"""The best possible (SPEC §10.6): the least paid dollars any schedule could reach for a
demand, a fleet's quota windows and their consumption, as a linear program solved by HiGHS
(docs/whatif.md#bound).

Every constraint of the program holds of every schedule a replay could run, and none holds of
them only by policy, so the program's optimum is at most any such schedule's paid dollars.
Where the exact question is hard (which request goes where, when a first-use window's cycle
starts) the program asks a looser one; ``RELAXED`` says each loosening, one line each.

The program, in token units scaled so that the largest request weighs 1:

* per request ``r``: ``s_r`` (the share served by quota), ``z_r`` (the share blocked; only when
  the schedule may block), paid ``1 − s_r − z_r``; a request with no paid option is served by
  quota or blocked whole;
* per quota connection ``c``: ``S_c``, the units it served up to each bucket edge and up to
  each of its own resets that falls inside a bucket (``_Seat``'s cuts): cumulative, so that a
  window's use over any stretch is one difference, two nonzeros a row; rising;
* per bucket: the units the connections served in it are the units its requests were served
  by quota (buckets without requests share their edges' columns);
* per fixed cycle: the connection's use in it ≤ its capacity plus the largest request that
  could fall in it (a replay serves while anything is left, so its last request may
  overshoot; a cycle that starts empty serves nothing);
* per first-use window, for each stretch spanning at most ``k`` window lengths (``k`` in
  ``RUN_LENGTHS``) and each from the span's start or to its end, on steps of ``1/STEPS`` of
  a length: its use ≤ the cycles that can hold its requests, each at 100 plus its overshoot
  (the cycle in progress at the start at what it had left);
* ``Σ z_r ≤ may_block``; minimise the paid dollars.

highspy is imported by ``solve`` only (``pip install 'omniladder[whatif]'``): start-up never
pays for it (``omniladder.commands.NOT_AT_START``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

EXTRA = "whatif"
"""The optional extra that installs HiGHS (pyproject.toml)."""

RUN_LENGTHS = (1, 2)
"""The stretches a first-use window is held over, in window lengths, besides every stretch
from the span's start and every stretch to its end: a stretch of ``k`` lengths holds at most
``k + 1`` of the window's cycles, however they open, so one length alone lets the program
spend two cycles a length; two lengths, and the stretches from the start and to the end,
hold it near one over the span. Measured in docs/whatif.md#bound."""

STEPS = 5
"""A first-use window's stretches begin and end every fifth of its length (each bucket edge
when buckets are longer). On the benchmark's week of 30 seats at 15-minute buckets every
edge gives the bound fifths give ($43.87) at twice the rows and time; halves give $43.43."""

RELAXED = (
    "each request may be split between connections, paid and blocked in any shares (the "
    "continuous relaxation of sending it to one place)",
    "a first-use window's cycles open at whichever requests suit the schedule: each stretch "
    f"of up to {' or '.join(map(str, RUN_LENGTHS))} window lengths, and each from the span's "
    f"start or to its end (on steps of 1/{STEPS} of a length), holds as many as fit between "
    "its requests a length apart",
    "each cycle may overshoot by its largest request, as the replay's last request into it may",
    "a connection's use on each side of a reset inside a bucket is held only to the units "
    "requested on that side, not to what the other connections served there",
    "background burn is ignored: it only takes quota away",
    "the exit cutoff and reserves are ignored: they are policy, not capacity",
    "any request may be among the blocked ones, up to the number the schedule may block",
)
"""What the program loosens to stay a lower bound of every schedule, one line each."""


class BoundUnavailable(Exception):
    """The bound needs HiGHS and highspy is not installed."""


class BoundFailed(Exception):
    """HiGHS found no optimum: no schedule serves the demand within the blocked allowance, or
    the solver stopped short."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaWindow:
    """One quota window of a connection, as the program reads it."""

    name: str
    percent_per_unit: float
    """Percent of the window one token unit takes (SPEC §10.2); 0 limits nothing."""
    cycles: tuple[tuple[datetime, datetime, float], ...] = ()
    """A fixed-schedule window's cycles covering the span: (start, end, capacity percent),
    the first at what the window showed at the span's start, the later ones at 100. A request
    at an instant of ``[start, end)`` takes from that cycle. Empty for a first-use window."""
    first_use_seconds: float | None = None
    """A window whose cycle starts at the first request after its reset (Claude's and
    Codex's five hours): its length. None for a fixed window."""
    start_capacity: float = 100.0
    """A first-use window: what is left of the cycle in progress at the span's start."""
    start_reset: datetime | None = None
    """A first-use window: when the cycle in progress at the start ends (None: idle)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaOption:
    """A quota connection: a request it serves takes ``units × percent_per_unit`` of each of
    its windows."""

    connection: str
    windows: tuple[QuotaWindow, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundProblem:
    """A demand and the fleet that may serve it."""

    start: datetime
    end: datetime
    at: Sequence[datetime]
    """The requests' instants, each in ``[start, end]``."""
    units: Sequence[float]
    """Their token units."""
    paid_usd: Sequence[float | None]
    """The least any paid option of the fleet costs for each request; None: it has none (it is
    served by quota or blocked)."""
    quota: Sequence[QuotaOption]
    """Every quota connection, each of which may serve every request."""
    may_block: int
    """How many requests a schedule may leave unserved."""
    bucket_seconds: float = 900.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundResult:
    """The bound and what it took."""

    usd: float
    bucket_seconds: float
    buckets: int
    variables: int
    constraints: int
    seconds: float
    """Wall time building and solving the program (not importing the solver)."""
    solver: str
    """``HiGHS <version>``."""
    relaxed: tuple[str, ...]


def solve(problem: BoundProblem) -> BoundResult:
    """The least paid dollars any schedule could reach for ``problem``'s demand: a lower bound
    of every schedule that blocks at most ``may_block`` requests. Raises
    ``BoundUnavailable`` without highspy, ``BoundFailed`` when HiGHS finds no optimum and
    ValueError on a malformed problem."""
    highspy = _highspy()
    began = time.perf_counter()
    _check(problem)
    unserved = BoundFailed(f"no schedule serves the demand leaving at most "
                           f"{problem.may_block} request(s) unserved")
    if not problem.quota and sum(usd is None for usd in problem.paid_usd) > problem.may_block:
        raise unserved
    program = _program(problem)
    highs = _silent_solver(highspy)
    program.pass_to(highs, highspy)
    status = _run(highs, highspy)
    if status == highspy.HighsModelStatus.kInfeasible:
        raise unserved
    if status == highspy.HighsModelStatus.kModelEmpty:  # no request: nothing to pay
        usd = program.offset
    elif status == highspy.HighsModelStatus.kOptimal:
        usd = max(0.0, float(highs.getInfo().objective_function_value))
    else:
        raise BoundFailed(f"HiGHS stopped without an optimum: {highs.modelStatusToString(status)}")
    return BoundResult(usd=usd, bucket_seconds=problem.bucket_seconds, buckets=program.buckets,
                       variables=program.columns, constraints=program.rows,
                       seconds=time.perf_counter() - began, solver=f"HiGHS {highs.version()}",
                       relaxed=RELAXED)


def _run(highs: Any, highspy: Any) -> Any:
    """Solve, by interior point without crossover (the optimum's value is all the bound
    needs, and crossover to a vertex took more than half the time on a week of 30 seats),
    and by simplex when the interior point stops short of an optimum."""
    highs.setOptionValue("solver", "ipm")
    highs.setOptionValue("run_crossover", "off")
    highs.run()
    status = highs.getModelStatus()
    if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible,
                      highspy.HighsModelStatus.kModelEmpty):
        highs.setOptionValue("solver", "simplex")
        highs.run()
        status = highs.getModelStatus()
    return status


def _highspy() -> Any:
    """The highspy module, imported here only: start-up never pays for the solver."""
    try:
        import highspy
    except ImportError:
        raise BoundUnavailable(
            f"the bound needs HiGHS: pip install 'omniladder[{EXTRA}]'") from None
    return highspy


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Standard output pointed at the null device, at the descriptor: HiGHS writes its banner
    from C++ as its Python class is built (highspy 1.16 registers its callbacks in the
    constructor), before ``output_flag`` can be set (ERGO-Code/HiGHS issues 1702 and 2749),
    and standard output is the data of ``--json``."""
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to protect
        yield
        return
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def _silent_solver(highspy: Any) -> Any:
    with _quiet_stdout():
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
    return highs


def _check(problem: BoundProblem) -> None:
    count = len(problem.at)
    if len(problem.units) != count or len(problem.paid_usd) != count:
        raise ValueError(f"{count} instants, {len(problem.units)} units and "
                         f"{len(problem.paid_usd)} prices: one each per request")
    if problem.end <= problem.start:
        raise ValueError("the span ends at or before its start")
    if not problem.bucket_seconds > 0:
        raise ValueError(f"bucket_seconds must be positive, not {problem.bucket_seconds}")
    if problem.may_block < 0:
        raise ValueError(f"may_block must be 0 or more, not {problem.may_block}")
    outside = [at for at in problem.at if not problem.start <= at <= problem.end]
    if outside:
        raise ValueError(f"{len(outside)} request(s) outside the span, the first at "
                         f"{outside[0].isoformat()}")
    if any(not units >= 0 for units in problem.units):
        raise ValueError("a request's units must be 0 or more")
    if any(paid is not None and not paid >= 0 for paid in problem.paid_usd):
        raise ValueError("a request's paid price must be 0 or more")
    for option in problem.quota:
        for window in option.windows:
            if window.first_use_seconds is not None and not window.first_use_seconds > 0:
                raise ValueError(f"{option.connection} {window.name}: a first-use window's "
                                 "length must be positive")


_MICROSECOND = timedelta(microseconds=1)


def _offset(start: datetime, instant: datetime) -> int:
    """Microseconds from ``start``: whole numbers, so that a stretch of exactly one window
    length is counted as one, never as one and a hair."""
    return (instant - start) // _MICROSECOND


@dataclass(frozen=True, slots=True)
class _Rows:
    """Rows of the program in coordinates: ``lower ≤ Σ value·x[column] ≤ upper`` per row."""

    row: Ints
    column: Ints
    value: Floats
    lower: Floats
    upper: Floats


@dataclass(slots=True, kw_only=True)
class _Program:
    """The program as arrays, ready for HiGHS."""

    cost: Floats
    col_lower: Floats
    col_upper: Floats
    offset: float
    parts: list[_Rows]
    buckets: int

    @property
    def columns(self) -> int:
        return len(self.cost)

    @property
    def rows(self) -> int:
        return sum(len(part.lower) for part in self.parts)

    def pass_to(self, highs: Any, highspy: Any) -> None:
        """Hand the program to a HiGHS instance in one call, its matrix by columns."""
        import numpy as np  # comes with highspy

        before = np.cumsum([0] + [len(part.lower) for part in self.parts])[:-1]
        row = np.concatenate([part.row + base for part, base in
                              zip(self.parts, before, strict=True)] or [_ints([])])
        column = np.concatenate([part.column for part in self.parts] or [_ints([])])
        value = np.concatenate([part.value for part in self.parts] or [_floats([])])
        order = np.argsort(column, kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.bincount(column, minlength=self.columns))])
        passed = highs.passModel(
            self.columns, self.rows, len(value), int(highspy.MatrixFormat.kColwise),
            int(highspy.ObjSense.kMinimize), self.offset, self.cost, self.col_lower,
            self.col_upper,
            np.concatenate([part.lower for part in self.parts] or [_floats([])]),
            np.concatenate([part.upper for part in self.parts] or [_floats([])]),
            starts[:-1].astype(np.int32), row[order].astype(np.int32), value[order],
            np.zeros(self.columns, dtype=np.int32))  # every column continuous
        if passed != highspy.HighsStatus.kOk:
            raise BoundFailed(f"HiGHS refused the program: {passed}")


def _ints(values: Any) -> Ints:
    import numpy as np  # comes with highspy

    return np.asarray(values, dtype=np.int64)


def _floats(values: Any) -> Floats:
    import numpy as np  # comes with highspy

    return np.asarray(values, dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Buckets:
    """The span cut in buckets, and where the program's cumulative columns stand.

    Only a bucket holding a request moves a connection's cumulative use, so the columns
    ``S_c[p]`` stand at the edges that follow a bucket with requests: ``point[k]`` is the
    number of such buckets before edge ``k`` (``S_c[0]`` is the constant 0)."""

    edges: Ints
    """Microseconds from the start; bucket ``i`` is ``[edges[i], edges[i + 1])``."""
    bucket: Ints
    """Each request's bucket."""
    point: Ints
    """Per edge: the cumulative column that stands there."""
    load: Floats
    """Per edge: the (scaled) units of the requests before it."""
    largest: Floats
    """Per bucket: its largest (scaled) request, 0 when empty."""
    times: Ints
    """The requests' instants, sorted."""
    prefix: Floats
    """The (scaled) units of the first ``n`` requests in time order, per ``n``."""

    @property
    def count(self) -> int:
        return len(self.edges) - 1

    @property
    def filled(self) -> int:
        """How many buckets hold a request (the cumulative columns per connection)."""
        return int(self.point[-1])

    def before(self, instants: Ints) -> Floats:
        """The (scaled) units of the requests before each instant."""
        import numpy as np  # comes with highspy

        return self.prefix[np.searchsorted(self.times, instants, side="left")]

    def largest_between(self, first: Ints, stop: Ints) -> Floats:
        """The largest request of buckets ``first[n]`` up to ``stop[n]`` (excluded), per n."""
        import numpy as np  # comes with highspy

        levels = [self.largest]
        while 2 ** len(levels) <= self.count:
            below = levels[-1]
            half = 2 ** (len(levels) - 1)
            levels.append(np.maximum(below[:-half], below[half:]))
        found = np.zeros(len(first))
        level = np.floor(np.log2(np.maximum(stop - first, 1))).astype(np.int64)
        for number, table in enumerate(levels):
            chosen = (level == number) & (stop > first)
            if chosen.any():
                found[chosen] = np.maximum(table[first[chosen]],
                                           table[stop[chosen] - 2 ** number])
        return found


def _bucketed(problem: BoundProblem, offsets: Ints, units: Floats) -> _Buckets:
    import numpy as np  # comes with highspy

    span = _offset(problem.start, problem.end)
    width = max(1, round(problem.bucket_seconds * 1_000_000))
    edges = _ints([*range(0, span, width), span])  # the resets inside buckets: ``_Seat``
    if len(offsets) and offsets.max() == span:
        # a request at the span's end gets a bucket of its own past the last edge
        edges = np.append(edges, span + 1)
    bucket = np.searchsorted(edges, offsets, side="right") - 1
    count = len(edges) - 1
    held = np.bincount(bucket, minlength=count) > 0
    point = np.concatenate([[0], np.cumsum(held)]).astype(np.int64)
    load = np.concatenate([[0.0], np.cumsum(np.bincount(bucket, weights=units,
                                                        minlength=count))])
    largest = np.zeros(count)
    np.maximum.at(largest, bucket, units)
    order = np.argsort(offsets, kind="stable")
    return _Buckets(edges=edges, bucket=bucket, point=point, load=load, largest=largest,
                    times=offsets[order], prefix=np.concatenate([[0.0], np.cumsum(units[order])]))


def _program(problem: BoundProblem) -> _Program:
    import numpy as np  # comes with highspy

    requests = len(problem.at)
    raw = _floats(list(problem.units))
    scale = float(raw.max()) if requests and raw.max() > 0 else 1.0
    units = raw / scale
    offsets = _ints([_offset(problem.start, at) for at in problem.at])
    grid = _bucketed(problem, offsets, units)
    paid = _floats([0.0 if usd is None else usd for usd in problem.paid_usd])
    payable = _ints([usd is not None for usd in problem.paid_usd]).astype(bool)
    blocking = problem.may_block > 0
    connections = len(problem.quota)
    points = grid.filled
    # columns: s_r, then z_r (when the schedule may block), then S_c[1..points] per
    # connection, then each connection's cuts (``_Seat``)
    served_at = 0
    blocked_at = requests
    cumulative_at = requests * (2 if blocking else 1)
    seats = []
    cut_at = cumulative_at + connections * points
    for number, option in enumerate(problem.quota):
        seat = _Seat.of(problem, grid, option, cumulative_at + number * points, cut_at)
        seats.append(seat)
        cut_at += len(seat.cuts)
    columns = cut_at
    cost = np.zeros(columns)
    lower = np.zeros(columns)
    upper = np.full(columns, np.inf)
    cost[served_at:served_at + requests] = -paid
    upper[served_at:served_at + requests] = 1.0 if connections else 0.0
    if blocking:
        cost[blocked_at:blocked_at + requests] = -paid
        upper[blocked_at:blocked_at + requests] = 1.0
    elif connections:
        # no paid option and none blocked: served by quota, whole
        lower[served_at:served_at + requests][~payable] = 1.0
    parts = [_balance(grid, units, connections, served_at, cumulative_at)]
    parts.append(_rising(connections, points, cumulative_at))
    for seat, option in zip(seats, problem.quota, strict=True):
        parts.append(seat.cut_rows(grid))
        for window in option.windows:
            if window.percent_per_unit > 0:
                parts.append(_window_rows(problem, grid, seat, window, scale))
    if blocking:
        parts.append(_shares(payable, served_at, blocked_at))
        parts.append(_Rows(row=np.zeros(requests, dtype=np.int64),
                           column=np.arange(blocked_at, blocked_at + requests),
                           value=np.ones(requests), lower=_floats([-np.inf]),
                           upper=_floats([problem.may_block])))
    return _Program(cost=cost, col_lower=lower, col_upper=upper, offset=float(paid.sum()),
                    parts=parts, buckets=grid.count)


@dataclass(frozen=True, slots=True)
class _Seat:
    """Where one connection's cumulative use stands: at each bucket edge (the columns every
    connection has, which the balance reads) and at its **cuts**, the resets of its fixed
    windows that fall inside a bucket holding requests. A cut is a column of this connection
    alone: its cycles end and begin exactly there, while the grid stays one for the fleet (a
    cut at every connection's resets for all of them would add two edges a seat to a week's
    buckets). Its use on each side of a cut is at most the units requested on that side."""

    grid_at: int
    """The column of ``S_c[1]``."""
    cuts: Ints
    """The cuts' instants, sorted."""
    cut_at: int
    """The column of the first cut."""

    @classmethod
    def of(cls, problem: BoundProblem, grid: _Buckets, option: QuotaOption, grid_at: int,
           cut_at: int) -> _Seat:
        import numpy as np  # comes with highspy

        span = _offset(problem.start, problem.end)
        resets = _ints([_offset(problem.start, moment) for window in option.windows
                        for cycle in window.cycles for moment in cycle[:2]])
        resets = np.unique(resets[(resets > 0) & (resets < span)])
        bucket = np.searchsorted(grid.edges, resets, side="right") - 1
        inside = (grid.edges[bucket] != resets) & (grid.point[bucket + 1] > grid.point[bucket])
        return cls(grid_at=grid_at, cuts=resets[inside], cut_at=cut_at)

    def columns(self, grid: _Buckets, instants: Ints) -> Ints:
        """The column where the use stands at each instant (a bucket edge, a cut, or an
        instant inside a bucket with no request: its edges' column); -1 for the start's
        constant 0. An instant past the span stands at the last edge."""
        import numpy as np  # comes with highspy

        instants = np.minimum(instants, grid.edges[-1])
        bucket = np.minimum(np.searchsorted(grid.edges, instants, side="right") - 1,
                            grid.count - 1)
        on_edge = grid.edges[bucket] == instants
        point = np.where(on_edge | (instants >= grid.edges[-1]),
                         grid.point[np.searchsorted(grid.edges, instants, side="left")],
                         grid.point[bucket])
        column = np.where(point > 0, self.grid_at + point - 1, -1)
        cut = np.searchsorted(self.cuts, instants, side="left")
        is_cut = (cut < len(self.cuts)) & (self.cuts[np.minimum(cut, max(len(self.cuts) - 1,
                                                                          0))] == instants) \
            if len(self.cuts) else np.zeros(len(instants), dtype=bool)
        return np.where(is_cut, self.cut_at + cut, column)

    def cut_rows(self, grid: _Buckets) -> _Rows:
        """Each cut between its neighbours (the bucket's edges, or another cut in the same
        bucket): ``0 ≤ S_c[right] − S_c[left] ≤`` the units requested between them."""
        import numpy as np  # comes with highspy

        bucket = np.searchsorted(grid.edges, self.cuts, side="right") - 1
        left = np.concatenate([[-1], self.cuts[:-1]])
        left_bucket = np.concatenate([[-1], bucket[:-1]])
        left = np.where(left_bucket == bucket, left, grid.edges[bucket])
        right = np.concatenate([self.cuts[1:], [-1]])
        right_bucket = np.concatenate([bucket[1:], [-1]])
        last = right_bucket != bucket  # the last cut of its bucket
        right = np.where(last, grid.edges[bucket + 1], right)
        # a row from each cut's left neighbour to it, and from the last of a bucket onwards
        lows = np.concatenate([left, self.cuts[last]])
        highs = np.concatenate([self.cuts, right[last]])
        return _pairs(self.columns(grid, lows), self.columns(grid, highs),
                      lower=np.zeros(len(lows)),
                      upper=grid.before(highs) - grid.before(lows))


def _pairs(low: Ints, high: Ints, *, lower: Floats, upper: Floats) -> _Rows:
    """Rows ``lower ≤ x[high] − x[low] ≤ upper``; a column of -1 is the constant 0."""
    import numpy as np  # comes with highspy

    count = len(low)
    rows = np.arange(count)
    inner = low >= 0
    return _Rows(row=np.concatenate([rows, rows[inner]]),
                 column=np.concatenate([high, low[inner]]),
                 value=np.concatenate([np.ones(count), -np.ones(int(inner.sum()))]),
                 lower=lower, upper=upper)


def _balance(grid: _Buckets, units: Floats, connections: int, served_at: int,
             cumulative_at: int) -> _Rows:
    """Per bucket holding requests: the units the connections served in it (their cumulative
    use's step) equal the units of its requests served by quota."""
    import numpy as np  # comes with highspy

    points = grid.filled
    slot = grid.point[grid.bucket]  # each request's row: its bucket's rank among the filled
    rows = [slot]
    cols = [served_at + np.arange(len(slot))]
    values = [-units]
    for number in range(connections):
        base = cumulative_at + number * points
        rows.append(np.arange(points))
        cols.append(base + np.arange(points))  # S_c[p + 1]
        values.append(np.ones(points))
        rows.append(np.arange(1, points))
        cols.append(base + np.arange(max(points - 1, 0)))  # − S_c[p]
        values.append(-np.ones(max(points - 1, 0)))
    return _Rows(row=np.concatenate(rows), column=np.concatenate(cols),
                 value=np.concatenate(values), lower=np.zeros(points), upper=np.zeros(points))


def _rising(connections: int, points: int, cumulative_at: int) -> _Rows:
    """``S_c[p + 1] − S_c[p] ≥ 0``: a connection serves no negative units."""
    import numpy as np  # comes with highspy

    steps = max(points - 1, 0)
    rows = np.arange(connections * steps)
    base = (cumulative_at + np.repeat(np.arange(connections) * points, steps)
            + np.tile(np.arange(steps), connections))
    return _Rows(row=np.concatenate([rows, rows]), column=np.concatenate([base + 1, base]),
                 value=np.concatenate([np.ones(len(rows)), -np.ones(len(rows))]),
                 lower=np.zeros(len(rows)), upper=np.full(len(rows), np.inf))


def _shares(payable: npt.NDArray[np.bool_], served_at: int, blocked_at: int) -> _Rows:
    """Per request, served and blocked shares: at most the whole; exactly the whole for a
    request with no paid option."""
    import numpy as np  # comes with highspy

    count = len(payable)
    rows = np.arange(count)
    return _Rows(row=np.concatenate([rows, rows]),
                 column=np.concatenate([served_at + rows, blocked_at + rows]),
                 value=np.ones(2 * count), lower=np.where(payable, -np.inf, 1.0),
                 upper=np.ones(count))


def _window_rows(problem: BoundProblem, grid: _Buckets, seat: _Seat, window: QuotaWindow,
                 scale: float) -> _Rows:
    """One window's rows over its connection's cumulative use: ``S_c[b] − S_c[a] ≤ room``
    for each stretch ``[a, b)`` that could take more than its room (the units requested in
    it). Duplicates keep the least room."""
    import numpy as np  # comes with highspy

    full = 100.0 / window.percent_per_unit / scale  # one cycle's capacity, in scaled units
    if window.first_use_seconds is None:
        begin, end, room = _fixed_stretches(problem, grid, window, full)
    else:
        first, stop, room = _first_use_stretches(problem, grid, window, full)
        begin, end = grid.edges[first], grid.edges[stop]
    low, high = seat.columns(grid, begin), seat.columns(grid, end)
    binding = (grid.before(end) - grid.before(begin) > room + 1e-12) & (high != low)
    low, high, room = low[binding], high[binding], room[binding]
    key = (low + 1) * (int(high.max(initial=0)) + 2) + high
    order = np.lexsort((room, key))
    keep = order[np.concatenate([[True], key[order][1:] != key[order][:-1]])] \
        if len(order) else order
    return _pairs(low[keep], high[keep], lower=np.full(len(keep), -np.inf), upper=room[keep])


def _fixed_stretches(problem: BoundProblem, grid: _Buckets, window: QuotaWindow,
                     full: float) -> tuple[Ints, Ints, Floats]:
    """A fixed window: each cycle's instants in the span, and room for its capacity and its
    overshoot (none for a cycle that starts empty: the replay serves nothing from it)."""
    import numpy as np  # comes with highspy

    span = _offset(problem.start, problem.end)
    cycles = [(_offset(problem.start, begin), _offset(problem.start, end), percent)
              for begin, end, percent in window.cycles]
    kept = [(max(low, 0), high if high <= span else int(grid.edges[-1]), percent)
            for low, high, percent in cycles if high > 0 and low <= span]
    begin = _ints([low for low, _, _ in kept])
    end = _ints([high for _, high, _ in kept])
    left = _floats([percent for _, _, percent in kept])
    # the largest request of the buckets the cycle touches (a bucket it cuts counts whole)
    first = np.searchsorted(grid.edges, begin, side="right") - 1
    stop = np.maximum(np.searchsorted(grid.edges, end, side="left"), first)
    room = np.where(left > 0, left / 100.0 * full + grid.largest_between(first, stop), 0.0)
    return begin, end, room


def _first_use_stretches(problem: BoundProblem, grid: _Buckets, window: QuotaWindow,
                         full: float) -> tuple[Ints, Ints, Floats]:
    """A first-use window of length L: for each step's edge (``STEPS``) and each ``k`` of
    ``RUN_LENGTHS``, the longest stretch of steps ending there that spans at most ``k·L``, and
    the stretches from the span's start to it and from it to the span's end;
    its room is the cycles that can hold its requests, each full plus its overshoot.

    A cycle opens at a request (the first the window serves after its last reset), not before
    the reset of the cycle in progress at the start (or the start, idle), and the next opens a
    length later at the earliest. One that holds a request of the stretch, whose first and last
    are at ``a`` and ``b``, opens after ``a − L`` and by ``b``: at the requests from ``o``, the
    first after ``a − L`` and not before that reset, to ``b``, at most ``⌊(b − o)/L⌋ + 1``
    of them. The cycle in progress adds what it had left when the stretch has a request
    before its reset."""
    import numpy as np  # comes with highspy

    assert window.first_use_seconds is not None
    length = round(window.first_use_seconds * 1_000_000)
    reset = 0 if window.start_reset is None else max(
        0, _offset(problem.start, window.start_reset))
    edges, times = grid.edges, grid.times
    # the stretches end and begin at the first edge of every fifth of a length (all of them
    # when buckets are as long)
    marks = np.union1d(np.searchsorted(edges, np.arange(0, edges[-1], max(1, length // STEPS))),
                       [len(edges) - 1])
    stops = marks[1:]
    first = np.concatenate([marks[np.searchsorted(edges[marks], edges[stops] - k * length)]
                            for k in RUN_LENGTHS] + [np.zeros_like(stops), marks[:-1]])
    stop = np.concatenate([np.tile(stops, len(RUN_LENGTHS)), stops,
                           np.full_like(stops, marks[-1])])
    low = np.searchsorted(times, edges[first], side="left")
    high = np.searchsorted(times, edges[stop], side="left") - 1
    held = high >= low  # the stretch holds a request
    last = len(times) - 1
    a = times[np.clip(low, 0, last)] if len(times) else low
    b = times[np.clip(high, 0, last)] if len(times) else high
    opener = np.searchsorted(times, np.maximum(a - length + 1, reset), side="left")
    o = times[np.clip(opener, 0, last)] if len(times) else opener
    fresh = np.where((opener <= last) & (o <= b), (b - o) // length + 1, 0)
    overshoot = grid.largest_between(first, stop)
    room = fresh * (full + overshoot)
    if reset > 0 and window.start_capacity > 0:
        room = room + np.where(a < reset, window.start_capacity / 100.0 * full + overshoot,
                               0.0)
    return first, stop, np.where(held, room, np.inf)
