"""`import omniroute`'s traffic ledger: every call_logs row read is an event or counted in a
note, one rule for values the ledger cannot take (shared with `import litellm-spend`), and
the ledger merged into, never replaced (docs/traffic.md#omniroute-call-logs).

Databases are built as tests/test_omniroute_traffic.py builds them: ``call_logs`` with the
columns of OmniRoute's ``001_initial_schema.sql`` (and ``correlation_id`` where said).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.test_omniroute_traffic import BUILT, build, events

runner = CliRunner()
NOW = "2026-11-29T12:00:00Z"


def attempt(row_id: str, **fields: Any) -> dict[str, Any]:
    """One call_logs row of conn-openai as OmniRoute's handler writes a served attempt."""
    row: dict[str, Any] = {
        "id": row_id, "timestamp": "2026-11-29T11:30:00.000Z", "method": "POST",
        "path": "/v1/chat/completions", "status": 200, "model": "gpt-5-mini",
        "requested_model": "gpt-5-mini", "provider": "openai", "connection_id": "conn-openai",
        "duration": 800, "tokens_in": 10, "tokens_out": 5, "correlation_id": f"req-{row_id}"}
    row.update(fields)
    return row


def invoke(db: Path, out: Path, *args: str) -> Any:
    return runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out),
                               "--since", "all", *args])


_SUMMARY = re.compile(r"imported (\d+) served events? and (\d+) failed attempts? from "
                      r"(\d+) call_logs rows?(?: \((\d+) left out\))?")


def summary(stderr: str) -> tuple[int, int, int, int]:
    """(served, failed, rows, left out) as the import's summary line says them."""
    found = _SUMMARY.search(stderr)
    assert found is not None, stderr
    served, failed, rows, left = found.groups()
    return int(served), int(failed), int(rows), int(left or 0)


def left_out(stderr: str) -> dict[str, int]:
    """The left-out note's reasons and counts."""
    line = next(line for line in stderr.splitlines() if "are no event and were left out" in line)
    listed = line.split("were left out: ", 1)[1]
    return {reason: int(n) for n, reason in
            (item.split(" ", 1) for item in listed.split("; "))}


# --- 1. no row dropped silently ----------------------------------------------------------


def test_every_row_read_is_an_event_or_counted_and_the_counts_add_up(tmp_path: Path) -> None:
    rows = (
        attempt("null-model", model=None),
        attempt("blank-model", model="  "),
        attempt("bell-model", model="gpt\x07-5"),
        attempt("late", timestamp="2026-11-29T12:00:00.400Z"),
        attempt("no-time", timestamp=""),
        attempt("bell-connection", connection_id="conn\x1b-openai"),
        attempt("summary", connection_id=None, status=503),
        attempt("kept"),
    )
    db = build(tmp_path / "o.db", rows)
    out = tmp_path / "fleet"
    result = invoke(db, out, "--now", NOW)
    assert result.exit_code == 0, result.output
    written = events(out)
    served, failed, read, left = summary(result.stderr)
    assert read == len(rows)
    assert served + failed + left == read
    assert len(written) == served + failed == 4
    assert {e["request_id"]: e["model"] for e in written} == {
        "req-null-model": "unknown", "req-blank-model": "unknown",
        "req-bell-model": "unknown", "req-kept": "gpt-5-mini"}
    assert left_out(result.stderr) == {
        "are stamped after the import instant 2026-11-29T12:00:00.000Z": 1,
        "have no timestamp": 1,
        "hold a control character in connection_id": 1,
        "name no connection (a combo's summary of targets that all failed: no attempt of "
        "any connection)": 1}
    assert ("3 call_logs rows of a connection name no model the ledger can take "
            "(NULL (1), a control character (1), blank (1)): kept as attempts of their "
            "connection with the model 'unknown'") in result.stderr


