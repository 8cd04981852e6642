"""The best possible (SPEC §10.6, docs/whatif.md#bound): the program's optimum, worked by hand
on two small fleets, and held below every schedule a replay could run on generated ones."""

from __future__ import annotations

import copy
import os
import random
import subprocess
import sys
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.analyses.whatif.bound import (
    RELAXED,
    BoundFailed,
    BoundProblem,
    BoundUnavailable,
    QuotaOption,
    QuotaWindow,
    solve,
)
from tests.conftest import ROOT, benchmark_module
from tests.depth import deep

T0 = datetime(2026, 3, 2, tzinfo=UTC)
HOUR = timedelta(hours=1)
RATE = 0.10
"""The paid key's price: $0.10 per token unit."""


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def fixed(name: str, percent_per_unit: float, *cycles: tuple[float, float, float]
          ) -> QuotaOption:
    """A seat with one fixed window, its cycles given in hours from T0."""
    return QuotaOption(connection=name, windows=(QuotaWindow(
        name="7d", percent_per_unit=percent_per_unit,
        cycles=tuple((at(begin), at(end), percent) for begin, end, percent in cycles)),))


def demand(hours: list[float], units: float = 10.0) -> dict[str, list[datetime] | list[float]]:
    return {"at": [at(h) for h in hours], "units": [units] * len(hours),
            "paid_usd": [units * RATE] * len(hours)}


def test_two_fixed_seats_and_a_key_by_hand() -> None:
    """Six requests of 10 units, each $1.00 on the key, at 0:30, 1:00, 1:30 (G1) and 2:00,
    3:00, 4:00 (G2: 2:00 is the reset, so it opens the new cycle; 4:00 is the span's end).

    Seat A takes 20 % a unit (100 % is 5 units): 5 % left until 2:00 (0.25 units), then 100 %
    (5 units). Seat B takes 40 % a unit (100 % is 2.5 units): empty until 2:00, then 100 %.
    Each cycle holds its capacity plus one request's 10 units of overshoot, but a cycle that
    starts empty holds nothing (the replay sends it nothing):

    * G1 (30 units): A 0.25 + 10 = 10.25, B nothing: 19.75 units paid, $1.975;
    * G2 (30 units): A 5 + 10 = 15, B 2.5 + 10 = 12.5: 2.5 units paid, $0.25.

    The least paid is $2.225."""
    problem = BoundProblem(start=at(0), end=at(4), **demand([0.5, 1, 1.5, 2, 3, 4]),  # type: ignore[arg-type]
                           quota=[fixed("a", 20.0, (-1, 2, 5.0), (2, 170, 100.0)),
                                  fixed("b", 40.0, (-3, 2, 0.0), (2, 170, 100.0))],
                           may_block=0)
    result = solve(problem)
    assert result.usd == pytest.approx(2.225, abs=1e-6)
    assert result.buckets == 17  # sixteen 15-minute buckets over four hours, one for 4:00 itself
    # six shares s_r, and two seats' cumulative use at the six buckets that hold requests;
    # six balance rows, 2 × 5 rising rows, and a row per cycle (each could overflow)
    assert (result.variables, result.constraints) == (6 + 2 * 6, 6 + 2 * 5 + 4)
    assert result.solver.startswith("HiGHS 1.")
    assert result.relaxed == RELAXED


def test_a_reset_inside_a_bucket_cuts_only_its_seat() -> None:
    """One hourly bucket, a weekly window reset at 0:30 inside it (100 % is 10 units): 50 %
    left before, 100 % after; 10-unit requests ($1.00 each) at 0:00, then 0:40, 0:45, 0:50.
    The one of 0:00 fits the old cycle (5 + 10 overshoot); the new cycle takes 10 + 10 of the
    30 units after the reset. 10 units paid: $1.00. The seat's use before the reset is held
    to the 10 units requested before it: counted in the new cycle, the request of 0:00 would
    leave 20 units paid."""
    problem = BoundProblem(start=at(0), end=at(1), **demand([0, 40 / 60, 45 / 60, 50 / 60]),  # type: ignore[arg-type]
                           quota=[fixed("a", 10.0, (-1, 0.5, 50.0), (0.5, 170, 100.0))],
                           may_block=0, bucket_seconds=3600.0)
    result = solve(problem)
    assert result.usd == pytest.approx(1.0, abs=1e-6)
    assert result.buckets == 1


