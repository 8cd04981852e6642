"""The database rows of `import litellm-spend` take a shortcut to their ledger lines
(``database_lines``): each line, key, count and error is the one the row-by-row path
(``row_event``, then ``event_key`` and ``event_line``) gives the same row."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.errors import InputError
from omniladder.inputs.ledger.events import event_line
from omniladder.inputs.ledger.merge import event_key
from omniladder.sources import litellm_spend as spend
from tests.depth import deep

SHOWN = "postgresql://omniladder@127.0.0.1:5432/litellm"
GROUPS = {"omniladder-thrifty": "auto/thrifty", "omniladder-subscription": "auto/subscription"}
MODEL_IDS = ["omniladder-thrifty~conn-00001~openai~model-1",
             "omniladder-subscription~claude-max~anthropic~claude-sonnet-4",
             "omniladder-thrifty~conn-00002~openai~model-2", "omniladder-other~a~b~c",
             "not-ours", "", " ", "omniladder-thrifty~bad id~openai~m"]
MODELS = ["model-1", "model-2", "openai/model-2", "claude-sonnet-4", "", " model-1 ",
          "mod\u00e9le", "a\tb", "x\"y"]
BASES = ["https://api.example.com/v1", "https://API.example.com/v1/", "https://other.example",
         "", "not a url"]
FLEET: dict[str, frozenset[str] | None] = {
    "conn-00001": frozenset({"model-1"}), "conn-00002": frozenset({"model-2"}),
    "claude-max": None, "map-a": frozenset({"model-2"}), "map-b": frozenset({"model-2"})}
ROUTES = [spend.Route("map-a", "openai/", "https://api.example.com/v1"),
          spend.Route("map-b", "", "https://other.example"),
          spend.Route("map-c", "", "https://other.example")]

START = datetime(2026, 11, 22, 12, 0)
SINCE = datetime(2026, 11, 22, 12, 1, tzinfo=UTC)


def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]
           ) -> st.SearchStrategy[Any]:
    """``usual``, and now and then ``odd``: a row of odd values stops the import at its
    first, so most rows must be the usual kind for the rows after them to be compared."""
    return st.sampled_from([False] * 11 + [True]).flatmap(lambda rare: odd if rare else usual)


def texts(common: list[str]) -> st.SearchStrategy[Any]:
    return mostly(st.one_of(st.none(), st.sampled_from(common), st.text(max_size=6)),
                  st.integers(-3, 3))


def counts() -> st.SearchStrategy[Any]:
    return mostly(st.one_of(st.none(), st.integers(0, 10**12)),
                  st.one_of(st.integers(-2, -1), st.just(True), st.floats(0, 10)))


def spends() -> st.SearchStrategy[Any]:
    return mostly(st.one_of(st.none(), st.floats(0, 5), st.floats(0, 1e300)),
                  st.one_of(st.sampled_from([math.inf, math.nan, -0.5]),
                            st.floats(allow_nan=True, allow_infinity=True),
                            st.integers(-1, 3), st.just("0.5")))


def instants() -> st.SearchStrategy[Any]:
    naive = st.integers(0, 10**9).map(lambda ms: START + timedelta(milliseconds=ms / 7))
    return mostly(st.one_of(naive, st.just(SINCE.replace(tzinfo=None))), st.one_of(
        st.sampled_from([datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59),
                         datetime(2026, 1, 1, tzinfo=UTC)]),
        st.none(), st.just("2026-11-22T12:00:00"), st.just("yesterday")))


ROWS = st.tuples(
    mostly(st.one_of(st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1,
                             max_size=8).filter(str.strip),
                     st.sampled_from(["req-1", "req-1", " req-2 "])),
           st.one_of(st.text(max_size=3), st.none(), st.integers(0, 5))),
    instants(), texts(MODELS), spends(), counts(), counts(), texts(MODEL_IDS),
    texts(list(GROUPS)), texts(BASES), st.none(),
    mostly(st.sampled_from(["success", "success", "failure", "", None]),
           st.text(max_size=3)))


def joiner(fleet: bool) -> spend.Joiner:
    from omniladder.analyses.export.litellm import parse_deployment_id

    return spend.Joiner(parse_deployment_id, GROUPS, ROUTES, FLEET if fleet else None)


def reference(rows: list[tuple[Any, ...]], found: spend.SpendImport, fleet: bool,
              since: datetime | None, out: list[tuple[bytes | None, str]]) -> None:
    """The row-by-row path: each row's key and line into ``out``, up to an error."""
    join = joiner(fleet)
    for number, values in enumerate(rows, 1):
        event = spend.row_event(dict(zip(spend.COLUMNS, values, strict=True)),
                                f"{spend.TABLE}[{number}]", SHOWN, join, found, since)
        if event is not None:
            out.append((event_key(event.get("request_id"), event["connection"],
                                  event.get("status")), event_line(event)))


