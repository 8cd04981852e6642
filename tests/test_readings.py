"""The named answers about a reading (``engine/readings.py``) and the inline copies that hot
loops keep of them: each copy is held to the function it copies, so a rule changed in its
function and not in a copy fails here, naming the copy.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omniladder.engine import quota, readings
from omniladder.engine.changes import connection_changes
from omniladder.engine.inputs import LoadedInputs
from omniladder.models import LadderSettings, Reading, Window
from tests.builders import NOW, at, conn, fleet, plan, reading, window

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

percents = st.one_of(st.none(), st.floats(0, 100, allow_nan=False),
                     st.sampled_from([0.0, 2.0, 5.0, 100.0]))
thresholds = st.one_of(st.floats(0, 100, allow_nan=False),
                       st.sampled_from([0.0, 2.0, 5.0, 100.0]))
resets = st.one_of(st.none(), st.integers(-600, 600).map(lambda m: T0 + timedelta(minutes=m)))


@st.composite
def windows(draw: st.DrawFn) -> Window:
    unlimited = draw(st.booleans())
    return Window(name=draw(st.sampled_from(["5h", "weekly", "opus"])),
                  remaining_percent=None if unlimited else draw(percents),
                  unlimited=unlimited, reset_at=draw(resets),
                  models=draw(st.sampled_from([None, ("sonnet",), ("opus",)])))


@given(windows())
def test_figure_is_the_window_property_and_the_inline_copies(win: Window) -> None:
    """R6.6's figure, asked three ways: the named function, the record's property and the
    inline copy in the verdict's loop (``quota._figure`` over a one-window reading)."""
    assert readings.figure(win) == win.figure
    one = Reading(connection="c", checked_at=T0 - timedelta(hours=1), windows=(win,))
    model = win.models[0] if win.models else "sonnet"
    expected = readings.figure(win) if readings.is_current(win, T0) else None
    assert quota._figure(one, model, T0) == expected


@given(windows(), thresholds, st.booleans())
def test_the_hold_prefilter_keeps_every_low_window(win: Window, cutoff: float,
                                                   later: bool) -> None:
    """``quota._first_holding`` passes over a window before asking ``_holds`` when its
    remaining percent is above the cutoff: every window ``readings.is_low`` calls low must
    pass that prefilter, or R6.4 would miss a hold its function asks for."""
    if readings.is_low(win, cutoff):
        assert (win.remaining_percent or 0.0) <= cutoff
    first = Reading(connection="c", checked_at=T0 - timedelta(hours=2), windows=(win,))
    second = Reading(connection="c", checked_at=T0 - timedelta(hours=1),
                     windows=(Window(name="other", remaining_percent=50.0),))
    found = quota._first_holding((first, second) if later else (first,), T0, cutoff)
    holds = (later and readings.is_low(win, cutoff) and win.reset_at is not None
             and win.reset_at > T0)
    assert (found == 0) == holds


@given(st.lists(windows(), min_size=1, max_size=3), thresholds)
def test_stays_in_play_agrees_with_below_on_every_window(wins: list[Window],
                                                         cutoff: float) -> None:
    """``quota._stays_in_play`` reads each window's figure against the exit cutoff inline:
    it says a pair stays in play exactly when ``readings.below`` finds no window low."""
    ladder = LadderSettings(exit_cutoff_percent=cutoff)
    one = Reading(connection="c", checked_at=T0, windows=tuple(wins))
    expected = not any(readings.below(readings.figure(w), True, ladder) for w in wins)
    assert quota._stays_in_play((one,), ladder) == expected