def test_a_request_at_the_end_takes_from_the_cycle_that_begins_there() -> None:
    """A window empty until 1:00, the span's end, and full from then: the request at 1:00 is
    the new cycle's (a bucket of its own), the one at 0:30 nobody's."""
    problem = BoundProblem(start=at(0), end=at(1), **demand([0.5, 1]),  # type: ignore[arg-type]
                           quota=[fixed("a", 1.0, (-1, 1, 0.0), (1, 170, 100.0))], may_block=0)
    result = solve(problem)
    assert result.usd == pytest.approx(1.0, abs=1e-6)
    assert result.buckets == 5


def test_a_first_use_window_by_hand() -> None:
    """One seat, a 5-hour first-use window taking 5 % a unit (100 % is 20 units), with 10 %
    (2 units) left of a cycle that resets at 3:00; hourly buckets over ten hours; three bursts
    of four 10-unit requests ($1.00 each on the key): 0:00-1:00, 3:00-4:00, 9:00-10:00.

    * burst 1 is before the reset: the cycle in progress, 2 + 10 overshoot = 12 units;
    * 3:00-10:00 is seven hours: at most two new cycles meet it (they start at first use, five
      hours apart, none before 3:00), 20 + 10 each: bursts 2 and 3 together 60 units, burst 2
      alone one cycle, 30.

    Served at most 12 + 60 = 72 of 120 units: 48 units paid, $4.80. Counting only five-hour
    stretches would let bursts 2 and 3 take 30 + 40 (82 units, $3.80)."""
    window = QuotaWindow(name="5h", percent_per_unit=5.0, first_use_seconds=5 * 3600.0,
                         start_capacity=10.0, start_reset=at(3))
    bursts = [0.1, 0.3, 0.5, 0.7, 3.1, 3.3, 3.5, 3.7, 9.1, 9.3, 9.5, 9.7]
    problem = BoundProblem(start=at(0), end=at(10), **demand(bursts),  # type: ignore[arg-type]
                           quota=[QuotaOption(connection="seat", windows=(window,))],
                           may_block=0, bucket_seconds=3600.0)
    assert solve(problem).usd == pytest.approx(4.80, abs=1e-6)
    idle = replace(window, start_capacity=100.0, start_reset=None)
    # idle: burst 1 opens a cycle (30), burst 2 is in it; burst 3 opens another (30): $6.00
    assert solve(replace(problem, quota=[QuotaOption(connection="seat", windows=(idle,))])
                 ).usd == pytest.approx(6.00, abs=1e-6)


def test_a_cycle_opened_before_a_stretch_serves_it_too() -> None:
    """An idle 5-hour window (100 % is 20 units): 10 units at 0:00 open a cycle that runs to
    5:00, 30 units at 4:00 take the rest of it (overshooting), 30 units at 6:00 open the next.
    A replay pays nothing, so the program may count neither request of 4:00-6:00 in one
    cycle: the one that serves 4:00 opened five hours before it, at most."""
    window = QuotaWindow(name="5h", percent_per_unit=5.0, first_use_seconds=5 * 3600.0)
    problem = BoundProblem(start=at(0), end=at(8), at=[at(0), at(4), at(6)],
                           units=[10.0, 30.0, 30.0], paid_usd=[1.0, 3.0, 3.0],
                           quota=[QuotaOption(connection="seat", windows=(window,))],
                           may_block=0, bucket_seconds=3600.0)
    assert schedule(problem, None) == (0.0, 0)
    assert solve(problem).usd == 0.0


def test_blocking_takes_the_dearest_requests_first() -> None:
    """No quota: the schedule pays for everything it does not block, and blocks the dearest
    (here $3 and $2 of $1 + $2 + $3 + $0.5); a request with no paid option must be blocked."""
    problem = BoundProblem(start=at(0), end=at(1), at=[at(0.1), at(0.2), at(0.3), at(0.4)],
                           units=[1.0, 1.0, 1.0, 1.0], paid_usd=[1.0, 2.0, 3.0, 0.5], quota=[],
                           may_block=2)
    assert solve(problem).usd == pytest.approx(1.5, abs=1e-6)
    unpaid = replace(problem, paid_usd=[1.0, None, 3.0, 0.5])
    assert solve(unpaid).usd == pytest.approx(1.5, abs=1e-6)
    with pytest.raises(BoundFailed, match="at most 0 request"):
        solve(replace(unpaid, may_block=0))


