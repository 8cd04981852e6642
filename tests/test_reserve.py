"""R16 reserve floors and a connection's seat (SPEC §9): a reserve is the connection's exit
cutoff with the ladder's hysteresis gap above it, in every command that plans; a pair out only
because of it reads ``quota-below-reserve``; the seat's price and period are validated, shown
by ``why`` and carried on the plan's connection records."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.forecast.pace import no_lengths, outlook
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.fleet import Fleet, seat_flags
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.quota import LOW_REASONS
from omniladder.engine.records import PairDecision, Plan
from omniladder.rendering.json_view import plan_json
from tests.builders import NOW, at, conn, fleet, plan, reading, window
from tests.depth import deep
from tests.errors import one_error
from tests.strategies import RESERVE, input_sets

runner = CliRunner()

# --- a reserve is a cutoff ------------------------------------------------------------------


def _without_reserves(inputs: LoadedInputs) -> LoadedInputs:
    return inputs._replace(connections=tuple(
        dataclasses.replace(c, reserve_percent=None) for c in inputs.connections))


def _with_reserve(inputs: LoadedInputs, index: int, reserve: float) -> LoadedInputs:
    connections = list(inputs.connections)
    connections[index] = dataclasses.replace(connections[index], reserve_percent=reserve)
    return inputs._replace(connections=tuple(connections))


def _cutoff_raised(inputs: LoadedInputs, cutoff: float) -> LoadedInputs:
    """Every connection held to ``cutoff``, with the ladder's hysteresis gap above it."""
    ladder = inputs.settings.ladder
    gap = ladder.reentry_floor - ladder.exit_cutoff_percent
    raised = ladder.model_copy(update={"exit_cutoff_percent": cutoff,
                                       "reentry_min_remaining_percent": cutoff + gap})
    return inputs._replace(settings=inputs.settings.model_copy(update={"ladder": raised}))


def _decisions(result: Plan, cid: str) -> dict[str, PairDecision]:
    return {d.model: d for d in result.decisions if d.connection_id == cid}


def _admission(decision: PairDecision) -> tuple[Any, ...]:
    return (decision.rung, decision.admitted, decision.unverified)


def _seats(result: Plan, cid: str) -> set[tuple[str, str, str]]:
    return {(e.rung, e.provider, e.model) for e in result.pool
            if cid in e.allowed_connection_ids}


@deep(60, quick=12, deadline=None)
def test_a_reserve_is_that_connection_s_exit_cutoff(examples: settings) -> None:
    """R16: ``reserve_percent = X`` on one connection decides its pairs as
    ``exit_cutoff_percent = X`` (re-entry floor X plus the ladder's gap) would, and the
    others as the ladder alone; the reason differs only where the ladder's own thresholds
    would not exhaust the pair: ``quota-below-reserve``."""
    @examples
    @given(inputs=input_sets(connections=(1, 6)), pick=st.integers(0, 50), reserve=RESERVE,
           auto_id=st.sampled_from(["auto/thrifty", "auto/subscription", "auto/coding:thrifty"]))
    def holds(inputs: LoadedInputs, pick: int,
               reserve: float, auto_id: str) -> None:
        base = _without_reserves(inputs)
        assume(reserve > base.settings.ladder.exit_cutoff_percent)
        index = pick % len(base.connections)
        cid = base.connections[index].id
        wanted = parse_auto_id(auto_id)
        reserved = make_plan(_with_reserve(base, index, reserve), wanted, NOW, "flag")
        as_cutoff = make_plan(_cutoff_raised(base, reserve), wanted, NOW, "flag")
        alone = make_plan(base, wanted, NOW, "flag")

        mine, cut, plain = (_decisions(p, cid) for p in (reserved, as_cutoff, alone))
        assert mine.keys() == cut.keys()
        for model, decision in mine.items():
            assert _admission(decision) == _admission(cut[model])
            verdict, raised = decision.verdict, cut[model].verdict
            if decision.reason == "quota-below-reserve":
                assert cut[model].reason in LOW_REASONS
                ladder_alone = plain[model].verdict
                assert ladder_alone is not None
                assert ladder_alone.kind != "exhausted"
            else:
                assert decision.reason == cut[model].reason
                assert decision.detail == cut[model].detail
                if decision.reason in LOW_REASONS:
                    ladder_alone = plain[model].verdict
                    assert ladder_alone is not None
                    assert ladder_alone.kind == "exhausted"
            if verdict is not None and raised is not None:
                # the hysteresis gap kept: the same threshold, the same replay
                assert (verdict.threshold, verdict.floor_applied, verdict.out_since) == (
                    raised.threshold, raised.floor_applied, raised.out_since)
        assert _seats(reserved, cid) == _seats(as_cutoff, cid)
        for other in base.connections:
            if other.id == cid:
                continue
            assert _decisions(reserved, other.id) == _decisions(alone, other.id)
            assert _seats(reserved, other.id) == _seats(alone, other.id)

    holds()


