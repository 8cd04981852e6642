"""The one table of traffic findings (``omniladder/findings.py``, SPEC §7.3): a finding is one
line of ``FINDINGS``.

A fake finding, ``paid-premium`` (a pair admitted on the premium rung, tried before
``early-paid`` and leaking), is registered for a test's run, and the worked example of
docs/traffic.md is audited through the command line: the audit gives it its events and its
leak, and the table view, markdown, JSON (and the schema written from the table),
OpenMetrics and the check gate's verdict all name it. The docs' table and the committed
schema are held to the real table.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import findings
from omniladder.cli import app
from omniladder.findings import FINDINGS, Finding, Seen
from omniladder.inputs.schemas import schema_text
from tests.conftest import EXAMPLES, ROOT
from tests.test_init_schema import _valid
from tests.test_meta import section, table_rows

runner = CliRunner()
FAKE = "paid-premium"


def _premium(seen: Seen) -> bool:
    return seen.admitted and seen.rung == "premium"


@pytest.fixture
def fake_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table with ``paid-premium`` tried just before ``early-paid``."""
    table: dict[str, Finding] = {}
    for kind, found in FINDINGS.items():
        if kind == "early-paid":
            table[FAKE] = Finding(_premium, "paid on the premium rung, whatever the head",
                                  leaks=True, verdict="paid on the premium rung")
        table[kind] = found
    monkeypatch.setattr(findings, "FINDINGS", table)
    monkeypatch.chdir(EXAMPLES)


def audit(*args: str) -> Any:
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--traffic",
                                 "traffic.jsonl", *args])
    assert result.exit_code == 1, result.output
    return result


@pytest.mark.usefixtures("fake_finding")
def test_a_registered_finding_is_found_and_leaks_in_the_json_and_its_schema() -> None:
    document = json.loads(audit("--json").stdout)
    # the worked example's five early-paid events: three on premium, two on cheap
    assert document["counts"] == {"unknown-connection": 1, "off-plan-billed": 0,
                                  "served-excluded": 2, FAKE: 3, "early-paid": 2,
                                  "above-head": 1, "on-plan": 8}
    split = document["leak_by_finding"]
    assert list(split) == ["off-plan-billed", FAKE, "early-paid"]
    assert split[FAKE] == pytest.approx(1.925 + 0.495 + 0.24)
    assert split[FAKE] + split["early-paid"] == pytest.approx(document["leak_usd"])
    assert {j["finding"] for j in document["top_leaks"]} == {FAKE, "early-paid"}
    assert document["summary"].startswith(
        "$0.34 paid on cheap while the subscription rung had quota; $2.66 paid on the "
        "premium rung;")
    openai = next(c for c in document["by_connection"] if c["connection"] == "openai-key")
    assert openai["counts"][FAKE] == 1
    schema = json.loads(schema_text("audit-traffic"))
    assert schema["properties"]["counts"]["required"] == list(document["counts"])
    assert schema["properties"]["leak_by_finding"]["required"] == list(split)
    assert FAKE in schema["$defs"]["judged"]["properties"]["finding"]["enum"]
    assert schema["properties"]["leak_usd"]["description"] == (
        "The cost of off-plan-billed, paid-premium and early-paid events that could be "
        "priced.")
    assert _valid(document, schema, schema)


@pytest.mark.usefixtures("fake_finding")
def test_a_registered_finding_is_in_the_table_markdown_and_openmetrics() -> None:
    table = audit().stdout
    row = next(line for line in table.splitlines() if line.split()[:1] == [FAKE])
    assert row.split()[1:3] == ["3", "$2.66"]
    assert "paid on the premium rung, whatever the head" in row
    assert re.search(r"claude-api +2 .* paid-premium 2 ", table)
    markdown = audit("--format", "markdown").stdout
    assert f"| `{FAKE}` | 3 | $2.66 | paid on the premium rung, whatever the head |" \
        in markdown
    metrics = audit("--format", "openmetrics").stdout
    assert f'omniladder_traffic_events{{auto_id="auto/thrifty",finding="{FAKE}"}} 3\n' \
        in metrics
    assert f'omniladder_traffic_leak_usd{{auto_id="auto/thrifty",finding="{FAKE}"}} 2.66\n' \
        in metrics


@pytest.mark.usefixtures("fake_finding")
def test_a_registered_finding_is_in_simulates_leak_lines_and_whys_traffic_lines() -> None:
    simulated = runner.invoke(app, ["simulate", "auto/thrifty", "--from",
                                    "2026-11-29T09:00:00Z", "--to", "2026-11-29T12:00:00Z",
                                    "--traffic", "traffic.jsonl"])
    assert simulated.exit_code == 0, simulated.output
    # every leaking finding's events are counted, the fake's among them
    assert "Leak events (traffic.jsonl): $3.01 in 6 event(s)" in simulated.stdout
    assert "2026-11-29T11:12:14Z openai-key gpt-5.1 paid-premium $1.93: " in simulated.stdout
    why = runner.invoke(app, ["why", "openai-key", "--traffic", "traffic.jsonl"])
    assert why.exit_code == 0, why.output
    assert ("openai-key served 3 request(s) from 2026-11-29T09:58:30Z to "
            "2026-11-29T11:33:05Z: paid-premium 1, early-paid 2") in why.stdout


def _traffic_help() -> str:
    shown = runner.invoke(app, ["audit", "traffic", "--help"])
    assert shown.exit_code == 0, shown.output
    return " ".join(shown.stdout.split())


def test_the_help_names_every_finding_in_the_tables_order_and_the_leaking_ones() -> None:
    assert ("gets one finding, the first whose rule holds: unknown-connection, "
            "off-plan-billed, served-excluded, early-paid, above-head or on-plan. The leak is "
            "the cost of off-plan-billed and early-paid events.") in _traffic_help()


@pytest.mark.usefixtures("fake_finding")
def test_a_registered_finding_is_in_the_commands_help() -> None:
    assert ("gets one finding, the first whose rule holds: unknown-connection, "
            f"off-plan-billed, served-excluded, {FAKE}, early-paid, above-head or on-plan. "
            f"The leak is the cost of off-plan-billed, {FAKE} and early-paid events.") \
        in _traffic_help()


def test_the_docs_table_lists_every_finding_its_leak_and_meaning() -> None:
    text = section("Findings", "traffic")
    assert text is not None
    rows = table_rows(text)
    listed = [(row[0].strip("`"), row[2], row[3]) for row in rows if len(row) == 4]
    assert listed == [(kind, "yes" if found.leaks else "no", found.meaning)
                      for kind, found in FINDINGS.items()]


def test_the_committed_schema_is_written_from_the_table() -> None:
    committed = (ROOT / "schemas" / "audit-traffic.schema.json").read_text(encoding="utf-8")
    assert schema_text("audit-traffic") == committed
    schema = json.loads(committed)
    assert schema["properties"]["counts"]["required"] == list(FINDINGS)
    assert schema["properties"]["leak_by_finding"]["required"] == list(findings.leaking())


def test_the_architecture_page_names_the_table_as_where_to_add_a_finding() -> None:
    text = section("Where to make a change", "architecture")
    assert text is not None
    assert "`findings.py`'s `FINDINGS`" in text
