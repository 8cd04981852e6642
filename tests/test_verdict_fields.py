"""R6/R7: every field of every kind of quota verdict, spelled out.

``why``, the remedies and simulate's causes read more of a verdict than its reason and
detail: the reading it judged, the figure and window that decided it, the threshold in
force, whether the re-entry floor applied, the replay and since when the pair is out.
Each case below builds a history that reaches one branch of R6, in play or out of play,
and names the whole verdict it must give. The planner's per-history verdicts (with their
shared replays) must give the same.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import (
    HistoryVerdicts,
    ReplayStep,
    Verdict,
    in_force,
    replay,
    replay_steps,
    verdict,
)
from tests.builders import NOW, at, history, instant, ladder, reading, window
from tests.depth import deep
from tests.strategies import input_sets

LADDER = ladder()  # cutoff 2 %, re-entry floor 5 %, max age 180 s

OUT_AT = instant(minutes=-30)
"""An earlier reading at 1 % takes the pair out of play at 11:30Z; its window resets at
11:40Z, so later readings may show it higher (no regain before a reset, R6.4)."""
OUT = reading("c", at(minutes=-30), window("5h", 1.0, at(minutes=-20)))
OUT_STEP = ReplayStep(OUT_AT, None, 1.0, 2.0, True, False)


def judged(history_: tuple[Any, ...], **fields: Any) -> Verdict:
    """The verdict a case expects: its reading is the history's latest."""
    return Verdict(reading=history_[-1], **fields)


CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("status-unknown-in-play", [reading("c", status="unknown")], {
        "kind": "unknown", "reason": "quota-unknown",
        "detail": "reading at 11:59:50Z has status unknown",
        "threshold": 2.0, "floor_applied": False}),
    ("status-unknown-out-of-play", [OUT, reading("c", status="unknown")], {
        "kind": "unknown", "reason": "quota-unknown",
        "detail": "reading at 11:59:50Z has status unknown",
        "threshold": 5.0, "floor_applied": True, "out_since": OUT_AT}),
    ("exhausted-reset-since", [OUT, reading("c", status="exhausted",
                                           reset_at=at(minutes=-1))], {
        "kind": "unknown", "reason": "quota-reset-since-reading",
        "detail": "reading at 11:59:50Z said exhausted until 11:59Z; reset since, no newer "
                  "reading",
        "threshold": 5.0, "floor_applied": True, "out_since": OUT_AT}),
    ("exhausted-until-reset", [OUT, reading("c", status="exhausted", reset_at=at(hours=1))], {
        "kind": "exhausted", "reason": "quota-exhausted",
        "detail": "reading at 11:59:50Z says exhausted, resets 13:00Z",
        "threshold": 5.0, "floor_applied": True, "out_since": OUT_AT}),
    ("stale-healthy", [OUT, reading("c", at(minutes=-10), window("5h", 50.0, at(hours=3)))], {
        "kind": "unknown", "reason": "quota-stale",
        "detail": "reading at 11:50Z is 10m old (max 3m)",
        "threshold": 5.0, "floor_applied": True, "out_since": OUT_AT}),
    ("stale-held-low", [reading("c", at(minutes=-10), window("5h", 1.5, at(hours=3)),
                                window("weekly", 60.0))], {
        "kind": "exhausted", "reason": "quota-below-cutoff",
        "detail": "5h window at 1.5% (cutoff 2%), resets 15:00Z; reading 10m old, still low "
                  "until that reset (usage only grows inside a window)",
        "figure": 1.5, "window": 0, "threshold": 2.0, "floor_applied": False,
        "held_past_age": True}),
    ("low-in-play", [reading("c", window("weekly", 80.0), window("5h", 2.0))], {
        "kind": "exhausted", "reason": "quota-below-cutoff",
        "detail": "5h window at 2% (cutoff 2%)",
        "figure": 2.0, "window": 1, "threshold": 2.0, "floor_applied": False}),
    ("low-out-of-play", [OUT, reading("c", window("5h", 4.0, at(hours=3)))], {
        "kind": "exhausted", "reason": "quota-below-reentry",
        "detail": "5h window at 4% (re-entry floor 5%, out since 11:30Z), resets 15:00Z",
        "figure": 4.0, "window": 0, "threshold": 5.0, "floor_applied": True,
        "out_since": OUT_AT}),
    ("window-reset-since", [OUT, reading("c", window("5h", 40.0, at(minutes=-1)),
                                         window("weekly", 70.0, at(days=2)))], {
        "kind": "unknown", "reason": "quota-reset-since-reading",
        "detail": "5h window reset at 11:59Z, after the reading at 11:59:50Z",
        "figure": 70.0, "window": 1, "threshold": 5.0, "floor_applied": True,
        "out_since": OUT_AT}),
    ("only-window-reset-since", [reading("c", window("5h", 40.0, at(minutes=-1)))], {
        "kind": "unknown", "reason": "quota-reset-since-reading",
        "detail": "5h window reset at 11:59Z, after the reading at 11:59:50Z",
        "threshold": 2.0, "floor_applied": False}),
    ("no-window-for-the-model", [OUT, reading("c", window("opus", 70.0, models=["opus"]))], {
        "kind": "unknown", "reason": "quota-unknown",
        "detail": "reading at 11:59:50Z has no window for sonnet",
        "threshold": 5.0, "floor_applied": True, "out_since": OUT_AT}),
    ("usable-back-above-the-floor", [OUT, reading("c", window("5h", 30.0, at(hours=3)),
                                                  window("weekly", 20.0, at(days=2)))], {
        "kind": "usable", "reason": None, "detail": "weekly window at 20%, reading 10s old",
        "figure": 20.0, "window": 1, "threshold": 5.0, "floor_applied": True,
        "out_since": OUT_AT}),
    ("usable-unlimited", [reading("c", window("monthly", unlimited=True))], {
        "kind": "usable", "reason": None, "detail": "monthly window at 100%, reading 10s old",
        "figure": 100.0, "window": 0, "threshold": 2.0, "floor_applied": False}),
]


