"""Regression tests for the CLI's promises at the edges: exit-1 reasons, writes,
instants, validation listings, the honest now and the smaller messages."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
SAVED = str(EXAMPLES / "ci" / "plan-thrifty.json")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    for item in EXAMPLES.iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path / item.name)
    return tmp_path


@pytest.mark.parametrize(("args", "says"), [
    (["plan", "auto/subscription", "--config", CONFIG, "--no-shipped-catalogs",
      "--fail-on-empty", "--json"], "the pool of auto/subscription is empty (--fail-on-empty)"),
    (["plan", "auto/subscription", "--config", CONFIG, "--no-shipped-catalogs",
      "--fail-on-empty", "--compare", SAVED], "the plan differs from"),
    (["plan", "auto/thrifty", "--config", CONFIG, "--compare", SAVED, "--now",
      "2026-11-29T18:00:00Z"], "the plan differs from"),
], ids=["fail-on-empty-json", "compare-and-empty", "compare"])
def test_every_exit_1_says_why_in_one_line(args: list[str], says: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if "exit 1" in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("omniladder: exit 1: ")
    assert says in lines[0]


def test_a_failed_check_and_a_changed_diff_say_why(scratch: Path) -> None:
    saved = scratch / "a.json"
    runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--out", str(saved)])
    other = scratch / "b.json"
    runner.invoke(app, ["plan", "auto/subscription", "--config", CONFIG, "--out", str(other)])
    result = runner.invoke(app, ["diff", str(saved), str(other)])
    assert result.exit_code == 1
    assert result.stderr.startswith("omniladder: exit 1: the plans route differently (")
    policy = scratch / "policy.toml"
    policy.write_text('config = "omniladder.toml"\n[[expect]]\nname = "never"\n'
                      'auto_id = "auto/thrifty"\nmust_include = ["devin-team"]\n',
                      encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy)])
    assert result.exit_code == 1, result.output
    assert "omniladder: exit 1: 1 of 1 expectation failed: never" in result.stderr


def test_writes_go_through_a_symlink_and_keep_the_mode(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    for option, args in (("--out", ["plan", "auto/thrifty", "--config", CONFIG]),
                         ("--junit", ["check", str(EXAMPLES / "policy.toml")])):
        result = runner.invoke(app, [*args, option, str(link)])
        assert result.exit_code == 0, result.output
        assert link.is_symlink()
        assert real.read_text(encoding="utf-8") != "old"
        assert stat.S_IMODE(real.stat().st_mode) == 0o640
        real.write_text("old", encoding="utf-8")


def test_new_files_respect_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        result = runner.invoke(app, ["init", str(tmp_path / "start")])
        assert result.exit_code == 0, result.output
        out = tmp_path / "plan.json"
        assert runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--out",
                                   str(out)]).exit_code == 0
    finally:
        os.umask(old)
    for path in (tmp_path / "start" / "omniladder.toml", tmp_path / "start" /
                 "connections.toml", out):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_lower_case_rfc3339_is_accepted_everywhere(scratch: Path) -> None:
    quota = scratch / "quota.json"
    quota.write_text(quota.read_text(encoding="utf-8").replace(
        '"taken_at": "2026-11-29T12:00:00Z"', '"taken_at": "2026-11-29t12:00:00z"'),
        encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(scratch / "omniladder.toml"), "--now",
                                 "2026-11-29t12:00:00z", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["now"] == "2026-11-29T12:00:00Z"


def test_every_validation_problem_is_listed_with_a_suggestion(scratch: Path) -> None:
    connections = scratch / "connections.toml"
    text = connections.read_text(encoding="utf-8")
    connections.write_text(text.replace('auth_type = "oauth"', 'auth_typ = "oauth"', 1)
                           .replace("active = false", 'active = "no"'), encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(scratch / "omniladder.toml")])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 3, result.stderr
    assert all(line.startswith(f"omniladder: error: {connections}:") for line in lines)
    assert "unknown key 'auth_typ'; did you mean 'auth_type'?" in result.stderr
    assert "connections[0].auth_type: required field is missing" in result.stderr


def test_validation_problems_are_bounded(scratch: Path) -> None:
    connections = scratch / "connections.toml"
    connections.write_text(connections.read_text(encoding="utf-8").replace(
        "provider = ", "provder = "), encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(scratch / "omniladder.toml")])
    lines = result.stderr.splitlines()
    assert len(lines) == 21
    assert lines[-1].endswith("more problems")


def test_arrays_are_called_arrays(scratch: Path) -> None:
    connections = scratch / "connections.toml"
    connections.write_text(connections.read_text(encoding="utf-8").replace(
        'models = ["claude-sonnet-4-5", "claude-opus-4-1"]', 'models = 3', 1),
        encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(scratch / "omniladder.toml")])
    assert result.exit_code == 2
    assert "array" in result.stderr
    assert "tuple" not in result.stderr


def test_spend_events_of_a_removed_connection_warn_once(scratch: Path) -> None:
    events = [{"at": "2026-11-29T09:00:00Z", "connection": "gone", "model": "m",
               "cost_usd": 0.01}] * 500
    (scratch / "spend.json").write_text(json.dumps({"events": events}), encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(scratch / "omniladder.toml"), "--json"])
    warnings = [w for w in json.loads(result.stdout)["warnings"] if "'gone'" in w]
    assert len(warnings) == 1
    assert warnings[0].startswith("500 spend events")


def test_an_old_snapshot_warns_and_now_now_plans_at_the_clock() -> None:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--json"])
    document = json.loads(result.stdout)
    assert document["now_source"] == "snapshot"
    assert any("behind the clock" in w for w in document["warnings"])
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--json",
                                 "--now", "now"])
    document = json.loads(result.stdout)
    assert document["now_source"] == "clock"
    assert not any("behind the clock" in w for w in document["warnings"])
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--now",
                                 "2026-11-29T12:00:00Z", "--json"])
    assert not any("behind the clock" in w for w in json.loads(result.stdout)["warnings"])


def test_readings_all_after_now_say_so() -> None:
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", CONFIG, "--json",
                                 "--now", "2020-01-01T00:00:00Z"])
    missing = [x for x in json.loads(result.stdout)["excluded"]
               if x["reason"] == "quota-missing"]
    assert missing
    assert any("lie after it" in x["detail"] for x in missing)


def test_the_rung_note_counts_connections_like_the_verdict() -> None:
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", CONFIG, "--json",
                                 "--now", "2026-11-29T12:00:00Z"])
    document = json.loads(result.stdout)
    for rung in document["rungs"]:
        if rung["state"] == "exhausted":
            total = int(rung["note"].split(" ")[0])
            listed = rung["note"].split(": ", 1)[1]
            assert sum(int(part.split(" ")[0]) for part in listed.split(", ")) == total


# --- an instant option given empty, and `now` wherever an instant is asked for --------------

EMPTY = "empty: give an RFC 3339 timestamp such as 2026-11-29T12:00:00Z, or 'now' for the " \
    "current time"


@pytest.mark.parametrize(("args", "option"), [
    (["plan", "auto/thrifty", "--config", CONFIG, "--now", ""], "--now"),
    (["why", "codex-team", "--config", CONFIG, "--now", "  "], "--now"),
    (["forecast", "auto/thrifty", "--config", CONFIG, "--now", ""], "--now"),
    (["simulate", "auto/thrifty", "--config", CONFIG, "--from", "", "--to", "now"], "--from"),
    (["simulate", "auto/thrifty", "--config", CONFIG, "--from", "now", "--to", ""], "--to"),
])
def test_an_empty_instant_is_an_error_not_the_default(args: list[str], option: str) -> None:
    """`--now "$WHEN"` with WHEN unset must not quietly plan for the snapshot's instant."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"omniladder: error: {option}: {EMPTY}" in result.stderr
    assert "Traceback" not in result.output


