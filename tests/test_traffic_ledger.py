"""The traffic ledger (SPEC §7.1): JSONL streamed and validated line by line, documents,
deduplication, and the ledger as a spend ledger (R8) and as ``[inputs] traffic``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.inputs.ledger.events import FIELDS, STATUSES
from omniladder.inputs.ledger.read import Ledger
from omniladder.inputs.ledger.schema import TrafficEvent
from omniladder.inputs.schemas import json_schema
from omniladder.models import field_types
from tests.depth import deep
from tests.test_init_schema import _valid

runner = CliRunner()

GOOD = {"at": "2026-11-29T11:00:00Z", "connection": "claude-api",
        "model": "claude-sonnet-4-5", "requested": "auto/thrifty", "status": "served",
        "tokens_in": 1200, "tokens_out": 300, "tokens_cache_read": 0,
        "tokens_cache_write": 0, "cost_usd": 0.0081, "request_id": "req-1",
        "attempts_before": 1}


def write(tmp_path: Path, lines: list[str], name: str = "traffic.jsonl",
          end: str = "\n") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def read(path: Path) -> list[Any]:
    found = Ledger(path)
    found.scan()
    return list(found.events())


def test_the_fields_and_statuses_are_pinned() -> None:
    assert FIELDS == ("at", "connection", "model", "requested", "status", "tokens_in",
                      "tokens_out", "tokens_cache_read", "tokens_cache_write", "cost_usd",
                      "request_id", "attempts_before")
    assert STATUSES == ("served", "failed")
    assert tuple(field_types(TrafficEvent)) == FIELDS  # the schema's record, field for field


def test_a_full_event_reads(tmp_path: Path) -> None:
    [found] = read(write(tmp_path, [json.dumps(GOOD)]))
    assert (found.connection, found.tokens_in, found.cost_usd, found.attempts_before,
            found.line) == ("claude-api", 1200, 0.0081, 1, 1)
    assert _valid({"events": [GOOD]}, json_schema("traffic"), json_schema("traffic"))


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"at": None}, "at", "field required"),
    ({"connection": None}, "connection", "field required"),
    ({"model": None}, "model", "field required"),
    ({"at": "2026-11-29T11:00:00"}, "at", "no offset"),
    ({"at": "yesterday"}, "at", "not an RFC 3339 timestamp"),
    ({"tokens_in": -1}, "tokens_in", "0 or more"),
    ({"tokens_out": 2.5}, "tokens_out", "whole number"),
    ({"cost_usd": -0.01}, "cost_usd", "0 or more"),
    ({"cost_usd": "0.1"}, "cost_usd", "number of US dollars"),
    ({"status": "ok"}, "status", "served or failed"),
    ({"connection": " "}, "connection", "blank"),
    ({"modle": "x"}, "modle", "did you mean 'model'"),
    ({"api_key": "sk-secret-value"}, "api_key", "never needs credentials"),
])
def test_a_bad_line_names_the_file_the_line_and_the_field(
        tmp_path: Path, change: dict[str, Any], field: str, words: str) -> None:
    bad = {**GOOD, **change}
    bad = {k: v for k, v in bad.items() if v is not None}
    path = write(tmp_path, [json.dumps(GOOD), json.dumps(bad), json.dumps(GOOD)])
    with pytest.raises(InputError) as caught:
        read(path)
    error = caught.value
    assert (error.line, error.field) == (2, field)
    assert words in str(error)
    assert str(error).startswith(f"{path}:2: {field}: ") or "traffic.jsonl:2:" in str(error)
    assert "sk-secret-value" not in str(error)


def test_a_line_that_is_not_json_is_exit_2_unless_it_is_the_torn_last(tmp_path: Path) -> None:
    path = write(tmp_path, [json.dumps(GOOD), '{"at": "2026-', json.dumps(GOOD)])
    with pytest.raises(InputError, match="not a JSON event") as caught:
        read(path)
    assert caught.value.line == 2
    torn = write(tmp_path, [json.dumps(GOOD), json.dumps({**GOOD, "request_id": "r2"}),
                            '{"at": "2026-11-29T12:0'], end="")
    ledger = Ledger(torn)
    ledger.scan()
    assert len(list(ledger.events())) == 2
    assert any("line 3, the last, is cut short" in note for note in ledger.notes)
    whole = write(tmp_path, [json.dumps(GOOD)], end="")  # a last line that is whole
    assert len(read(whole)) == 1


def test_duplicates_are_read_once(tmp_path: Path) -> None:
    """Same request_id, connection and status: one event (re-import is idempotent); the
    failed attempt of the same request, another connection, or no request_id are not."""
    failed = {**GOOD, "status": "failed"}
    other = {**GOOD, "connection": "openai-key"}
    anonymous = {k: v for k, v in GOOD.items() if k != "request_id"}
    lines = [GOOD, failed, other, GOOD, {**GOOD, "cost_usd": 9}, anonymous, anonymous]
    ledger = Ledger(write(tmp_path, [json.dumps(item) for item in lines]))
    ledger.scan()
    kept = list(ledger.events())
    assert [event.line for event in kept] == [1, 2, 3, 6, 7]
    assert ledger.duplicates == 2
    assert len(list(ledger.events())) == 5  # a second read gives the same events


def test_a_document_in_json_and_toml(tmp_path: Path) -> None:
    document = tmp_path / "traffic.json"
    document.write_text(json.dumps({"events": [GOOD, {**GOOD, "request_id": "r2"}]}))
    assert len(read(document)) == 2
    toml = tmp_path / "traffic.toml"
    toml.write_text('[[events]]\nat = "2026-11-29T11:00:00Z"\nconnection = "a"\n'
                    'model = "m"\ntokens_in = -3\n')
    with pytest.raises(InputError) as caught:
        read(toml)
    assert caught.value.field == "events[0].tokens_in"


def test_the_schema_accepts_what_the_reader_accepts_and_refuses_unknown_keys() -> None:
    schema = json_schema("traffic")
    assert _valid({"events": [GOOD]}, schema, schema)
    assert not _valid({"events": [{**GOOD, "modle": "x"}]}, schema, schema)
    assert not _valid({"events": [{"at": GOOD["at"], "model": "m"}]}, schema, schema)


# --- a traffic ledger is a spend ledger (§7.1) ---------------------------------------------


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def plan_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def premium(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in document["rungs"] if r["rung"] == "premium")
    return found


@pytest.mark.parametrize("name", ["spent.jsonl", "spent.json"])
def test_served_priced_events_count_toward_budgets(tmp_path: Path, name: str) -> None:
    """A served event with a recorded cost counts like a spend event; a failed one, one
    without a cost and a duplicate do not."""
    events = [
        {"at": "2026-11-29T09:00:00Z", "connection": "claude-api",
         "model": "claude-sonnet-4-5", "cost_usd": 12.5, "request_id": "a"},
        {"at": "2026-11-29T09:00:00Z", "connection": "claude-api",
         "model": "claude-sonnet-4-5", "cost_usd": 12.5, "request_id": "a"},
        {"at": "2026-11-29T09:01:00Z", "connection": "claude-api",
         "model": "claude-sonnet-4-5", "cost_usd": 50, "status": "failed"},
        {"at": "2026-11-29T09:02:00Z", "connection": "claude-api",
         "model": "claude-sonnet-4-5", "tokens_in": 5, "tokens_out": 5},
    ]
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
    else:
        path.write_text(json.dumps({"events": events}))
    rung = premium(plan_json("--spend", str(path)))
    assert rung["spent_usd"] == 12.5


def test_settings_name_the_traffic_ledger(tmp_path: Path) -> None:
    """``[inputs] traffic``: the ledger audit traffic reads, and the spend ledger when the
    settings name none."""
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_text(json.dumps({"at": "2026-11-29T09:00:00Z", "connection": "claude-api",
                                  "model": "claude-sonnet-4-5", "cost_usd": 3.25,
                                  "requested": "auto/thrifty"}) + "\n")
    settings = tmp_path / "omniladder.toml"
    settings.write_text(f'[inputs]\nconnections = "{EXAMPLES / "connections.toml"}"\n'
                        f'quota = "{EXAMPLES / "quota.json"}"\ntraffic = "traffic.jsonl"\n'
                        '[budgets]\nrung_budget_usd = { premium = 20.0 }\n')
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(settings), "--json"])
    assert result.exit_code == 0, result.output
    assert premium(json.loads(result.stdout))["spent_usd"] == 3.25
    audited = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config",
                                  str(settings), "--json", "--max-leak-usd", "100"])
    assert audited.exit_code == 0, audited.output
    assert json.loads(audited.stdout)["events"]["read"] == 1


def test_a_line_changed_between_the_two_reads_is_checked_again(tmp_path: Path) -> None:
    """The second read trusts what the scan validated; a line rewritten in between (a
    gateway rewriting its log) is validated again, not trusted."""
    path = write(tmp_path, [json.dumps(GOOD), json.dumps({**GOOD, "request_id": "r2"})])
    ledger = Ledger(path)
    ledger.scan()
    path.write_text(json.dumps(GOOD) + "\n" + '{"at": "2026-11-29T11:00:00Z"}\n')
    with pytest.raises(InputError) as caught:
        list(ledger.events())
    assert (caught.value.line, caught.value.field) == (2, "connection")


def test_a_toml_ledger_takes_toml_date_times(tmp_path: Path) -> None:
    """TOML writes instants as its own date-times; one without an offset is refused as a
    string without one is."""
    toml = tmp_path / "traffic.toml"
    toml.write_text('[[events]]\nat = 2026-11-29T11:00:00Z\nconnection = "a"\nmodel = "m"\n')
    [found] = read(toml)
    assert found.at.isoformat() == "2026-11-29T11:00:00+00:00"
    toml.write_text('[[events]]\nat = 2026-11-29T11:00:00\nconnection = "a"\nmodel = "m"\n')
    with pytest.raises(InputError, match="no offset") as caught:
        read(toml)
    assert caught.value.field == "events[0].at"


# The scan checks a line with ``fast_check`` and falls back to ``event_from`` only when that
# cannot accept it: each value below, put in each field of an event already accepted once
# (its texts remembered), must be accepted by both or left by ``fast_check`` to ``event_from``.
_ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**70, 0.0, -0.0, -0.5, 1.5, float("inf"), float("nan"), "",
    " ", "x", "served", "failed", "Served", "req 1", "a\u0085b", "a\tb", "auto/thrifty",
    "2026-11-29T11:00:00Z", "2026-11-29t11:00:00z", "2026-11-29T11:00:00",
    " 2026-11-29T11:00:00+02:00 ", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
    "2026-02-30T00:00:00Z", [], {}, ["served"])


@pytest.mark.parametrize("name", [*FIELDS, "api_key", "note"])
def test_the_fast_check_accepts_only_what_event_from_accepts(name: str) -> None:
    from omniladder.inputs.ledger.events import Place, event_from, fast_check

    place = Place("traffic.jsonl", 1, "")
    event_from(dict(GOOD), place, 1)  # its texts are now known, as after a first line
    for value in _ODD_VALUES:
        data = {**GOOD, name: value}
        quick = fast_check(dict(data))
        try:
            event = event_from(dict(data), place, 1)
        except InputError:
            assert quick is None, (name, value)
            continue
        if quick is not None:
            assert quick == (event.at, event.connection, event.status, event.request_id)
            assert quick[0].utcoffset() == event.at.utcoffset()
    for absent in ("at", "connection", "model"):
        data = {key: value for key, value in GOOD.items() if key != absent}
        assert fast_check(data) is None


def test_a_bad_line_after_good_ones_is_still_the_error(tmp_path: Path) -> None:
    """The fast check does not let a fault past the scan: the first bad line is exit 2."""
    good = json.dumps(GOOD)
    bad = json.dumps({**GOOD, "tokens_out": -3})
    path = write(tmp_path, [good] * 50 + [bad] + [good] * 5)
    with pytest.raises(InputError) as caught:
        Ledger(path).scan()
    assert caught.value.line == 51
    assert caught.value.field == "tokens_out"


# --- the fast paths and the full check agree ------------------------------------------------

_AT_PIECES = ("2026-11-29", "20261129", "2026W481", "2026-W48-1", "T", "t", " ", "x", "ß",
              "12", "12:00", "120000", "12:00:00", ":60", ".5", ".123456", ".1234567", ",5",
              "Z", "z", "+02:00", "-0130", "+14:00", "+24:00", "0001-01-01", "9999-12-31",
              "23:59:59", "\u0130", "\n", "")


@deep(300, deadline=None)
def test_the_fast_check_reads_at_and_request_id_as_event_from(examples: settings) -> None:
    """``fast_check`` parses ``at`` with ``datetime.fromisoformat`` as it is and takes a
    printable request id without the pattern: each answer equals ``event_from``'s, and
    what ``fast_check`` leaves to it is for ``event_from`` to decide."""
    from omniladder.inputs.ledger.events import Place, event_from, fast_check, instant_of

    @examples
    @given(st.lists(st.sampled_from(_AT_PIECES), min_size=1, max_size=6),
           st.text(max_size=12))
    @example(["2026-11-29", "ß", "12:00", "Z"], "r")  # upper() makes the separator two letters
    @example(["2026-11-29", "t", "12:00", "z"], " \xa0r")
    def holds(pieces: list[str], request: str) -> None:
        place = Place("traffic.jsonl", 1, "")
        event_from(dict(GOOD), place, 1)
        data = {**GOOD, "at": "".join(pieces), "request_id": request}
        quick = fast_check(dict(data))
        try:
            event = event_from(dict(data), place, 1)
        except InputError:
            assert quick is None, data
            return
        if quick is not None:
            assert quick == (event.at, event.connection, event.status, event.request_id)
            assert quick[0].utcoffset() == event.at.utcoffset()
        again = instant_of("".join(pieces))  # the second read's parse of an accepted text
        assert (again, again.utcoffset()) == (event.at, event.at.utcoffset())

    holds()


_LINE_PIECES = ('{"at": "2026-11-29T11:00:00Z", "connection": "claude-api", '
                '"model": "claude-sonnet-4-5"}', "{}", "[]", "1", '"x"', "null", " ", "\t",
                "\r", "\x0b", "\ufeff", "\xe9", "x", "{", "}", '{"a": 1}', ",", "NaN",
                '{"a": "\\ud800"}', '{"a": "\x01"}', '{"a": 1}{"b": 2}')


@deep(300, deadline=None)
def test_the_reader_gives_each_line_as_json_loads_does(
        tmp_path_factory: pytest.TempPathFactory, examples: settings) -> None:
    """The ledger's reader (blocks, one decode, the C scanner) gives every line as
    ``json.loads`` gives it, skips the blank ones, and refuses the first other one with the
    message a line read by itself gets; a line holding a lone surrogate is refused as a
    JSON document holding one is."""
    from omniladder.inputs.documents import first_lone_surrogate

    @examples
    @given(st.lists(st.lists(st.sampled_from(_LINE_PIECES), max_size=3).map("".join),
                    min_size=1, max_size=6),
           st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]),
           st.booleans())
    def holds(lines: list[str], encoding: str, torn: bool) -> None:
        path = tmp_path_factory.mktemp("lines") / "traffic.jsonl"
        errors = "surrogatepass" if encoding.startswith("utf") else "replace"
        path.write_bytes(b"\n".join(line.encode(encoding, errors) for line in lines)
                         + (b"" if torn else b"\n"))
        *whole, rest = path.read_bytes().split(b"\n")  # the lines readline gives
        raw = [line + b"\n" for line in whole] + ([rest] if rest else [])
        expected: list[tuple[int, Any]] = []
        error: int | None = None
        surrogate = False
        for number, item in enumerate(raw, 1):
            try:
                data = json.loads(item)
            except (ValueError, RecursionError):
                if not item.endswith(b"\n") or item.isspace():
                    continue  # the torn last line, or a blank one
                error = number
                break
            if first_lone_surrogate(data) is not None:
                error, surrogate = number, True
                break
            expected.append((number, data))
        ledger = Ledger(path)
        if error is not None:
            words = "lone surrogate" if surrogate else r"not (a JSON event|UTF-8)"
            with pytest.raises(InputError, match=words) as caught:
                list(ledger.lines())
            assert caught.value.line == error
            return
        found = list(ledger.lines())
        assert repr(found) == repr(expected)  # repr: NaN is not equal to itself

    holds()


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=14)),
                                               timezone(timedelta(hours=-9, minutes=-30))])))
def test_an_instant_is_written_to_the_millisecond_in_utc(instant: datetime) -> None:
    """``millis`` (isoformat in C) writes what the field-by-field format wrote: UTC, a
    four-digit year, the microseconds cut (never rounded) to milliseconds, and Z."""
    from omniladder.inputs.ledger.events import millis

    utc = instant.astimezone(UTC)
    assert millis(instant) == (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond // 1000:03d}Z")


_VALUES = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=8))


@deep(300, deadline=None)
def test_an_event_line_is_what_json_dumps_writes(examples: settings) -> None:
    """``event_line`` calls the C encoder ``json.dumps`` makes, made once: the same text,
    keys in the event's order, non-ASCII kept."""
    from omniladder.inputs.ledger.events import event_line

    @examples
    @given(st.dictionaries(st.text(max_size=6), _VALUES, max_size=8))
    def holds(event: dict[str, Any]) -> None:
        assert event_line(event) == json.dumps(event, ensure_ascii=False) + "\n"

    holds()