def test_a_reserve_at_or_below_the_cutoff_changes_nothing() -> None:
    connections = [conn("a", models=["sonnet"], reserve_percent=2),
                   conn("b", models=["sonnet"], reserve_percent=0)]
    readings = [reading("a", window("5h", 1.5, at(hours=2))),
                reading("b", window("5h", 3, at(hours=2)))]
    result = plan(fleet(connections, readings))
    assert [(x.connection_id, x.reason) for x in result.excluded] == [
        ("a", "quota-below-cutoff")]


# --- the worked example of docs/rules.md#r16 -------------------------------------------------

WEEK = at(hours=48)


@pytest.mark.parametrize(("figures", "expected"), [
    ((40,), (None, "")),
    ((40, 9), ("quota-below-reserve", "weekly window at 9% (reserve 10%)")),
    ((40, 9, 1), ("quota-below-reentry", "weekly window at 1% (re-entry floor 13%, out since")),
    ((40, 9, 1, 12), ("quota-below-reserve",
                      "weekly window at 12% (re-entry floor 13% over the reserve 10%")),
    ((40, 9, 1, 12, 14), (None, "")),
])
def test_the_worked_example(figures: tuple[float, ...], expected: tuple[str | None, str]) -> None:
    """docs/rules.md#r16: exit cutoff 2%, re-entry floor 5%, reserve 10% → the connection's
    cutoff 10% and floor 13%. Each reading an hour apart; the fourth follows a reset."""
    count = len(figures)
    readings = []
    for number, figure in enumerate(figures):
        checked = at(hours=number - count + 1)
        # the first three readings share a cycle; the window resets before the fourth
        reset = at(hours=-count + 3.5) if number < 3 else WEEK
        readings.append(reading("max", checked, window("weekly", figure, reset)))
    result = plan(fleet([conn("max", models=["sonnet"], reserve_percent=10)], readings))
    reason, fragment = expected
    found = [x for x in result.excluded if x.connection_id == "max"]
    if reason is None:
        assert found == []
        return
    (exclusion,) = found
    assert exclusion.reason == reason
    assert fragment in exclusion.detail


@pytest.mark.parametrize(("seat", "flags"), [
    ({}, (False, False)),
    ({"reserve_percent": 0}, (False, True)),
    ({"reserve_percent": 10}, (True, True)),
    ({"seat_price_usd": 20}, (False, True)),
    ({"seat_period": "week"}, (False, True)),
])
def test_a_fleet_knows_whether_a_connection_keeps_a_reserve_or_a_seat(
        seat: dict[str, Any], flags: tuple[bool, bool]) -> None:
    """``Fleet.reserved`` (a reserve above 0) and ``Fleet.seated`` (any seat field), on the
    last of three connections; the plan's JSON carries the seat fields exactly when seated."""
    connections = [conn("a"), conn("b"), conn("c", **seat)]
    inputs = fleet(connections, [])
    assert seat_flags(inputs.connections) == flags
    built = Fleet(inputs)
    assert (built.reserved, built.seated) == flags
    records = json.loads(plan_json(plan(inputs)))["connections"]
    assert (set(records[2]) > set(records[0])) == flags[1]


def test_the_ladder_alone_would_hold_the_pair_out_too() -> None:
    """A held low window of a stale reading (R6.4) below the reserve: under the ladder alone
    the reading is stale (not exhausted), so the reserve is the reason."""
    readings = [reading("max", at(hours=-1), window("5h", 8, at(hours=2)))]
    result = plan(fleet([conn("max", models=["sonnet"], reserve_percent=10)], readings),
                  "auto/subscription")
    (exclusion,) = result.excluded
    assert exclusion.reason == "quota-below-reserve"
    assert "still low until that reset" in exclusion.detail


