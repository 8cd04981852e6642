"""A connection's state known only from the instant it was observed (SPEC §7.2 v1.4).

``active``, ``status`` and ``rate_limited_until`` as a connections file holds them are the
state at one instant, ``state_as_of`` (an importer's snapshot instant): before it the
connection counts as active with no status, cooling only from ``rate_limited_since``. The
OmniRoute database is built as tests/omniroute_db.py builds the others, its
``provider_connections`` with OmniRoute's ``last_error_at`` column (``TEXT``, in
``src/lib/db/migrations/001_initial_schema.sql`` of diegosouzapw/OmniRoute, commit
39bbc410069fb46c2ed7b0f28e6e997945422485; written as ``new Date().toISOString()``), and
``call_logs`` as tests/test_omniroute_traffic.py creates it.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.changes import connection_changes
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.stepping import Stepper
from tests.omniroute_db import CONNECTIONS_DDL, build_db
from tests.strategies import SHIPPED, input_sets
from tests.test_omniroute_traffic import CALL_LOGS_DDL, CORRELATION_DDL

runner = CliRunner()

WITH_LAST_ERROR_AT = CONNECTIONS_DDL.replace("rate_limited_until TEXT,",
                                             "rate_limited_until TEXT, last_error_at TEXT,")
IMPORTED_AT = "2026-11-29T14:05:00Z"
FAILED_AT = "2026-11-29T13:59:00.000Z"
COOLING: tuple[Any, ...] = ("conn-claude-work", "claude", "oauth", "claude-work", None, 1,
                            "unavailable", "2026-11-29T14:30:00.000Z", None, 1)


def _served(minute: int) -> dict[str, Any]:
    return {"id": f"r{minute}", "timestamp": f"2026-11-29T{minute // 60:02d}:"
            f"{minute % 60:02d}:00.000Z", "status": 200, "model": "claude/claude-sonnet-4-5",
            "provider": "claude", "connection_id": "conn-claude-work", "tokens_in": 10,
            "tokens_out": 5, "combo_name": "omniladder-thrifty",
            "correlation_id": f"req-{minute}"}


def _database(path: Path, last_error_at: str | None) -> Path:
    build_db(path, connections=[COOLING], snapshots=(), connections_ddl=WITH_LAST_ERROR_AT)
    db = sqlite3.connect(path)
    try:
        db.execute("UPDATE provider_connections SET last_error_at = ?", (last_error_at,))
        db.executescript(CALL_LOGS_DDL)
        db.executescript(CORRELATION_DDL)
        # healthy requests every minute from 13:55 to 14:04, the cooldown from 13:59
        for minute in range(13 * 60 + 55, 14 * 60 + 5):
            row = _served(minute)
            db.execute(f"INSERT INTO call_logs ({', '.join(row)}) VALUES "
                       f"({', '.join('?' for _ in row)})", tuple(row.values()))
        db.commit()
    finally:
        db.close()
    return path


def _imported(tmp_path: Path, last_error_at: str | None) -> Path:
    out = tmp_path / "fleet"
    result = runner.invoke(app, ["import", "omniroute",
                                 str(_database(tmp_path / "storage.sqlite", last_error_at)),
                                 "--out", str(out), "--now", IMPORTED_AT])
    assert result.exit_code == 0, result.output
    return out


def _counts(out: Path, start: str, end: str) -> dict[str, int]:
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config",
                                 str(out / "omniladder.toml"), "--from", start, "--to", end,
                                 "--json"])
    assert result.exit_code in (0, 1), result.output
    counts: dict[str, int] = json.loads(result.stdout)["counts"]
    return {finding: count for finding, count in counts.items() if count}


def test_a_cooldown_imported_at_1405_holds_from_its_recorded_start_only(
        tmp_path: Path) -> None:
    out = _imported(tmp_path, FAILED_AT)
    table = (out / "connections.toml").read_text()
    assert 'rate_limited_since = "2026-11-29T13:59:00Z"' in table
    assert f'state_as_of = "{IMPORTED_AT}"' in table
    assert _counts(out, "2026-11-29T13:55:00Z", "2026-11-29T13:58:59Z") == {"on-plan": 4}
    assert _counts(out, "2026-11-29T13:59:00Z", "2026-11-29T14:04:00Z") == {
        "served-excluded": 6}


def test_without_a_recorded_start_the_cooldown_holds_from_the_import_only(
        tmp_path: Path) -> None:
    out = _imported(tmp_path, None)
    assert "rate_limited_since" not in (out / "connections.toml").read_text()
    assert _counts(out, "2026-11-29T13:55:00Z", "2026-11-29T14:04:00Z") == {"on-plan": 10}


def test_a_failure_after_the_snapshot_is_not_the_cooldowns_start(tmp_path: Path) -> None:
    out = _imported(tmp_path, "2026-11-29T14:10:00.000Z")
    assert "rate_limited_since" not in (out / "connections.toml").read_text()


# --- a hand-written connections file: plan --now before and after state_as_of ------------

FLEET_TOML = """\
[[connections]]
id = "max-work"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5"]
{state}
state_as_of = "2026-11-29T12:00:00Z"
"""
QUOTA = json.dumps({"readings": [
    {"connection": "max-work", "checked_at": f"2026-11-29T{at}:00Z", "remaining_percent": 60,
     "reset_at": "2026-11-29T15:00:00Z"} for at in ("09:59", "10:59", "11:59", "12:29", "12:59")]})
"""A fresh reading at every instant the tests plan for."""


def _plan(tmp_path: Path, state: str, now: str) -> dict[str, Any]:
    (tmp_path / "connections.toml").write_text(FLEET_TOML.format(state=state))
    (tmp_path / "quota.json").write_text(QUOTA)
    result = runner.invoke(app, ["plan", "auto/subscription", "--connections",
                                 str(tmp_path / "connections.toml"), "--quota",
                                 str(tmp_path / "quota.json"), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _served_or_why(document: dict[str, Any]) -> str:
    if document["pool"]:
        return "served"
    reasons = {str(x["reason"]) for x in document["excluded"]}
    assert len(reasons) == 1, reasons
    return reasons.pop()


def test_a_switched_off_connection_is_off_only_from_when_it_was_observed(
        tmp_path: Path) -> None:
    before = _plan(tmp_path, "active = false", "2026-11-29T10:00:00Z")
    after = _plan(tmp_path, "active = false", "2026-11-29T12:30:00Z")
    assert (_served_or_why(before), _served_or_why(after)) == ("served", "inactive")


def test_a_terminal_status_holds_only_from_when_it_was_observed(tmp_path: Path) -> None:
    before = _plan(tmp_path, 'status = "expired"', "2026-11-29T10:00:00Z")
    at_the_instant = _plan(tmp_path, 'status = "expired"', "2026-11-29T12:00:00Z")
    assert (_served_or_why(before), _served_or_why(at_the_instant)) == (
        "served", "terminal-status")


def test_a_cooldown_before_its_recorded_start_is_not_in_force(tmp_path: Path) -> None:
    cooling = ('rate_limited_until = "2026-11-29T13:00:00Z"\n'
               'rate_limited_since = "2026-11-29T11:00:00Z"')
    found = [_served_or_why(_plan(tmp_path, cooling, now)) for now in (
        "2026-11-29T10:00:00Z", "2026-11-29T11:00:00Z", "2026-11-29T12:30:00Z",
        "2026-11-29T13:00:00Z")]
    assert found == ["served", "cooldown", "cooldown", "served"]


def test_why_says_the_state_was_observed_only_from_its_instant(tmp_path: Path) -> None:
    (tmp_path / "connections.toml").write_text(FLEET_TOML.format(state="active = false"))
    (tmp_path / "quota.json").write_text(QUOTA)
    files = ["--connections", str(tmp_path / "connections.toml"), "--quota",
             str(tmp_path / "quota.json")]
    before = runner.invoke(app, ["why", "max-work", *files, "--now", "2026-11-29T10:00:00Z"])
    after = runner.invoke(app, ["why", "max-work", *files, "--now", "2026-11-29T12:30:00Z"])
    assert before.exit_code == 0, before.output
    line = "state observed only from 2026-11-29T12:00:00Z (state_as_of)"
    assert line in " ".join(before.stdout.split())
    assert line not in " ".join(after.stdout.split())
    document = json.loads(runner.invoke(
        app, ["why", "max-work", *files, "--now", "2026-11-29T10:00:00Z", "--json"]).stdout)
    assert document["gates"]["active"] is True
    assert document["gates"]["state_observed"] is False
    assert document["gates"]["state_as_of"] == "2026-11-29T12:00:00Z"


def test_rate_limited_since_needs_a_cooldown_that_ends_after_it(tmp_path: Path) -> None:
    for state, problem in (
            ('rate_limited_since = "2026-11-29T11:00:00Z"', "needs rate_limited_until"),
            ('rate_limited_until = "2026-11-29T11:00:00Z"\n'
             'rate_limited_since = "2026-11-29T11:00:00Z"', "must be before")):
        (tmp_path / "connections.toml").write_text(FLEET_TOML.format(state=state))
        (tmp_path / "quota.json").write_text(QUOTA)
        result = runner.invoke(app, ["plan", "auto/subscription", "--connections",
                                     str(tmp_path / "connections.toml"), "--quota",
                                     str(tmp_path / "quota.json")])
        assert result.exit_code == 2
        message = result.stderr.strip()
        assert "\n" not in message
        assert "Traceback" not in message
        assert "connections.toml" in message
        assert "rate_limited_since" in message
        assert problem in message


# --- the stepping engine against make_plan at every change instant -----------------------

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)
STATEFUL = input_sets(anchor=T0, catalog=SHIPPED, connections=(1, 5), readings=(0, 3),
                      readings_between=(-200, 100), resets_between=(-180, 180),
                      spend_between=(-600, 180))


def _decisions(decided: Any) -> list[tuple[Any, ...]]:
    # a detail may read the age of a reading (an admitted pair's) or an instant relative to
    # now: the decision is the rest
    return sorted((d.connection_id, d.model, d.rung, d.admitted, d.unverified, d.reason,
                   bool(d.doubt)) for d in decided)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(STATEFUL, st.sampled_from(["auto/thrifty", "auto/subscription"]))
def test_the_stepper_equals_make_plan_at_every_change_instant(inputs: LoadedInputs,
                                                             auto_id: str) -> None:
    """At each instant any connection's decisions can change (its state observed, its
    cooldown's recorded start and end among them) and the microsecond before each, the
    stepper's decisions and pool are make_plan's."""
    ladder = inputs.settings.ladder
    found = {T0 - timedelta(hours=4)}
    for connection in inputs.connections:
        for change in connection_changes(inputs.readings.get(connection.id, ()), connection,
                                         ladder.max_reading_age_seconds,
                                         ladder.exit_cutoff_percent):
            at = change.at + timedelta(microseconds=1) if change.exclusive else change.at
            found.update((at, at - timedelta(microseconds=1)))
    instants = sorted(at for at in found if T0 - timedelta(hours=4) <= at
                      <= T0 + timedelta(hours=4))
    parsed = parse_auto_id(auto_id)
    stepper = Stepper(inputs, parsed, instants)
    for state in stepper.steps():
        plan = make_plan(inputs, parsed, state.at, "flag")
        assert _decisions(d for pairs in stepper.decided for d in pairs) == _decisions(
            plan.decisions), state.at
        assert state.head == (plan.pool[0].rung if plan.pool else None)
        assert state.pool_size == len(plan.pool)
        assert state.eligible == plan.eligible_connection_ids


def test_the_generated_fleets_carry_the_observed_state() -> None:
    """The strategy draws what the property above is about (not a vacuous pass)."""
    seen: set[str] = set()

    @settings(max_examples=60, deadline=None)
    @given(STATEFUL)
    def look(inputs: LoadedInputs) -> None:
        for connection in inputs.connections:
            if connection.state_as_of is not None:
                seen.add("state_as_of")
            if connection.rate_limited_since is not None:
                seen.add("rate_limited_since")

    look()
    assert seen == {"state_as_of", "rate_limited_since"}
