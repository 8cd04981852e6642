"""`import litellm-spend FILE --traffic LEDGER`: LiteLLM's GET /spend/logs JSON → a ledger.

The published rows are in tests/fixtures/sources/litellm (README.md there says where each
comes from). Rows joined through ``model_id`` carry the ids ``export litellm`` writes for
the example fleet, taken from the export itself, so the two stay in step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.inputs.ledger.read import Ledger
from tests.depth import deep

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "sources" / "litellm"
EXAMPLES = ROOT / "examples"


def exported_ids(auto_id: str = "auto/thrifty") -> dict[tuple[str, str], str]:
    """(connection, model) → the model_info.id ``export litellm`` writes for the example
    fleet."""
    result = runner.invoke(app, ["export", "litellm", auto_id, "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--map",
                                 str(EXAMPLES / "litellm-map.toml"),
                                 "--now", "2026-11-29T10:00:00Z"])
    text = result.stdout
    document = json.loads(text[text.index("{"):])
    from omniladder.analyses.export.litellm import parse_deployment_id

    found: dict[tuple[str, str], str] = {}
    for deployment in document["model_list"]:
        identity = deployment["model_info"]["id"]
        parsed = parse_deployment_id(identity)
        assert parsed is not None
        found[(parsed[1], parsed[3])] = identity
    return found


def run(source: Path | str, ledger: Path, *extra: str) -> Any:
    return runner.invoke(app, ["import", "litellm-spend", str(source), "--traffic",
                               str(ledger), "--since", "all", *extra])


def lines(ledger: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def row(request_id: str, **fields: Any) -> dict[str, Any]:
    """A spend-log row with the columns schema.prisma declares without a default (the
    rest as the proxy defaults them)."""
    base: dict[str, Any] = {
        "request_id": request_id, "call_type": "acompletion", "api_key": "", "spend": 0.0,
        "total_tokens": 0, "prompt_tokens": 0, "completion_tokens": 0,
        "startTime": "2026-11-29T09:30:00.250000+00:00",
        "endTime": "2026-11-29T09:30:02.000000+00:00", "model": "", "model_id": "",
        "model_group": "", "custom_llm_provider": "", "api_base": "", "user": "",
        "status": "success"}
    base.update(fields)
    return base


# --- published rows ---------------------------------------------------------------------


def test_the_published_payload_row_is_one_unattributed_served_event(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    result = run(FIXTURES / "spend-logs-payload-e2e.json", ledger)
    assert result.exit_code == 0, result.output
    assert lines(ledger) == [{
        "at": "2025-03-24T22:02:42.975Z", "connection": "litellm:no-model-id",
        "model": "gpt-4o", "status": "served", "tokens_in": 10, "tokens_out": 20,
        "cost_usd": 0.00022500000000000002,
        "request_id": "chatcmpl-34df56d5-4807-45c1-bb99-61e52586b802"}]
    assert "1 row joined no connection" in result.stderr
    assert "litellm:no-model-id (1)" in result.stderr
    assert "1 event added" in result.stderr
    assert result.stdout.strip() == str(ledger)
    scan = Ledger(ledger).scan()
    assert scan.events == 1


def test_a_published_v2_page_is_read_from_its_data(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    result = run(FIXTURES / "spend-logs-ui-page.json", ledger)
    assert result.exit_code == 0, result.output
    got = lines(ledger)
    assert [(e["request_id"], e["model"], e["cost_usd"], e["at"]) for e in got] == [
        ("req1", "gpt-3.5-turbo", 0.05, "2026-11-29T09:15:00.123Z"),
        ("req2", "gpt-4", 0.1, "2026-11-29T09:16:00.654Z")]
    assert "2 rows joined no connection" in result.stderr


# --- joins --------------------------------------------------------------------------------


def test_rows_join_through_the_exported_model_id(tmp_path: Path) -> None:
    ids = exported_ids()
    work = ids[("claude-max-work", "claude-sonnet-4-5")]
    source = write_rows(tmp_path / "logs.json", [
        row("r-1", model="claude-sonnet-4-5", model_id=work, model_group="omniladder-thrifty",
            spend=0.1182, prompt_tokens=1200, completion_tokens=300,
            api_base="http://subscriptions.internal:8317/v1"),
        row("r-2", model="claude-sonnet-4-5", model_id=work, model_group="omniladder-thrifty",
            status="failure", startTime="2026-11-29T09:31:00"),
    ])
    ledger = tmp_path / "traffic.jsonl"
    result = run(source, ledger, "--config", str(EXAMPLES / "omniladder.toml"))
    assert result.exit_code == 0, result.output
    assert lines(ledger) == [
        {"at": "2026-11-29T09:30:00.250Z", "connection": "claude-max-work",
         "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "status": "served",
         "tokens_in": 1200, "tokens_out": 300, "cost_usd": 0.1182, "request_id": "r-1"},
        {"at": "2026-11-29T09:31:00.000Z", "connection": "claude-max-work",
         "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "status": "failed",
         "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0, "request_id": "r-2"}]
    assert "joined no connection" not in result.stderr


def test_an_escaped_model_id_gives_back_the_model_with_its_colon(tmp_path: Path) -> None:
    ids = exported_ids()
    ollama = [identity for (cid, _), identity in ids.items() if cid == "ollama-local"]
    assert ollama
    assert all("%3A" in identity for identity in ollama)
    source = write_rows(tmp_path / "logs.json", [row("r-1", model="qwen2.5-coder:32b",
                                                     model_id=ollama[0])])
    ledger = tmp_path / "traffic.jsonl"
    assert run(source, ledger).exit_code == 0
    event = lines(ledger)[0]
    assert (event["connection"], event["model"]) == ("ollama-local", "qwen2.5-coder:32b")


def test_a_row_without_our_id_joins_through_the_map(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "logs.json", [
        row("r-1", model="llama3.3:70b", model_id="4bad40a1eb6bebd1682800f16f44b9f0",
            api_base="http://localhost:11434/"),
        row("r-2", model="claude-sonnet-4-5", api_base="http://subscriptions.internal:8318/v1",
            model_group="omniladder-coding-subscription"),
        row("r-3", model="gpt-5-mini", api_base="https://elsewhere.example/v1",
            model_id="4bad40a1eb6bebd1682800f16f44b9f0"),
    ])
    ledger = tmp_path / "traffic.jsonl"
    result = run(source, ledger, "--map", str(EXAMPLES / "litellm-map.toml"),
                 "--connections", str(EXAMPLES / "connections.toml"))
    assert result.exit_code == 0, result.output
    got = [(e["connection"], e["model"], e.get("requested")) for e in lines(ledger)]
    assert got == [("ollama-local", "llama3.3:70b", None),
                   ("claude-max-extra", "claude-sonnet-4-5", "auto/coding:subscription"),
                   ("litellm:4bad40a1eb6bebd1682800f16f44b9f0", "gpt-5-mini", None)]
    assert "1 row joined no connection" in result.stderr


def test_a_map_base_shared_by_two_connections_gives_the_row_to_neither(
        tmp_path: Path) -> None:
    routes = tmp_path / "map.toml"
    routes.write_text('[[connections]]\nid = "key-a"\nmodel_prefix = "openai/"\n'
                      'api_base = "https://api.openai.com/v1"\n\n'
                      '[[connections]]\nid = "key-b"\nmodel_prefix = "openai/"\n'
                      'api_base = "https://api.openai.com/v1"\n', encoding="utf-8")
    source = write_rows(tmp_path / "logs.json", [
        row("r-1", model="gpt-5-mini", api_base="https://api.openai.com/v1")])
    ledger = tmp_path / "traffic.jsonl"
    result = run(source, ledger, "--map", str(routes))
    assert result.exit_code == 0, result.output
    assert lines(ledger)[0]["connection"] == "litellm:no-model-id"
    assert "fit more than one connection of the map" in result.stderr


def test_a_connection_the_fleet_lacks_is_kept_under_its_own_id(tmp_path: Path) -> None:
    from omniladder.analyses.export.litellm import deployment_id

    gone = deployment_id("omniladder-thrifty", "old-key", "openai", "gpt-4o")
    source = write_rows(tmp_path / "logs.json", [row("r-1", model="gpt-4o", model_id=gone)])
    ledger = tmp_path / "traffic.jsonl"
    result = run(source, ledger, "--connections", str(EXAMPLES / "connections.toml"))
    assert result.exit_code == 0, result.output
    assert lines(ledger)[0]["connection"] == "old-key"
    assert "not in the connections file" in result.stderr
    assert "old-key (1)" in result.stderr


def test_a_group_that_is_not_exported_stays_as_requested(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "logs.json", [row("r-1", model="gpt-4o",
                                                     model_group="gpt-4o")])
    ledger = tmp_path / "traffic.jsonl"
    assert run(source, ledger).exit_code == 0
    assert lines(ledger)[0]["requested"] == "gpt-4o"


# --- merging ------------------------------------------------------------------------------


def test_re_import_adds_nothing_and_leaves_the_file_untouched(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    source = FIXTURES / "spend-logs-ui-page.json"
    assert run(source, ledger).exit_code == 0
    before = ledger.read_bytes()
    stamp = ledger.stat().st_mtime_ns
    again = run(source, ledger)
    assert again.exit_code == 0, again.output
    assert "0 events added, 2 already in the ledger" in again.stderr
    assert "(unchanged)" in again.stderr
    assert ledger.read_bytes() == before
    assert ledger.stat().st_mtime_ns == stamp


def test_merging_keeps_the_ledger_lines_and_appends_new_ones(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    shutil.copy(EXAMPLES / "traffic.jsonl", ledger)
    kept = ledger.read_bytes()
    result = run(FIXTURES / "spend-logs-payload-e2e.json", ledger)
    assert result.exit_code == 0, result.output
    assert "(updated)" in result.stderr
    assert ledger.read_bytes().startswith(kept)
    assert len(lines(ledger)) == len(kept.splitlines()) + 1


def test_a_ledger_whose_last_line_lacks_its_newline_gets_one(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    text = (EXAMPLES / "traffic.jsonl").read_text(encoding="utf-8").rstrip("\n")
    ledger.write_text(text, encoding="utf-8")
    assert run(FIXTURES / "spend-logs-payload-e2e.json", ledger).exit_code == 0
    assert len(lines(ledger)) == len(text.splitlines()) + 1


def test_a_ledger_being_written_is_not_merged_into(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    torn = (EXAMPLES / "traffic.jsonl").read_text(encoding="utf-8") + '{"at": "2026-11'
    ledger.write_text(torn, encoding="utf-8")
    result = run(FIXTURES / "spend-logs-payload-e2e.json", ledger)
    assert result.exit_code == 2
    assert "cut short" in result.stderr
    assert ledger.read_text(encoding="utf-8") == torn


def test_a_bad_ledger_line_is_exit_2_and_nothing_is_written(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    bad = '{"at": "2026-11-29T09:00:00Z", "connection": "a", "model": "m", "tokens_in": -1}\n'
    ledger.write_text(bad, encoding="utf-8")
    result = run(FIXTURES / "spend-logs-payload-e2e.json", ledger)
    assert result.exit_code == 2
    assert "traffic.jsonl:1: tokens_in" in result.stderr
    assert ledger.read_text(encoding="utf-8") == bad


def test_since_leaves_out_older_rows(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "logs.json", [
        row("old", startTime="2026-11-01T00:00:00Z"), row("new", startTime="2026-11-29T09:00:00Z")])
    ledger = tmp_path / "traffic.jsonl"
    result = runner.invoke(app, ["import", "litellm-spend", str(source), "--traffic",
                                 str(ledger), "--since", "2026-11-20T00:00:00Z"])
    assert result.exit_code == 0, result.output
    assert [e["request_id"] for e in lines(ledger)] == ["new"]
    assert "1 before --since" in result.stderr


# --- bad input ----------------------------------------------------------------------------


def test_bad_rows_are_exit_2_naming_the_row_and_the_column(tmp_path: Path) -> None:
    cases = [
        (row("r", status="pending"), "[0].status: must be success or failure"),
        (row("r", spend=-0.5), "[0].spend: must be a number of US dollars"),
        (row("r", startTime="yesterday"), "[0].startTime: not an ISO 8601 timestamp"),
        (row(""), "[0].request_id: field required"),
    ]
    for bad, message in cases:
        source = write_rows(tmp_path / "logs.json", [bad])
        ledger = tmp_path / "traffic.jsonl"
        result = run(source, ledger)
        assert result.exit_code == 2, (bad, result.output)
        assert message in result.stderr, result.stderr
        assert "Traceback" not in result.output
        assert not ledger.exists()


def test_bad_token_counts_and_group_are_dropped_and_counted_not_refused(
        tmp_path: Path) -> None:
    """The rule ``import omniroute`` follows too (omniladder.sources.ledger_values): the row
    is kept, the value it cannot take dropped and counted in a note."""
    source = write_rows(tmp_path / "logs.json", [
        row("r-neg", prompt_tokens=-3, completion_tokens=12.0),
        row("r-text", prompt_tokens=7, completion_tokens="12", model_group="group\u0007x"),
        row("r-fine", prompt_tokens=1, completion_tokens=2, model_group="team-a")])
    ledger = tmp_path / "traffic.jsonl"
    result = run(source, ledger)
    assert result.exit_code == 0, result.output
    got = {e["request_id"]: e for e in lines(ledger)}
    assert "tokens_in" not in got["r-neg"]
    assert got["r-neg"]["tokens_out"] == 12
    assert got["r-text"]["tokens_in"] == 7
    assert "tokens_out" not in got["r-text"]
    assert "requested" not in got["r-text"]
    assert got["r-fine"]["requested"] == "team-a"
    assert ("3 LiteLLM_SpendLogs values the ledger cannot take were dropped, each row kept "
            "without it: completion_tokens: not a number (1), model_group: a control "
            "character (1), prompt_tokens: negative (1)") in result.stderr
    assert "3 events added" in result.stderr


def test_a_document_that_is_not_spend_logs_is_exit_2(tmp_path: Path) -> None:
    for document, message in (({"error": {"message": "Authentication Error"}}, "error body"),
                              ({"spend": 1}, "an object without data"),
                              ("text", "expected a list of spend-log rows")):
        source = tmp_path / "logs.json"
        source.write_text(json.dumps(document), encoding="utf-8")
        result = run(source, tmp_path / "traffic.jsonl")
        assert result.exit_code == 2
        assert message in result.stderr


def test_the_ledger_must_be_jsonl_and_no_input(tmp_path: Path) -> None:
    result = run(FIXTURES / "spend-logs-payload-e2e.json", tmp_path / "traffic.json")
    assert result.exit_code == 2
    assert "*.jsonl" in result.stderr
    copy = tmp_path / "logs.jsonl"
    shutil.copy(FIXTURES / "spend-logs-payload-e2e.json", copy)
    result = run(copy, copy)
    assert result.exit_code == 2
    assert copy.read_bytes() == (FIXTURES / "spend-logs-payload-e2e.json").read_bytes()


def test_a_database_url_without_the_driver_names_the_extra(tmp_path: Path,
                                                           monkeypatch: Any) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)
    result = run("postgresql://litellm:s3cret-pw@127.0.0.1:1/litellm", tmp_path / "t.jsonl")
    assert result.exit_code == 2
    assert "omniladder[postgres]" in result.stderr
    assert "s3cret-pw" not in result.output


def test_a_url_that_does_not_parse_is_exit_2_without_echoing_it(tmp_path: Path) -> None:
    for url in ("postgresql://litellm:pw-9f2e@[::1/litellm",
                "postgresql://litellm:pw-9f2e@localhost:99999/litellm"):
        result = run(url, tmp_path / "t.jsonl")
        assert result.exit_code == 2, result.output
        assert "not a valid postgresql:// URL" in result.stderr
        assert "pw-9f2e" not in result.output


def test_event_lines_are_exactly_what_json_dumps_writes() -> None:
    from omniladder.inputs.ledger.events import event_line

    events = [
        {"at": "2026-11-29T09:30:00.250Z", "connection": 'qu"ote\\back', "model": "qwen:32b",
         "requested": "auto/thrifty", "status": "served", "tokens_in": 0,
         "tokens_out": 10**12, "cost_usd": 0.00022500000000000002, "request_id": "é ☃ 𝄞"},
        {"at": "x", "connection": "c\u2028\u0085\x7f", "model": "m", "cost_usd": 1e-07},
        {"at": "x", "connection": "c", "model": "m", "cost_usd": 1.0, "flag": None},
    ]
    for event in events:
        assert event_line(event) == json.dumps(event, ensure_ascii=False) + "\n"


@deep(400, deadline=None)
def test_a_text_column_is_read_as_the_pattern_reads_it(examples: settings) -> None:
    """A printable text is taken without the pattern (a request id on every row): the same
    answer as stripping it and matching IDENTIFIER_PATTERN."""
    import re

    from omniladder.models import IDENTIFIER_PATTERN
    from omniladder.sources.litellm_spend import _text

    @examples
    @given(st.text(max_size=12) | st.sampled_from([" req-1 ", "\u00a0", "a\u0085", " ", "", "\t"]))
    def holds(value: str) -> None:
        stripped = value.strip()
        expected = stripped if stripped and re.match(IDENTIFIER_PATTERN, stripped) else None
        assert _text(value) == expected

    holds()