# --- one guard for every reader: numbers past a float, surrogates, repeated keys, size ------


CONFIG = str(EXAMPLES / "omniladder.toml")
SHIPPED = (EXAMPLES / "traffic.jsonl").read_text(encoding="utf-8").splitlines()
"""The example ledger, as an importer writes one: the lines each guard is tried in."""


def ledger_with(tmp_path: Path, line: str, at: int = 2, name: str = "traffic.jsonl") -> Path:
    """The example ledger with its line ``at`` (from 1) replaced by ``line``."""
    lines = list(SHIPPED)
    lines[at - 1] = line
    return write(tmp_path, lines, name)


def readers(tmp_path: Path, ledger: Path) -> dict[str, list[str]]:
    """Every command that reads a traffic ledger, each reading ``ledger``."""
    policy = tmp_path / "policy.toml"
    policy.write_text(f'config = "{CONFIG}"\n[[expect]]\nname = "traffic"\n'
                      f'auto_id = "auto/thrifty"\nmax_leak_usd = 9\ntraffic = "{ledger}"\n')
    return {
        "audit traffic": ["audit", "traffic", "auto/thrifty", "--config", CONFIG,
                          "--traffic", str(ledger)],
        "audit traffic --json": ["audit", "traffic", "auto/thrifty", "--config", CONFIG,
                                 "--traffic", str(ledger), "--json"],
        "why --traffic": ["why", "claude-max-work", "--config", CONFIG, "--traffic",
                          str(ledger)],
        "simulate --traffic": ["simulate", "auto/thrifty", "--config", CONFIG, "--from",
                               "2026-11-29T11:00:00Z", "--to", "2026-11-29T11:30:00Z",
                               "--traffic", str(ledger)],
        "check": ["check", str(policy)],
        "plan --spend": ["plan", "auto/thrifty", "--config", CONFIG, "--spend", str(ledger)],
    }


