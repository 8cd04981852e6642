"""docs/forecast.md#profile: a window's burn projected by the hour of the day, as its own
history shows it, instead of at one constant rate."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from omniladder.analyses.backtest import crossing_at
from omniladder.analyses.forecast.pace import (
    crossings,
    no_lengths,
    outlook,
    projected_window,
    whole_second,
)
from omniladder.analyses.forecast.profile import BINS, MIN_HOURS, DayProfile
from omniladder.analyses.simulate import _walk as whole_fleet_walk
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.rendering.forecast_view import pace_document
from tests.builders import fleet
from tests.depth import deep
from tests.strategies import SHIPPED
from tests.test_backtest import CUTOFF, inputs_of
from tests.test_forecast import answers, recorded_plus_projected, run
from tests.test_forecast_band import assert_band_walks_are_whole_walks

NOW = datetime(2026, 11, 26, 6, tzinfo=UTC)
"""06:00 UTC, the quiet end of a night: the day's busy hours lie ahead."""
WEEK = 7 * 86_400


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def sine_burn(hour: float) -> float:
    """%/h at an hour of the UTC day: 1%/h on average, 1.9%/h at 15:00, 0.1%/h at 03:00."""
    return 1.0 + 0.9 * math.sin(2 * math.pi * (hour - 9.0) / 24.0)


def sine_used(start: datetime, end: datetime) -> float:
    """The percent ``sine_burn`` uses from ``start`` to ``end`` (its integral)."""
    def integral(at: datetime) -> float:
        hours = (at - NOW).total_seconds() / 3600.0 + 6.0  # hours since NOW's midnight
        return hours - 0.9 * 24 / (2 * math.pi) * math.cos(2 * math.pi * (hours - 9.0) / 24)

    return integral(end) - integral(start)


def weekly_history(burn: Any, days: float = 2.0, start_figure: float = 60.0,
                   every: int = 5, end: datetime = NOW) -> list[dict[str, Any]]:
    """Readings of a 7-day window every ``every`` minutes from ``days`` days before NOW up
    to ``end``, the figure burnt by ``burn(start, end)`` (percent between two instants),
    reset 3 days after NOW."""
    reset = stamp(NOW + timedelta(days=3))
    first = NOW - timedelta(days=days)
    out: list[dict[str, Any]] = []
    steps = int((end - first).total_seconds() / 60 / every)
    for step in range(steps + 1):
        at = first + timedelta(minutes=every * step)
        figure = start_figure - burn(first, at)
        out.append({"connection": "c", "checked_at": stamp(at),
                    "windows": [{"name": "weekly", "remaining_percent": round(figure, 6),
                                 "reset_at": reset, "window_seconds": WEEK}]})
    return out


def pace_of(readings: list[dict[str, Any]], now: datetime = NOW) -> Any:
    inputs = inputs_of(readings)
    found = outlook("c", "claude", inputs.readings["c"], now, inputs, no_lengths)
    (pace,) = found.paces
    return pace


def sine_truth(figure: float) -> datetime:
    """Where the sine burn takes the window from ``figure`` at NOW to the cutoff."""
    low, high = NOW, NOW + timedelta(days=3)
    while (high - low).total_seconds() > 0.5:
        middle = low + (high - low) / 2
        low, high = (middle, high) if figure - sine_used(NOW, middle) > CUTOFF else (low, middle)
    return high


def test_a_diurnal_burn_is_projected_by_the_hour_of_the_day() -> None:
    """Two days burning 1%/h on average, 0.1%/h at night and 1.9%/h in the afternoon: at
    06:00, with 12% left, the constant rate (the cycle's average) runs out at 16:00, two
    hours late; the profile puts it within minutes of where the burn takes it."""
    pace = pace_of(weekly_history(sine_used))
    assert pace.profile is not None
    assert pace.profile.days == pytest.approx(2.0, abs=0.1)
    assert pace.note == "burn by the hour of the day (2.0 days of readings)"
    assert pace.remaining_percent is not None
    truth = sine_truth(pace.remaining_percent)
    assert pace.cutoff_at is not None
    assert abs((pace.cutoff_at - truth).total_seconds()) <= 5 * 60
    window = pace_document(pace)
    hourly = window["burn_profile"]["percent_per_hour_by_utc_hour"]
    assert len(hourly) == BINS
    # the sine peaks at 15:00, between the hours 14:00-15:00 and 15:00-16:00
    assert sorted(range(BINS), key=lambda k: hourly[k])[-2:] in ([14, 15], [15, 14])
    assert hourly[15] == pytest.approx(sine_burn(15.5), rel=0.05)
    constant = crossing_at(_window(pace), pace.rate, pace.checked_at, CUTOFF)
    assert constant is not None
    assert (constant - truth).total_seconds() >= 3600