# --- through the command line ---------------------------------------------------------------

CONNECTIONS = """\
[[connections]]
id = "claude-max-work"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5"]
{reserve}
{price}

[[connections]]
id = "openai-key"
provider = "openai"
auth_type = "apikey"
models = ["gpt-5-mini"]
"""

SETTINGS = """\
[inputs]
connections = "connections.toml"
quota = "quota.json"
traffic = "traffic.jsonl"

[ladder]
max_reading_age_seconds = 600
"""


def _windows(five_hour: float, weekly: float) -> list[dict[str, Any]]:
    # As `import claude-usage` writes them: the 5h window with its length, the weekly one.
    return [{"name": "5h", "remaining_percent": five_hour, "reset_at": "2026-11-29T14:00:00Z",
             "window_seconds": 18000.0},
            {"name": "weekly", "remaining_percent": weekly,
             "reset_at": "2026-12-02T00:00:00Z"}]


QUOTA = {"taken_at": "2026-11-29T12:00:00Z", "readings": [
    {"connection": "claude-max-work", "checked_at": f"2026-11-29T{hour}:00:00Z",
     "windows": _windows(five_hour, weekly)}
    for hour, five_hour, weekly in (("10", 60, 70), ("11", 40, 68), ("12", 15, 66))]}

TRAFFIC = [
    {"at": "2026-11-29T11:30:00Z", "connection": "claude-max-work",
     "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "tokens_in": 1000,
     "tokens_out": 100, "request_id": "r1"},
    {"at": "2026-11-29T12:30:00Z", "connection": "claude-max-work",
     "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "tokens_in": 1000,
     "tokens_out": 100, "request_id": "r2"},
]


def _fleet(tmp_path: Path, reserve: str = "reserve_percent = 20",
           price: str = "seat_price_usd = 200") -> str:
    (tmp_path / "connections.toml").write_text(CONNECTIONS.format(reserve=reserve, price=price),
                                               "utf-8")
    (tmp_path / "quota.json").write_text(json.dumps(QUOTA), "utf-8")
    (tmp_path / "traffic.jsonl").write_text(
        "".join(json.dumps(event) + "\n" for event in TRAFFIC), "utf-8")
    (tmp_path / "omniladder.toml").write_text(SETTINGS, "utf-8")
    return str(tmp_path / "omniladder.toml")


