"""`import omniroute` on OmniRoute 3.7.9's call_logs (no correlation_id), with rows as its
server writes them: tests/fixtures/sources/omniroute/call-logs-3.7.9.sql (README.md there
says where each comes from). Then `audit traffic` on what it wrote: a custom
OpenAI-compatible provider's events are priced from the model catalog's entry for their
model (docs/traffic.md#custom-providers)."""

from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.omniroute_db import CONNECTIONS, build_db

runner = CliRunner()
FIXTURE = (Path(__file__).resolve().parent / "fixtures" / "sources" / "omniroute"
           / "call-logs-3.7.9.sql")

CUSTOM_CONNECTIONS: tuple[tuple[Any, ...], ...] = (
    # (id, provider, auth_type, name, display_name, is_active, test_status,
    #  rate_limited_until, default_model, priority): the provider is the node's id
    ("conn-custom-abc123", "openai-compatible-chat-abc123", "apikey", "Shiteru", None, 1,
     "active", None, "gpt-5-mini", 8),
    ("conn-custom-d9363e0c", "openai-compatible-chat-d9363e0c", "apikey", "local qwen", None,
     1, "active", None, "qwen3.8-27b", 9),
)


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Any]:
    db = build_db(tmp_path / "storage.sqlite", connections=CONNECTIONS + CUSTOM_CONNECTIONS)
    connection = sqlite3.connect(db)
    try:
        connection.executescript(FIXTURE.read_text(encoding="utf-8"))
        connection.commit()
    finally:
        connection.close()
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out),
                                 "--since", "all", "--now", "2026-05-21T00:00:00Z"])
    assert result.exit_code == 0, result.output
    return out, result


def test_the_3_7_9_table_imports_every_row_and_bounds_the_request_count(
        imported: tuple[Path, Any]) -> None:
    out, result = imported
    assert ("imported 3 served events and 4 failed attempts from 10 call_logs rows (3 left "
            "out)") in result.stderr
    # the unanswered request: three attempts that are three requests, and its summary row
    assert ("call_logs has no correlation_id (OmniRoute 3.7.9 and older): each attempt is "
            "its own request, so 4 failed attempts could not be joined to the request they "
            "belong to; the request count (7) may be overstated by up to 4") in result.stderr
    assert "3 of 10 call_logs rows are no event and were left out: 3 name no connection" \
        in result.stderr
    ledger = [json.loads(line) for line in
              (out / "traffic.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["request_id"] for e in ledger if e["status"] == "failed"] == [
        "combo-failed-step", "unanswered-1", "unanswered-2", "unanswered-3"]


def test_a_custom_openai_compatible_provider_is_priced_from_the_catalog_entry(
        imported: tuple[Path, Any]) -> None:
    out, result = imported
    assert ("custom OpenAI-compatible providers priced as the model catalog's entry for "
            "their model (written to custom-models.toml, named in omniladder.toml): "
            "openai-compatible-chat-abc123/gpt-5-mini → openai/gpt-5-mini") in result.stderr
    assert ("left unpriced: openai-compatible-chat-d9363e0c/qwen3.8-27b (no catalog entry "
            "lists the model)") in result.stderr
    catalog = tomllib.loads((out / "custom-models.toml").read_text(encoding="utf-8"))
    shipped = tomllib.loads((Path(__file__).resolve().parent.parent / "catalogs"
                             / "models.toml").read_text(encoding="utf-8"))
    openai = next(m for m in shipped["models"]
                  if (m["provider"], m["model"]) == ("openai", "gpt-5-mini"))
    [entry] = catalog["models"]
    assert (entry["provider"], entry["model"]) == ("openai-compatible-chat-abc123",
                                                   "gpt-5-mini")
    assert (entry["input_usd_per_mtok"], entry["output_usd_per_mtok"]) == (
        openai["input_usd_per_mtok"], openai["output_usd_per_mtok"])
    settings = tomllib.loads((out / "omniladder.toml").read_text(encoding="utf-8"))
    assert settings["catalogs"]["models"] == ["custom-models.toml"]
    # The fixture's clients asked for the model by name, which the audit holds as another id
    # than auto/thrifty (SPEC §7.1); the price of a custom provider's model is the same
    # whatever was asked, so the custom rows are audited here as auto/thrifty's traffic.
    ledger = out / "traffic.jsonl"
    events = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    for event in events:
        if event["connection"].startswith("conn-custom-"):
            event["requested"] = "auto/thrifty"
    ledger.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    audit = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config",
                                str(out / "omniladder.toml"), "--all-requests", "--json"])
    document = json.loads(audit.stdout)
    rows = {row["connection"]: row for row in document["by_connection"]}
    expected = (1200 * openai["input_usd_per_mtok"] + 300 * openai["output_usd_per_mtok"]) / 1e6
    assert rows["conn-custom-abc123"]["unpriced"] == 0
    assert rows["conn-custom-abc123"]["cost_usd"] == pytest.approx(expected)
    # the model no catalog lists stays unpriced, never 0
    assert [e["request_id"] for e in document["unpriced"]["events"]] == ["custom-2"]