def _window(pace: Any) -> Any:
    from omniladder.models import Window

    return Window(name=pace.window, remaining_percent=pace.remaining_percent,
                  reset_at=pace.reset_at, window_seconds=WEEK)


def test_a_steady_burn_is_projected_at_the_constant_rate() -> None:
    """Two days at exactly 0.5%/h learn a flat profile: none, and the crossing is the
    constant rate's, to the second."""
    pace = pace_of(weekly_history(lambda a, b: 0.5 * (b - a).total_seconds() / 3600))
    assert pace.profile is None
    assert "hour of the day" not in pace.note
    assert pace_document(pace)["burn_profile"] is None
    assert pace.rate == pytest.approx(0.5)
    assert pace.remaining_percent is not None
    hours = (pace.remaining_percent - CUTOFF) / pace.rate
    assert pace.cutoff_at == whole_second(NOW + timedelta(hours=hours))


def test_less_than_a_day_of_history_is_projected_at_the_constant_rate() -> None:
    """The same diurnal burn read for less than ``MIN_HOURS``: no profile."""
    days = (MIN_HOURS - 1) / 24
    pace = pace_of(weekly_history(sine_used, days=days, start_figure=40.0))
    assert pace.profile is None
    assert pace.cutoff_at == crossing_at(_window(pace), pace.rate, pace.checked_at, CUTOFF)


def test_the_hour_in_progress_is_not_yet_learned() -> None:
    """The profile at 06:40 is the one at 06:00: the drops of the hour in progress wait for
    it to end (so the backtest learns once an hour)."""
    later = NOW + timedelta(minutes=40)
    history = weekly_history(sine_used, days=2.5, end=later)
    first = pace_of(history, NOW)
    second = pace_of(history, later)
    assert first.profile is not None
    assert second.profile is not None
    assert first.profile.weights == second.profile.weights


def test_a_spent_window_teaches_no_quiet_hours() -> None:
    """Drops that end with the window spent are not learned: the burn stopped for want of
    quota. A window spent every evening then refilled by a reset would otherwise read the
    evening as quiet."""
    from omniladder.analyses.forecast.profile import ProfileLearner

    def same(a: datetime | None, b: datetime | None) -> bool:
        return a == b

    learner = ProfileLearner(same)
    reset = NOW + timedelta(days=5)
    base = NOW - timedelta(days=2)
    for minutes in range(0, 2 * 24 * 60 + 1, 30):
        learner.see(base + timedelta(minutes=minutes), 0.0 if minutes % 1440 >= 1200 else 50.0,
                    reset)
    assert learner.learned(NOW) is None  # nothing but steady or spent: no burn at all


# --- the profile's arithmetic ----------------------------------------------------------------

WEIGHTS = st.lists(st.floats(0.1, 5.0), min_size=BINS, max_size=BINS).map(tuple)
INSTANTS = st.integers(0, 10 * 86_400 * 1_000_000).map(
    lambda micros: NOW + timedelta(microseconds=micros))


@deep(200, deadline=None)
def test_after_is_the_inverse_of_hours(examples: settings) -> None:
    @examples
    @given(WEIGHTS, st.floats(0.05, 20.0), INSTANTS, st.floats(0.0, 200.0))
    def holds(weights: tuple[float, ...], scale: float, start: datetime, hours: float) -> None:
        profile = DayProfile.of(weights, 48.0).scaled(scale)
        reached = profile.after(start, hours)
        assert reached is not None
        assert profile.hours(start, reached) == pytest.approx(hours, rel=1e-9, abs=1e-6)

    holds()