def test_no_schedule_fits_when_the_quota_cannot_serve_what_has_no_paid_option() -> None:
    problem = BoundProblem(start=at(0), end=at(1), **demand([0.1, 0.2, 0.3]),  # type: ignore[arg-type]
                           quota=[fixed("a", 10.0, (0, 1, 100.0))], may_block=0)
    unpaid = replace(problem, paid_usd=[None, None, None])
    with pytest.raises(BoundFailed, match="at most 0 request"):
        solve(unpaid)  # 10 units + one request's overshoot: two of three
    assert solve(replace(unpaid, may_block=1)).usd == 0.0


def test_the_bound_is_silent_on_standard_output(capfd: pytest.CaptureFixture[str]) -> None:
    """HiGHS prints a banner from C++ when it is built; `--json` owns standard output."""
    solve(BoundProblem(start=at(0), end=at(1), **demand([0.5]),  # type: ignore[arg-type]
                       quota=[fixed("a", 1.0, (0, 1, 100.0))], may_block=0))
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_without_highspy_the_bound_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "highspy", None)  # import highspy raises ImportError
    with pytest.raises(BoundUnavailable) as raised:
        solve(BoundProblem(start=at(0), end=at(1), at=[], units=[], paid_usd=[], quota=[],
                           may_block=0))
    assert str(raised.value) == "the bound needs HiGHS: pip install 'omniladder[whatif]'"


def test_importing_the_bound_does_not_import_the_solver() -> None:
    code = ("import sys, omniladder.analyses.whatif.bound\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('highspy', 'numpy')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(("change", "message"), [
    ({"units": [1.0]}, "2 instants, 1 units and 2 prices"),
    ({"end": T0}, "the span ends at or before its start"),
    ({"at": [at(0.5), at(1.5)]}, "1 request(s) outside the span, the first at 2026-03-02T01:30"),
    ({"bucket_seconds": 0.0}, "bucket_seconds must be positive"),
    ({"may_block": -1}, "may_block must be 0 or more"),
    ({"units": [1.0, -1.0]}, "a request's units must be 0 or more"),
])
def test_a_malformed_problem_is_one_line(change: dict[str, object], message: str) -> None:
    problem = BoundProblem(start=at(0), end=at(1), **demand([0.1, 0.2]),  # type: ignore[arg-type]
                           quota=[], may_block=0)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        solve(replace(problem, **change))  # type: ignore[arg-type]


# --- generated fleets: the bound stays below every schedule --------------------------------


@dataclass
class _State:
    """One window's state in a walked schedule."""

    remaining: dict[int, float]
    """Fixed: per cycle, what is left. First-use: key 0, the cycle in progress."""
    reset: datetime | None
    """First-use: when the cycle in progress ends (None: idle)."""


def _cycle_of(window: QuotaWindow, instant: datetime) -> int | None:
    for number, (begin, end, _) in enumerate(window.cycles):
        if begin <= instant < end:
            return number
    return None


def _left(window: QuotaWindow, state: _State, instant: datetime) -> float:
    """What the window has left for a request at ``instant`` (a first-use window past its
    reset has a whole cycle: the request would open it)."""
    if window.first_use_seconds is None:
        number = _cycle_of(window, instant)
        return float("inf") if number is None else state.remaining[number]
    if state.reset is None or instant >= state.reset:
        return 100.0
    return state.remaining[0]


def _take(window: QuotaWindow, state: _State, instant: datetime, units: float) -> None:
    used = units * window.percent_per_unit
    if window.first_use_seconds is None:
        number = _cycle_of(window, instant)
        if number is not None:
            state.remaining[number] = max(0.0, state.remaining[number] - used)
        return
    if state.reset is None or instant >= state.reset:
        state.reset = instant + timedelta(seconds=window.first_use_seconds)
        state.remaining[0] = 100.0
    state.remaining[0] = max(0.0, state.remaining[0] - used)


def _start_states(problem: BoundProblem) -> list[list[_State]]:
    return [[_State(remaining={n: c for n, (_, _, c) in enumerate(w.cycles)}
                    if w.first_use_seconds is None else {0: w.start_capacity},
                    reset=w.start_reset if w.start_reset and w.start_reset > problem.start
                    else None) for w in option.windows] for option in problem.quota]


