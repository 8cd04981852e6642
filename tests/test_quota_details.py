"""R6/R7/R9 as ``why`` shows them: the exact detail of each quota verdict, the figures a
verdict carries (reading, figure, window, out_since, held_past_age), the R7 replay steps and
the R9 clamp's own reset instant. Engine data, not rendered documents."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.quota import HistoryVerdicts, cooldown, own_reset, replay, verdict
from omniladder.models import Connection, validate_record
from tests.builders import (
    NOW,
    at,
    conn,
    fleet,
    freeze,
    history,
    instant,
    ladder,
    plan,
    reading,
    window,
)

LADDER = ladder()  # cutoff 2 %, re-entry floor 5 %, max age 180 s


@pytest.mark.parametrize(("readings", "detail"), [
    pytest.param([], "no quota reading at or before now", id="R6.1-no-reading-at-all"),
    pytest.param([reading("c", at(minutes=5), window("5h", 50))],
                 "no quota reading at or before now: the only one lies after it (at 12:05Z)",
                 id="R6.1-one-reading-after-now"),
    pytest.param([reading("c", at(days=1, minutes=5), window("5h", 50)),
                  reading("c", at(days=2), window("5h", 50))],
                 "no quota reading at or before now: all 2 lie after it "
                 "(the first at 2026-11-30 12:05Z)", id="R6.1-two-readings-after-now"),
])
def test_R6_1_quota_missing_details(readings: list[dict[str, Any]], detail: str) -> None:
    found = verdict(history(*readings), "sonnet", NOW, LADDER)
    assert (found.kind, found.reason, found.detail) == ("unknown", "quota-missing", detail)
    # the planner's per-history verdicts say the same
    assert HistoryVerdicts(history(*readings), NOW, LADDER)("sonnet").detail == detail


def test_R6_1_the_plan_says_how_many_readings_lie_after_now() -> None:
    inputs = fleet([conn("c", models=["sonnet"])],
                   [reading("c", at(minutes=1), window("5h", 50)),
                    reading("c", at(minutes=2), window("5h", 50))])
    result = plan(inputs, "auto/subscription")
    assert [(x.reason, x.detail) for x in result.excluded] == [
        ("quota-missing",
         "no quota reading at or before now: all 2 lie after it (the first at 12:01Z)")]


@pytest.mark.parametrize(("fields", "detail"), [
    pytest.param({"status": "exhausted"}, "reading at 11:59Z says exhausted",
                 id="without-a-reset"),
    pytest.param({"status": "exhausted", "reset_at": at(hours=3)},
                 "reading at 11:59Z says exhausted, resets 15:00Z", id="with-a-reset"),
])
def test_R6_3_exhausted_status_detail(fields: dict[str, Any], detail: str) -> None:
    found = verdict(history(reading("c", at(minutes=-1), **fields)), "sonnet", NOW, LADDER)
    assert (found.kind, found.reason, found.detail) == ("exhausted", "quota-exhausted", detail)


@pytest.mark.parametrize(("win", "detail"), [
    pytest.param(window("5h", 1), "5h window at 1% (cutoff 2%)", id="no-reset-instant"),
    pytest.param(window("5h", 2, at(hours=1)), "5h window at 2% (cutoff 2%), resets 13:00Z",
                 id="at-the-cutoff-with-a-reset"),
])
def test_R6_6_low_window_detail(win: dict[str, Any], detail: str) -> None:
    found = verdict(history(reading("c", at(minutes=-1), win)), "sonnet", NOW, LADDER)
    assert (found.kind, found.reason, found.detail) == ("exhausted", "quota-below-cutoff", detail)
    assert found.held_past_age is False
    assert found.figure == win["remaining_percent"]
    assert found.window is not None
    assert found.window.name == "5h"


def test_R6_4_a_stale_low_window_is_held_until_its_reset_exactly() -> None:
    found = verdict(history(reading("c", at(hours=-1), window("5h", 1, at(hours=2)))),
                    "sonnet", NOW, LADDER)
    assert (found.kind, found.reason) == ("exhausted", "quota-below-cutoff")
    assert found.detail == ("5h window at 1% (cutoff 2%), resets 14:00Z; reading 60m old, "
                            "still low until that reset (usage only grows inside a window)")
    assert found.held_past_age is True


@pytest.mark.parametrize(("age", "words"), [
    pytest.param(181, "181s old (max 3m)", id="one-second-past-reads-past"),
    pytest.param(239, "239s old (max 3m)", id="same-minute-reads-past"),
    pytest.param(240, "4m old (max 3m)", id="next-minute-as-before"),
    pytest.param(180.5, "180.5s old (max 3m)", id="a-fraction-past"),
])
def test_R6_5_a_stale_age_never_reads_as_the_max_age(age: float, words: str) -> None:
    """R6.5: a reading one second past the max age is stale; its detail must not say "3m
    old (max 3m)", which reads as exactly the age that is still fresh."""
    found = verdict(history(reading("c", at(seconds=-age), window("5h", 50))), "sonnet",
                    NOW, LADDER)
    assert found.reason == "quota-stale"
    assert found.detail.endswith(f" is {words}")


