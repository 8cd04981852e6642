"""`import litellm-spend postgresql://…` on a real PostgreSQL server.

The server is the one OMNILADDER_TEST_POSTGRES_URL names (.ci/start-postgres starts one:
Debian's postgresql, password authentication on 127.0.0.1); without it these tests are
skipped with the reason, and with OMNILADDER_REQUIRE_POSTGRES=1 (CI) a missing server or
driver fails them instead. Each test loads LiteLLM's table (tests/fixtures/sources/litellm/
spend_logs.sql: the DDL of ``LiteLLM_SpendLogs`` as BerriAI/litellm ``schema.prisma``
declares it at commit 029f645f1c81cbd6c6c48fbc8490d91da937066f) into a schema of its own.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.test_litellm_spend import EXAMPLES, FIXTURES, exported_ids, lines, run

URL = os.environ.get("OMNILADDER_TEST_POSTGRES_URL", "")
REQUIRED = os.environ.get("OMNILADDER_REQUIRE_POSTGRES") == "1"

if REQUIRED:  # CI: a missing driver or server fails, never skips
    import psycopg
    if not URL:
        raise RuntimeError("OMNILADDER_REQUIRE_POSTGRES=1 but OMNILADDER_TEST_POSTGRES_URL "
                           "is unset")
psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' installs it")
pytestmark = pytest.mark.skipif(
    not URL, reason="OMNILADDER_TEST_POSTGRES_URL is unset: start a server with "
    ".ci/start-postgres DIR and export the URL it prints (.ci/run does)")

DDL = (FIXTURES / "spend_logs.sql").read_text(encoding="utf-8")
COLUMNS = ("request_id", "call_type", "api_key", "spend", "total_tokens", "prompt_tokens",
           "completion_tokens", "startTime", "endTime", "model", "model_id", "model_group",
           "custom_llm_provider", "api_base", "user", "metadata", "cache_hit", "status")


@pytest.fixture
def schema() -> Iterator[str]:
    """A fresh schema holding LiteLLM's table; the URL that reads it (Prisma's ?schema=)."""
    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(URL, autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{name}"')
        db.execute(f'SET search_path TO "{name}"')
        db.execute(DDL)
    try:
        yield name
    finally:
        with psycopg.connect(URL, autocommit=True) as db:
            db.execute(f'DROP SCHEMA "{name}" CASCADE')


def url_of(schema: str) -> str:
    return f"{URL}?schema={schema}"


def insert(schema: str, rows: list[dict[str, Any]]) -> None:
    with psycopg.connect(URL) as db:
        db.execute(f'SET search_path TO "{schema}"')
        for values in rows:
            names = list(values)
            listed = ", ".join(f'"{name}"' for name in names)
            marks = ", ".join(["%s"] * len(names))
            db.execute(f'INSERT INTO "LiteLLM_SpendLogs" ({listed}) VALUES ({marks})',
                       [json.dumps(values[n]) if n == "metadata" else values[n]
                        for n in names])


def published_row(name: str = "spend-logs-payload-e2e.json") -> dict[str, Any]:
    """A published row (tests/fixtures/sources/litellm), as the proxy inserts it: its
    timestamps as timestamp(3) without time zone, in UTC."""
    data = json.loads((FIXTURES / name).read_text("utf-8"))[0]
    out = {name: data[name] for name in COLUMNS if name in data and name != "metadata"}
    for name in ("startTime", "endTime"):
        out[name] = datetime.fromisoformat(data[name]).replace(tzinfo=None)
    out["metadata"] = json.loads(data["metadata"])
    return out


def test_rows_stream_from_the_table_and_join_as_in_the_json(schema: str,
                                                            tmp_path: Path) -> None:
    work = exported_ids()[("claude-max-work", "claude-sonnet-4-5")]
    insert(schema, [published_row(), {
        "request_id": "r-1", "call_type": "acompletion", "spend": 0.1182,
        "prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
        "startTime": datetime(2026, 11, 29, 9, 30, 0, 250000),
        "endTime": datetime(2026, 11, 29, 9, 30, 2), "model": "claude-sonnet-4-5",
        "model_id": work, "model_group": "omniladder-thrifty", "status": "failure"}])
    ledger = tmp_path / "traffic.jsonl"
    result = run(url_of(schema), ledger, "--config", str(EXAMPLES / "omniladder.toml"))
    assert result.exit_code == 0, result.output
    assert lines(ledger) == [
        {"at": "2025-03-24T22:02:42.976Z", "connection": "litellm:no-model-id",
         "model": "gpt-4o", "status": "served", "tokens_in": 10, "tokens_out": 20,
         "cost_usd": 0.00022500000000000002,
         "request_id": "chatcmpl-34df56d5-4807-45c1-bb99-61e52586b802"},
        {"at": "2026-11-29T09:30:00.250Z", "connection": "claude-max-work",
         "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "status": "failed",
         "tokens_in": 1200, "tokens_out": 300, "cost_usd": 0.1182, "request_id": "r-1"}]
    assert "2 rows read" in result.stderr
    again = run(url_of(schema), ledger)
    assert again.exit_code == 0
    assert "0 events added, 2 already" in again.stderr


def test_many_rows_stream_through_the_named_cursor_in_order(schema: str,
                                                            tmp_path: Path) -> None:
    with psycopg.connect(URL) as db:
        db.execute(f'SET search_path TO "{schema}"')
        db.execute(
            'INSERT INTO "LiteLLM_SpendLogs" (request_id, call_type, "startTime", "endTime", '
            "model, spend) SELECT 'q-' || n, 'acompletion', "
            "timestamp '2026-11-29 00:00:00' + n * interval '1 second', "
            "timestamp '2026-11-29 00:00:01' + n * interval '1 second', 'gpt-4o', 0.001 "
            "FROM generate_series(12000, 1, -1) AS n")
    ledger = tmp_path / "traffic.jsonl"
    result = run(url_of(schema), ledger)
    assert result.exit_code == 0, result.output
    got = lines(ledger)
    assert len(got) == 12000
    assert [e["request_id"] for e in got[:2]] == ["q-1", "q-2"]
    assert got[-1]["at"] == "2026-11-29T03:20:00.000Z"


def test_the_import_reads_in_a_read_only_transaction(schema: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from omniladder.sources import litellm_spend

    seen: list[str] = []
    real = litellm_spend._columns

    def spy(connection: Any, *args: Any) -> set[str]:
        seen.append(connection.execute("SHOW transaction_read_only").fetchone()[0])
        return real(connection, *args)

    monkeypatch.setattr(litellm_spend, "_columns", spy)
    insert(schema, [published_row()])
    assert run(url_of(schema), tmp_path / "traffic.jsonl").exit_code == 0
    assert seen == ["on"]


def test_since_is_applied_in_the_query(schema: str, tmp_path: Path) -> None:
    old = published_row()
    new = dict(old, request_id="new", startTime=datetime(2026, 11, 29, 9))
    insert(schema, [old, new])
    ledger = tmp_path / "traffic.jsonl"
    from typer.testing import CliRunner

    from omniladder.cli import app

    result = CliRunner().invoke(app, ["import", "litellm-spend", url_of(schema), "--traffic",
                                      str(ledger), "--since", "2026-01-01T00:00:00Z"])
    assert result.exit_code == 0, result.output
    assert [e["request_id"] for e in lines(ledger)] == ["new"]


def test_a_database_without_status_imports_every_row_as_served(schema: str,
                                                               tmp_path: Path) -> None:
    insert(schema, [published_row()])
    with psycopg.connect(URL, autocommit=True) as db:
        db.execute(f'ALTER TABLE "{schema}"."LiteLLM_SpendLogs" DROP COLUMN status')
    ledger = tmp_path / "traffic.jsonl"
    assert run(url_of(schema), ledger).exit_code == 0
    assert lines(ledger)[0]["status"] == "served"


def test_a_database_without_the_table_is_exit_2_naming_it(tmp_path: Path) -> None:
    name = "e_" + uuid.uuid4().hex[:12]
    with psycopg.connect(URL, autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{name}"')
    try:
        result = run(url_of(name), tmp_path / "traffic.jsonl")
    finally:
        with psycopg.connect(URL, autocommit=True) as db:
            db.execute(f'DROP SCHEMA "{name}" CASCADE')
    assert result.exit_code == 2
    assert 'no table "LiteLLM_SpendLogs"' in result.stderr
    assert not (tmp_path / "traffic.jsonl").exists()


def _with(password: str | None = None, port: int | None = None) -> str:
    parts = urlsplit(URL)
    user = parts.username or "postgres"
    netloc = f"{user}:{password or parts.password}@{parts.hostname}:{port or parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("case", ["wrong-password", "unreachable"])
def test_a_url_that_fails_is_exit_2_without_its_password(case: str, tmp_path: Path) -> None:
    secret = "Wr0ng-" + uuid.uuid4().hex
    url = _with(password=secret) if case == "wrong-password" else _with(
        password=secret, port=_free_port())
    result = run(url, tmp_path / "traffic.jsonl")
    assert result.exit_code == 2, result.output
    assert "cannot connect to the database" in result.stderr
    assert secret not in result.stdout
    assert secret not in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "traffic.jsonl").exists()


def test_litellm_s_database_url_with_prisma_s_pool_settings_is_read(schema: str,
                                                                    tmp_path: Path) -> None:
    """The DATABASE_URL LiteLLM's proxy reads through Prisma: its pool settings are left
    out (one line says which, naming no value), and ``schema`` names the schema the table
    is read from (a non-public one here)."""
    insert(schema, [published_row()])
    ledger = tmp_path / "traffic.jsonl"
    url = (f"{URL}?connection_limit=21&pool_timeout=60&pgbouncer=true&schema={schema}"
           "&statement_cache_size=0")
    result = run(url, ledger)
    assert result.exit_code == 0, result.output
    assert len(lines(ledger)) == 1
    (note,) = [line for line in result.stderr.splitlines() if "Prisma" in line]
    assert note == ("omniladder: note: the URL's Prisma pool settings were ignored "
                    "(connection_limit, pool_timeout, pgbouncer, statement_cache_size: "
                    "LiteLLM's DATABASE_URL carries them, libpq knows none); the table is "
                    f"read from schema '{schema}' (?schema=)")
    password = urlsplit(URL).password
    assert password
    assert password not in result.stderr
    assert password not in result.stdout
    assert URL not in result.stderr


def test_a_schema_name_that_needs_quoting_is_read(tmp_path: Path) -> None:
    name = f"Spend Logs {uuid.uuid4().hex[:6]}"
    with psycopg.connect(URL, autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{name}"')
        db.execute(f'SET search_path TO "{name}"')
        db.execute(DDL)
    try:
        insert(f'{name}', [published_row()])
        ledger = tmp_path / "traffic.jsonl"
        from urllib.parse import quote

        result = run(f"{URL}?schema={quote(name)}&connection_limit=5", ledger)
        assert result.exit_code == 0, result.output
        assert len(lines(ledger)) == 1
    finally:
        with psycopg.connect(URL, autocommit=True) as db:
            db.execute(f'DROP SCHEMA "{name}" CASCADE')


def test_a_spend_of_0_read_from_the_table_is_priced_by_the_audit(schema: str,
                                                                tmp_path: Path) -> None:
    """The published row of a route LiteLLM's price map lacks (spend 0), in the table, read
    through the URL LiteLLM's proxy has, then audited: priced from its tokens, never $0."""
    from typer.testing import CliRunner

    from omniladder.cli import app
    from tests.test_litellm_spend_audit import SONNET_USD_PER_MTOK, past_quota_fleet, priced

    insert(schema, [published_row("spend-logs-unmapped-model.json")])
    settings = past_quota_fleet(tmp_path / "fleet")
    ledger = tmp_path / "traffic.jsonl"
    result = run(f"{url_of(schema)}&connection_limit=9", ledger, "--config", str(settings))
    assert result.exit_code == 0, result.output
    (event,) = lines(ledger)
    assert (event["connection"], event["cost_usd"]) == ("claude-max-extra", 0.0)
    audit = CliRunner().invoke(app, ["audit", "traffic", "auto/thrifty", "--traffic",
                                     str(ledger), "--config", str(settings), "--json"])
    assert audit.exit_code == 0, audit.output
    assert json.loads(audit.stdout)["cost_usd"] == pytest.approx(
        priced(10, 20, SONNET_USD_PER_MTOK))


def test_key_shaped_values_in_the_table_are_written_redacted(schema: str,
                                                            tmp_path: Path) -> None:
    from tests.test_litellm_spend_audit import KEY

    plain = published_row()
    keyed = {**plain, "request_id": KEY, "model_id": KEY}
    insert(schema, [plain, keyed])
    ledger = tmp_path / "traffic.jsonl"
    result = run(url_of(schema), ledger)
    assert result.exit_code == 0, result.output
    text = ledger.read_text(encoding="utf-8")
    assert "Zq7Zq7" not in text
    assert "Zq7Zq7" not in result.stderr
    first, second = lines(ledger)
    assert first["request_id"] == plain["request_id"]
    assert second["request_id"].startswith("redacted-key-")
    assert second["connection"].startswith("litellm:redacted-key-")
    assert "2 values of the spend logs looked like a key" in result.stderr