def schedule(problem: BoundProblem, chooser: random.Random | None) -> tuple[float, int]:
    """Walk the requests in time order as a replay does: each goes to a quota connection
    whose windows all have something left in their cycle (taking from each, clamped at 0),
    else to the paid key, else it is blocked. With a ``chooser``, every choice the schedule
    may make is random (which connection, paying or blocking while quota is left); without,
    quota first, the first connection that can. Returns (paid $, blocked)."""
    states = _start_states(problem)
    paid, blocked = 0.0, 0
    order = sorted(range(len(problem.at)), key=lambda n: problem.at[n])
    for number in order:
        instant, units, usd = problem.at[number], problem.units[number], problem.paid_usd[number]
        open_ = [c for c, option in enumerate(problem.quota)
                 if all(_left(w, s, instant) > 0 for w, s in zip(option.windows, states[c],
                                                                 strict=True))]
        choices: list[int | str] = list(open_)
        if chooser is not None:
            choices += ["paid"] * (usd is not None) + ["block"] * (blocked < problem.may_block)
            choice = chooser.choice(choices) if choices else "block"
        else:
            choice = open_[0] if open_ else "paid" if usd is not None else "block"
        if choice == "paid":
            assert usd is not None
            paid += usd
        elif choice == "block":
            blocked += 1
        else:
            assert isinstance(choice, int)
            for window, state in zip(problem.quota[choice].windows, states[choice],
                                     strict=True):
                _take(window, state, instant, units)
    return paid, blocked


@st.composite
def windows(draw: st.DrawFn, hours: int) -> QuotaWindow:
    percent_per_unit = draw(st.sampled_from([0.0, 2.0, 5.0, 12.5, 40.0]))
    if draw(st.booleans()):
        period = draw(st.sampled_from([2, 3, 7, 24]))
        begin = -draw(st.integers(0, 4 * period - 1)) / 4  # resets at quarter hours
        cycles: list[tuple[datetime, datetime, float]] = []
        while begin <= hours:
            percent = draw(st.sampled_from([0.0, 30.0, 100.0])) if not cycles else 100.0
            cycles.append((at(begin), at(begin + period), percent))
            begin += period
        return QuotaWindow(name="fixed", percent_per_unit=percent_per_unit,
                           cycles=tuple(cycles))
    length = draw(st.sampled_from([1, 2, 5]))
    busy = draw(st.booleans())
    return QuotaWindow(name="first-use", percent_per_unit=percent_per_unit,
                       first_use_seconds=length * 3600.0,
                       start_capacity=draw(st.sampled_from([0.0, 20.0, 100.0])) if busy
                       else 100.0,
                       start_reset=at(draw(st.integers(1, length * 4)) / 4) if busy else None)


def cheapest(problem: BoundProblem) -> float | None:
    """The least a schedule pays, every choice tried (each request, in time order: a quota
    connection with something left, the paid key, or blocked while the allowance lasts);
    None when none blocks few enough. For a handful of requests only."""
    order = sorted(range(len(problem.at)), key=lambda n: problem.at[n])
    best: list[float] = []

    def walk(step: int, states: list[list[_State]], paid: float, blocked: int) -> None:
        if best and paid >= best[0]:
            return
        if step == len(order):
            best[:] = [paid]
            return
        number = order[step]
        instant, units, usd = problem.at[number], problem.units[number], problem.paid_usd[number]
        for c, option in enumerate(problem.quota):
            if all(_left(w, s, instant) > 0 for w, s in zip(option.windows, states[c],
                                                             strict=True)):
                taken = copy.deepcopy(states)
                for window, state in zip(option.windows, taken[c], strict=True):
                    _take(window, state, instant, units)
                walk(step + 1, taken, paid, blocked)
        if usd is not None:
            walk(step + 1, states, paid + usd, blocked)
        if blocked < problem.may_block:
            walk(step + 1, states, paid, blocked + 1)

    walk(0, _start_states(problem), 0.0, 0)
    return best[0] if best else None