@pytest.mark.parametrize(("readings", "fields"), [
    pytest.param(readings, fields, id=name) for name, readings, fields in CASES])
def test_every_field_of_each_verdict(readings: list[dict[str, Any]],
                                     fields: dict[str, Any]) -> None:
    found_history = history(*readings)
    latest = found_history[-1]
    expected = dict(fields)
    if "window" in expected:
        expected["window"] = latest.all_windows()[expected["window"]]
    expected["replay"] = (OUT_STEP,) if readings[0] is OUT else ()
    want = judged(found_history, **expected)
    assert verdict(found_history, "sonnet", NOW, LADDER) == want
    assert HistoryVerdicts(found_history, NOW, LADDER)("sonnet") == want


def test_a_top_level_figure_is_judged_through_its_own_window() -> None:
    found_history = history(reading("c", remaining_percent=1.0, reset_at=at(hours=2)))
    latest = found_history[-1]
    (own,) = latest.all_windows()
    assert (own.name, own.remaining_percent, own.reset_at, own.models) == (
        "quota", 1.0, instant(hours=2), None)
    assert verdict(found_history, "sonnet", NOW, LADDER) == Verdict(
        "exhausted", "quota-below-cutoff", "quota window at 1% (cutoff 2%), resets 14:00Z",
        latest, 1.0, own, 2.0, False)


# --- R7: the figure each earlier reading is replayed with --------------------------------


def steps(*readings: dict[str, Any]) -> tuple[ReplayStep, ...]:
    return replay_steps(history(*readings), "sonnet", LADDER)


def when(minutes: int) -> datetime:
    return instant(minutes=minutes)


def test_a_top_level_figure_whose_reset_came_before_its_reading_counts_for_nothing() -> None:
    # reset at 11:20, read at 11:30: the 1 % was of a window already over when read
    assert steps(reading("c", at(minutes=-30), remaining_percent=1.0,
                         reset_at=at(minutes=-40))) == (
        ReplayStep(when(-30), None, None, 2.0, True, True),)
    # reset exactly at the reading: over too (a window is current only before its reset)
    assert steps(reading("c", at(minutes=-30), remaining_percent=1.0,
                         reset_at=at(minutes=-30))) == (
        ReplayStep(when(-30), None, None, 2.0, True, True),)
    # reset a second after the reading: current, and 1 % takes the pair out
    assert steps(reading("c", at(minutes=-30), remaining_percent=1.0,
                         reset_at=at(minutes=-30, seconds=1))) == (
        ReplayStep(when(-30), None, 1.0, 2.0, True, False),)
    # no figure at all: nothing to judge
    assert steps(reading("c", at(minutes=-30), status="ok")) == (
        ReplayStep(when(-30), "ok", None, 2.0, True, True),)


def test_an_earlier_reading_is_replayed_with_its_lowest_current_window_for_the_model() -> None:
    assert steps(
        reading("c", at(minutes=-30),
                window("5h", 1.0, at(minutes=-31)),       # reset before the reading: over
                window("opus", 0.5, models=["opus"]),     # not this model's
                window("weekly", 40.0, at(days=2)),
                window("monthly", unlimited=True),
                window("sonnet-day", 30.0, models=["sonnet"]))) == (
        ReplayStep(when(-30), None, 30.0, 2.0, True, True),)
    assert steps(
        reading("c", at(minutes=-30), window("5h", 1.0, at(minutes=-30))),  # reset at it
        reading("c", at(minutes=-20), window("5h", 1.5), window("weekly", 1.8))) == (
        ReplayStep(when(-30), None, None, 2.0, True, True),
        ReplayStep(when(-20), None, 1.5, 2.0, True, False))
    assert steps(reading("c", at(minutes=-30), window("monthly", unlimited=True))) == (
        ReplayStep(when(-30), None, 100.0, 2.0, True, True),)