@given(windows(), thresholds)
def test_own_reset_and_the_change_schedule_read_low_windows_through_is_low(
        win: Window, cutoff: float) -> None:
    """R9's own reset and R6.4's always-counting reset in the change schedule take the same
    windows as low: ``readings.is_low``."""
    one = Reading(connection="c", checked_at=T0 - timedelta(hours=1), windows=(win,))
    reset = quota.own_reset(one, cutoff)
    if readings.is_low(win, cutoff):
        assert reset == win.reset_at
    else:
        assert reset is None
    later = Reading(connection="c", checked_at=T0 - timedelta(minutes=30),
                    windows=(Window(name="x", remaining_percent=50.0),))
    changes = list(connection_changes((one, later), None, 180.0, cutoff))
    if win.reset_at is not None:
        (change,) = [c for c in changes if c.at == win.reset_at and not c.exclusive]
        assert (change.until is None) == readings.is_low(win, cutoff)


@given(st.integers(-10**7, 10**7), st.floats(0, 10**6, allow_nan=False))
def test_is_fresh_turns_false_the_microsecond_after_stale_after(micros: int,
                                                                max_age: float) -> None:
    now = T0 + timedelta(microseconds=micros)
    last = readings.stale_after(T0, max_age)
    assert last is not None
    assert readings.is_fresh(T0, now, max_age) == (now <= last)


def test_stale_after_has_no_instant_past_the_calendar() -> None:
    assert readings.stale_after(T0, 1e12) is None


def test_next_reset_reads_the_exhausted_reading_then_the_low_windows() -> None:
    """R6.3 before R6.4: an exhausted reading's own reset; else the last reset among the
    low windows that apply to the model; unlimited and healthy windows never count."""
    later = T0 + timedelta(hours=3)
    exhausted = Reading(connection="c", checked_at=T0, status="exhausted", reset_at=later)
    assert readings.next_reset(exhausted, 2.0, "sonnet", T0) == readings.Reset(
        later, "the exhausted reading's reset")
    wins = (Window(name="5h", remaining_percent=1.0, reset_at=T0 + timedelta(hours=1)),
            Window(name="weekly", remaining_percent=0.0, reset_at=later),
            Window(name="opus", remaining_percent=0.0, reset_at=later + timedelta(hours=9),
                   models=("opus",)),
            Window(name="big", unlimited=True, reset_at=later + timedelta(hours=9)),
            Window(name="ok", remaining_percent=50.0, reset_at=later + timedelta(hours=9)))
    low = Reading(connection="c", checked_at=T0, windows=wins)
    assert readings.next_reset(low, 2.0, "sonnet", T0) == readings.Reset(
        later, "windows 5h, weekly")
    assert readings.next_reset(low, 2.0, "sonnet", later) is None
    assert readings.next_reset(low, None, "sonnet", T0) is None


def test_the_remedy_and_why_name_the_same_reset() -> None:
    """The remedy's "next reset" and ``why``'s comeback ask one function: the remedy names
    the instant the comeback route starts from, and both list the same low windows."""
    from omniladder.analyses.why import explain

    inputs = fleet([conn("c", models=["sonnet"])],
                   [reading("c", at(minutes=-5), window("5h", 0, at(hours=2)),
                            window("weekly", 1, at(hours=30)),
                            window("opus", 0, at(hours=40), models=["opus"]))])
    result = plan(inputs, "auto/subscription")
    (excluded,) = [x for x in result.excluded if x.connection_id == "c"]
    assert excluded.fix is not None
    assert excluded.fix.startswith("next reset 2026-11-30T18:00:00Z (windows 5h, weekly);")
    (verdict,) = explain(inputs, [result], "c").verdicts
    (comeback,) = verdict.comebacks
    route = comeback.with_reading
    assert route is not None
    assert route.at == NOW + timedelta(hours=30)
    assert route.steps[:2] == ("the 5h window resets at 14:00Z",
                               "the weekly window resets at 2026-11-30 18:00Z")


# --- the forecast asks the same functions ----------------------------------------------------


def _forecast_fleet(remaining: float, minutes_old: float) -> tuple[LoadedInputs, Reading]:
    inputs = fleet([conn("c", models=["sonnet"])],
                   [reading("c", at(minutes=-minutes_old - 30), window("5h", 60, at(hours=2))),
                    reading("c", at(minutes=-minutes_old), window("5h", remaining, at(hours=2)))])
    return inputs, inputs.readings["c"][-1]