def _run(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result


def test_plan_excludes_below_the_reserve_and_carries_the_seat(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    document = json.loads(_run("plan", "auto/thrifty", "--config", config, "--json").stdout)
    (exclusion,) = document["excluded"]
    assert (exclusion["connection_id"], exclusion["reason"]) == (
        "claude-max-work", "quota-below-reserve")
    assert exclusion["detail"] == "5h window at 15% (reserve 20%), resets 14:00Z"
    assert "re-entry floor 23%" in exclusion["fix"]
    assert "reserve_percent = 20 on connection 'claude-max-work'" in exclusion["fix"]
    assert [e["rung"] for e in document["pool"]] == ["cheap"]
    records = {c["id"]: c for c in document["connections"]}
    assert {key: records["claude-max-work"].get(key)
            for key in ("reserve_percent", "seat_price_usd", "seat_period")} == {
        "reserve_percent": 20.0, "seat_price_usd": 200.0, "seat_period": "month"}
    assert not {"reserve_percent", "seat_price_usd", "seat_period"} & set(records["openai-key"])
    table = _run("plan", "auto/thrifty", "--config", config).stdout
    assert "1 below reserve" in table
    # without the reserve the ladder's own cutoff (2%) keeps it serving
    plain = _fleet(tmp_path, reserve="")
    document = json.loads(_run("plan", "auto/thrifty", "--config", plain, "--json").stdout)
    assert document["excluded"] == []


def test_who_and_check_read_the_reserve(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    who = json.loads(_run("who", "claude/claude-sonnet-4-5", "auto/thrifty", "--config",
                          config, "--json").stdout)
    assert "quota-below-reserve" in json.dumps(who)
    policy = tmp_path / "policy.toml"
    policy.write_text('[[expect]]\nname = "reserved"\nauto_id = "auto/thrifty"\n'
                      'expect_reason = { claude-max-work = "quota-below-reserve" }\n', "utf-8")
    _run("check", str(policy), "--config", config)


def test_why_shows_the_seat_and_the_reserve_s_thresholds(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    text = _run("why", "claude-max-work", "auto/thrifty", "--config", config).stdout
    assert ("reserve (R16): 20% of each window kept; exit cutoff 20% (the ladder's 2%), "
            "re-entry floor 23%") in text
    assert "price: $200.00 per month" in text
    assert "quota-below-reserve — 5h window at 15% (reserve 20%)" in text
    assert "threshold that applied: reserve 20%" in text
    document = json.loads(_run("why", "claude-max-work", "auto/thrifty", "--config", config,
                               "--json").stdout)
    assert document["seat"] == {"reserve_percent": 20.0, "exit_cutoff_percent": 20.0,
                                "reentry_floor_percent": 23.0, "raised": True,
                                "seat_price_usd": 200.0, "seat_period": "month"}
    # the threshold held is named as the reserve; once out, the floor over it
    assert [(m["threshold"], m["threshold_kind"]) for m in document["models"]] == [
        (20.0, "reserve")]
    (comeback,) = document["verdicts"][0]["comeback"]
    assert (comeback["with_fresh_reading"]["threshold_percent"],
            comeback["with_fresh_reading"]["threshold_kind"]) == (23.0, "re-entry floor")
    plain = _fleet(tmp_path, reserve="")
    document = json.loads(_run("why", "openai-key", "auto/thrifty", "--config", plain,
                               "--json").stdout)
    assert document["seat"] is None


def test_whys_pace_names_the_reserve_a_window_is_below(tmp_path: Path) -> None:
    """The 5h window at 15% is at or below the connection's threshold, which is its reserve
    (20%), not the ladder's cutoff: the pace note says so, in why and in the forecast."""
    config = _fleet(tmp_path)
    tree = _run("why", "claude-max-work", "auto/thrifty", "--config", config).stdout
    text = " ".join(tree.replace("│", " ").split())  # the tree's wrapped lines joined
    assert "at or below the reserve 20% until 14:00Z" in text
    assert "at or below the cutoff" not in text
    forecast = json.loads(_run("forecast", "auto/thrifty", "--config", config,
                               "--json").stdout)
    (five_hour,) = [p for p in forecast["pace"] if p["window"] == "5h"]
    assert five_hour["note"] == "at or below the reserve 20% until 14:00Z"


def test_a_reserve_at_or_below_the_cutoff_leaves_the_pace_note_at_the_cutoff() -> None:
    readings = [reading("a", window("5h", 1.5, at(hours=2)))]
    for reserve in (None, 2.0):
        inputs = fleet([conn("a", models=["sonnet"])], readings)
        (pace,) = outlook("a", "claude", inputs.readings["a"], NOW, inputs, no_lengths,
                          reserve_percent=reserve).paces
        assert pace.note == "at or below the cutoff 2% until 14:00Z"
    (pace,) = outlook("a", "claude", inputs.readings["a"], NOW, inputs, no_lengths,
                      reserve_percent=2.5).paces
    assert pace.note == "at or below the reserve 2.5% until 14:00Z"


def test_an_export_says_the_gateway_does_not_hold_the_reserve(tmp_path: Path) -> None:
    """At 11:00 the connection is above its reserve and exported: the report says the
    gateway cannot hold the reserve. At 12:00 it is out only because of the reserve: the
    combo leaves it out, and no item claims OmniRoute would read its window as spent."""
    config = _fleet(tmp_path)

    def exported(now: str) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(_run(
            "export", "omniroute", "auto/thrifty", "--config", config, "--now", now,
            "--json").stdout)
        return report

    above = exported("2026-11-29T11:00:00Z")
    (held,) = [f for f in above["fidelity"] if f["code"] == "reserve-not-held"]
    assert (held["level"], held["connection_id"]) == ("warning", "claude-max-work")
    assert "keeps 20% of each window" in held["message"]
    below = exported("2026-11-29T12:00:00Z")
    codes = {f["code"] for f in below["fidelity"]}
    assert not codes & {"reserve-not-held", "omniroute-per-model-window"}
    assert all("claude-max-work" not in step["allowedConnectionIds"]
               for step in below["document"]["models"])
    plain = _fleet(tmp_path, reserve="")
    report = json.loads(_run("export", "omniroute", "auto/thrifty", "--config", plain,
                             "--now", "2026-11-29T11:00:00Z", "--json").stdout)
    assert all(f["code"] != "reserve-not-held" for f in report["fidelity"])


def test_simulate_steps_out_at_the_reserve(tmp_path: Path) -> None:
    span = ("--from", "2026-11-29T10:00:00Z", "--to", "2026-11-29T13:00:00Z", "--step", "30m",
            "--json")
    config = _fleet(tmp_path)
    document = json.loads(_run("simulate", "auto/thrifty", "--config", config, *span).stdout)
    assert [(t["at"], t["from"], t["to"]) for t in document["transitions"]] == [
        ("2026-11-29T12:00:00Z", "subscription", "cheap")]
    plain = _fleet(tmp_path, reserve="")
    document = json.loads(_run("simulate", "auto/thrifty", "--config", plain, *span).stdout)
    assert document["transitions"] == []


def test_forecast_projects_to_the_reserve(tmp_path: Path) -> None:
    """At 11:00 the 5h window shows 40%, burning 20%/h: it reaches the reserve (20%) at
    12:00, the ladder's cutoff (2%) only at 12:54."""
    now = ("--now", "2026-11-29T11:00:00Z", "--json")
    config = _fleet(tmp_path)
    document = json.loads(_run("forecast", "auto/thrifty", "--config", config, *now).stdout)
    assert document["first_paid_at"] == "2026-11-29T12:00:00Z"
    five_hour = [p for p in document["pace"] if p["window"] == "5h"]
    assert [p["cutoff_at"] for p in five_hour] == ["2026-11-29T12:00:00Z"]
    plain = _fleet(tmp_path, reserve="")
    document = json.loads(_run("forecast", "auto/thrifty", "--config", plain, *now).stdout)
    assert document["first_paid_at"] == "2026-11-29T12:54:00Z"


def test_audit_traffic_counts_service_below_the_reserve_as_served_excluded(
        tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    document = json.loads(_run("audit", "traffic", "auto/thrifty", "--config", config,
                               "--json").stdout)
    assert document["counts"]["served-excluded"] == 1
    assert document["counts"]["on-plan"] == 1
    plain = _fleet(tmp_path, reserve="")
    document = json.loads(_run("audit", "traffic", "auto/thrifty", "--config", plain,
                               "--json").stdout)
    assert document["counts"]["served-excluded"] == 0


# --- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "fragments"), [
    ("reserve_percent = 120", ("connections.toml", "connections[0].reserve_percent")),
    ("reserve_percent = -1", ("connections.toml", "connections[0].reserve_percent")),
    ('reserve_percent = "10"', ("connections.toml", "connections[0].reserve_percent")),
    ("seat_price_usd = -5", ("connections.toml", "connections[0].seat_price_usd")),
    ("seat_price_usd = nan", ("connections.toml", "connections[0].seat_price_usd")),
    ('seat_period = "year"', ("connections.toml", "connections[0].seat_period")),
])
def test_a_bad_seat_field_is_one_error(tmp_path: Path, line: str,
                                       fragments: tuple[str, ...]) -> None:
    key = "reserve" if line.startswith("reserve") else "price"
    config = _fleet(tmp_path, **{key: line})
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", config]), *fragments)


def test_a_period_without_a_price_is_a_warning(tmp_path: Path) -> None:
    config = _fleet(tmp_path, price='seat_period = "week"')
    document = json.loads(_run("plan", "auto/thrifty", "--config", config, "--json").stdout)
    warned = [w for w in document["warnings"] if "seat_period" in w]
    assert len(warned) == 1
    assert warned[0].endswith(
        "connections.toml: connections[0].seat_period (week) of 'claude-max-work' is given "
        "without seat_price_usd; it prices nothing")
    records = {c["id"]: c for c in document["connections"]}
    assert records["claude-max-work"]["seat_period"] == "week"
    assert "seat_price_usd" not in records["claude-max-work"]
