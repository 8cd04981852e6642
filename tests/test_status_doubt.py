"""A connection's own status of `error` or `unknown`: R10 excludes it, R11 admits it marked
unverified, and `why`, `who` and `simulate` agree with `plan`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.check import Expectation, judge
from omniladder.cli import app
from tests.builders import at, conn, fleet, reading, window
from tests.builders import plan as make_plan

runner = CliRunner()


# --- 4. a connection's own status of error / unknown ---------------------------------------

_FRESH = window("5h", 60, at(hours=3))


def _doubt_fleet(status: str | None, **fields: Any) -> Any:
    extra = {} if status is None else {"status": status}
    return fleet([conn("c", models=["sonnet"], **extra, **fields),
                  conn("k", "openai", "apikey", models=["gpt-mini"], **extra)],
                 [reading("c", _FRESH)])


@pytest.mark.parametrize(("status", "reason"), [
    (None, None), ("ok", None), ("error", "connection-status-unknown"),
    ("unknown", "connection-status-unknown")])
def test_auto_subscription_excludes_a_connection_whose_own_status_is_in_doubt_R10(
        status: str | None, reason: str | None) -> None:
    """A fresh, usable reading does not vouch for a connection the gateway reports failing:
    auto/subscription promises anything uncertain is excluded."""
    result = make_plan(_doubt_fleet(status), "auto/subscription")
    decision = next(d for d in result.decisions if d.connection_id == "c")
    assert decision.reason == reason
    assert [e.allowed_connection_ids for e in result.pool] == ([] if reason else [("c",)])
    if reason:
        (excluded,) = [x for x in result.excluded if x.connection_id == "c"]
        assert excluded.detail.startswith(f"connection status {status}: ")
        assert 'status = "ok"' in (excluded.fix or "")
        assert "1 status in doubt" in result.summary


@pytest.mark.parametrize("status", ["error", "unknown"])
def test_auto_thrifty_admits_it_unverified_on_every_rung_R11(status: str) -> None:
    result = make_plan(_doubt_fleet(status))
    marks = {(e.rung, m.connection_id): (m.reason, m.detail)
             for e in result.pool for m in e.unverified}
    assert set(marks) == {("subscription", "c"), ("cheap", "k")}
    assert {reason for reason, _ in marks.values()} == {"connection-status-unknown"}
    assert result.unverified_connection_ids == ("c", "k")
    assert "(2 unverified)" in result.summary


def test_an_ok_status_on_thrifty_is_verified_by_its_reading() -> None:
    result = make_plan(_doubt_fleet("ok"))
    assert result.unverified_connection_ids == ()


def test_an_unknown_quota_is_added_to_the_status_mark() -> None:
    inputs = fleet([conn("c", models=["sonnet"], status="error")], [])
    (entry,) = make_plan(inputs).pool
    (mark,) = entry.unverified
    assert mark.reason == "connection-status-unknown"
    assert mark.detail.startswith("connection status error: ")
    assert "; also quota-missing: " in mark.detail


@pytest.mark.parametrize(("fields", "reason"), [
    ({"active": False}, "inactive"),
    ({"status": "banned"}, "terminal-status"),
    ({"overage": "meters-to-paid"}, "overage-not-hard-stop"),
])
def test_the_earlier_checks_of_R10_still_come_first(fields: dict[str, Any],
                                                    reason: str) -> None:
    status = fields.pop("status", "error")
    result = make_plan(_doubt_fleet(status, **fields), "auto/subscription")
    assert next(d.reason for d in result.decisions if d.connection_id == "c") == reason


def test_a_doubtful_status_fails_max_unverified_with_its_reason() -> None:
    """check's evidence names the status, not a quota code it does not have."""
    expectation = Expectation(name="n", auto_id="auto/thrifty", max_unverified=0)
    (result,) = judge(expectation, make_plan(_doubt_fleet("error")))
    assert not result.passed
    assert result.evidence[0] == ("c is admitted unverified: connection-status-unknown: "
                                  "connection status error: the gateway does not report it "
                                  "healthy")


def _doubt_files(tmp_path: Path) -> list[str]:
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "claude-err"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\nstatus = "error"\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({
        "taken_at": "2026-11-29T12:00:00Z", "readings": [{
            "connection": "claude-err", "checked_at": "2026-11-29T11:59:50Z",
            "windows": [{"name": "5h", "remaining_percent": 60,
                         "reset_at": "2026-11-29T15:00:00Z"}]}]}), encoding="utf-8")
    # now is the snapshot's taken_at (R14), for every command alike
    return ["--connections", str(tmp_path / "connections.toml"), "--quota",
            str(tmp_path / "quota.json")]


def test_why_who_and_simulate_agree_with_plan_on_a_doubtful_status(tmp_path: Path) -> None:
    """One model, many schedules: every view reads the same decision."""
    args = _doubt_files(tmp_path)

    def run_json(*command: str) -> Any:
        result = runner.invoke(app, [*command, *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    subscription = run_json("plan", "auto/subscription")
    assert [x["reason"] for x in subscription["excluded"]] == ["connection-status-unknown"]
    thrifty = run_json("plan", "auto/thrifty")
    assert thrifty["pool"][0]["unverified"][0]["reason"] == "connection-status-unknown"

    why = runner.invoke(app, ["why", "claude-err", *args])
    assert why.exit_code == 0, why.output
    assert "gates (R5): pass; connection-status-unknown — connection status error" in \
        " ".join(why.stdout.split())
    who = run_json("who", "claude/claude-sonnet-4-5")
    states = {entry["auto_id"]: entry["connections"][0] for entry in who["auto_ids"]}
    assert (states["auto/subscription"]["state"], states["auto/subscription"]["reason"]) == (
        "out", "connection-status-unknown")
    assert states["auto/thrifty"]["unverified"]["reason"] == "connection-status-unknown"
    for auto_id, unverified in (("auto/thrifty", ["claude-err"]), ("auto/subscription", [])):
        series = run_json("simulate", auto_id, "--from", "2026-11-29T12:00:00Z",
                          "--to", "2026-11-29T12:10:00Z")
        assert {tuple(step["unverified_connection_ids"]) for step in series["steps"]} == {
            tuple(unverified)}
