"""`import omniroute DB --out DIR` writes DIR/traffic.jsonl from call_logs (SPEC §7.1).

The databases are real SQLite files built as tests/omniroute_db.py builds the others, with
``call_logs`` as OmniRoute creates it (diegosouzapw/OmniRoute
``src/lib/db/migrations/001_initial_schema.sql``, commit
39bbc410069fb46c2ed7b0f28e6e997945422485) and ``correlation_id`` added as
``src/lib/db/schemaColumns.ts`` ``ensureCallLogsColumns`` adds it (commit
025c05349910492ded1b94c4b64566d5621b8aa1). Published rows, reproduced field for field:

* PUBLISHED_PAIR: OmniRoute ``tests/unit/13481-combo-calllog-unique-collision.test.ts``
  (commit 91a9b24e090ef6854076e3dbeced664549087c8c): two attempts of one request under
  ``correlationId`` "req-test-13481-shared", a 400 and the 200 that served; the test gives
  them no connection.
* PUBLISHED_COMBO: OmniRoute's route-explainability unit test "route explainability
  surfaces nearby combo fallback evidence": a 503 attempt on conn-openai-a and the 200 on
  conn-anthropic-a of combo coding-combo, each with ``comboExecutionKey`` naming its step,
  without a correlation id (``tokens: {input, output}`` as tokens_in, tokens_out).

The other rows are built from the DDL for the traps docs/traffic.md names: attempts of one
request across connections, a summary row without a connection, a connection not in
provider_connections, steps that share a combo_execution_key across requests.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.inputs.ledger.read import Ledger
from tests.omniroute_db import CANARIES, build_db

runner = CliRunner()

CALL_LOGS_DDL = """
CREATE TABLE IF NOT EXISTS call_logs (
  id TEXT PRIMARY KEY,
  timestamp TEXT NOT NULL,
  method TEXT,
  path TEXT,
  status INTEGER,
  model TEXT,
  requested_model TEXT,
  provider TEXT,
  account TEXT,
  connection_id TEXT,
  duration INTEGER DEFAULT 0,
  tokens_in INTEGER DEFAULT 0,
  tokens_out INTEGER DEFAULT 0,
  tokens_cache_read INTEGER DEFAULT NULL,
  tokens_cache_creation INTEGER DEFAULT NULL,
  tokens_reasoning INTEGER DEFAULT NULL,
  request_type TEXT,
  source_format TEXT,
  target_format TEXT,
  api_key_id TEXT,
  api_key_name TEXT,
  combo_name TEXT,
  combo_step_id TEXT,
  combo_execution_key TEXT,
  error_summary TEXT,
  detail_state TEXT DEFAULT 'none',
  artifact_relpath TEXT,
  artifact_size_bytes INTEGER DEFAULT NULL,
  artifact_sha256 TEXT DEFAULT NULL,
  has_request_body INTEGER DEFAULT 0,
  has_response_body INTEGER DEFAULT 0,
  has_pipeline_details INTEGER DEFAULT 0,
  request_summary TEXT
);
CREATE INDEX IF NOT EXISTS idx_cl_timestamp ON call_logs(timestamp);
CREATE INDEX IF NOT EXISTS idx_cl_status ON call_logs(status);
CREATE INDEX IF NOT EXISTS idx_cl_combo_target
  ON call_logs(combo_name, combo_execution_key, timestamp)"""
CORRELATION_DDL = ("ALTER TABLE call_logs ADD COLUMN correlation_id TEXT DEFAULT NULL;\n"
                   "CREATE INDEX IF NOT EXISTS idx_cl_correlation_id "
                   "ON call_logs(correlation_id)")

PUBLISHED_PAIR: tuple[dict[str, Any], ...] = (
    {"id": "trace-attempt-1-failed", "timestamp": "2026-11-29T10:00:00.000Z",
     "method": "POST", "path": "/v1/chat/completions", "status": 400, "model": "test-model",
     "requested_model": "test-model", "provider": "test-provider", "duration": 2000,
     "correlation_id": "req-test-13481-shared"},
    {"id": "trace-attempt-2-success", "timestamp": "2026-11-29T10:00:02.000Z",
     "method": "POST", "path": "/v1/chat/completions", "status": 200, "model": "test-model",
     "requested_model": "test-model", "provider": "test-provider", "duration": 5000,
     "tokens_in": 100, "tokens_out": 50, "correlation_id": "req-test-13481-shared"},
)
"""Published with no timestamp of their own (the writer's clock): given one here."""

PUBLISHED_COMBO: tuple[dict[str, Any], ...] = (
    {"id": "combo-failed-step", "timestamp": "2026-05-20T12:00:00.000Z", "method": "POST",
     "path": "/v1/chat/completions", "status": 503, "model": "openai/gpt-4o-mini",
     "requested_model": "coding-combo", "provider": "openai",
     "connection_id": "conn-openai-a", "duration": 900, "tokens_in": 100, "tokens_out": 0,
     "combo_name": "coding-combo", "combo_step_id": "step-openai",
     "combo_execution_key": "step-openai"},
    {"id": "combo-selected-step", "timestamp": "2026-05-20T12:01:00.000Z",
     "method": "POST", "path": "/v1/chat/completions", "status": 200,
     "model": "anthropic/claude-3-5-sonnet", "requested_model": "coding-combo",
     "provider": "anthropic", "connection_id": "conn-anthropic-a", "duration": 450,
     "tokens_in": 100, "tokens_out": 80, "combo_name": "coding-combo",
     "combo_step_id": "step-anthropic", "combo_execution_key": "step-anthropic"},
)

BUILT: tuple[dict[str, Any], ...] = (
    # one request: a 429 on the Max plan, then the OpenAI key served it
    {"id": "a1", "timestamp": "2026-11-29T11:00:00.125Z", "status": 429,
     "model": "claude/claude-sonnet-4-5", "provider": "claude",
     "connection_id": "conn-claude-work", "combo_name": "omniladder-thrifty",
     "combo_execution_key": "omniladder-thrifty>s1", "correlation_id": "req-9"},
    {"id": "a2", "timestamp": "2026-11-29T11:00:01.900Z", "status": 200,
     "model": "gpt-5-mini", "provider": "openai", "connection_id": "conn-openai",
     "tokens_in": 1200, "tokens_out": 300, "tokens_cache_read": 800,
     "tokens_cache_creation": 0, "combo_name": "omniladder-thrifty",
     "combo_execution_key": "omniladder-thrifty>s2", "correlation_id": "req-9"},
    # another request through the same step s2: it must not merge with req-9
    {"id": "b1", "timestamp": "2026-11-29T11:05:00.000Z", "status": 200,
     "model": "gpt-5-mini", "provider": "openai", "connection_id": "conn-openai",
     "tokens_in": 10, "tokens_out": 5, "combo_name": "omniladder-thrifty",
     "combo_execution_key": "omniladder-thrifty>s2", "correlation_id": "req-10"},
    # every target failed: the combo's summary row names no connection
    {"id": "c0", "timestamp": "2026-11-29T11:06:00.000Z", "status": 503,
     "model": "omniladder-thrifty", "provider": None, "connection_id": None,
     "combo_name": "omniladder-thrifty", "correlation_id": "req-11"},
    # an old row, before --since
    {"id": "d0", "timestamp": "2026-11-01T08:00:00.000Z", "status": 200,
     "model": "gpt-5-mini", "provider": "openai", "connection_id": "conn-openai",
     "tokens_in": 1, "tokens_out": 1, "correlation_id": "req-1"},
)


def build(path: Path, rows: tuple[dict[str, Any], ...], *, correlation: bool = True,
          call_logs: bool = True) -> Path:
    build_db(path)
    if not call_logs:
        return path
    db = sqlite3.connect(path)
    try:
        db.executescript(CALL_LOGS_DDL)
        if correlation:
            db.executescript(CORRELATION_DDL)
        for row in rows:
            values = {k: v for k, v in row.items() if correlation or k != "correlation_id"}
            names = ", ".join(values)
            marks = ", ".join("?" for _ in values)
            db.execute(f"INSERT INTO call_logs ({names}) VALUES ({marks})",
                       tuple(values.values()))
        db.commit()
    finally:
        db.close()
    return path


def run(db: Path, out: Path, *args: str) -> Any:
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out),
                                 "--now", "2026-11-29T12:00:00Z", *args])
    assert result.exit_code == 0, result.output
    return result