@deep(150, deadline=None)
def test_a_profiled_projection_falls_and_crosses_where_it_shows_the_cutoff(
        examples: settings) -> None:
    """Within a cycle the projected figure never rises, and each crossing is the first
    whole second at which the projection shows the window at or below the cutoff."""
    from omniladder.models import Window

    @examples
    @given(WEIGHTS, st.floats(0.1, 60.0), INSTANTS, st.floats(3.0, 100.0),
           st.sampled_from([None, 18_000.0, 604_800.0]), st.integers(600, 30 * 3600),
           st.lists(st.integers(0, 40 * 3600), min_size=2, max_size=30))
    def holds(weights: tuple[float, ...], rate: float, origin: datetime, figure: float,
              length: float | None, reset_in: int, offsets: list[int]) -> None:
        reset = origin + timedelta(seconds=reset_in)
        window = Window(name="5h", remaining_percent=figure, reset_at=reset,
                        window_seconds=None if length is None else int(length))
        pace = dataclasses_pace(window, rate, origin, DayProfile.of(weights, 48.0), length)
        end = origin + timedelta(hours=40)
        instants = sorted(origin + timedelta(seconds=s) for s in offsets)
        shown = [(at, projected_window(window, pace, origin, at)) for at in instants]
        for (at, one), (later, other) in pairwise(shown):
            if one.reset_at == other.reset_at:
                assert other.figure <= one.figure, (at, later)
        for at in crossings(window, pace, origin, CUTOFF, end):
            assert at.microsecond == 0
            assert projected_window(window, pace, origin, at).figure <= CUTOFF
            before = at - timedelta(seconds=1)
            here = projected_window(window, pace, origin, at)
            there = projected_window(window, pace, origin, before)
            if there.reset_at == here.reset_at and before > origin:
                assert there.figure > CUTOFF

    holds()


def dataclasses_pace(window: Any, rate: float, origin: datetime, profile: DayProfile,
                     length: float | None) -> Any:
    from omniladder.analyses.forecast.pace import Pace

    return Pace(connection_id="c", window=window.name, models=None, checked_at=origin,
                remaining_percent=window.remaining_percent, reset_at=window.reset_at,
                window_seconds=length, length_source="test", readings=2,
                elapsed_fraction=None, expected_used_percent=None, used_percent=None,
                ahead_percent=None, burn_percent_per_hour=rate, cutoff_at=None,
                lasts_to_reset=None, note="", profile=profile)


# --- generated fleets with a day and more of history --------------------------------------

T0 = datetime(2026, 11, 30, 22, tzinfo=UTC)
SHAPES = [tuple(1.0 for _ in range(BINS)),
          tuple(0.1 if k < 8 or k >= 20 else 3.0 for k in range(BINS)),
          tuple(1.0 + 0.9 * math.sin(2 * math.pi * (k - 9) / 24) for k in range(BINS)),
          tuple(4.0 if k in (10, 11, 22) else 0.3 for k in range(BINS))]


def _at(at: datetime) -> str:
    return stamp(at)


@st.composite
def diurnal_fleets(draw: st.DrawFn) -> LoadedInputs:
    """Plans read for a day and more before T0 (every 10 to 30 minutes), a 5h window that
    resets every five hours and a weekly one, both burnt at a level times an hourly shape
    (flat, a working day, a sine, spikes), spent windows waiting for their reset; beside a
    metered key."""
    connections: list[dict[str, Any]] = [
        {"id": "key", "provider": "openai", "auth_type": "apikey", "models": ["gpt-5-mini"]}]
    history: list[dict[str, Any]] = []
    for index in range(draw(st.sampled_from([1, 1, 2]))):
        cid = f"c{index}"
        connections.append({"id": cid, "provider": "claude", "auth_type": "oauth",
                            "models": ["claude-sonnet-4-5"]})
        shape = draw(st.sampled_from(SHAPES))
        level = draw(st.sampled_from([10.0, 25.0, 60.0]))
        every = draw(st.sampled_from([10, 15, 30]))
        hours = draw(st.integers(26, 40))
        last = draw(st.integers(-9, 0))
        start = T0 + timedelta(minutes=last) - timedelta(hours=hours)
        reset = start + timedelta(minutes=draw(st.integers(10, 300)))
        weekly_reset = T0 + timedelta(hours=draw(st.sampled_from([3, 30, 100])))
        figure = draw(st.sampled_from([100.0, 60.0]))
        weekly = draw(st.sampled_from([95.0, 60.0, 35.0, 20.0]))
        at = start
        while at <= T0 + timedelta(minutes=last):
            if at >= reset:
                figure, reset = 100.0, reset + timedelta(hours=5)
            burn = level * shape[at.hour] * every / 60 * draw(st.sampled_from([0.6, 1.0, 1.4]))
            figure = max(figure - burn, 0.0)
            weekly = max(weekly - burn / 30, 0.5)
            history.append({"connection": cid, "checked_at": _at(at), "windows": [
                {"name": "5h", "remaining_percent": round(figure, 2), "reset_at": _at(reset),
                 "window_seconds": 18_000},
                {"name": "weekly", "remaining_percent": round(weekly, 2),
                 "reset_at": _at(weekly_reset), "window_seconds": WEEK}]})
            at += timedelta(minutes=every)
    table = {"ladder": {"exit_cutoff_percent": 2, "reentry_min_remaining_percent": 5,
                        "max_reading_age_seconds": 900},
             "budgets": {"rung_budget_usd": {"cheap": 5.0}}}
    return fleet(connections, history, settings=table, catalog=SHIPPED.catalogs)