@st.composite
def problems(draw: st.DrawFn, most: int = 24, seats: int = 3) -> BoundProblem:
    hours = draw(st.integers(1, 16))
    count = draw(st.integers(0, most))
    # quarter hours: instants land on bucket edges, resets and the span's end
    instants = sorted(draw(st.lists(st.integers(0, hours * 4), min_size=count,
                                    max_size=count)))
    units = draw(st.lists(st.sampled_from([0.0, 1.0, 3.0, 8.0, 20.0]), min_size=count,
                          max_size=count))
    prices = draw(st.lists(st.sampled_from([None, 0.1, 0.25, 1.0]), min_size=count,
                           max_size=count))
    fleet = [QuotaOption(connection=f"c{n}",
                         windows=tuple(draw(st.lists(windows(hours), min_size=1, max_size=2))))
             for n in range(draw(st.integers(0, seats)))]
    return BoundProblem(start=T0, end=at(hours), at=[at(q / 4) for q in instants],
                        units=units,
                        paid_usd=[None if rate is None else rate * u
                                  for rate, u in zip(prices, units, strict=True)],
                        quota=fleet, may_block=draw(st.integers(0, 3)),
                        bucket_seconds=draw(st.sampled_from([900.0, 3600.0, 5400.0, 7200.0])))


@settings(max_examples=120)
@given(problems(), st.integers(0, 2**32))
def test_the_bound_is_below_every_schedule(problem: BoundProblem, seed: int) -> None:
    chooser = random.Random(seed)
    walks = [schedule(problem, None)] + [schedule(problem, chooser) for _ in range(6)]
    fitting = [paid for paid, blocked in walks if blocked <= problem.may_block]
    try:
        usd = solve(problem).usd
    except BoundFailed:
        assert not fitting  # no schedule fits, so the program has no point either
        return
    assert usd >= 0
    assert usd <= sum(paid or 0.0 for paid in problem.paid_usd) + 1e-6
    for paid in fitting:
        assert usd <= paid + 1e-6


@deep(200)
def test_the_bound_is_below_the_cheapest_schedule(examples: settings) -> None:
    """On a handful of requests every schedule is tried: the bound is at most the best."""
    @examples
    @given(problems(most=5, seats=2))
    def holds(problem: BoundProblem) -> None:
        best = cheapest(problem)
        try:
            usd = solve(problem).usd
        except BoundFailed:
            assert best is None
            return
        if best is not None:
            assert usd <= best + 1e-6

    holds()


@settings(max_examples=30)
@given(problems())
def test_plentiful_quota_costs_nothing(problem: BoundProblem) -> None:
    roomy = QuotaOption(connection="roomy", windows=(
        QuotaWindow(name="fixed", percent_per_unit=1e-6,
                    cycles=((problem.start, problem.end + HOUR, 100.0),)),
        QuotaWindow(name="5h", percent_per_unit=1e-6, first_use_seconds=5 * 3600.0)))
    assert solve(replace(problem, quota=[*problem.quota, roomy])).usd == pytest.approx(
        0.0, abs=1e-6)


@settings(max_examples=30)
@given(problems())
def test_with_no_quota_and_none_blocked_every_request_is_paid(problem: BoundProblem) -> None:
    priced = [0.3 if usd is None else usd for usd in problem.paid_usd]
    result = solve(replace(problem, paid_usd=priced, quota=[], may_block=0))
    assert result.usd == pytest.approx(sum(priced), abs=1e-6)


def test_the_benchmark_week_is_a_problem_the_bound_solves() -> None:
    """benchmarks/whatif_bench.py --bound: a generated week (here of 2 seats, hourly)."""
    bench = benchmark_module("whatif_bench")
    figures = bench.one(2, 60.0, seed=1, run_lengths=None)
    assert figures["requests"] == len(bench.week(2, 1)["units"]) > 100
    assert 0 < figures["usd"] < figures["paid_all_usd"]
    assert figures["buckets"] == 7 * 24


def test_a_bound_the_solver_cannot_give_leaves_the_rest_of_the_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """whatif answers without the bound, saying why, when HiGHS finds no optimum."""
    import json

    from typer.testing import CliRunner

    from omniladder.analyses.whatif import run
    from omniladder.cli import app

    def stops(problem: BoundProblem) -> None:
        raise BoundFailed("HiGHS stopped without an optimum: Time limit reached")

    monkeypatch.setattr(run, "solve", stops)
    done = CliRunner().invoke(app, ["whatif", "auto/thrifty", "--config",
                                    str(ROOT / "examples" / "whatif" / "omniladder.toml"),
                                    "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["bound_usd"] is None
    assert answer["scenarios"][0]["regret_usd"] is None
    assert answer["bound_note"] == ("no bound: HiGHS stopped without an optimum: Time limit "
                                    "reached")