class _Clock(datetime):
    """The wall clock at 12:00:00.700: ``now`` cuts it to 12:00:00."""

    @classmethod
    def now(cls, tz: Any = None) -> _Clock:
        return cls(2026, 11, 29, 12, 0, 0, 700_000, tzinfo=UTC)


@pytest.mark.parametrize("now", [(), ("--now", "now")])
def test_a_row_of_the_second_the_import_instant_was_cut_to_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: tuple[str, ...]) -> None:
    """Without --now (or with --now now) the import instant is the clock to the second; a
    live gateway writes rows in the fraction of a second after it, before the read: they
    are kept."""
    import omniladder.engine.autoid
    import omniladder.sources.omniroute.importer

    monkeypatch.setattr(omniladder.engine.autoid, "datetime", _Clock)
    monkeypatch.setattr(omniladder.sources.omniroute.importer, "datetime", _Clock,
                        raising=False)
    db = build(tmp_path / "o.db", (attempt("a", timestamp="2026-11-29T12:00:00.400Z"),
                                   attempt("b", timestamp="2026-11-29T12:00:00.900Z")))
    out = tmp_path / "fleet"
    result = invoke(db, out, *now)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "quota.json").read_text())["taken_at"] == NOW
    assert [e["request_id"] for e in events(out)] == ["req-a"]
    assert left_out(result.stderr) == {
        "are stamped after the import instant 2026-11-29T12:00:00.700Z": 1}
    assert summary(result.stderr) == (1, 0, 2, 1)


def test_rows_before_since_within_the_query_s_second_are_counted(tmp_path: Path) -> None:
    db = build(tmp_path / "o.db", (attempt("early", timestamp="2026-11-29T11:00:00.200Z"),
                                   attempt("on-time", timestamp="2026-11-29T11:00:00.600Z")))
    out = tmp_path / "fleet"
    result = invoke(db, out, "--now", NOW, "--since", "2026-11-29T11:00:00.500Z")
    assert result.exit_code == 0, result.output
    assert [e["request_id"] for e in events(out)] == ["req-on-time"]
    assert left_out(result.stderr) == {"are before --since": 1}


# --- 2. values the ledger cannot take: one rule, shared with litellm-spend -----------------


def test_bad_token_counts_and_a_bad_combo_name_are_dropped_and_counted(tmp_path: Path) -> None:
    rows = (
        attempt("neg", tokens_in=-5, combo_name="omniladder-thrifty"),
        attempt("text", tokens_out="many", tokens_cache_read=1.5,
                combo_name="omniladder\x01thrifty"),
        attempt("fine", tokens_cache_creation=0),
    )
    db = build(tmp_path / "o.db", rows)
    out = tmp_path / "fleet"
    result = invoke(db, out, "--now", NOW)
    assert result.exit_code == 0, result.output
    got = {e["request_id"]: e for e in events(out)}
    assert "tokens_in" not in got["req-neg"]
    assert got["req-neg"]["tokens_out"] == 5
    assert got["req-neg"]["requested"] == "omniladder-thrifty"
    assert "tokens_out" not in got["req-text"]
    assert "tokens_cache_read" not in got["req-text"]
    assert got["req-text"]["tokens_in"] == 10
    # the combo's name cannot be written: requested falls back to the requested model
    assert got["req-text"]["requested"] == "gpt-5-mini"
    assert got["req-fine"]["tokens_cache_write"] == 0
    assert ("4 call_logs values the ledger cannot take were dropped, each row kept without "
            "it: combo_name: a control character (1), tokens_cache_read: not a whole number "
            "(1), tokens_in: negative (1), tokens_out: not a number (1)") in result.stderr


# --- 3. the ledger is merged into, never replaced ----------------------------------------


FOREIGN = ('{"at": "2026-11-20T09:00:00.000Z", "connection": "litellm:no-model-id", '
           '"model": "gpt-4o", "status": "served", "request_id": "chatcmpl-1"}\n')