def refused_by_every_reader(tmp_path: Path, ledger: Path, expected: str) -> None:
    """Each reader: exit 2, and its one error line is ``expected`` (nothing on stdout)."""
    for name, argv in readers(tmp_path, ledger).items():
        result = runner.invoke(app, argv)
        assert result.exit_code == 2, (name, result.output)
        assert result.stderr.splitlines() == [f"omniladder: error: {expected}"], (
            name, result.stderr)
        assert result.stdout == "", name


def event(**change: Any) -> str:
    """Line 2 of the example ledger with ``change`` made, as JSON text."""
    data = json.loads(SHIPPED[1])
    data.update(change)
    return json.dumps(data)


@pytest.mark.parametrize(("digits", "shown"), [
    (13, "1,000,000,000,001"), (320, "a number of 320 digits"),
    (5001, "a number of 5,001 digits")])
def test_a_count_no_request_has_is_one_line_in_every_reader(
        tmp_path: Path, digits: int, shown: str) -> None:
    """309 digits were an OverflowError in the pricing, 5,001 a ValueError in the parse
    (Python's int-str limit), 10^12 + 1 a count no request has: each is exit 2 naming the
    file, the line and the field, wherever the ledger is read."""
    value = "1" + "0" * (digits - 2) + "1" if digits == 13 else "9" * digits
    if digits == 13:
        shown = "1000000000001"
    line = SHIPPED[1].replace('"tokens_in": 20000', f'"tokens_in": {value}')
    assert line != SHIPPED[1]
    ledger = ledger_with(tmp_path, line)
    refused_by_every_reader(tmp_path, ledger, f"{ledger}:2: tokens_in: must be at most "
                            "1,000,000,000,000 (10^12: more than any request counts; check "
                            f"the units), got {shown}")


