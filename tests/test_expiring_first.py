"""R15 ``within_rung_order``: ``expiring-first`` orders each quota rung by urgency, every
place with its reason, in the plan, its views, ``why`` and the stepping engine; the default
``declared`` leaves every plan as it was (docs/rules.md#r15)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.simulate import simulate, step_instants
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.changes import next_order_change, overtakes
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import connection_plan, make_plan, pair_urgencies
from omniladder.engine.pool import rate_at, urgency, urgency_reason, urgency_terms
from omniladder.engine.records import Plan
from omniladder.engine.stepping import Stepper
from omniladder.models import QUOTA_RUNGS
from omniladder.rendering.json_view import plan_json
from omniladder.rendering.timeline import series_json
from tests.builders import NOW, conn, fleet, history, reading, window
from tests.depth import deep
from tests.strategies import SHIPPED, input_sets

runner = CliRunner()

CONNECTIONS = """\
[[connections]]
id = "claude-max-b"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5"]

[[connections]]
id = "claude-max-a"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5", "claude-opus-4-1"]

[[connections]]
id = "claude-team"
provider = "claude"
auth_type = "oauth"
models = ["claude-opus-4-1"]
capacity_weight = 2
"""

QUOTA: dict[str, Any] = {"taken_at": "2026-11-29T12:00:00Z", "readings": [
    {"connection": "claude-max-b", "checked_at": "2026-11-29T11:59:30Z", "windows": [
        {"name": "5h", "remaining_percent": 90, "reset_at": "2026-11-29T15:00:00Z"},
        {"name": "weekly", "remaining_percent": 6, "reset_at": "2026-12-01T12:00:00Z"}]},
    {"connection": "claude-max-a", "checked_at": "2026-11-29T11:59:30Z", "windows": [
        {"name": "5h", "remaining_percent": 40, "reset_at": "2026-11-29T13:57:00Z"},
        {"name": "weekly", "remaining_percent": 80, "reset_at": "2026-12-02T12:00:00Z"}]},
    {"connection": "claude-team", "checked_at": "2026-11-29T11:59:30Z", "windows": [
        {"name": "weekly", "remaining_percent": 30, "reset_at": "2026-12-02T12:00:00Z"}]},
]}
"""The worked example of docs/rules.md#r15: seat B's 5h window is full but its weekly one
nearly spent; seat A's weekly one has 80% to burn in three days."""

A_REASON = "weekly resets in 3d00h with 80% left: 1.1%/h"
B_REASON = "weekly resets in 2d00h with 6% left: 0.1%/h"
TEAM_REASON = "weekly resets in 3d00h with 30% left, weight 2: 0.8%/h"


def _files(folder: Path, order: str | None, connections: str = CONNECTIONS) -> Path:
    (folder / "connections.toml").write_text(connections, encoding="utf-8")
    (folder / "quota.json").write_text(json.dumps(QUOTA), encoding="utf-8")
    ladder = f'\n[ladder]\nwithin_rung_order = "{order}"\n' if order is not None else ""
    config = folder / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
                      + ladder, encoding="utf-8")
    return config


def _plan(config: Path, *args: str) -> Any:
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result


# --- the plan --------------------------------------------------------------------------------


def test_expiring_first_puts_the_seat_whose_quota_lapses_first_first(tmp_path: Path) -> None:
    declared = json.loads(_plan(_files(tmp_path, None), "--json").stdout)
    assert [e["allowed_connection_ids"] for e in declared["pool"]] == [
        ["claude-max-b", "claude-max-a"], ["claude-max-a", "claude-team"]]
    ordered = json.loads(_plan(_files(tmp_path, "expiring-first"), "--json").stdout)
    assert ordered["settings"]["within_rung_order"] == "expiring-first"
    assert [e["allowed_connection_ids"] for e in ordered["pool"]] == [
        ["claude-max-a", "claude-max-b"], ["claude-max-a", "claude-team"]]
    assert ordered["pool"][0]["order_reasons"] == [A_REASON, B_REASON]
    assert ordered["pool"][0]["order_stale_at"] == "2026-12-01T12:00:00Z"
    assert ordered["pool"][1]["order_reasons"][1] == TEAM_REASON
    assert {c["id"]: c.get("capacity_weight") for c in ordered["connections"]} == {
        "claude-max-b": None, "claude-max-a": None, "claude-team": 2.0}


