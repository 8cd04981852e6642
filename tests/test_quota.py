"""R6 quota verdicts and R7 hysteresis replayed from history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omniladder.engine.quota import verdict
from omniladder.inputs.input_set import load_inputs
from tests.builders import NOW, at, conn, fleet, history, ladder, plan, reading, window

CUTOFF_2 = {"exit_cutoff_percent": 2, "reentry_min_remaining_percent": 5,
            "max_reading_age_seconds": 180}


def judge(readings: list[dict[str, Any]], model: str = "sonnet",
          **settings: Any) -> tuple[str, str | None]:
    result = verdict(history(*readings), model, NOW, ladder(**{**CUTOFF_2, **settings}))
    return result.kind, result.reason


R = "c"


# --- R6, step by step ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("readings", "model", "expected"),
    [
        # 1. no reading
        pytest.param([], "sonnet", ("unknown", "quota-missing"), id="R6.1-no-reading"),
        pytest.param([reading(R, at(seconds=1), window("5h", 90))], "sonnet",
                     ("unknown", "quota-missing"), id="R6.1-only-a-reading-after-now"),
        # 2. status unknown
        pytest.param([reading(R, status="unknown")], "sonnet", ("unknown", "quota-unknown"),
                     id="R6.2-status-unknown"),
        pytest.param([reading(R, at(seconds=-10), window("5h", 90), status="unknown")],
                     "sonnet", ("unknown", "quota-unknown"),
                     id="R6.2-status-unknown-beats-a-healthy-figure"),
        pytest.param([reading(R, at(hours=-5), status="unknown")], "sonnet",
                     ("unknown", "quota-unknown"), id="R6.2-status-unknown-before-stale"),
        # 3. status exhausted
        pytest.param([reading(R, status="exhausted")], "sonnet",
                     ("exhausted", "quota-exhausted"), id="R6.3-exhausted"),
        pytest.param([reading(R, at(days=-3), status="exhausted")], "sonnet",
                     ("exhausted", "quota-exhausted"), id="R6.3-exhausted-whatever-its-age"),
        pytest.param([reading(R, at(hours=-2), status="exhausted", reset_at=at(hours=1))],
                     "sonnet", ("exhausted", "quota-exhausted"),
                     id="R6.3-exhausted-until-a-future-reset"),
        pytest.param([reading(R, at(hours=-2), status="exhausted", reset_at=at(minutes=-1))],
                     "sonnet", ("unknown", "quota-reset-since-reading"),
                     id="R6.3-exhausted-reset-since"),
        pytest.param([reading(R, at(hours=-2), status="exhausted", reset_at=at())],
                     "sonnet", ("unknown", "quota-reset-since-reading"),
                     id="R6.3-exhausted-reset-exactly-now"),
        pytest.param([reading(R, at(seconds=-10), window("5h", 90), status="exhausted")],
                     "sonnet", ("exhausted", "quota-exhausted"),
                     id="R6.3-exhausted-status-beats-a-healthy-window"),
        # 4. a current low window with a reset instant, whatever the reading's age
        pytest.param([reading(R, at(seconds=-181), window("5h", 0, at(hours=1)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.4-stale-low-window-stays-exhausted-until-its-reset"),
        pytest.param([reading(R, at(days=-3), window("weekly", 1, at(days=4)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.4-days-old-low-weekly-window-stays-exhausted"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 2, at(seconds=1)))],
                     "sonnet", ("exhausted", "quota-below-cutoff"),
                     id="R6.4-exactly-the-cutoff-one-second-before-reset"),
        pytest.param([reading(R, at(hours=-3), window("5h", 80, at(hours=1)),
                              window("weekly", 0, at(days=5)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.4-any-low-window-holds-a-healthy-one-does-not-rescue"),
        pytest.param([reading(R, at(hours=-3), window("5h", 0, at(hours=1)),
                              window("weekly", 50, at(minutes=-5)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.4-beats-a-reset-of-another-window"),
        pytest.param([reading(R, at(hours=-3),
                              window("weekly-opus", 0, at(days=3), models=["opus"]),
                              window("5h", 50, at(hours=3)))], "sonnet",
                     ("unknown", "quota-stale"),
                     id="R6.4-stale-per-model-window-holds-only-its-model"),
        pytest.param([reading(R, at(hours=-3),
                              window("weekly-opus", 0, at(days=3), models=["opus"]),
                              window("5h", 50, at(hours=3)))], "opus",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.4-stale-per-model-window-excludes-its-model"),
        pytest.param([reading(R, at(hours=-3), remaining_percent=0, reset_at=at(hours=2))],
                     "sonnet", ("exhausted", "quota-below-cutoff"),
                     id="R6.4-top-level-figure-with-a-reset"),
        # 5. stale
        pytest.param([reading(R, at(seconds=-181), window("5h", 90))], "sonnet",
                     ("unknown", "quota-stale"), id="R6.5-older-than-max-age-is-stale"),
        pytest.param([reading(R, at(seconds=-180), window("5h", 90))], "sonnet",
                     ("usable", None), id="R6.5-exactly-max-age-is-fresh"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 0))], "sonnet",
                     ("unknown", "quota-stale"),
                     id="R6.5-stale-low-window-without-a-reset-is-only-stale"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 0, at(minutes=-1)))],
                     "sonnet", ("unknown", "quota-stale"),
                     id="R6.5-stale-low-window-already-reset-is-only-stale"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 0, at()))],
                     "sonnet", ("unknown", "quota-stale"),
                     id="R6.5-stale-low-window-resetting-exactly-now-is-only-stale"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 2.01, at(hours=1)))],
                     "sonnet", ("unknown", "quota-stale"),
                     id="R6.5-stale-window-just-above-the-cutoff-is-stale"),
        pytest.param([reading(R, at(seconds=-181), window("5h", 50, at(minutes=-1)))],
                     "sonnet", ("unknown", "quota-stale"),
                     id="R6.5-stale-before-reset-since-reading"),
        # 6. figure at or below the threshold
        pytest.param([reading(R, window("5h", 0, at(hours=3)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"), id="R6.6-window-at-zero"),
        pytest.param([reading(R, window("5h", 2, at(hours=3)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"), id="R6.6-exactly-the-cutoff"),
        pytest.param([reading(R, window("5h", 2.01, at(hours=3)))], "sonnet",
                     ("usable", None), id="R6.6-just-above-the-cutoff"),
        pytest.param([reading(R, window("5h", 80, at(hours=3)),
                              window("weekly", 1, at(days=3)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"), id="R6.6-minimum-over-windows"),
        pytest.param([reading(R, remaining_percent=1)], "sonnet",
                     ("exhausted", "quota-below-cutoff"), id="R6.6-top-level-figure"),
        pytest.param([reading(R, window("5h", 0, at(hours=3)),
                              window("weekly", 50, at(minutes=-5)))], "sonnet",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.6-current-window-at-0-beats-a-reset-of-another-window"),
        pytest.param([reading(R, window("weekly-opus", 0, at(days=3), models=["opus"]),
                              window("5h", 50, at(hours=3)))], "opus",
                     ("exhausted", "quota-below-cutoff"),
                     id="R6.6-per-model-window-excludes-its-model"),
        pytest.param([reading(R, window("weekly-opus", 0, at(days=3), models=["opus"]),
                              window("5h", 50, at(hours=3)))], "sonnet",
                     ("usable", None), id="R6.6-per-model-window-spares-other-models"),
        # 7. an applicable window is outdated
        pytest.param([reading(R, window("5h", 50, at(minutes=-1)),
                              window("weekly", 80, at(days=3)))], "sonnet",
                     ("unknown", "quota-reset-since-reading"), id="R6.7-outdated-window"),
        pytest.param([reading(R, window("5h", 50, at()))], "sonnet",
                     ("unknown", "quota-reset-since-reading"),
                     id="R6.7-reset-exactly-now-is-outdated"),
        pytest.param([reading(R, window("5h", 0, at(minutes=-1)),
                              window("weekly", 80, at(days=3)))], "sonnet",
                     ("unknown", "quota-reset-since-reading"),
                     id="R6.7-an-exhausted-window-that-has-reset"),
        pytest.param([reading(R, remaining_percent=0, reset_at=at(minutes=-1))], "sonnet",
                     ("unknown", "quota-reset-since-reading"),
                     id="R6.7-top-level-figure-that-has-reset"),
        pytest.param([reading(R, window("weekly-opus", 0, at(minutes=-1), models=["opus"]),
                              window("5h", 50, at(hours=3)))], "sonnet",
                     ("usable", None), id="R6.7-outdated-window-of-another-model-ignored"),
        # 8. no applicable window
        pytest.param([reading(R, window("weekly-opus", 50, at(days=3), models=["opus"]))],
                     "sonnet", ("unknown", "quota-unknown"),
                     id="R6.8-only-windows-for-other-models"),
        pytest.param([reading(R, status="ok")], "sonnet", ("unknown", "quota-unknown"),
                     id="R6.8-status-ok-without-windows"),
        # 9. usable
        pytest.param([reading(R, window("5h", 37.5, at(hours=3)))], "sonnet",
                     ("usable", None), id="R6.9-usable"),
        pytest.param([reading(R, window("monthly", unlimited=True),
                              window("daily", unlimited=True))], "sonnet",
                     ("usable", None), id="R6.9-all-unlimited-plan-is-usable"),
        pytest.param([reading(R, window("5h", 50), status="ok")], "sonnet",
                     ("usable", None), id="R6.9-window-without-reset-is-current"),
        pytest.param([reading(R, at(minutes=-30), window("5h", 0, at(minutes=-20))),
                      reading(R, at(seconds=-5), window("5h", 60, at(hours=3))),
                      reading(R, at(minutes=1), window("5h", 0, at(hours=3)))], "sonnet",
                     ("usable", None), id="R6-the-latest-reading-at-or-before-now-decides"),
    ],
)
def test_R6_verdict(readings: list[dict[str, Any]], model: str,
                    expected: tuple[str, str | None]) -> None:
    assert judge(readings, model) == expected


def test_R6_6_threshold_is_the_configured_cutoff() -> None:
    four = [reading(R, window("5h", 4, at(hours=3)))]
    assert judge(four) == ("usable", None)
    assert judge(four, exit_cutoff_percent=4) == ("exhausted", "quota-below-cutoff")


def test_R6_unlimited_counts_as_100() -> None:
    result = verdict(history(reading(R, window("monthly", unlimited=True),
                                     window("5h", 70, at(hours=1)))),
                     "sonnet", NOW, ladder(**CUTOFF_2))
    assert (result.kind, result.figure) == ("usable", 70)
    alone = verdict(history(reading(R, window("monthly", unlimited=True))),
                    "sonnet", NOW, ladder(**CUTOFF_2))
    assert alone.figure == 100


def test_R6_per_model_window_excludes_only_that_model_in_the_plan() -> None:
    result = plan(fleet([conn("max", models=["sonnet", "opus"])],
                        [reading("max", window("5h", 40, at(hours=3)),
                                 window("weekly-opus", 0, at(days=3), models=["opus"]))]),
                  "auto/subscription")
    assert [(e.model, e.allowed_connection_ids) for e in result.pool] == [("sonnet", ("max",))]
    [only] = result.excluded
    assert (only.model, only.reason) == ("opus", "quota-below-cutoff")
    assert "weekly-opus" in only.detail


# --- R7, hysteresis replayed from history ----------------------------------------------------


def series(*figures: float | str) -> list[dict[str, Any]]:
    """One reading per figure, a minute apart, the last one ten seconds before NOW.

    A figure may be "exhausted" (status) or "none" (a reading without any figure). Each
    window resets 50 seconds after its reading, before the next one: a rise between two
    readings is a real regain, not one before a reset (R6.4, v1.2).
    """
    out = []
    count = len(figures)
    for index, figure in enumerate(figures):
        checked = at(seconds=-10 - 60 * (count - 1 - index))
        if figure == "exhausted":
            out.append(reading(R, checked, status="exhausted"))
        elif figure == "none":
            out.append(reading(R, checked, status="ok"))
        else:
            assert isinstance(figure, float | int)
            resets = at(seconds=40 - 60 * (count - 1 - index))
            out.append(reading(R, checked, window("5h", figure, resets)))
    return out


@pytest.mark.parametrize(
    ("figures", "settings", "expected"),
    [
        pytest.param((3,), {}, ("usable", None), id="R7-single-reading-judged-on-cutoff"),
        pytest.param((50, 4), {}, ("usable", None), id="R7-in-play-stays-above-cutoff"),
        pytest.param((50, 2), {}, ("exhausted", "quota-below-cutoff"),
                     id="R7-in-play-drops-at-the-cutoff"),
        pytest.param((2, 4), {}, ("exhausted", "quota-below-reentry"),
                     id="R7-dropped-out-at-exactly-the-cutoff"),
        pytest.param((1, 3, 4), {}, ("exhausted", "quota-below-reentry"),
                     id="R7-stays-out-in-the-band"),
        pytest.param((1, 5), {}, ("exhausted", "quota-below-reentry"),
                     id="R7-exactly-the-floor-stays-out"),
        pytest.param((1, 6), {}, ("usable", None), id="R7-comes-back-above-the-floor"),
        pytest.param((1, 6, 4), {}, ("usable", None),
                     id="R7-back-in-play-judged-on-cutoff-again"),
        pytest.param((1, 6, 2), {}, ("exhausted", "quota-below-cutoff"),
                     id="R7-back-in-play-drops-again-at-cutoff"),
        pytest.param((1, 4, 6, 3), {}, ("usable", None), id="R7-replay-of-a-long-history"),
        pytest.param(("exhausted", 4), {}, ("exhausted", "quota-below-reentry"),
                     id="R7-exhausted-status-drops-out"),
        pytest.param((1, "none", 4), {}, ("exhausted", "quota-below-reentry"),
                     id="R7-reading-without-figure-leaves-state-out"),
        pytest.param((50, "none", 3), {}, ("usable", None),
                     id="R7-reading-without-figure-leaves-state-in"),
        pytest.param((1, 3), {"exit_cutoff_percent": 3, "reentry_min_remaining_percent": 1},
                     ("exhausted", "quota-below-reentry"),
                     id="R7-floor-below-cutoff-uses-cutoff-out"),
        pytest.param((1, 3.5), {"exit_cutoff_percent": 3, "reentry_min_remaining_percent": 1},
                     ("usable", None), id="R7-floor-below-cutoff-uses-cutoff-back"),
        pytest.param((1, 9), {"reentry_min_remaining_percent": 10},
                     ("exhausted", "quota-below-reentry"), id="R7-floor-is-a-setting"),
    ],
)
def test_R7_hysteresis(figures: tuple[float | str, ...], settings: dict[str, Any],
                       expected: tuple[str, str | None]) -> None:
    assert judge(series(*figures), **settings) == expected


def test_R7_each_reading_is_judged_at_its_own_checked_at() -> None:
    """A window at 0% that has reset by now still dropped the connection out back then."""
    readings = [
        reading(R, at(hours=-2), window("5h", 0, at(hours=-1))),
        reading(R, at(seconds=-10), window("5h", 4, at(hours=3))),
    ]
    assert judge(readings) == ("exhausted", "quota-below-reentry")


def test_R7_replay_is_per_model() -> None:
    readings = [
        reading(R, at(hours=-1), window("weekly-opus", 0, at(days=3), models=["opus"]),
                window("5h", 50, at(hours=3))),
        reading(R, at(seconds=-10), window("weekly-opus", 4, at(days=3), models=["opus"]),
                window("5h", 4, at(hours=3))),
    ]
    assert judge(readings, "opus") == ("exhausted", "quota-below-reentry")
    assert judge(readings, "sonnet") == ("usable", None)


def test_R7_readings_after_now_take_no_part_in_the_replay() -> None:
    readings = [*series(50, 4), reading(R, at(minutes=1), window("5h", 0, at(hours=3)))]
    assert judge(readings) == ("usable", None)


def test_R7_detail_says_since_when_it_is_out() -> None:
    result = verdict(history(*series(1, 3, 4)), "sonnet", NOW, ladder(**CUTOFF_2))
    assert result.floor_applied
    assert result.threshold == 5
    assert "re-entry floor 5%" in result.detail
    assert "out since 11:57" in result.detail


def test_R7_floor_below_cutoff_warns_and_reports_the_effective_floor(tmp_path: Path) -> None:
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n',
        encoding="utf-8")
    settings = tmp_path / "omniladder.toml"
    settings.write_text('[inputs]\nconnections = "connections.toml"\n[ladder]\n'
                        'exit_cutoff_percent = 3\nreentry_min_remaining_percent = 1\n',
                        encoding="utf-8")
    inputs = load_inputs(settings)
    assert any("reentry_min_remaining_percent" in w and "effective re-entry floor is the cutoff"
               in w for w in inputs.warnings), inputs.warnings
    result = plan(inputs)
    assert result.settings["reentry_min_remaining_percent"] == 3


def test_a_reading_for_an_unknown_connection_is_a_warning(tmp_path: Path) -> None:
    """SPEC §2.2: a reading for a connection id not in the connections file only warns."""
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n',
        encoding="utf-8")
    (tmp_path / "quota.json").write_text(
        '{"readings": [{"connection": "ghost", "checked_at": "2026-11-29T11:59:00Z", '
        '"remaining_percent": 50}, {"connection": "c", "checked_at": "2026-11-29T11:59:00Z", '
        '"remaining_percent": 50}]}', encoding="utf-8")
    settings = tmp_path / "omniladder.toml"
    settings.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n',
                        encoding="utf-8")
    inputs = load_inputs(settings)
    assert [w for w in inputs.warnings if "ghost" in w]
    assert set(inputs.readings) == {"c"}


def test_history_is_sorted_whatever_the_file_order(tmp_path: Path) -> None:
    """SPEC §2.2: readings may come in any order; the planner sorts them by checked_at."""
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(
        '{"readings": ['
        '{"connection": "c", "checked_at": "2026-11-29T11:59:50Z", "remaining_percent": 4},'
        '{"connection": "c", "checked_at": "2026-11-29T10:00:00Z", "remaining_percent": 1}]}',
        encoding="utf-8")
    settings = tmp_path / "omniladder.toml"
    settings.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n',
                        encoding="utf-8")
    result = plan(load_inputs(settings), "auto/subscription")
    assert [x.reason for x in result.excluded] == ["quota-below-reentry"]


# --- what a verdict names, and the replay it shows ----------------------------------------


def test_R6_an_outdated_window_listed_first_does_not_hide_a_current_low_one() -> None:
    """R6.6: every current applicable window counts, whatever its place in the reading."""
    result = verdict(history(reading(R, window("5h", 50, at(minutes=-1)),
                                     window("weekly", 0, at(days=3)))),
                     "sonnet", NOW, ladder(**CUTOFF_2))
    assert (result.kind, result.reason) == ("exhausted", "quota-below-cutoff")
    assert result.window is not None
    assert result.window.name == "weekly"


def test_R6_of_equally_low_windows_the_first_is_named() -> None:
    result = verdict(history(reading(R, window("5h", 0, at(hours=1)),
                                     window("weekly", 0, at(days=3)))),
                     "sonnet", NOW, ladder(**CUTOFF_2))
    assert result.detail.startswith("5h window at 0%")
    stale = verdict(history(reading(R, at(hours=-1), window("5h", 0, at(hours=1)),
                                    window("weekly", 0, at(days=3)))),
                    "sonnet", NOW, ladder(**CUTOFF_2))
    assert stale.held_past_age
    assert stale.detail.startswith("5h window at 0%")


def test_R7_replay_steps_show_each_reading_and_the_threshold_it_met() -> None:
    """R7 as `why` shows it: each earlier reading with its status, its figure and the
    threshold of the state it was judged in (cutoff in play, floor when out)."""
    result = verdict(history(reading(R, at(minutes=-30), window("5h", 1, at(minutes=-25))),
                             reading(R, at(minutes=-20), window("5h", 4, at(minutes=-15)),
                                     status="ok"),
                             reading(R, at(minutes=-10), window("5h", 6, at(hours=3))),
                             reading(R, window("5h", 60, at(hours=3)))),
                     "sonnet", NOW, ladder(exit_cutoff_percent=2,
                                           reentry_min_remaining_percent=5))
    assert [(s.status, s.figure, s.threshold, s.in_play_before, s.in_play_after)
            for s in result.replay] == [
        (None, 1.0, 2.0, True, False),
        ("ok", 4.0, 5.0, False, False),
        (None, 6.0, 5.0, False, True),
    ]


# --- deferred verdicts ---------------------------------------------------------------------


def test_a_deferred_verdict_is_the_verdict_in_every_comparison() -> None:
    from omniladder.engine.quota import DeferredVerdict, HistoryVerdicts

    readings = history(reading("c", window("5h", 40.0, at(hours=2))))
    own = verdict(readings, "sonnet", NOW, ladder())
    deferred = HistoryVerdicts(readings, NOW, ladder()).deferred("sonnet")
    assert isinstance(deferred, DeferredVerdict)
    assert deferred == own
    assert own == deferred  # the verdict defers to the deferred one's comparison
    assert (deferred != own) is False
    assert hash(deferred) == hash(own)
    assert repr(deferred) == repr(own)
    assert deferred.get() is deferred.get()
    other = HistoryVerdicts(readings, NOW, ladder()).deferred("sonnet")
    assert deferred == other
    assert deferred != verdict(readings, "sonnet", NOW, ladder(exit_cutoff_percent=50.0))


def test_thrifty_computes_no_verdict_for_paid_pairs_or_refused_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A quota verdict is computed only when a rule reads it: none for the metered key (its
    rungs are paid) or the inactive plan (a gate refuses it first), one for the live plan;
    ``why`` and the other views still get every verdict when they ask."""
    import omniladder.engine.quota as quota

    asked: list[str] = []
    real = quota._verdict

    def counting(readings: Any, model: str, *args: Any) -> Any:
        asked.append(readings[-1].connection)
        return real(readings, model, *args)

    monkeypatch.setattr(quota, "_verdict", counting)
    inputs = fleet(
        [conn("key", "openai", "apikey", models=["gpt-4o"]),
         conn("off", active=False, models=["sonnet"]),
         conn("live", models=["sonnet"])],
        [reading("key", window("5h", 50.0)), reading("off", window("5h", 50.0)),
         reading("live", window("5h", 50.0))])
    made = plan(inputs, "auto/thrifty")
    assert asked == ["live"]
    paid = next(d for d in made.decisions if d.connection_id == "key")
    assert paid.admitted
    assert paid.detail.startswith("5h window at 50%")
    assert sorted(asked) == ["key", "live"]