def test_a_count_at_the_bound_is_read(tmp_path: Path) -> None:
    [found] = read(write(tmp_path, [json.dumps({**GOOD, "tokens_in": 10**12,
                                                "tokens_cache_write": 10**12})]))
    assert (found.tokens_in, found.tokens_cache_write) == (10**12, 10**12)
    for name in ("tokens_out", "tokens_cache_read", "tokens_cache_write", "attempts_before"):
        with pytest.raises(InputError, match="must be at most 1,000,000,000,000") as caught:
            read(write(tmp_path, [json.dumps({**GOOD, name: 10**12 + 1})]))
        assert caught.value.field == name


def test_costs_whose_sum_overflows_are_refused_by_the_rule_plan_spend_keeps(
        tmp_path: Path) -> None:
    """Two costs of 1e308, each finite, summed to "$inf paid" and ``"leak_usd": Infinity``
    (not JSON); the ledger's bound refuses the first, in every reader, with the words a
    spend document gets for the same cost."""
    ledger = ledger_with(tmp_path, event(cost_usd=1e308))
    lines = ledger.read_text(encoding="utf-8").splitlines()
    lines[3] = json.dumps({**json.loads(lines[3]), "cost_usd": 1e308})
    ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused_by_every_reader(tmp_path, ledger, f"{ledger}:2: cost_usd: must be at most "
                            "1,000,000 US dollars an event (more than any request costs; "
                            "check the units), got 1e+308")
    spend = tmp_path / "spend.json"
    spend.write_text(json.dumps({"events": [
        {"at": "2026-11-29T09:00:00Z", "rung": "premium", "cost_usd": 1e308}]}))
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--spend",
                                 str(spend)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"omniladder: error: {spend}: events[0].cost_usd: must be at most 1,000,000 US "
        "dollars an event (more than any request costs; check the units), got 1e+308"]