def test_a_middle_reading_that_takes_one_model_out_splits_the_models_verdicts() -> None:
    """R7 per model: the reading before the latest has a window of opus alone at 1 %, so
    opus left play there and sonnet did not; at 4 % now, opus is below the re-entry floor
    and sonnet is usable. The planner's shared verdicts must tell the two apart."""
    found_history = history(
        reading("c", at(minutes=-30), window("5h", 50.0)),
        reading("c", at(minutes=-20), window("5h", 50.0),
                window("opus-week", 1.0, models=["opus"])),
        reading("c", window("5h", 4.0)))
    shared = HistoryVerdicts(found_history, NOW, LADDER)
    for model, kind in (("sonnet", "usable"), ("opus", "exhausted"), ("sonnet", "usable")):
        found = shared(model)
        assert found == verdict(found_history, model, NOW, LADDER)
        assert found.kind == kind
    assert shared("opus").out_since == instant(minutes=-20)


def test_an_empty_window_is_replayed_at_zero() -> None:
    assert steps(reading("c", at(minutes=-30), window("5h", 0.0)),
                 reading("c", at(minutes=-20), remaining_percent=0.0)) == (
        ReplayStep(when(-30), None, 0.0, 2.0, True, False),
        ReplayStep(when(-20), None, 0.0, 5.0, False, False))


@deep(100, quick=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_shared_verdicts_of_every_model_are_its_own(examples: settings) -> None:
    """A history's verdicts, shared among the models its windows treat alike, are each
    model's own: the models a window names, and models no window names."""
    @examples
    @given(inputs=input_sets(connections=(1, 3), readings=(0, 4)))
    def holds(inputs: LoadedInputs) -> None:
        rules = inputs.settings.ladder
        for readings in inputs.readings.values():
            named = {model for r in readings for w in r.all_windows() for model in w.models or ()}
            shared = HistoryVerdicts(readings, NOW, rules)
            for model in [*sorted(named), "sonnet", "opus", "gpt-mini", "unnamed"]:
                assert shared(model) == verdict(readings, model, NOW, rules), model

    holds()


@deep(100, quick=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_replayed_state_is_where_the_replay_steps_end(examples: settings) -> None:
    """R7: ``replay`` keeps only the state a replay leaves and works its steps out when
    read: that state is where ``replay_steps`` ends, and the steps it gives are those."""
    @examples
    @given(inputs=input_sets(connections=(1, 3), readings=(0, 5)))
    def holds(inputs: LoadedInputs) -> None:
        rules = inputs.settings.ladder
        for history_ in inputs.readings.values():
            named = {model for r in history_ for w in r.all_windows() for model in w.models or ()}
            for readings in (history_, in_force(history_, NOW, rules.exit_cutoff_percent)):
                for model in [*sorted(named), "sonnet", "unnamed"]:
                    in_play, out_since, lazy = replay(readings, model, rules)
                    full = replay_steps(readings, model, rules)
                    assert (lazy == full, full == lazy, hash(lazy), len(lazy), tuple(lazy)) == (
                        True, True, hash(full), len(full), full)
                    assert in_play == (full[-1].in_play_after if full else True)
                    left: datetime | None = None
                    for step in full:
                        if step.in_play_before and not step.in_play_after:
                            left = step.checked_at
                        elif step.in_play_after:
                            left = None
                    assert out_since == left

    holds()


def test_a_cutoff_of_100_takes_an_unlimited_window_out_of_play_in_the_replay_state() -> None:
    """R7 with ``exit_cutoff_percent = 100``: an unlimited window counts 100, which is at
    the cutoff, so the earlier reading takes the pair out of play. The replay's state (what
    the plan reads) says so as its steps do, and the verdict is held to the re-entry floor."""
    rules = ladder(exit_cutoff_percent=100.0, reentry_min_remaining_percent=100.0)
    readings = history(reading("c", at(minutes=-2), window("5h", unlimited=True)),
                       reading("c", at(minutes=-1), window("5h", unlimited=True)))
    in_play, out_since, _ = replay(readings[:-1], "sonnet", rules)
    assert replay_steps(readings[:-1], "sonnet", rules)[-1].in_play_after is False
    assert (in_play, out_since) == (False, instant(minutes=-2))
    found = verdict(readings, "sonnet", NOW, rules)
    assert (found.reason, found.floor_applied) == ("quota-below-reentry", True)