def test_force_merges_the_ledger_keeping_older_and_foreign_events(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    first = build(tmp_path / "first.db", BUILT)
    result = invoke(first, out, "--now", NOW)
    assert result.exit_code == 0, result.output
    ledger = out / "traffic.jsonl"
    with ledger.open("a", encoding="utf-8") as stream:
        stream.write(FOREIGN)  # another importer's event
    before = ledger.read_bytes()
    again = invoke(first, out, "--now", NOW, "--force")
    assert again.exit_code == 0, again.output
    assert ledger.read_bytes() == before  # idempotent: byte for byte
    assert "0 events added, 4 already in the ledger" in again.stderr
    assert "(unchanged)" in again.stderr
    # a later database that no longer holds the old rows (pruned, or --since)
    later = build(tmp_path / "later.db", (attempt("new", timestamp="2026-11-29T11:50:00.000Z"),))
    third = invoke(later, out, "--now", NOW, "--force")
    assert third.exit_code == 0, third.output
    text = ledger.read_text(encoding="utf-8")
    assert text.startswith(before.decode("utf-8"))
    assert FOREIGN in text
    assert [e["request_id"] for e in events(out)][-1] == "req-new"
    assert "1 event added, 0 already in the ledger" in third.stderr


def test_without_force_the_other_files_are_refused_and_the_ledger_untouched(
        tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    db = build(tmp_path / "o.db", BUILT)
    assert invoke(db, out, "--now", NOW).exit_code == 0
    ledger = out / "traffic.jsonl"
    before = ledger.read_bytes()
    grown = build(tmp_path / "grown.db", (*BUILT, attempt("new")))
    result = invoke(grown, out, "--now", NOW)
    assert result.exit_code == 2
    assert "connections.toml: already exists; pass --force to overwrite it" in result.stderr
    assert ledger.read_bytes() == before


def test_an_existing_ledger_alone_is_merged_into_without_force(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    out.mkdir()
    (out / "traffic.jsonl").write_text(FOREIGN, encoding="utf-8")
    db = build(tmp_path / "o.db", BUILT)
    result = invoke(db, out, "--now", NOW)
    assert result.exit_code == 0, result.output
    text = (out / "traffic.jsonl").read_text(encoding="utf-8")
    assert text.startswith(FOREIGN)
    assert len(text.splitlines()) == 5
    assert "(updated)" in result.stderr


def test_a_bad_ledger_is_exit_2_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    out.mkdir()
    (out / "traffic.jsonl").write_text("kept\nmore\n", encoding="utf-8")
    db = build(tmp_path / "o.db", BUILT)
    result = invoke(db, out, "--now", NOW)
    assert result.exit_code == 2, result.output
    assert "traffic.jsonl:1" in result.stderr
    assert (out / "traffic.jsonl").read_text(encoding="utf-8") == "kept\nmore\n"
    assert sorted(path.name for path in out.iterdir()) == ["traffic.jsonl"]


# --- 5. no correlation_id: how far the request count may be overstated -------------------


def test_without_correlation_id_the_note_bounds_the_overstated_requests(
        tmp_path: Path) -> None:
    rows = (attempt("f1", status=429), attempt("f2", status=500), attempt("f3", status=503),
            attempt("s1"), attempt("s2"))
    db = build(tmp_path / "o.db", rows, correlation=False)
    out = tmp_path / "fleet"
    result = invoke(db, out, "--now", NOW)
    assert result.exit_code == 0, result.output
    assert ("call_logs has no correlation_id (OmniRoute 3.7.9 and older): each attempt is "
            "its own request, so 3 failed attempts could not be joined to the request they "
            "belong to; the request count (5) may be overstated by up to 3") in result.stderr
    only_failed = build(tmp_path / "f.db", rows[:3], correlation=False)
    result = invoke(only_failed, tmp_path / "f", "--now", NOW)
    assert "the request count (3) may be overstated by up to 2" in result.stderr