def test_a_cost_at_the_bound_is_read_and_sums_finite(tmp_path: Path) -> None:
    ledger = ledger_with(tmp_path, event(cost_usd=1_000_000.0, requested="auto/thrifty",
                                         connection="openai-key", model="gpt-5.1"))
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config", CONFIG,
                                 "--traffic", str(ledger), "--json"])
    assert result.exit_code == 1, result.output
    assert "Infinity" not in result.stdout
    assert json.loads(result.stdout)["leak_usd"] >= 1_000_000.0


def test_the_writer_refuses_an_event_no_reader_takes(tmp_path: Path) -> None:
    """``event_line``, the importers' one writer, refuses a count or cost the readers
    refuse; ``import litellm-spend`` of LiteLLM's published row with such a count drops the
    count (counted in a note) and keeps the row, and such a spend is exit 2, no ledger."""
    from omniladder.inputs.ledger.events import UnwritableEvent, event_line

    base = json.loads(SHIPPED[1])
    for change, field in (({"tokens_out": 10**400}, "tokens_out"),
                          ({"cost_usd": 1e308}, "cost_usd"),
                          ({"cost_usd": float("inf")}, "cost_usd"),
                          ({"attempts_before": 10**13}, "attempts_before")):
        with pytest.raises(UnwritableEvent) as caught:
            event_line({**base, **change})
        assert caught.value.field == field
    assert event_line({**base, "tokens_out": 10**12, "cost_usd": 1e6}).endswith("}\n")
    published = Path(__file__).parent / "fixtures" / "sources" / "litellm" / \
        "spend-logs-payload-e2e.json"
    rows = json.loads(published.read_text(encoding="utf-8"))
    rows[0]["prompt_tokens"] = 10**320
    source = tmp_path / "logs.json"
    source.write_text(json.dumps(rows), encoding="utf-8")
    ledger = tmp_path / "traffic.jsonl"
    result = runner.invoke(app, ["import", "litellm-spend", str(source), "--traffic",
                                 str(ledger), "--since", "all"])
    # the importers' one rule for a value the ledger cannot take (sources/ledger_values.py):
    # the count is dropped and counted, the row kept without it, never written past the bound
    assert result.exit_code == 0, result.output
    assert "prompt_tokens: more than any request has (over 1,000,000,000,000) (1)" \
        in result.stderr
    assert "Traceback" not in result.output
    [event] = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert "tokens_in" not in event
    rows[0]["spend"] = 1e308
    source.write_text(json.dumps(rows), encoding="utf-8")
    again = tmp_path / "again.jsonl"
    refused = runner.invoke(app, ["import", "litellm-spend", str(source), "--traffic",
                                  str(again), "--since", "all"])
    assert refused.exit_code == 2, refused.output
    assert "spend: is more than any request costs" in refused.stderr
    assert not again.exists()