def test_the_forecast_asks_is_fresh_whether_a_reading_can_be_projected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """R6.5 in the forecast: a reading a minute old is projected; the same reading is not
    once ``readings.is_fresh`` says it is stale (``pace.outlook`` reads no age of its own)."""
    from omniladder.analyses.forecast.pace import no_lengths, outlook

    inputs, _ = _forecast_fleet(50.0, 1)
    history = inputs.readings["c"]
    assert outlook("c", "claude", history, NOW, inputs, no_lengths).projected
    monkeypatch.setattr(readings, "is_fresh", lambda checked_at, now, max_age: False)
    found = outlook("c", "claude", history, NOW, inputs, no_lengths)
    assert not found.projected
    assert "stale, no forecast" in found.note


def test_the_forecast_asks_is_low_whether_a_window_is_at_the_cutoff(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """R6.4 in the forecast: a window at 1% is at the cutoff and not paced; narrowed by
    ``readings.is_low`` to empty windows only, it is paced."""
    from omniladder.analyses.forecast.pace import no_lengths, outlook

    inputs, _ = _forecast_fleet(1.0, 1)
    history = inputs.readings["c"]
    (pace,) = outlook("c", "claude", history, NOW, inputs, no_lengths).paces
    assert pace.note.startswith("at or below the cutoff")
    original = readings.is_low
    monkeypatch.setattr(readings, "is_low", lambda win, threshold: original(win, 0.0))
    (pace,) = outlook("c", "claude", history, NOW, inputs, no_lengths).paces
    assert not pace.note.startswith("at or below the cutoff")
    assert pace.burn_percent_per_hour is not None


@given(st.lists(windows(), min_size=1, max_size=3), thresholds, thresholds)
def test_the_forecast_sides_are_below_in_play_and_out(wins: list[Window], cutoff: float,
                                                      floor: float) -> None:
    """The band's reuse of the middle walk's decisions (``walk._sides``, an inline copy in
    its loop over every projected window) reads each figure as R7 does: ``readings.below``
    in play (the exit cutoff) and out (the re-entry floor), at ``threshold_of``'s figures."""
    from omniladder.analyses.forecast.walk import _sides

    ladder = LadderSettings(exit_cutoff_percent=cutoff, reentry_min_remaining_percent=floor)
    one = Reading(connection="c", checked_at=T0, windows=tuple(wins))
    sides = _sides(one, readings.threshold_of(True, ladder), readings.threshold_of(False, ladder))
    assert isinstance(sides[-1], tuple)
    assert [side[-2:] for side in sides[-1]] == [
        (readings.below(w.figure, True, ladder), readings.below(w.figure, False, ladder))
        for w in wins]


def test_change_instants_keep_an_exclusive_change_at_the_start_and_drop_one_at_the_end(
        ) -> None:
    """``changes.change_instants``, the one list of a connection's change instants that
    ``why``'s comeback probes and ``audit traffic``'s walk steps at: a reading exactly max-age
    old at the start goes stale just after it (counted), one max-age old at the end goes
    stale after it (not counted); an arrival or a reset at the start is not after it, one at
    the end is within."""
    from omniladder.engine.changes import change_instants

    ladder = LadderSettings(max_reading_age_seconds=180)
    start, end = T0, T0 + timedelta(hours=1)
    history = (Reading(connection="c", checked_at=start - timedelta(minutes=3),
                       windows=(Window(name="5h", remaining_percent=50.0, reset_at=start),)),
               Reading(connection="c", checked_at=end - timedelta(minutes=3),
                       windows=(Window(name="5h", remaining_percent=30.0, reset_at=end),)))
    assert change_instants(history, None, ladder, start, end) == {
        (start, True), (end - timedelta(minutes=3), False), (end, False)}
    assert (end, True) in change_instants(history, None, ladder, start)