def test_declared_is_the_plan_without_the_setting_to_the_byte(tmp_path: Path) -> None:
    plain = _plan(_files(tmp_path, None), "--json").stdout
    declared = _plan(_files(tmp_path, "declared"), "--json").stdout
    assert declared == plain
    document = json.loads(plain)
    assert "within_rung_order" not in document["settings"]
    assert all("order_reasons" not in entry for entry in document["pool"])


def test_the_weight_moves_a_bigger_seat_ahead(tmp_path: Path) -> None:
    """50% of a weight-2 seat over three days beats 80% of a weight-1 one over the same."""
    quota = json.loads(json.dumps(QUOTA))
    quota["readings"][1]["windows"] = [
        {"name": "weekly", "remaining_percent": 80, "reset_at": "2026-12-02T12:00:00Z"}]
    quota["readings"][2]["windows"][0]["remaining_percent"] = 50
    config = _files(tmp_path, "expiring-first")
    (tmp_path / "quota.json").write_text(json.dumps(quota), encoding="utf-8")
    pool = json.loads(_plan(config, "--json").stdout)["pool"]
    # the opus entry leads the rung too: its first seat is the most urgent of all
    opus = pool[0]
    assert opus["model"] == "claude-opus-4-1"
    assert opus["allowed_connection_ids"] == ["claude-team", "claude-max-a"]


def test_the_views_name_the_order_and_each_reason(tmp_path: Path) -> None:
    config = _files(tmp_path, "expiring-first")
    table = _plan(config).stdout
    assert "order within quota rungs: expiring-first (R15)" in table
    assert A_REASON in table
    assert B_REASON in table
    markdown = _plan(config, "--format", "markdown").stdout
    assert "_order within quota rungs: expiring-first (R15)" in markdown
    assert f"| #1 | `claude-max-b` | {B_REASON} |" in markdown
    saved = tmp_path / "plan.json"
    _plan(config, "--out", str(saved))
    shown = runner.invoke(app, ["show", str(saved)])
    assert shown.exit_code == 0, shown.output
    assert "order within quota rungs: expiring-first (R15)" in shown.stdout
    assert A_REASON in shown.stdout
    declared = _plan(_files(tmp_path, None)).stdout
    assert "order within" not in declared
    assert "why here" not in declared


def test_why_says_the_place_its_reason_and_the_neighbour(tmp_path: Path) -> None:
    config = _files(tmp_path, "expiring-first")
    result = runner.invoke(app, ["why", "claude-max-a", "auto/subscription", "--config",
                                 str(config), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    seats = document["verdicts"][0]["pool"]
    assert seats[0]["order_reason"] == (
        f"first in its allowlist of 2: {A_REASON}; before claude-max-b, 0.1%/h")
    team = runner.invoke(app, ["why", "claude-team", "auto/subscription", "--config",
                               str(config)])
    assert team.exit_code == 0, team.output
    assert "capacity_weight 2" in team.stdout
    assert "second in its allowlist of 2" in team.stdout


@pytest.mark.parametrize(("text", "expected"), [
    ('capacity_weight = 0\n', "capacity_weight"),
    ('capacity_weight = -1\n', "capacity_weight"),
])
def test_a_weight_not_above_zero_is_one_clear_error(tmp_path: Path, text: str,
                                                     expected: str) -> None:
    config = _files(tmp_path, None, CONNECTIONS.replace("capacity_weight = 2\n", text))
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(config)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "connections.toml" in lines[0]
    assert expected in lines[0]


def test_a_misspelt_order_gets_a_did_you_mean(tmp_path: Path) -> None:
    config = _files(tmp_path, "expiring_first")
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(config)])
    assert result.exit_code == 2
    assert "within_rung_order" in result.stderr
    assert "did you mean 'expiring-first'" in result.stderr


# --- the urgency (docs/rules.md#r15) ---------------------------------------------------------


def _urgency(*windows: dict[str, Any], weight: float = 1.0, model: str = "m") -> Any:
    found = history(reading("c", *windows))[0]
    return urgency(found, model, weight, NOW)