def test_R6_5_usable_detail_names_the_limiting_window_and_the_age() -> None:
    found = verdict(history(reading("c", at(seconds=-30), window("5h", 40, at(hours=1)),
                                    window("week", 70, at(days=2)))), "sonnet", NOW, LADDER)
    assert (found.kind, found.reason) == ("usable", None)
    assert found.detail == "5h window at 40%, reading 30s old"
    assert found.figure == 40
    assert found.window is not None
    assert found.window.name == "5h"


@pytest.mark.parametrize(("windows", "figure", "name"), [
    pytest.param([window("weekly-opus", 1, at(days=2), models=["opus"]), window("5h", 40)],
                 40, "5h", id="a-window-of-another-model-first-is-skipped"),
    pytest.param([window("5h", 40, at(hours=1)), window("week", 40, at(days=2))], 40, "5h",
                 id="a-tie-names-the-first-window"),
    pytest.param([window("week", 40, at(days=2)), window("5h", 40, at(hours=1))], 40, "week",
                 id="a-tie-names-the-first-window-in-either-order"),
])
def test_R6_5_the_limiting_window(windows: list[dict[str, Any]], figure: float,
                                  name: str) -> None:
    found = verdict(history(reading("c", at(seconds=-30), *windows)), "sonnet", NOW, LADDER)
    assert (found.kind, found.figure) == ("usable", figure)
    assert found.window is not None
    assert found.window.name == name


def test_R6_4_a_tie_between_dated_low_windows_holds_the_first() -> None:
    found = verdict(history(reading("c", at(hours=-1), window("undated", 0),
                                    window("5h", 1, at(hours=2)), window("day", 1, at(hours=5)))),
                    "sonnet", NOW, LADDER)
    assert found.held_past_age is True
    assert found.detail.startswith("5h window at 1% (cutoff 2%), resets 14:00Z; reading 60m old")


def test_R6_7_a_window_reset_since_the_reading_keeps_figure_and_window() -> None:
    found = verdict(history(reading("c", at(minutes=-2), window("week", 60, at(days=3)),
                                    window("5h", 1, at(minutes=-1)))), "sonnet", NOW, LADDER)
    assert (found.kind, found.reason) == ("unknown", "quota-reset-since-reading")
    assert found.detail == "5h window reset at 11:59Z, after the reading at 11:58Z"
    # the figure of the windows still current, as why shows it
    assert found.figure == 60
    assert found.window is not None
    assert found.window.name == "week"


