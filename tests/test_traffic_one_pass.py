"""`audit traffic` in one read of a JSONL ledger (``Ledger.one_pass``), held to the two reads
(``scan``, then ``records``) it gives up for whenever its answer could differ: the same
audit, float for float and in the same order, on generated fleets and ledgers, and each
reason to give up on its own."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.traffic import TrafficAudit, audit_traffic
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.inputs.ledger import one_read
from omniladder.inputs.ledger.read import Ledger
from omniladder.rendering.traffic_view import traffic_document
from tests.builders import at, conn, fleet, instant, reading, window
from tests.conftest import EXAMPLES
from tests.depth import deep
from tests.test_traffic_audit import changing_plan_fleet

runner = CliRunner()


@cache
def steady() -> LoadedInputs:
    """A subscription, a spent one, a keyless backend and a metered key, each read once."""
    return fleet(
        [conn("claude-max", models=["sonnet"]),
         conn("claude-spent", models=["sonnet"]),
         conn("local", "ollama", "none", models=["qwen"]),
         conn("openai-key", "openai", "apikey", models=["gpt-mini", "gpt-big"])],
        [reading("claude-max", window("5h", 80, at(hours=3))),
         reading("claude-spent", window("5h", 0, at(hours=3))),
         reading("local", window("local", unlimited=True)),
         reading("openai-key", window("credits", 90))])


@cache
def moving() -> LoadedInputs:
    """A plan that changes over the span: arrivals, a reset, staleness, a cooldown's end
    and a premium budget that a spend event fills."""
    return changing_plan_fleet()


PAIRS = [("claude-max", "sonnet"), ("claude-max", "opus"), ("claude-spent", "sonnet"),
         ("codex", "gpt-codex"), ("local", "qwen"), ("openai-key", "gpt-mini"),
         ("openai-key", "gpt-big"), ("stranger", "sonnet"), ("openai-key", "unlisted")]
MINUTES = [-120, -100, -90, -85, -70, -60, -50, -40, -35, -30, -20, -10, -5, 0, 5]
"""Event instants, minutes from NOW: several fall on the moving fleet's change instants."""