def _at(hours: float) -> str:
    return (NOW + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")


def test_one_window_is_its_remaining_over_the_hours_to_its_reset() -> None:
    found = _urgency(window("5h", 30, _at(2)), weight=3)
    assert (found.window, found.rate) == ("5h", pytest.approx(45.0))


def test_the_window_that_resets_last_counts() -> None:
    # the 5h window refills before the weekly one runs out: only the weekly 6% can lapse
    found = _urgency(window("5h", 90, _at(3)), window("weekly", 6, _at(48)))
    assert (found.window, found.left) == ("weekly", 6)
    assert found.rate == pytest.approx(0.125)
    assert rate_at(urgency_terms(history(reading("c", window("5h", 90, _at(3)),
                                                 window("weekly", 6, _at(48))))[0],
                                 "m", 1.0, NOW), NOW) == found.rate


def test_of_windows_resetting_together_the_one_with_least_left_counts() -> None:
    found = _urgency(window("weekly", 80, _at(48)), window("weekly-opus", 20, _at(48)))
    assert (found.window, found.left) == ("weekly-opus", 20)


def test_an_earlier_window_caps_nothing_it_refills() -> None:
    found = _urgency(window("5h", 1, _at(1)), window("weekly", 96, _at(4)))
    assert (found.window, found.left) == ("weekly", 96)
    assert found.rate == pytest.approx(24.0)


def test_no_reset_unlimited_and_unknown_have_no_urgency() -> None:
    assert _urgency(window("5h", 50)).rate == 0
    assert _urgency(window("local", unlimited=True)).why_zero == "unlimited"
    assert urgency(None, "m", 1.0, NOW).why_zero == "quota unknown"
    assert _urgency(window("5h", 50, _at(1), models=["other"])).rate == 0
    # an unlimited window caps nothing
    assert _urgency(window("5h", 50, _at(1)), window("mo", unlimited=True)).rate == 50


def test_equal_urgencies_word_alike() -> None:
    """The plan words each distinct urgency once, kept by its value (``make_plan``'s
    reasons): a remaining -0.0 counts 0.0, so urgencies equal as values print alike."""
    assert _urgency(window("5h", -0.0, _at(2))) == _urgency(window("5h", 0.0, _at(2)))
    assert urgency_reason(_urgency(window("5h", -0.0, _at(2))), NOW) == urgency_reason(
        _urgency(window("5h", 0.0, _at(2))), NOW)
    assert _urgency(window("5h", 40, _at(2))) == _urgency(
        window("5h", 40, "2026-11-29T16:00:00+02:00"))
    assert urgency_reason(_urgency(window("5h", 40, _at(2))), NOW) == urgency_reason(
        _urgency(window("5h", 40, "2026-11-29T16:00:00+02:00")), NOW)


# --- generated fleets ------------------------------------------------------------------------

FLEETS = input_sets(anchor=NOW, catalog=SHIPPED, connections=(1, 7), readings=(0, 3),
                    readings_between=(-300, 0), resets_between=(-60, 600), seat_order=True)


def _ordered(inputs: LoadedInputs, order: str) -> LoadedInputs:
    ladder = inputs.settings.ladder.model_copy(update={"within_rung_order": order})
    return inputs._replace(settings=inputs.settings.model_copy(update={"ladder": ladder}))


def _without_order(plan: Plan) -> list[tuple[str, str, str, frozenset[str]]]:
    return [(e.rung, e.provider, e.model, frozenset(e.allowed_connection_ids))
            for e in plan.pool]


@deep(150, deadline=None)
def test_expiring_first_moves_places_within_quota_rungs_only(examples: settings) -> None:
    @examples
    @given(FLEETS, st.sampled_from(["auto/subscription", "auto/thrifty", "auto/coding:thrifty"]))
    def holds(inputs: LoadedInputs, auto_id: str) -> None:
        parsed = parse_auto_id(auto_id)
        declared = make_plan(_ordered(inputs, "declared"), parsed, NOW, "flag")
        ordered = make_plan(_ordered(inputs, "expiring-first"), parsed, NOW, "flag")
        assert "within_rung_order" not in declared.settings
        assert all(not entry.order for entry in declared.pool)
        assert (ordered.rungs, ordered.excluded, ordered.summary, ordered.decisions) == (
            declared.rungs, declared.excluded, declared.summary, declared.decisions)
        # the same entries per rung, each with the same allowlist set
        for rung in {e.rung for e in declared.pool}:
            mine = sorted(map(repr, (k for k in _without_order(ordered) if k[0] == rung)))
            theirs = sorted(map(repr, (k for k in _without_order(declared) if k[0] == rung)))
            assert mine == theirs
        assert [e.position for e in ordered.pool] == list(range(1, len(ordered.pool) + 1))
        planned = Fleet(_ordered(inputs, "expiring-first"))
        urgencies = pair_urgencies(planned, ordered.decisions, NOW)
        declared_at = {(e.rung, e.provider, e.model): i for i, e in enumerate(declared.pool)}
        for rung in {e.rung for e in ordered.pool}:
            entries = [e for e in ordered.pool if e.rung == rung]
            if rung not in QUOTA_RUNGS:
                assert entries == [e for e in declared.pool if e.rung == rung]
                continue
            tops: list[tuple[float, int]] = []
            for entry in entries:
                rated = urgencies[planned.keys.index((entry.provider, entry.model))]
                rates = [rated[planned.index[cid]].rate for cid in entry.allowed_connection_ids]
                assert rates == [place.urgency for place in entry.order]
                assert rates == sorted(rates, reverse=True)
                assert [o.connection_id for o in entry.order] == list(
                    entry.allowed_connection_ids)
                tops.append((-max(rates),
                             declared_at[(entry.rung, entry.provider, entry.model)]))
            assert tops == sorted(tops)  # highest first, R12's order on a tie

    holds()


@deep(100, quick=20, deadline=None)
def test_why_places_a_connection_as_the_whole_plan_does(examples: settings) -> None:
    @examples
    @given(FLEETS, st.sampled_from(["auto/subscription", "auto/thrifty"]))
    def holds(inputs: LoadedInputs,
              auto_id: str) -> None:
        ordered = _ordered(inputs, "expiring-first")
        parsed = parse_auto_id(auto_id)
        whole = make_plan(ordered, parsed, NOW, "flag")
        for connection in ordered.connections:
            mine = connection_plan(ordered, parsed, NOW, "flag", connection.id)
            expected = [(e.position, e.model, e.order) for e in whole.pool
                        if connection.id in e.allowed_connection_ids]
            assert [(e.position, e.model, e.order) for e in mine.pool] == expected

    holds()


T0 = datetime(2026, 11, 29, 11, tzinfo=UTC)
STEP_FLEETS = input_sets(anchor=T0, catalog=SHIPPED, connections=(1, 6), readings=(0, 4),
                         readings_between=(-200, 150), resets_between=(-30, 180),
                         spend_between=(-600, 180), seat_order=True)


@deep(100, quick=9, deadline=None)
def test_stepping_agrees_with_replanning_under_expiring_first(examples: settings) -> None:
    """Every step's pool order (its eligible connections and leader) is ``make_plan``'s."""
    @examples
    @given(STEP_FLEETS, st.sampled_from(["auto/thrifty", "auto/subscription"]),
           st.integers(-240, 60), st.integers(0, 300), st.sampled_from([1, 7, 15, 30]))
    def holds(
            inputs: LoadedInputs, auto_id: str, start: int, length: int, step: int) -> None:
        ordered = _ordered(inputs, "expiring-first")
        first = T0 + timedelta(minutes=start)
        parsed = parse_auto_id(auto_id)
        every = timedelta(minutes=step)
        stepped = simulate(ordered, parsed, first, first + timedelta(minutes=length), every)
        replanned = simulate(ordered, parsed, first, first + timedelta(minutes=length), every,
                             replan=True)
        assert stepped == replanned
        assert series_json(stepped) == series_json(replanned)
        instants = step_instants(first, first + timedelta(minutes=length), every)
        for state in Stepper(ordered, parsed, instants).steps():
            plan = make_plan(ordered, parsed, state.at, "flag")
            assert state.leader == next(iter(plan.eligible_connection_ids), None)

    holds()


@deep(100, quick=20, deadline=None)
def test_a_declared_plan_names_no_order_anywhere(examples: settings) -> None:
    @examples
    @given(FLEETS, st.sampled_from(["auto/subscription", "auto/thrifty"]))
    def holds(inputs: LoadedInputs, auto_id: str) -> None:
        text = plan_json(make_plan(_ordered(inputs, "declared"), parse_auto_id(auto_id), NOW,
                                   "flag"))
        assert '"order_reasons"' not in text
        assert "within_rung_order" not in text

    holds()


# --- diff ------------------------------------------------------------------------------------


def _saved(folder: Path, order: str | None, name: str) -> Path:
    config = _files(folder, order)
    out = folder / name
    _plan(config, "--out", str(out), "--now", "2026-11-29T12:00:00Z")
    return out


def test_diff_reports_a_reordered_allowlist_as_an_order_change(tmp_path: Path) -> None:
    old = _saved(tmp_path, None, "old.json")
    new = _saved(tmp_path, "expiring-first", "new.json")
    result = runner.invoke(app, ["diff", str(old), str(new), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["counts"]["order_changed"] == 1
    assert document["counts"]["allowlist_changed"] == 0
    assert document["counts"]["pool_moved"] == 0
    assert document["pool"]["order_changed"] == [{
        "rung": "subscription", "provider": "claude", "model": "claude-sonnet-4-5",
        "old_position": 1, "new_position": 1,
        "old_order": ["claude-max-b", "claude-max-a"],
        "new_order": ["claude-max-a", "claude-max-b"], "moved": False}]
    table = runner.invoke(app, ["diff", str(old), str(new)])
    assert "Order within rungs" in table.stdout
    assert "1 order changed within a rung" in table.stdout
    markdown = runner.invoke(app, ["diff", str(old), str(new), "--format", "markdown"])
    assert "| changed | Order within rungs |" in markdown.stdout


def test_diff_reports_a_candidate_moved_within_its_rung_as_an_order_change(
        tmp_path: Path) -> None:
    old = _saved(tmp_path, None, "old.json")
    quota = json.loads(json.dumps(QUOTA))
    quota["readings"][2]["windows"][0]["reset_at"] = "2026-11-29T13:00:00Z"  # 100%/h
    (tmp_path / "quota.json").write_text(json.dumps(quota), encoding="utf-8")
    new = tmp_path / "new.json"
    config = _files(tmp_path, "expiring-first")
    (tmp_path / "quota.json").write_text(json.dumps(quota), encoding="utf-8")
    _plan(config, "--out", str(new), "--now", "2026-11-29T12:00:00Z")
    document = json.loads(runner.invoke(app, ["diff", str(old), str(new), "--json"]).stdout)
    assert document["counts"]["pool_moved"] == 0
    assert document["counts"]["order_changed"] == 2
    places = {o["model"]: (o["old_position"], o["new_position"])
              for o in document["pool"]["order_changed"]}
    assert places == {"claude-opus-4-1": (2, 1), "claude-sonnet-4-5": (1, 2)}
    assert any(o["moved"] for o in document["pool"]["order_changed"])


# --- export ----------------------------------------------------------------------------------

MAP = "".join(
    f'[[connections]]\nid = "{cid}"\nmodel_prefix = "openai/"\n'
    f'api_base = "http://subscriptions.internal:{port}/v1"\napi_key_env = "PROXY_{port}_KEY"\n\n'
    for cid, port in (("claude-max-a", 8317), ("claude-max-b", 8318), ("claude-team", 8319)))


def _export(tmp_path: Path, target: str, order: str | None) -> Any:
    config = _files(tmp_path, order)
    (tmp_path / "map.toml").write_text(MAP, encoding="utf-8")
    extra = ["--map", str(tmp_path / "map.toml")] if target == "litellm" else []
    result = runner.invoke(app, ["export", target, "auto/subscription", "--config",
                                 str(config), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


STALE = ("subscription: the expiring-first order is {}; it holds only until the next "
         "export: stale after 2026-12-01T12:00:00Z (the soonest reset among its ordered "
         "connections)")


def test_litellm_holds_the_order_in_one_sub_level_per_connection(tmp_path: Path) -> None:
    report = _export(tmp_path, "litellm", "expiring-first")
    deployments = report["document"]["model_list"]
    assert [(d["model_info"]["id"].split("~")[1], d["litellm_params"]["order"])
            for d in deployments] == [("claude-max-a", 1), ("claude-max-b", 2),
                                      ("claude-max-a", 3), ("claude-team", 4)]
    stale = [f for f in report["fidelity"] if f["code"] == "order-until-next-export"]
    assert [f["message"] for f in stale] == [
        STALE.format("held by one order sub-level per connection")]
    declared = _export(tmp_path, "litellm", None)
    assert [d["litellm_params"]["order"] for d in declared["document"]["model_list"]] == [
        1, 1, 2, 2]
    assert all(f["code"] != "order-until-next-export" for f in declared["fidelity"])


def test_omniroute_holds_the_order_in_one_step_per_connection(tmp_path: Path) -> None:
    report = _export(tmp_path, "omniroute", "expiring-first")
    steps = report["document"]["models"]
    assert [(s["model"], s["allowedConnectionIds"], s.get("fallbackOnlyOnQuotaExhaustion"))
            for s in steps] == [
        ("claude/claude-sonnet-4-5", ["claude-max-a"], None),
        ("claude/claude-sonnet-4-5", ["claude-max-b"], True),
        ("claude/claude-opus-4-1", ["claude-max-a"], None),
        ("claude/claude-opus-4-1", ["claude-team"], True)]
    codes = [f["code"] for f in report["fidelity"]]
    assert "omniroute-split-candidate" not in codes
    assert [f["message"] for f in report["fidelity"]
            if f["code"] == "order-until-next-export"] == [
        STALE.format("held by one step per connection, in the plan's order")]
    declared = _export(tmp_path, "omniroute", None)
    assert [s["allowedConnectionIds"] for s in declared["document"]["models"]] == [
        ["claude-max-b", "claude-max-a"], ["claude-max-a", "claude-team"]]


# --- the order changes by time alone -----------------------------------------------------------


def _crossing_fleet() -> LoadedInputs:
    """Seat a (40% left, reset in 4 h: 10%/h) leads seat b (20%, reset in 3 h: 6.7%/h) at
    12:00; the urgencies cross at 14:00 (40 / 2 h = 20 / 1 h), with no reading or reset in
    between: b leads after."""
    return fleet([conn("a", models=["sonnet"]), conn("b", models=["sonnet"])],
                 [reading("a", window("5h", 40, _at(4))),
                  reading("b", window("5h", 20, _at(3)))],
                 settings={"ladder": {"within_rung_order": "expiring-first",
                                      "max_reading_age_seconds": 86400}})


def test_a_crossing_of_two_urgencies_is_computed() -> None:
    inputs = _crossing_fleet()
    a = urgency_terms(inputs.readings["a"][-1], "sonnet", 1.0, NOW)
    b = urgency_terms(inputs.readings["b"][-1], "sonnet", 1.0, NOW)
    found = overtakes(a, b, NOW)
    assert found is not None
    assert abs((found[0] - (NOW + timedelta(hours=2))).total_seconds()) < 0.01
    assert found[1] is False
    # past the crossing, a never gets back ahead before b's reset
    assert overtakes(b, a, NOW + timedelta(hours=2.5)) is None
    assert next_order_change([[a, b]], NOW) == found


def test_the_stepper_reorders_at_the_crossing_without_a_new_reading() -> None:
    inputs = _crossing_fleet()
    parsed = parse_auto_id("auto/subscription")
    instants = [NOW + timedelta(minutes=minutes) for minutes in range(0, 170, 13)]
    leaders = [state.leader for state in Stepper(inputs, parsed, instants).steps()]
    expected = [make_plan(inputs, parsed, at, "flag").pool[0].allowed_connection_ids[0]
                for at in instants]
    assert leaders == expected
    assert leaders[0] == "a"
    assert leaders[-1] == "b"
    assert leaders.index("b") == next(i for i, at in enumerate(instants)
                                      if at > NOW + timedelta(hours=2))