@pytest.mark.parametrize("where", ["request_id", "model", "key"])
def test_a_lone_surrogate_in_a_line_is_refused_when_read(tmp_path: Path, where: str) -> None:
    """An escaped lone surrogate was read, then failed the --json view blaming stdout."""
    if where == "key":
        line = SHIPPED[1][:-1] + ', "note\\udc80": 1}'
        expected = "key 'note\\udc80' holds a lone surrogate (\\udc80)"
    else:
        line = SHIPPED[1].replace(f'"{where}": "', f'"{where}": "x\\ud800', 1)
        expected = f"{where}: contains a lone surrogate (\\ud800)"
    ledger = ledger_with(tmp_path, line)
    refused_by_every_reader(tmp_path, ledger, f"{ledger}:2: {expected}; JSON text must "
                            "encode whole characters (an escaped surrogate needs its pair)")


def test_an_escaped_pair_and_other_escapes_are_read(tmp_path: Path) -> None:
    ledger = ledger_with(tmp_path, SHIPPED[1].replace('"request_id": "', '"request_id": '
                                                      '"\\ud83d\\ude00\\u00e9-', 1))
    events = read(ledger)
    assert events[1].request_id.startswith("\U0001f600\u00e9-")


@pytest.mark.parametrize("spacing", [": ", " : ", ":"])
def test_a_key_given_twice_in_a_line_is_refused(tmp_path: Path, spacing: str) -> None:
    """The last of two values was taken (the leak fell from $3.00 to $1.08); a JSON
    document with the same keys was already exit 2. However the line spaces its colons."""
    line = event(connection="openai-key", model="gpt-5.1")[:-1] + \
        f', "cost_usd"{spacing}1.08}}'
    line = line.replace('"cost_usd": 0.075', f'"cost_usd"{spacing}3.0')
    assert line.count('"cost_usd"') == 2
    ledger = ledger_with(tmp_path, line, at=5)
    refused_by_every_reader(tmp_path, ledger, f"{ledger}:5: cost_usd: key 'cost_usd' is "
                            "given twice in one object; a JSON key is given once (which of "
                            "the two values counts is not defined: remove one)")


