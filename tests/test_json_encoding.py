"""The fast JSON encoder writes exactly what json.dumps(indent=2, ensure_ascii=False) writes
(SPEC §4.2), whole or in pieces, to a stream or to a file."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum, StrEnum
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.inputs.writing import write_atomic
from omniladder.rendering import json_text
from omniladder.rendering.json_text import dumps, iter_dumps, write_json
from tests.depth import deep


def reference(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


AWKWARD_TEXT = ["", "[bold]x[/bold]", "é ü ✓ \u2028 \u2029", "\x00\x1f\"\\/", "a\nb\r\tc",
                "\ud800", "𝄞 emoji 🙂", "},\n    {", "\",\n  \"", "—"]
AWKWARD_FLOATS = [1e-06, 1e16, 1e-7, 123456789012345678.0, -0.0, 0.0, 5e-324,
                  1.7976931348623157e308, float("nan"), float("inf"), float("-inf"), 0.1]
texts = st.text() | st.sampled_from(AWKWARD_TEXT)
numbers = (st.integers() | st.integers(min_value=-2, max_value=2) | st.floats()
           | st.sampled_from(AWKWARD_FLOATS))
scalars = st.none() | st.booleans() | numbers | texts
keys = texts | st.none() | st.booleans() | numbers  # json.dumps writes each as a str


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
            | st.dictionaries(texts, inner, max_size=4) | st.dictionaries(keys, inner, max_size=3)
            | st.sampled_from([[], {}, (), [[]], [{}], {"": {}}, {"a": []}]))


documents = st.recursive(scalars, containers, max_leaves=30)


@st.composite
def record_lists(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> list[dict[Any, Any]]:
    """Lists of dicts with the same key objects in the same order (a plan's exclusions,
    connections, unverified entries), now and then one that breaks the pattern."""
    names = draw(st.lists(texts, min_size=1, max_size=5, unique=True)
                 | st.lists(keys, min_size=1, max_size=3, unique=True))
    count = draw(st.integers(min_value=1, max_value=12))
    records = [{name: draw(values) for name in names} for _ in range(count)]
    odd = draw(st.sampled_from(["none", "none", "none", "empty", "fewer", "reordered",
                                "equal-key", "scalar"]))
    where = draw(st.integers(min_value=0, max_value=count))
    if odd == "empty":
        records.insert(where, {})
    elif odd == "fewer":
        records.insert(where, dict.fromkeys(names[1:]))
    elif odd == "reordered":
        records.insert(where, dict.fromkeys(reversed(names)))
    elif odd == "equal-key":  # an equal key that is another object
        records.insert(where, {(name + "\0")[:-1] if isinstance(name, str) else name: 1
                               for name in names})
    elif odd == "scalar":
        records.insert(where, draw(scalars))  # type: ignore[arg-type]
    return records


repeated_text = st.none() | st.sampled_from(["a", "b", "é", "\n", "claude", ""])
record_values = (repeated_text | scalars
                 | st.recursive(scalars, containers, max_leaves=8).filter(
                     lambda value: isinstance(value, list | tuple | dict)))
plan_like = st.recursive(
    scalars | record_lists(repeated_text) | record_lists(record_values),
    lambda inner: containers(inner) | record_lists(inner), max_leaves=20)


@contextmanager
def small_pieces() -> Iterator[None]:
    """Slices of 2 records, a memory of 3 encoded values, pieces of 64 characters: every
    seam of the piecewise writing is met on small documents."""
    with (patch.object(json_text, "_SLICE", 2), patch.object(json_text, "_KNOWN", 3),
          patch.object(json_text, "_PIECE", 64)):
        yield


@deep(400, deadline=None)
def test_same_text_as_json_dumps(examples: settings) -> None:
    @examples
    @given(document=documents)
    def holds(document: Any) -> None:
        assert dumps(document) == reference(document)

    holds()


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(document=plan_like)
def test_lists_of_records_have_the_same_text_as_json_dumps(document: Any) -> None:
    expected = reference(document)
    assert dumps(document) == expected
    with small_pieces():
        pieces = list(iter_dumps(document))
    assert "".join(pieces) == expected
    assert all(pieces)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(document=plan_like | documents)
def test_the_pieces_written_to_a_stream_or_a_file_are_the_same_bytes(
        document: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    expected = (reference(document) + "\n").encode("utf-8", "surrogatepass")
    stream = io.BytesIO()
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="surrogatepass", newline="\n",
                            write_through=True)
    with small_pieces():
        write_json(document, text)
    text.flush()
    assert stream.getvalue() == expected
    if "\ud800" not in expected.decode("utf-8", "surrogatepass"):  # a file takes UTF-8 only
        target = tmp_path_factory.mktemp("out") / "plan.json"
        with small_pieces():
            write_atomic(target, [*iter_dumps(document), "\n"])
        assert target.read_bytes() == expected


def test_a_plan_sized_list_is_written_in_pieces_of_about_a_megabyte() -> None:
    records = [{"connection_id": f"claude-{n:06d}", "reason": "quota-exhausted",
                "detail": "window at 0% — resets 16:00Z", "fix": None,
                "override": {"billing": "paid"} if n % 997 == 0 else None}
               for n in range(30_000)]
    document = {"excluded": records, "allowed": [r["connection_id"] for r in records]}
    pieces = list(iter_dumps(document))
    assert "".join(pieces) == reference(document)
    assert len(pieces) > 3
    assert max(map(len, pieces)) < 2 * json_text._PIECE


def test_lists_of_records_with_the_same_keys_share_what_was_learnt_of_their_values() -> None:
    """Each pool entry's unverified marks are a list of their own: a key found mostly
    distinct in one list, a value encoded in one and met again in another, and a key whose
    values stop being texts in a later list all keep the text json.dumps writes."""
    marks: list[list[dict[str, Any]]] = [
        [{"connection_id": f"c-{(entry * 7 + n) % 40:03d}", "reason": "quota-unknown",
          "detail": f"reading at {n % 5}:00Z is stale"} for n in range(entry * 11)]
        for entry in range(8)]
    marks[5][3]["detail"] = 1.5
    marks[6][0]["reason"] = None
    document = {"pool": [{"position": n, "unverified": m} for n, m in enumerate(marks)],
                "excluded": [{"connection_id": "c-001", "reason": "quota-unknown",
                              "detail": "reading at 1:00Z is stale"}]}
    assert dumps(document) == reference(document)


class Colour(StrEnum):
    RED = "red"


class Size(IntEnum):
    BIG = 2


def test_unexpected_values_are_written_by_json_dumps_in_their_place() -> None:
    late = [{"a": n, "b": "x"} for n in range(5000)] + [{"a": Colour.RED, "b": "x"}]
    for document in ({"a": Colour.RED}, {1: "x", "b": [1.5, None]}, [True, {2.5: "y"}],
                     {None: 1, True: 2, 3: [4]}, [Size.BIG], {"n": Size.BIG, "m": [1]},
                     late, [[{"a": 1}], {"a": 1.5, "b": [Colour.RED]}],
                     {"a": [{"b": {1: [{"c": Colour.RED}]}}]}):
        assert dumps(document) == reference(document)


def test_what_json_dumps_refuses_is_refused_alike() -> None:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    for document, error in (({"a": object()}, TypeError), ({(1, 2): "x"}, TypeError),
                            (cycle, ValueError), ({"a": 10 ** 5000}, ValueError)):
        with pytest.raises(error):
            reference(document)
        with pytest.raises(error):
            dumps(document)
