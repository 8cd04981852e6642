"""`omniladder import omniroute`: a real SQLite database in, loadable input files out."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError, UsageError
from omniladder.inputs.input_set import load_inputs
from omniladder.sources.omniroute.connections import map_status
from omniladder.sources.omniroute.database import SECRET_COLUMNS, db_instant, open_readonly
from omniladder.sources.omniroute.options import parse_since
from omniladder.sources.omniroute.snapshots import _Row, group_readings
from tests.depth import deep
from tests.omniroute_db import CANARIES, CONNECTIONS_DDL, SNAPSHOTS_DDL, build_db

runner = CliRunner()
NOW = "2026-11-29T12:00:00Z"
NOW_DT = datetime(2026, 11, 29, 12, tzinfo=UTC)


def _import(db: Path, out: Path, *extra: str) -> Any:
    return runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out), "--now", NOW,
                               *extra])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_db(tmp_path / "omniroute.db")


@pytest.fixture
def imported(db: Path, tmp_path: Path) -> Path:
    out = tmp_path / "fleet"
    result = _import(db, out)
    assert result.exit_code == 0, result.output
    return out


def _connections(out: Path) -> dict[str, dict[str, Any]]:
    data = tomllib.loads((out / "connections.toml").read_text())
    return {c["id"]: c for c in data["connections"]}


def _readings(out: Path, cid: str) -> list[dict[str, Any]]:
    data = json.loads((out / "quota.json").read_text())
    return [r for r in data["readings"] if r["connection"] == cid]


# --- the import end to end -----------------------------------------------------------------


def test_writes_the_three_files_and_names_them_on_stdout(imported: Path) -> None:
    assert sorted(p.name for p in imported.iterdir()) == [
        "connections.toml", "omniladder.toml", "quota.json"]
    settings_doc = tomllib.loads((imported / "omniladder.toml").read_text())
    assert settings_doc["inputs"] == {"connections": "connections.toml", "quota": "quota.json"}


def test_output_loads_cleanly_with_the_project_loaders(imported: Path) -> None:
    inputs = load_inputs(imported / "omniladder.toml")
    assert len(inputs.connections) == 8
    assert inputs.quota is not None
    assert inputs.quota.taken_at == NOW_DT
    assert not [w for w in inputs.warnings if "ignored" in w]


def test_connection_mapping(imported: Path) -> None:
    conns = _connections(imported)
    work = conns["conn-claude-work"]
    assert work["label"] == "Max plan, work"          # display_name first
    assert work["status"] == "ok"                      # "active" reads as ok
    assert work["models"] == ["claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-4-5",
                              "claude-haiku-4-5"]      # from the model catalog
    assert conns["conn-claude-home"]["label"] == "claude-home"   # blank display_name → name
    assert conns["conn-codex-banned"]["status"] == "banned"      # terminal kept (R5)
    assert conns["conn-codex-cool"]["rate_limited_until"] == "2026-11-29T14:00:00Z"  # UTC
    assert "status" not in conns["conn-openai"]                  # "testing": no status
    assert conns["conn-mystery"]["models"] == ["mystery-1"]      # default_model fallback
    assert "models" not in conns["conn-nomodel"]
    assert conns["conn-off"]["active"] is False


def test_connections_ordered_by_priority_then_id(imported: Path) -> None:
    assert list(_connections(imported)) == [
        "conn-claude-work", "conn-claude-home", "conn-codex-cool", "conn-mystery",
        "conn-codex-banned", "conn-nomodel", "conn-off", "conn-openai"]


def test_rows_within_the_tolerance_form_one_reading_carrying_every_window(
        imported: Path) -> None:
    work = _readings(imported, "conn-claude-work")
    assert [r["checked_at"] for r in work] == [
        "2026-11-19T10:00:00Z", "2026-11-29T11:00:01Z", "2026-11-29T11:59:30Z"]
    assert work[1]["windows"] == [
        {"name": "5h", "remaining_percent": 50, "reset_at": "2026-11-29T15:00:00Z"},
        {"name": "weekly", "remaining_percent": 80, "reset_at": "2026-12-02T00:00:00Z"}]
    # the weekly window did not change at 11:59:30; the reading still carries it
    assert {w["name"]: w["remaining_percent"] for w in work[2]["windows"]} == {
        "5h": 40, "weekly": 80}


def test_exhausted_flag_is_zero_and_null_value_is_unknown(imported: Path) -> None:
    home = _readings(imported, "conn-claude-home")
    assert home[0]["windows"][0]["remaining_percent"] == 0      # is_exhausted=1, stored 12.5
    openai = _readings(imported, "conn-openai")
    assert openai == [{"connection": "conn-openai", "checked_at": "2026-11-29T11:59:00Z",
                       "status": "unknown"}]                   # epoch ms, null value


def test_since_keeps_the_reading_in_force_and_drops_older(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "recent"
    result = _import(db, out, "--since", "30m")
    assert result.exit_code == 0, result.output
    work = _readings(out, "conn-claude-work")
    assert [r["checked_at"] for r in work] == ["2026-11-29T11:00:01Z", "2026-11-29T11:59:30Z"]
    everything = tmp_path / "all"
    assert _import(db, everything, "--since", "all").exit_code == 0
    assert len(_readings(everything, "conn-claude-work")) == 3


def test_the_plan_it_feeds(imported: Path) -> None:
    """R5, R6, R10: the imported fleet plans as the database says."""
    config = str(imported / "omniladder.toml")
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", config, "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["now"] == NOW
    assert plan["now_source"] == "snapshot"
    assert {tuple(e["allowed_connection_ids"]) for e in plan["pool"]} == {("conn-claude-work",)}
    reasons = {x["connection_id"]: x["reason"] for x in plan["excluded"]}
    assert reasons == {
        "conn-claude-home": "quota-below-cutoff", "conn-codex-cool": "cooldown",
        "conn-codex-banned": "terminal-status", "conn-off": "inactive",
        "conn-mystery": "billing-uncurated", "conn-openai": "billing-uncurated",
        "conn-nomodel": "no-models"}
    thrifty = runner.invoke(app, ["plan", "auto/thrifty", "--config", config, "--json"])
    assert thrifty.exit_code == 0, thrifty.output
    escalating = json.loads(thrifty.stdout)
    by_rung: dict[str, set[str]] = {}
    for entry in escalating["pool"]:
        by_rung.setdefault(entry["rung"], set()).update(entry["allowed_connection_ids"])
    # R11: the plan first, then the uncurated and metered keys on their paid rungs
    assert escalating["pool"][0]["rung"] == "subscription"
    assert by_rung == {"subscription": {"conn-claude-work"}, "cheap": {"conn-openai"},
                       "premium": {"conn-mystery", "conn-openai"}}
    assert {x["connection_id"]: x["reason"] for x in escalating["excluded"]} == {
        "conn-claude-home": "quota-below-cutoff", "conn-codex-cool": "cooldown",
        "conn-codex-banned": "terminal-status", "conn-off": "inactive",
        "conn-nomodel": "no-models"}


def test_no_canary_anywhere(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    result = _import(db, out)
    assert result.exit_code == 0, result.output
    texts = [result.output] + [p.read_text() for p in out.iterdir()]
    for canary in CANARIES:
        for text in texts:
            assert canary not in text
    for column in SECRET_COLUMNS:
        assert not any(column in p.read_text() for p in out.iterdir())


def test_the_database_is_untouched(db: Path, tmp_path: Path) -> None:
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert _import(db, tmp_path / "fleet").exit_code == 0
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["fleet", "omniroute.db"]


def test_secret_columns_cannot_be_read_through_the_importer_connection(db: Path) -> None:
    connection = open_readonly(db, "db")
    try:
        for column in SECRET_COLUMNS | {"provider_specific_data"}:
            with pytest.raises(sqlite3.DatabaseError, match="prohibited"):
                connection.execute(f"SELECT {column} FROM provider_connections").fetchall()
        with pytest.raises(sqlite3.DatabaseError):
            connection.execute("SELECT * FROM provider_connections").fetchall()
    finally:
        connection.close()


def test_read_only_connection_refuses_writes(db: Path) -> None:
    connection = open_readonly(db, "db")
    try:
        with pytest.raises(sqlite3.DatabaseError):
            connection.execute("DELETE FROM quota_snapshots")
    finally:
        connection.close()


# --- refusals ------------------------------------------------------------------------------


def test_never_overwrites_without_force(imported: Path, db: Path) -> None:
    (imported / "quota.json").write_text("mine")
    result = _import(db, imported)
    assert result.exit_code == 2, result.output
    assert "connections.toml: already exists; pass --force" in result.output
    assert (imported / "quota.json").read_text() == "mine"
    forced = _import(db, imported, "--force")
    assert forced.exit_code == 0, forced.output
    assert (imported / "quota.json").read_text() != "mine"
    assert not [p for p in imported.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(("ddl", "snapshots", "named"), [
    (CONNECTIONS_DDL, None, "table 'quota_snapshots' is missing"),
    (CONNECTIONS_DDL.replace("test_status TEXT,", ""), SNAPSHOTS_DDL,
     "table 'provider_connections' has no column 'test_status'"),
    (CONNECTIONS_DDL, SNAPSHOTS_DDL.replace("is_exhausted INTEGER DEFAULT 0,", ""),
     "table 'quota_snapshots' has no column 'is_exhausted'"),
], ids=["missing-table", "missing-connection-column", "missing-snapshot-column"])
def test_missing_table_or_column_is_exit_2_naming_it(tmp_path: Path, ddl: str,
                                                     snapshots: str | None, named: str) -> None:
    db = build_db(tmp_path / "old.db", connections_ddl=ddl, snapshots_ddl=snapshots,
                  snapshots=())
    result = _import(db, tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("content", "message"), [
    (None, "file not found"),
    (b"not a database at all, just some text that is long enough" * 20, "database"),
], ids=["missing", "not-sqlite"])
def test_unreadable_database_is_exit_2(tmp_path: Path, content: bytes | None,
                                       message: str) -> None:
    path = tmp_path / "x.db"
    if content is not None:
        path.write_bytes(content)
    result = _import(path, tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_timestamp_in_the_database_names_the_row(tmp_path: Path) -> None:
    db = build_db(tmp_path / "bad.db", connections=(
        ("c1", "claude", "oauth", "n", None, 1, None, "next tuesday", None, 1),), snapshots=())
    result = _import(db, tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "provider_connections[id=c1].rate_limited_until" in result.output


# --- pure mapping --------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ("banned", ("banned", None)), ("credits_exhausted", ("credits_exhausted", None)),
    ("Expired", ("expired", None)), ("active", ("ok", None)), ("success", ("ok", None)),
    ("unknown", ("unknown", None)), ("error", ("error", None)), (None, (None, None)),
    ("unavailable", ("error", None)),
    ("testing", (None, "testing")), ("  ", (None, None)),
], ids=lambda v: str(v))
def test_status_mapping_keeps_terminal_values(raw: str | None,
                                              expected: tuple[str | None, str | None]) -> None:
    """R5: terminal statuses survive the import; others map to the enum or to none."""
    assert map_status(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("2026-11-29 12:00:00", NOW_DT), ("2026-11-29T12:00:00Z", NOW_DT),
    ("2026-11-29T13:00:00+01:00", NOW_DT), (1795953600, NOW_DT), (1795953600000, NOW_DT),
    ("1795953600000", NOW_DT), (None, None), ("", None),
])
def test_db_instant(raw: Any, expected: datetime | None) -> None:
    assert db_instant(raw, "f", "db") == expected


def test_db_instant_rejects_garbage() -> None:
    with pytest.raises(InputError, match="not an ISO 8601 timestamp"):
        db_instant("soon", "t.c", "db")


@pytest.mark.parametrize(("text", "expected"), [
    ("all", None), ("90m", NOW_DT - timedelta(minutes=90)), ("7d", NOW_DT - timedelta(days=7)),
    ("2w", NOW_DT - timedelta(weeks=2)), ("2026-11-01T00:00:00Z", datetime(2026, 11, 1,
                                                                           tzinfo=UTC)),
])
def test_parse_since(text: str, expected: datetime | None) -> None:
    assert parse_since(text, NOW_DT) == expected


@pytest.mark.parametrize("text", ["yesterday", "7", "2026-11-01T00:00:00", "-3d"])
def test_parse_since_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_since(text, NOW_DT)


_rows = st.lists(
    st.tuples(st.integers(0, 600), st.sampled_from(["5h", "weekly", "opus"]),
              st.one_of(st.none(), st.floats(0, 100))),
    max_size=30)


@deep(150, deadline=None)
def test_grouping_invariants(examples: settings) -> None:
    """Every reading holds each window's latest value at its instant; instants increase;
    a group never spans more than the tolerance."""
    @examples
    @given(_rows, st.integers(0, 5))
    def holds(rows: list[tuple[int, str, float | None]], tolerance: int) -> None:
        parsed = [_Row(NOW_DT + timedelta(seconds=s), w, v, None) for s, w, v in rows]
        grouped = group_readings(parsed, timedelta(seconds=tolerance))
        instants = [at for at, _ in grouped]
        assert instants == sorted(set(instants))
        assert len(grouped) <= len(parsed)
        for at, state in grouped:
            for name, row in state.items():
                earlier = [r for r in parsed if r.window == name and r.at <= at]
                assert row.at == max(r.at for r in earlier)
            assert set(state) == {r.window for r in parsed if r.at <= at}
        if parsed:
            assert instants[-1] == max(r.at for r in parsed)

    holds()


def test_unavailable_with_a_cooldown_end_is_no_status() -> None:
    """OmniRoute's unavailable is a cooldown (docs/sources.md#omniroute): R5's cooldown gate
    decides."""
    assert map_status("unavailable", cooldown=True) == (None, None)


# --- boundaries the importer must keep ------------------------------------------------------

ONE = (("conn-a", "claude", "oauth", "a", None, 1, "active", None, None, 1),)


def test_the_database_is_opened_read_only_at_the_file_level(db: Path) -> None:
    """docs/sources.md's promise holds without the column authorizer: with it removed, a write
    through the connection the importer opens is refused by SQLite itself (mode=ro)."""
    connection = open_readonly(db, "omniroute.db")
    try:
        connection.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("DELETE FROM quota_snapshots")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("CREATE TABLE planted (x)")
    finally:
        connection.close()
    assert sqlite3.connect(db).execute("SELECT count(*) FROM quota_snapshots").fetchone()[0] > 0


@pytest.mark.parametrize(("created", "kept"), [
    ("2026-11-29T11:00:00.000Z", True),      # exactly at --since
    ("2026-11-29T10:59:59.999Z", False),     # a millisecond before
])
def test_a_reading_stamped_exactly_at_since_is_kept(tmp_path: Path, created: str,
                                                    kept: bool) -> None:
    snapshots = (
        ("conn-a", "session (5h)", 70, 0, "2026-11-29T15:00:00Z", "2026-11-29T09:00:00.000Z"),
        ("conn-a", "session (5h)", 60, 0, "2026-11-29T15:00:00Z", created),
        ("conn-a", "session (5h)", 50, 0, "2026-11-29T15:00:00Z", "2026-11-29T11:30:00.000Z"),
    )
    db = build_db(tmp_path / "o.db", connections=ONE, snapshots=snapshots)
    out = tmp_path / "out"
    result = _import(db, out, "--since", "2026-11-29T11:00:00Z")
    assert result.exit_code == 0, result.output
    stamps = [r["checked_at"] for r in _readings(out, "conn-a")]
    if kept:  # the row at since is read as such; the one before stays as history
        assert stamps == ["2026-11-29T09:00:00Z", "2026-11-29T11:00:00Z",
                          "2026-11-29T11:30:00Z"]
    else:  # a millisecond before: it is the value in force at since, the 09:00 row is not
        assert stamps == ["2026-11-29T10:59:59.999000Z", "2026-11-29T11:30:00Z"]


@pytest.mark.parametrize(("created", "kept"), [
    ("2026-11-29T12:00:00.000Z", True),   # exactly the import instant
    ("2026-11-29T12:00:00.001Z", False),  # after it: skipped and counted
])
def test_a_row_created_exactly_at_the_import_instant_is_kept(tmp_path: Path, created: str,
                                                             kept: bool) -> None:
    snapshots = (
        ("conn-a", "session (5h)", 70, 0, "2026-11-29T15:00:00Z", "2026-11-29T11:00:00.000Z"),
        ("conn-a", "session (5h)", 40, 0, "2026-11-29T15:00:00Z", created),
    )
    db = build_db(tmp_path / "o.db", connections=ONE, snapshots=snapshots)
    out = tmp_path / "out"
    result = _import(db, out, "--since", "all")
    assert result.exit_code == 0, result.output
    latest = _readings(out, "conn-a")[-1]
    assert (latest["checked_at"] == "2026-11-29T12:00:00Z") is kept
    assert (latest["windows"][0]["remaining_percent"] == 40) is kept
    assert ("dated after the import instant" in result.output) is not kept


@pytest.mark.parametrize(("stored", "written"), [(130, 100), (100.0, 100), (-5, 0),
                                                 (99.5, 99.5)])
def test_stored_percentages_are_clamped_to_0_100(tmp_path: Path, stored: float,
                                                 written: float) -> None:
    snapshots = (("conn-a", "session (5h)", stored, 0, "2026-11-29T15:00:00Z",
                  "2026-11-29T11:59:00.000Z"),)
    db = build_db(tmp_path / "o.db", connections=ONE, snapshots=snapshots)
    out = tmp_path / "out"
    assert _import(db, out).exit_code == 0
    (reading,) = _readings(out, "conn-a")
    assert reading["windows"][0]["remaining_percent"] == written