def test_a_value_that_spells_a_key_is_no_repeat(tmp_path: Path) -> None:
    """The count of names is an upper bound: a text holding ``":`` only sends its block to
    the exact check, which reads it."""
    ledger = ledger_with(tmp_path, event(request_id='a": "b', requested="auto/thrifty"))
    assert read(ledger)[1].request_id == 'a": "b'


def test_a_ledger_past_the_streamed_cap_is_refused_by_its_size(tmp_path: Path) -> None:
    """A sparse 2 GiB file (no newline in it) was read for 26 s and 580 MB before its error;
    its size refuses it before a byte is read."""
    ledger = tmp_path / "traffic.jsonl"
    with ledger.open("wb") as out:
        out.truncate(2 * 1024**3)
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config", CONFIG,
                                 "--traffic", str(ledger)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"omniladder: error: {ledger}: larger than 1,024 MiB, the most omniladder reads from "
        "one input; is it the right file?"]


def test_a_line_past_a_mebibyte_is_refused_at_its_line(tmp_path: Path) -> None:
    """A line longer than any event is the wrong file: refused once a mebibyte of it is
    read, whether a newline ends it or not; a line of a mebibyte exactly is an event."""
    filler = 1024 * 1024 - len(json.dumps({**GOOD, "request_id": ""})) - 1
    at_limit = json.dumps({**GOOD, "request_id": "r" * filler})
    assert len(at_limit) + 1 == 1024 * 1024
    assert read(write(tmp_path, [json.dumps(GOOD), at_limit]))[1].request_id == "r" * filler
    too_long = json.dumps({**GOOD, "request_id": "r" * (filler + 1)})
    for end in ("\n", ""):
        ledger = write(tmp_path, [json.dumps(GOOD), too_long, json.dumps(GOOD)], end=end)
        refused_by_every_reader(tmp_path, ledger, f"{ledger}:2: a line longer than 1 MiB, "
                                "longer than any event; is it the right file?")
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_bytes(b"x" * (3 * 1024 * 1024))  # no newline at all
    with pytest.raises(InputError, match=r"traffic\.jsonl:1: a line longer than 1 MiB"):
        read(ledger)