def outcome(make: Any) -> tuple[list[tuple[bytes | None, str]], Any, spend.SpendImport]:
    found = spend.SpendImport()
    out: list[tuple[bytes | None, str]] = []
    try:
        make(out, found)
    except InputError as exc:
        return out, (str(exc), vars(exc)), found
    return out, None, found


@deep(500, deadline=None)
def test_database_lines_are_the_lines_of_row_event(examples: settings) -> None:
    @examples
    @given(st.lists(ROWS, min_size=1, max_size=60), st.integers(1, 7), st.booleans(),
           st.one_of(st.none(), st.just(SINCE)))
    def holds(rows: list[tuple[Any, ...]], size: int, fleet: bool, since: datetime | None) -> None:
        batches = [rows[at:at + size] for at in range(0, len(rows), size)]

        def slow(out: list[tuple[bytes | None, str]], found: spend.SpendImport) -> None:
            reference(rows, found, fleet, since, out)

        def fast(out: list[tuple[bytes | None, str]], found: spend.SpendImport) -> None:
            out.extend(spend.database_lines(batches, SHOWN, joiner(fleet), found, since))

        expected = outcome(slow)
        assert outcome(fast) == expected

    holds()


def test_the_shortcut_covers_the_rows_a_database_gives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The common row (texts, a naive UTC instant, whole tokens, a float spend) is built
    by the shortcut, not by ``row_event``: the property above compares the two."""
    calls = 0
    original = spend.row_event

    def counted(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(*args)

    rows = [(f"req-{n}", START + timedelta(seconds=n), "model-1", 0.25 * n, 10, 20,
             MODEL_IDS[0], "omniladder-thrifty", BASES[0], None, "success")
            for n in range(50)]
    monkeypatch.setattr(spend, "row_event", counted)
    found = spend.SpendImport()
    lines = list(spend.database_lines([rows], SHOWN, joiner(True), found, None))
    assert calls == 1  # the shape of the 50 rows, once
    assert len(lines) == 50
    assert found.rows == found.served == found.by_model_id == 50


USUAL = ("req-1", START, "model-1", 0.25, 10, 20, MODEL_IDS[0], "omniladder-thrifty",
         BASES[0], None, "success")
ODD = [(3, math.inf), (3, math.nan), (3, -0.5), (3, 1), (4, -1), (4, True), (5, 2.0),
       (1, datetime(1, 1, 1)), (1, datetime(9999, 12, 31, 23, 59)),
       (1, datetime(2026, 1, 1, tzinfo=UTC)), (1, "2026-11-22T12:00:00"), (1, None),
       (1, SINCE.replace(tzinfo=None)), (0, " "), (0, "a\x00"), (0, 7), (10, "ok"), (2, 5),
       (6, 5), (2, " model-1 ")]


@pytest.mark.parametrize(("column", "value"), ODD)
@pytest.mark.parametrize("known", [0, 1, spend._KNOWN_MAX])
def test_an_odd_value_gets_the_line_or_error_of_row_event(
        column: int, value: Any, known: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One value the shortcut does not take (or takes at its edge) between usual rows,
    with the memory of line shapes empty, full after one, or roomy."""
    monkeypatch.setattr(spend, "_KNOWN_MAX", known)
    odd = list(USUAL)
    odd[column] = value
    rows = [USUAL, tuple(odd), (*USUAL[:2], "model-2", *USUAL[3:])]
    for since in (None, SINCE):
        expected = outcome(lambda out, found, since=since: reference(rows, found, True, since,
                                                                      out))
        assert outcome(lambda out, found, since=since: out.extend(spend.database_lines(
            [rows[:1], rows[1:]], SHOWN, joiner(True), found, since))) == expected


class Cursor:
    """fetchmany as a named cursor answers it: batches, then an empty one, or an error."""

    def __init__(self, batches: list[list[tuple[Any, ...]]],
                 error: Exception | None = None) -> None:
        self.batches = list(batches)
        self.error = error
        self.calls = 0

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        self.calls += 1
        if self.batches:
            return self.batches.pop(0)
        if self.error is not None:
            raise self.error
        return []


def test_prefetched_batches_arrive_in_order_and_errors_in_the_caller() -> None:
    batches = [[(n, m) for m in range(3)] for n in range(7)]
    assert list(spend.prefetched(Cursor(batches))) == batches
    failing = spend.prefetched(Cursor(batches[:2], error=ValueError("lost the server")))
    assert next(failing) == batches[0]
    assert next(failing) == batches[1]
    with pytest.raises(ValueError, match="lost the server"):
        next(failing)


def test_prefetched_stops_fetching_when_the_caller_stops() -> None:
    cursor = Cursor([[(n,)] for n in range(1000)])
    reading = spend.prefetched(cursor)
    assert next(reading) == [(0,)]
    reading.close()  # the thread is joined here
    calls = cursor.calls
    assert calls < 10
    assert cursor.calls == calls