def _profiled(inputs: LoadedInputs, now: datetime) -> bool:
    result = run(inputs, "auto/thrifty", now, hours=1, lengths=no_lengths)
    return any(p.profile is not None for o in result.outlooks for p in o.paces)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(diurnal_fleets(), st.sampled_from(["auto/thrifty", "auto/thrifty",
                                          "auto/subscription"]))
def test_profiled_answers_are_the_same_whatever_the_step(inputs: LoadedInputs,
                                                        auto_id: str) -> None:
    """docs/forecast.md#instants on profiled histories: the answers at 1m, 5m, 1h and 4h
    steps are the same, and simulate's whole-fleet re-plan of the projected readings
    written as recorded ones gives the same transitions and heads."""
    assume(_profiled(inputs, T0))
    results = [run(inputs, auto_id, T0, hours=24, step=timedelta(minutes=minutes),
                   lengths=no_lengths) for minutes in (1, 5, 60, 240)]
    first = answers(results[0])
    event("paid within the horizon" if results[0].first_paid_at else "no paid rung")
    for result in results[1:]:
        assert answers(result) == first
    result = results[1]
    instants = [p.at for p in result.timeline]
    points, transitions = whole_fleet_walk(recorded_plus_projected(inputs, result),
                                           parse_auto_id(auto_id), instants)
    assert transitions == result.transitions
    assert [p.head for p in points] == [p.head for p in result.timeline]


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(diurnal_fleets(), st.sampled_from(["auto/thrifty", "auto/subscription"]))
def test_profiled_band_walks_equal_whole_walks(inputs: LoadedInputs, auto_id: str) -> None:
    """The band's walks, deciding again only what the middle walk does not give, equal the
    whole walks at the high and low burn on profiled histories."""
    assume(_profiled(inputs, T0))
    assert_band_walks_are_whole_walks(inputs, auto_id, T0 + timedelta(hours=12), no_lengths)


def test_a_history_of_years_is_learned_without_overflow() -> None:
    """Drops more than ``REBASE_HOURS`` apart: the weights are rebased instead of
    outgrowing a float, the old days weigh next to nothing, and the backtest learns what
    the forecast learns."""
    from omniladder.analyses.backtest import window_forecasts
    from omniladder.analyses.forecast.profile import REBASE_HOURS, ProfileLearner
    from omniladder.engine.quota import quota_readings

    def day_of(start: datetime, busy: int, figure: float) -> list[dict[str, Any]]:
        out = []
        for step in range(0, 26 * 4 + 1):
            at = start + timedelta(minutes=15 * step)
            figure -= 3.0 if at.hour == busy else 0.1
            out.append({"connection": "c", "checked_at": stamp(at), "windows": [
                {"name": "5h", "remaining_percent": round(figure, 3)}]})
        return out

    old = NOW - timedelta(hours=REBASE_HOURS + 500)
    readings = day_of(old, 3, 100.0) + day_of(NOW - timedelta(hours=26), 15, 100.0)
    inputs = inputs_of(readings)
    history = inputs.readings["c"]
    quota = quota_readings(history)
    last = quota[-1].checked_at
    items = list(window_forecasts("claude", quota, ("5h", None), CUTOFF, no_lengths,
                                  quota[0].checked_at, last))
    pace = pace_of(readings, last)
    assert items[-1].profile == pace.profile
    assert pace.profile is not None
    weights = pace.profile.weights
    assert max(range(BINS), key=lambda k: weights[k]) == 15  # the late day's busy hour
    assert weights[3] < 0.2 * weights[15]  # the old one's, 500 days older, weighs nothing
    learner = ProfileLearner(lambda a, b: a == b)
    for reading in quota:
        (window,) = reading.all_windows()
        learner.see(reading.checked_at, window.figure, window.reset_at)
    assert learner.learned(last) == DayProfile.of(weights, pace.profile.learned_hours)
    assert learner.anchor is not None
    assert learner.anchor > old + timedelta(hours=REBASE_HOURS)