def write(tmp_path: Path, lines: Sequence[str], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def line(item: dict[str, Any]) -> str:
    return json.dumps(item) + "\n"


def served(cid: str, model: str, minutes: float, **fields: Any) -> dict[str, Any]:
    return {"at": at(minutes=minutes), "connection": cid, "model": model,
            "requested": "auto/thrifty", **fields}


def once(inputs: LoadedInputs, path: Path, **options: Any) -> tuple[TrafficAudit, Ledger]:
    """The audit as the command runs it: a ledger not read yet, in one read if it can."""
    ledger = Ledger(path)
    return audit_traffic(inputs, parse_auto_id(options.pop("auto_id", "auto/thrifty")),
                         ledger, **options), ledger


def twice(inputs: LoadedInputs, path: Path, **options: Any) -> TrafficAudit:
    """The reference: the ledger scanned first, so the audit reads it the two-read way."""
    ledger = Ledger(path)
    ledger.scan()
    return audit_traffic(inputs, parse_auto_id(options.pop("auto_id", "auto/thrifty")),
                         ledger, **options)


def same(one: TrafficAudit, other: TrafficAudit) -> None:
    """Field for field, each float as it was summed and each mapping in its order (the
    records' reprs), and the JSON document."""
    assert repr(one) == repr(other)
    assert traffic_document(one) == traffic_document(other)


# --- the one read is the two reads ------------------------------------------------------


events = st.lists(st.fixed_dictionaries(
    {"pair": st.sampled_from(PAIRS), "minutes": st.sampled_from(MINUTES),
     "requested": st.sampled_from(["auto/thrifty", None, "auto/subscription",
                                   "omniladder-thrifty"]),
     "status": st.sampled_from([None, "served", "failed"]),
     "request_id": st.sampled_from([None, "r1", "r2", "r3", "r4"]),
     "money": st.sampled_from([None, "cost", "tokens", "cost-int"]),
     "offset": st.booleans()}),
    min_size=0, max_size=14)


def ledger_lines(drawn: list[dict[str, Any]], order: str, blank: bool, torn: bool,
                 shuffle: list[int]) -> list[str]:
    items: list[dict[str, Any]] = []
    for index, choice in enumerate(drawn):
        cid, model = choice["pair"]
        when = instant(minutes=choice["minutes"], seconds=index % 3)
        # the same instant written in UTC or with an offset
        text = (when.astimezone(timezone(timedelta(hours=2))).isoformat() if choice["offset"]
                else at(minutes=choice["minutes"], seconds=index % 3))
        item: dict[str, Any] = {"at": text, "connection": cid, "model": model}
        for name in ("requested", "status", "request_id"):
            if choice[name] is not None:
                item[name] = choice[name]
        if choice["money"] == "cost":
            item["cost_usd"] = 0.1 * (index + 1) + 0.07
        elif choice["money"] == "cost-int":
            item["cost_usd"] = index
        elif choice["money"] == "tokens":
            item["tokens_in"] = 1000 * (index + 1)
            item["tokens_out"] = 333 * index
        items.append(item)
    if order == "time":
        items.sort(key=lambda item: datetime.fromisoformat(item["at"]))
    elif order == "shuffled":
        items = [items[i % len(items)] for i in shuffle] if items else items
    lines = [line(item) for item in items]
    if blank and lines:
        lines.insert(len(lines) // 2, "  \n")
    if torn:
        lines.append('{"at": "2026-11-29T1')
    return lines


@deep(80, quick=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_one_read_audits_as_the_two_reads(tmp_path_factory: pytest.TempPathFactory,
                                              examples: settings) -> None:
    """Duplicates, failed attempts, lines out of time order, blank and torn lines, events
    outside --from/--to: whether the one read keeps its answer or gives it up, the audit
    is the two reads'."""
    @examples
    @given(drawn=events, order=st.sampled_from(["time", "as drawn", "shuffled"]),
           blank=st.booleans(), torn=st.booleans(),
           shuffle=st.lists(st.integers(0, 20), max_size=14),
           start=st.sampled_from([None, *MINUTES[::3]]),
           end=st.sampled_from([None, *MINUTES[1::3]]),
           moving_fleet=st.booleans(), all_requests=st.booleans())
    def holds(drawn: list[dict[str, Any]], order: str, blank: bool, torn: bool,
              shuffle: list[int], start: int | None, end: int | None, moving_fleet: bool,
              all_requests: bool) -> None:
        inputs = moving() if moving_fleet else steady()
        path = write(tmp_path_factory.mktemp("one"),
                     ledger_lines(drawn, order, blank, torn, shuffle))
        options: dict[str, Any] = {"all_requests": all_requests}
        if start is not None:
            options["start"] = instant(minutes=start)
        if end is not None:
            options["end"] = instant(minutes=end)
        found, ledger = once(inputs, path, **dict(options))
        same(found, twice(inputs, path, **dict(options)))
        event(f"one read given up: {ledger.gave_up}")
        if order == "time":
            assert ledger.gave_up is None  # a ledger in time order is read once

    holds()


# --- when the one read holds ------------------------------------------------------------


def test_a_ledger_in_time_order_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -30, cost_usd=1.0,
                                        request_id="a")),
                            line(served("claude-max", "sonnet", -20, request_id="b")),
                            line(served("openai-key", "gpt-big", -10, cost_usd=2.0))])
    found, ledger = once(steady(), path)
    assert ledger.gave_up is None
    assert (found.start, found.end) == (instant(minutes=-30), instant(minutes=-10))
    assert ledger.scan().events == 3
    same(found, twice(steady(), path))


def test_duplicates_are_settled_in_the_one_read(tmp_path: Path) -> None:
    """Each repeated key is held aside and compared with the line that first had its hash:
    all duplicates, so the one read stands, each counted once with its note."""
    first = served("openai-key", "gpt-mini", -30, cost_usd=1.0, request_id="a")
    path = write(tmp_path, [line(first),
                            line(served("claude-max", "sonnet", -25, status="failed",
                                        request_id="a")),
                            line({**first, "at": at(minutes=-20), "cost_usd": 5.0}),
                            line(served("claude-max", "sonnet", -10, request_id="a")),
                            line({**first, "at": at(minutes=-5)})])
    found, ledger = once(steady(), path)
    assert ledger.gave_up is None
    assert found.duplicates == 2
    assert found.leak_usd == pytest.approx(1.0)
    assert any("2 events repeated an earlier one's" in note for note in found.notes)
    same(found, twice(steady(), path))