def test_a_snapshot_import_refuses_an_empty_at(tmp_path: Path) -> None:
    quota = tmp_path / "quota.json"
    result = runner.invoke(app, [
        "import", "claude-usage",
        str(EXAMPLES.parent / "tests/fixtures/sources/claude/usage.json"),
        "--connection", "claude-max-work", "--connections", str(EXAMPLES / "connections.toml"),
        "--quota", str(quota), "--at", ""])
    assert result.exit_code == 2, result.output
    assert f"--at: {EMPTY}" in result.stderr
    assert not quota.exists()


def test_import_omniroute_refuses_an_empty_now(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "omniroute", str(tmp_path / "db.sqlite"),
                                 "--out", str(tmp_path / "out"), "--now", ""])
    assert result.exit_code == 2, result.output
    assert f"--now: {EMPTY}" in result.stderr
    assert not (tmp_path / "out").exists()


def test_simulate_runs_from_now() -> None:
    """`--from now` is the clock, to the second, as `--now now` is for a plan."""
    result = runner.invoke(app, ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                                 "now", "--to", "2031-01-01T00:00:00Z", "--step", "1000h",
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    first = document["from"]
    assert first.endswith("Z")
    assert "." not in first
    assert first > "2026-12-01T00:00:00Z"
    assert document["steps"][0]["at"] == first