WORK_PEAK = 2.5
"""%/h at the peak of the working day below."""


def working_day_used(start: datetime, end: datetime) -> float:
    """The percent a working day burns from ``start`` to ``end``: ``WORK_PEAK`` times 0.05
    outside 08:00-20:00 UTC and 0.05 + 0.95 sin² within, peaking at 14:00 (the shape of
    benchmarks/fleet.py's demand), integrated in closed form."""
    def since_midnight(hours: float) -> float:
        bump = 0.0
        if hours >= 20.0:
            bump = 6.0
        elif hours > 8.0:
            u = hours - 8.0
            bump = u / 2 - 3.0 / math.pi * math.sin(math.pi * u / 6.0)
        return 0.05 * hours + 0.95 * bump

    def cumulative(at: datetime) -> float:
        days, seconds = divmod((at - datetime(2026, 1, 1, tzinfo=UTC)).total_seconds(), 86_400)
        return WORK_PEAK * (days * since_midnight(24.0) + since_midnight(seconds / 3600.0))

    return cumulative(end) - cumulative(start)


def test_a_working_day_is_followed_through_its_morning_ramp() -> None:
    """Two days of a working day's burn, quiet at night, ramping from 08:00 to a peak at
    14:00 and quiet again from 20:00, read every 5 minutes; forecast at 09:00 with 14%
    left, the crossing falls at 15:51, almost seven hours ahead. The profile is a smooth
    curve fitted to the hours' burns: it follows the ramp and the peak to within 2 minutes
    of the true crossing (a blend of each hour with its neighbours, which flattens the
    peak, came 7 minutes late)."""
    at = NOW + timedelta(hours=3)
    history = working_day_used(NOW - timedelta(days=2), at)
    readings = weekly_history(working_day_used, start_figure=14.0 + history, end=at)
    pace = pace_of(readings, at)
    assert pace.profile is not None
    assert pace.remaining_percent == pytest.approx(14.0)
    low, high = at, at + timedelta(days=1)
    while (high - low).total_seconds() > 0.5:
        middle = low + (high - low) / 2
        low, high = ((middle, high) if 14.0 - working_day_used(at, middle) > CUTOFF
                     else (low, middle))
    assert pace.cutoff_at is not None
    assert abs((pace.cutoff_at - high).total_seconds()) <= 2 * 60, (pace.cutoff_at, high)


@deep(150, deadline=None)
def test_the_fitted_profile_stays_within_the_hours_seen(examples: settings) -> None:
    """Three days of hourly readings burning ``burns[hour]`` percent in each hour, the
    window absent from the readings at the ``absent`` hours (so the hours either side of
    each are never learned). Every hour of the fitted profile, those never learned too,
    burns at least ``FLOOR`` of the day's mean and at most what the busiest hour learned
    burnt."""
    from omniladder.analyses.forecast.profile import FLOOR, ProfileLearner

    @examples
    @given(st.lists(st.floats(0.0, 6.0), min_size=BINS, max_size=BINS),
           st.sets(st.integers(0, BINS - 1), max_size=8))
    def holds(burns: list[float], absent: set[int]) -> None:
        learner = ProfileLearner(lambda a, b: a == b)
        start = NOW - timedelta(days=3)
        figure, reset = 1e6, NOW + timedelta(days=30)
        for hour in range(3 * BINS + 1):
            if hour:
                figure -= burns[(hour - 1) % BINS]
            shown = None if hour % BINS in absent else figure
            learner.see(start + timedelta(hours=hour), shown, None if shown is None else reset)
        profile = learner.learned(NOW)
        assume(profile is not None)
        assert profile is not None
        never = [k for k in range(BINS) if learner.time[k] == 0]
        event(f"hours never learned: {len(never)}")
        time, burn = sum(learner.time), sum(learner.burn)
        busiest = max(b / t for b, t in zip(learner.burn, learner.time, strict=True) if t > 0)
        for weight in profile.weights:
            assert FLOOR <= weight <= busiest / (burn / time) + 1e-12

    holds()