class _Terminal:
    """A standard error that is a terminal, keeping what is written to it."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.written: list[str] = []

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_a_long_read_shows_its_progress_on_a_terminal_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tty: bool) -> None:
    """Bytes read of the file's size, every few seconds (here every block), on standard
    error when it is a terminal; the line is cleared once the read ends."""
    import sys

    from omniladder.inputs.ledger import lines as ledger_lines

    lines = [json.dumps({**GOOD, "request_id": f"r{n}"}) for n in range(9000)]
    ledger = write(tmp_path, lines)
    size = ledger.stat().st_size
    assert size > 2 * 1024 * 1024
    stderr = _Terminal(tty)
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(ledger_lines.Progress, "EVERY", 0.0)
    assert len(read(ledger)) == 9000
    if not tty:
        assert stderr.written == []
        return
    total = f"{size / 2**20:,.0f} MiB"
    assert f"traffic.jsonl: read 1 MiB of {total} (" in "".join(stderr.written)
    assert stderr.written[-1] == "\r\x1b[K"


@pytest.mark.parametrize("name", ["-", "traffic.log"])
def test_an_unsupported_ledger_name_lists_every_accepted_suffix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traffic.log").write_text(SHIPPED[0] + "\n", encoding="utf-8")
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--config", CONFIG,
                                 "--traffic", name], input=SHIPPED[0] + "\n")
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "a traffic ledger is a .jsonl, .ndjson, .json or .toml file" in line, line
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--spend",
                                 name], input=SHIPPED[0] + "\n")
    assert result.exit_code == 2
    assert ".jsonl, .ndjson, .json or .toml file" in result.stderr


def _member(key: str, value: str, colon: str) -> str:
    return json.dumps(key) + colon + value


@st.composite
def _json_object(draw: st.DrawFn, depth: int = 2) -> str:
    """An object's JSON text whose keys often repeat, spaced either way, its values holding
    commas, colons, nested objects and arrays of objects."""
    values = st.sampled_from(["1", '"x,y"', '"a\\": 1"', "[1, 2]", "null"])
    if depth:
        values = values | _json_object(depth - 1) | _json_object(depth - 1).map(
            lambda inner: f"[{inner}, {inner}]")
    members = draw(st.lists(st.tuples(st.sampled_from(["a", "b", "a,b", "c\""]), values),
                            max_size=4))
    colon = draw(st.sampled_from([": ", ":", " : "]))
    comma = draw(st.sampled_from([", ", ","]))
    return "{" + comma.join(_member(key, value, colon) for key, value in members) + "}"


@deep(300, deadline=None)
def test_a_repeated_key_anywhere_in_a_line_is_found_by_the_counts(
        tmp_path_factory: pytest.TempPathFactory, examples: settings) -> None:
    """The block's count of commas against its objects' keys misses no repeat, at any
    depth: the reader refuses exactly the first line ``json.loads`` with a check of each
    object finds one in, and gives every line as ``json.loads`` does otherwise."""
    from omniladder.inputs.documents import RepeatedKey, unique_keys

    @examples
    @given(st.lists(_json_object(), min_size=1, max_size=8))
    def counted(lines: list[str]) -> None:
        path = tmp_path_factory.mktemp("repeats") / "traffic.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        first: int | None = None
        for number, line in enumerate(lines, 1):
            try:
                json.loads(line, object_pairs_hook=unique_keys)
            except RepeatedKey:
                first = number
                break
        if first is None:
            assert list(Ledger(path).lines()) == [
                (number, json.loads(line)) for number, line in enumerate(lines, 1)]
            return
        with pytest.raises(InputError, match="is given twice in one object") as caught:
            list(Ledger(path).lines())
        assert caught.value.line == first

    counted()