def test_the_span_ends_are_the_events_the_scan_keeps(tmp_path: Path) -> None:
    """The instant of the ledger's last event also written earlier with another offset:
    the span ends at the first event at that instant, offset and all, as in the two reads."""
    path = write(tmp_path, [line(served("local", "qwen", -30)),
                            line({**served("local", "qwen", 0),
                                  "at": "2026-11-29T14:00:00+02:00"}),
                            line(served("local", "qwen", 0))])
    found, ledger = once(steady(), path)
    assert ledger.gave_up is None
    assert found.end is not None
    assert found.end.utcoffset() == timedelta(hours=2)
    same(found, twice(steady(), path))


def test_a_torn_last_line_is_not_the_span_end(tmp_path: Path) -> None:
    """The last line still being written is not an event: the span's end is the line
    before it, read once, with the note the two reads give."""
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -30, cost_usd=1.0)),
                            line(served("openai-key", "gpt-mini", -20, cost_usd=1.0)),
                            '{"at": "2026-11-29T12:0'])
    found, ledger = once(steady(), path)
    assert ledger.gave_up is None
    assert found.end == instant(minutes=-20)
    assert any("the last, is cut short" in note for note in found.notes)
    same(found, twice(steady(), path))


def test_a_second_audit_of_the_same_ledger_reads_what_the_first_found(tmp_path: Path) -> None:
    """``why`` audits one ledger under several ids: after the one read, the next audit
    reads the ledger again with the duplicates and span the first found."""
    first = served("openai-key", "gpt-mini", -30, cost_usd=1.0, request_id="a")
    path = write(tmp_path, [line(first), line({**first, "at": at(minutes=-20)}),
                            line(served("openai-key", "gpt-big", -10, cost_usd=2.0,
                                        requested="auto/subscription"))])
    ledger = Ledger(path)
    thrifty = audit_traffic(steady(), parse_auto_id("auto/thrifty"), ledger)
    subscription = audit_traffic(steady(), parse_auto_id("auto/subscription"), ledger)
    same(thrifty, twice(steady(), path))
    same(subscription, twice(steady(), path, auto_id="auto/subscription"))


def test_with_both_ends_given_the_order_does_not_matter(tmp_path: Path) -> None:
    """--from and --to known: nothing is taken from the file's ends, so a ledger out of
    time order is still read once."""
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -10, cost_usd=1.0)),
                            line(served("openai-key", "gpt-mini", -50, cost_usd=2.0)),
                            line(served("openai-key", "gpt-mini", -30, cost_usd=4.0))])
    span = {"start": instant(minutes=-40), "end": instant(minutes=-5)}
    found, ledger = once(steady(), path, **span)
    assert ledger.gave_up is None
    assert found.leak_usd == pytest.approx(5.0)
    assert found.not_audited["outside-span"] == 1
    same(found, twice(steady(), path, **span))


# --- each reason to give it up ----------------------------------------------------------


def test_an_event_before_the_first_lines_instant_gives_it_up(tmp_path: Path) -> None:
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -30, cost_usd=1.0)),
                            line(served("openai-key", "gpt-mini", -50, cost_usd=2.0)),
                            line(served("openai-key", "gpt-mini", -10, cost_usd=4.0))])
    found, ledger = once(steady(), path)
    assert ledger.gave_up == "an event before the first line's instant"
    assert found.start == instant(minutes=-50)
    same(found, twice(steady(), path))


def test_an_event_after_the_last_lines_instant_gives_it_up(tmp_path: Path) -> None:
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -30, cost_usd=1.0)),
                            line(served("openai-key", "gpt-mini", -5, cost_usd=2.0)),
                            line(served("openai-key", "gpt-mini", -10, cost_usd=4.0))])
    found, ledger = once(steady(), path, start=instant(minutes=-60))
    assert ledger.gave_up == "an event after the last line's instant"
    assert found.end == instant(minutes=-5)
    same(found, twice(steady(), path, start=instant(minutes=-60)))