def events(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "traffic.jsonl").read_text().splitlines()]


def test_attempts_of_one_request_share_its_id(tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", BUILT + PUBLISHED_PAIR)
    out = tmp_path / "fleet"
    result = run(db, out)
    found = events(out)
    assert found == [
        {"at": "2026-11-29T11:00:00.125Z", "connection": "conn-claude-work",
         "model": "claude-sonnet-4-5", "requested": "omniladder-thrifty", "status": "failed",
         "tokens_in": 0, "tokens_out": 0, "request_id": "req-9"},
        {"at": "2026-11-29T11:00:01.900Z", "connection": "conn-openai", "model": "gpt-5-mini",
         "requested": "omniladder-thrifty", "status": "served", "tokens_in": 1200,
         "tokens_out": 300, "tokens_cache_read": 800, "tokens_cache_write": 0,
         "request_id": "req-9"},
        {"at": "2026-11-29T11:05:00.000Z", "connection": "conn-openai", "model": "gpt-5-mini",
         "requested": "omniladder-thrifty", "status": "served", "tokens_in": 10,
         "tokens_out": 5, "request_id": "req-10"},
    ]
    assert "cost_usd" not in json.dumps(found)  # call_logs has no cost: never a guess
    assert ("3 of 6 call_logs rows are no event and were left out: 3 name no connection"
            in result.stderr)
    assert "imported 2 served events and 1 failed attempt from 6 call_logs rows (3 left " \
        "out)" in result.stderr
    settings = (out / "omniladder.toml").read_text()
    assert 'traffic = "traffic.jsonl"' in settings
    ledger = Ledger(out / "traffic.jsonl")  # what it writes reads back as a ledger
    ledger.scan()
    assert len(list(ledger.events())) == 3
    for canary in CANARIES:
        assert canary not in (out / "traffic.jsonl").read_text()


def test_since_applies_to_the_traffic_too(tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", BUILT)
    out = tmp_path / "all"
    run(db, out, "--since", "all")
    assert "req-1" in {e["request_id"] for e in events(out)}
    recent = tmp_path / "recent"
    run(db, recent)  # default 7d
    assert "req-1" not in {e["request_id"] for e in events(recent)}


def test_published_combo_rows_keep_unknown_connections_under_their_own_id(
        tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", PUBLISHED_COMBO)
    out = tmp_path / "fleet"
    result = run(db, out, "--since", "all")
    found = events(out)
    assert [(e["connection"], e["model"], e["status"], e["request_id"]) for e in found] == [
        ("conn-openai-a", "gpt-4o-mini", "failed", "combo-failed-step"),
        ("conn-anthropic-a", "claude-3-5-sonnet", "served", "combo-selected-step")]
    assert found[1]["at"] == "2026-05-20T12:01:00.000Z"
    assert "conn-anthropic-a (1), conn-openai-a (1)" in result.stderr


def test_an_old_database_without_correlation_id_imports_with_a_note(tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", BUILT, correlation=False)
    out = tmp_path / "fleet"
    result = run(db, out)
    assert "has no correlation_id" in result.stderr
    assert [e["request_id"] for e in events(out)] == ["a1", "a2", "b1"]


def test_a_database_without_call_logs_imports_with_a_note(tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", (), call_logs=False)
    out = tmp_path / "fleet"
    result = run(db, out)
    assert "has no call_logs table" in result.stderr
    assert not (out / "traffic.jsonl").exists()
    assert "traffic" not in (out / "omniladder.toml").read_text()


@pytest.mark.parametrize("name", ["traffic.jsonl"])
def test_an_existing_ledger_is_not_overwritten_without_force(tmp_path: Path,
                                                             name: str) -> None:
    db = build(tmp_path / "o.db", BUILT)
    out = tmp_path / "fleet"
    out.mkdir()
    (out / name).write_text("kept\n")
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out),
                                 "--now", "2026-11-29T12:00:00Z"])
    assert result.exit_code == 2, result.output
    assert (out / name).read_text() == "kept\n"


def test_key_shaped_ids_and_names_are_written_redacted(tmp_path: Path) -> None:
    key = "sk-proj-" + "Zq7" * 12
    db = build(tmp_path / "o.db", ({
        "id": "k1", "timestamp": "2026-11-29T11:00:00.000Z", "status": 200, "model": key,
        "provider": "openai", "connection_id": key, "combo_name": "gsk_" + "4xR" * 10,
        "tokens_in": 1, "tokens_out": 1, "correlation_id": key},))
    out = tmp_path / "fleet"
    result = run(db, out)
    written = (out / "traffic.jsonl").read_text()
    for text in (written, result.stdout, result.stderr):
        assert "Zq7Zq7" not in text
        assert "4xR4xR" not in text
    (event,) = events(out)
    assert all(event[name].startswith("redacted-key-")
               for name in ("connection", "model", "requested", "request_id"))
    assert "4 values of call_logs looked like a key" in result.stderr
