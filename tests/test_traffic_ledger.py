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
from omniladder.inputs.schemas import json_schema
from omniladder.inputs.traffic import FIELDS, STATUSES, Ledger, TrafficEvent
from omniladder.models import field_types
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


# The scan checks a line with ``_fast`` and falls back to ``event_from`` only when that
# cannot accept it: each value below, put in each field of an event already accepted once
# (its texts remembered), must be accepted by both or left by ``_fast`` to ``event_from``.
_ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**70, 0.0, -0.0, -0.5, 1.5, float("inf"), float("nan"), "",
    " ", "x", "served", "failed", "Served", "req 1", "a\u0085b", "a\tb", "auto/thrifty",
    "2026-11-29T11:00:00Z", "2026-11-29t11:00:00z", "2026-11-29T11:00:00",
    " 2026-11-29T11:00:00+02:00 ", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
    "2026-02-30T00:00:00Z", [], {}, ["served"])


@pytest.mark.parametrize("name", [*FIELDS, "api_key", "note"])
def test_the_fast_check_accepts_only_what_event_from_accepts(name: str) -> None:
    from omniladder.inputs.traffic import _fast, _Place, event_from

    place = _Place("traffic.jsonl", 1, "")
    event_from(dict(GOOD), place, 1)  # its texts are now known, as after a first line
    for value in _ODD_VALUES:
        data = {**GOOD, name: value}
        quick = _fast(dict(data))
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
        assert _fast(data) is None


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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_AT_PIECES), min_size=1, max_size=6),
       st.text(max_size=12))
@example(["2026-11-29", "ß", "12:00", "Z"], "r")  # upper() makes the separator two letters
@example(["2026-11-29", "t", "12:00", "z"], " \xa0r")
def test_the_fast_check_reads_at_and_request_id_as_event_from(
        pieces: list[str], request: str) -> None:
    """``_fast`` parses ``at`` with ``datetime.fromisoformat`` as it is and takes a
    printable request id without the pattern: each answer equals ``event_from``'s, and
    what ``_fast`` leaves to it is for ``event_from`` to decide."""
    from omniladder.inputs.traffic import _fast, _instant_of, _Place, event_from

    place = _Place("traffic.jsonl", 1, "")
    event_from(dict(GOOD), place, 1)
    data = {**GOOD, "at": "".join(pieces), "request_id": request}
    quick = _fast(dict(data))
    try:
        event = event_from(dict(data), place, 1)
    except InputError:
        assert quick is None, data
        return
    if quick is not None:
        assert quick == (event.at, event.connection, event.status, event.request_id)
        assert quick[0].utcoffset() == event.at.utcoffset()
    again = _instant_of("".join(pieces))  # the second read's parse of an accepted text
    assert (again, again.utcoffset()) == (event.at, event.at.utcoffset())


_LINE_PIECES = ('{"at": "2026-11-29T11:00:00Z", "connection": "claude-api", '
                '"model": "claude-sonnet-4-5"}', "{}", "[]", "1", '"x"', "null", " ", "\t",
                "\r", "\x0b", "\ufeff", "\xe9", "x", "{", "}", '{"a": 1}', ",", "NaN",
                '{"a": "\\ud800"}', '{"a": "\x01"}', '{"a": 1}{"b": 2}')


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_LINE_PIECES), max_size=3).map("".join),
                min_size=1, max_size=6),
       st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]),
       st.booleans())
def test_the_reader_gives_each_line_as_json_loads_does(
        tmp_path_factory: pytest.TempPathFactory, lines: list[str], encoding: str,
        torn: bool) -> None:
    """The ledger's reader (blocks, one decode, the C scanner) gives every line as
    ``json.loads`` gives it, skips the blank ones, and refuses the first other one with the
    message a line read by itself gets."""
    path = tmp_path_factory.mktemp("lines") / "traffic.jsonl"
    errors = "surrogatepass" if encoding.startswith("utf") else "replace"
    path.write_bytes(b"\n".join(line.encode(encoding, errors) for line in lines)
                     + (b"" if torn else b"\n"))
    *whole, rest = path.read_bytes().split(b"\n")  # the lines readline gives
    raw = [line + b"\n" for line in whole] + ([rest] if rest else [])
    expected: list[tuple[int, Any]] = []
    error: int | None = None
    for number, item in enumerate(raw, 1):
        try:
            expected.append((number, json.loads(item)))
        except (ValueError, RecursionError):
            if not item.endswith(b"\n") or item.isspace():
                continue  # the torn last line, or a blank one
            error = number
            break
    ledger = Ledger(path)
    if error is not None:
        with pytest.raises(InputError, match=r"not (a JSON event|UTF-8)") as caught:
            list(ledger._parsed())
        assert caught.value.line == error
        return
    found = list(ledger._parsed())
    assert repr(found) == repr(expected)  # repr: NaN is not equal to itself


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=14)),
                                               timezone(timedelta(hours=-9, minutes=-30))])))
def test_an_instant_is_written_to_the_millisecond_in_utc(instant: datetime) -> None:
    """``millis`` (isoformat in C) writes what the field-by-field format wrote: UTC, a
    four-digit year, the microseconds cut (never rounded) to milliseconds, and Z."""
    from omniladder.inputs.traffic import millis

    utc = instant.astimezone(UTC)
    assert millis(instant) == (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond // 1000:03d}Z")


_VALUES = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=8))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _VALUES, max_size=8))
def test_an_event_line_is_what_json_dumps_writes(event: dict[str, Any]) -> None:
    """``event_line`` calls the C encoder ``json.dumps`` makes, made once: the same text,
    keys in the event's order, non-ASCII kept."""
    from omniladder.inputs.traffic import event_line

    assert event_line(event) == json.dumps(event, ensure_ascii=False) + "\n"