def test_R7_out_since_survives_into_a_verdict_that_is_not_low() -> None:
    """Out since the first low reading; the latest (stale) verdict still says since when."""
    readings = history(reading("c", at(hours=-2), window("5h", 50)),
                       reading("c", at(hours=-1), window("5h", 1)),
                       reading("c", at(minutes=-30), window("5h", 40)))
    found = verdict(readings, "sonnet", NOW, LADDER)
    assert found.reason == "quota-stale"
    # the latest reading is judged, not replayed: the pair is still out since 11:00
    assert (found.out_since, found.floor_applied) == (instant(hours=-1), True)
    readings = history(reading("c", at(hours=-2), window("5h", 50)),
                       reading("c", at(hours=-1), window("5h", 1)),
                       reading("c", at(minutes=-30), window("5h", 4)),
                       reading("c", at(minutes=-1), window("5h", 6)))
    found = verdict(readings, "sonnet", NOW, LADDER)
    assert (found.kind, found.threshold, found.floor_applied) == ("usable", 5.0, True)
    assert found.out_since == instant(hours=-1)
    assert found.detail == "5h window at 6%, reading 60s old"


def test_R7_replay_steps_record_status_figure_and_the_threshold_each_reading_faced() -> None:
    readings = history(reading("c", at(hours=-3), window("5h", 50)),
                       reading("c", at(hours=-2), status="exhausted"),
                       reading("c", at(hours=-1), window("5h", 4)),
                       reading("c", at(minutes=-30), window("5h", 6)))
    in_play, out_since, steps = replay(readings, "sonnet", LADDER)
    assert (in_play, out_since) == (True, None)
    assert [(s.checked_at, s.status, s.figure, s.threshold, s.in_play_before,
             s.in_play_after) for s in steps] == [
        (instant(hours=-3), None, 50.0, 2.0, True, True),
        (instant(hours=-2), "exhausted", None, 2.0, True, False),
        (instant(hours=-1), None, 4.0, 5.0, False, False),
        (instant(minutes=-30), None, 6.0, 5.0, False, True),
    ]


# --- R9: the clamp's own reset -------------------------------------------------------------


def _connection(**fields: Any) -> Connection:
    return validate_record(Connection, freeze(conn("c", **fields)))


@pytest.mark.parametrize(("fields", "expected"), [
    pytest.param({"status": "exhausted", "reset_at": at(hours=1)}, instant(hours=1),
                 id="exhausted-reading-with-its-own-reset"),
    pytest.param({"status": "ok", "reset_at": at(hours=1),
                  "windows": [window("5h", 1, at(hours=2))]}, instant(hours=2),
                 id="a-non-exhausted-reading's-reset-is-not-the-clamp's"),
    pytest.param({"reset_at": at(hours=1), "windows": [window("5h", 50, at(hours=2))]}, None,
                 id="nothing-exhausted-no-reset"),
    pytest.param({"windows": [window("week", 80, at(days=2)), window("5h", 1, at(hours=2)),
                              window("day", 2, at(hours=5))]}, instant(hours=5),
                 id="healthy-window-first-then-the-latest-of-the-exhausted-ones"),
    pytest.param({"windows": [window("week", 80), window("5h", 1)]}, None,
                 id="an-exhausted-window-without-a-reset"),
])
def test_R9_own_reset(fields: dict[str, Any], expected: Any) -> None:
    (read,) = history(reading("c", at(minutes=-1), **fields))
    assert own_reset(read, 2.0) == expected


def test_R9_cooldown_records_the_reset_it_considered_even_without_a_clamp() -> None:
    connection = _connection(rate_limited_until=at(minutes=30))
    readings = history(reading("c", at(minutes=-1), window("5h", 1, at(hours=2))))
    cool = cooldown(connection, readings, NOW, LADDER)
    assert cool is not None
    assert (cool.until, cool.end, cool.reset_at, cool.clamped, cool.cooling) == (
        instant(minutes=30), instant(minutes=30), instant(hours=2), False, True)


def test_R9_a_cooldown_clamped_to_the_later_window_of_a_healthy_first_one() -> None:
    connection = _connection(rate_limited_until=at(hours=6))
    readings = history(reading("c", at(minutes=-1), window("week", 90, at(days=3)),
                               window("5h", 0, at(hours=1))))
    cool = cooldown(connection, readings, NOW, LADDER)
    assert cool is not None
    assert (cool.end, cool.reset_at, cool.clamped) == (instant(hours=1), instant(hours=1), True)