def test_a_hash_two_keys_share_gives_it_up(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Two different keys with one hash: the second is held aside, is not a duplicate
    of the first, and so was an event the audit had to count in its place."""
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -30, cost_usd=1.0,
                                        request_id="a")),
                            line(served("openai-key", "gpt-mini", -20, cost_usd=2.0,
                                        request_id="b")),
                            line(served("openai-key", "gpt-mini", -10, cost_usd=4.0,
                                        request_id="a"))])
    reference = twice(steady(), path)
    monkeypatch.setattr(one_read, "hash",
                        lambda value: 7 if type(value) is tuple else builtins.hash(value),
                        raising=False)
    found, ledger = once(steady(), path)
    assert ledger.gave_up == "a key whose hash another key holds"
    assert found.duplicates == 1
    same(found, reference)


def test_more_keys_than_the_table_holds_gives_it_up(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(one_read, "_SLOTS", 4)  # three keys at most
    path = write(tmp_path, [line(served("openai-key", "gpt-mini", -40 + step, cost_usd=1.0,
                                        request_id=f"r{step}")) for step in range(5)])
    found, ledger = once(steady(), path)
    assert ledger.gave_up == "more keys than the table holds"
    assert found.audited == 5
    same(found, twice(steady(), path))


def test_more_repeated_keys_than_are_held_gives_it_up(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(one_read, "_HELD_MAX", 1)
    item = served("openai-key", "gpt-mini", -30, cost_usd=1.0, request_id="a")
    path = write(tmp_path, [line(item)] * 3 + [line(served("local", "qwen", -10))])
    found, ledger = once(steady(), path)
    assert ledger.gave_up == "more repeated keys than are held aside"
    assert found.duplicates == 2
    same(found, twice(steady(), path))


def test_a_file_changed_before_the_duplicates_are_settled_gives_it_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = served("openai-key", "gpt-mini", -30, cost_usd=1.0, request_id="a")
    path = write(tmp_path, [line(item), line({**item, "at": at(minutes=-10)})])
    reference = twice(steady(), path)
    identities = iter(range(100))
    monkeypatch.setattr(one_read, "identity",
                        lambda _: (0, 0, 4096, next(identities), 0))
    found, ledger = once(steady(), path)
    assert ledger.gave_up == "the file changed while it was read"
    same(found, reference)


# --- the command --------------------------------------------------------------------------


def test_a_bad_last_line_is_exit_2_with_nothing_on_stdout(tmp_path: Path) -> None:
    """The audit of every line before it is done by then: nothing of it is printed."""
    good = [line(served("claude-api", "claude-sonnet-4-5", -30 + step, cost_usd=1.0))
            for step in range(20)]
    path = write(tmp_path, [*good, line({**served("claude-api", "claude-sonnet-4-5", -5),
                                         "tokens_in": -1})])
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--traffic", str(path),
                                 "--json"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "t.jsonl:21: tokens_in: must be 0 or more" in result.stderr


def test_the_span_is_checked_against_the_ledger_read_once(tmp_path: Path) -> None:
    """--from after the ledger's last event is still a usage error naming it."""
    path = write(tmp_path, [line(served("claude-api", "claude-sonnet-4-5", -30)),
                            line(served("claude-api", "claude-sonnet-4-5", -20))])
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--traffic", str(path),
                                 "--from", at(minutes=-10)])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert f"after the ledger's last event ({at(minutes=-20)})" in result.stderr


def test_ends_reads_the_files_first_and_last_events(tmp_path: Path) -> None:
    path = write(tmp_path, ["\n", line(served("local", "qwen", -30)),
                            line(served("local", "qwen", -40)), "\n",
                            line(served("local", "qwen", -20)), "\n"])
    assert Ledger(path).ends() == (instant(minutes=-30), instant(minutes=-20))
    long = write(tmp_path, [line(served("local", "qwen", -30 + step)) for step in range(700)],
                 name="long.jsonl")  # longer than the part of each end that is read
    assert long.stat().st_size > one_read._ENDS
    assert Ledger(long).ends() == (instant(minutes=-30), instant(minutes=669))
    assert Ledger(write(tmp_path, ["\n"], name="blank.jsonl")).ends() is None
    assert Ledger(write(tmp_path, ['{"at": 1}\n'], name="bad.jsonl")).ends() is None
