"""JSON text exactly as ``json.dumps(document, indent=2, ensure_ascii=False)`` writes it,
many times faster, and in pieces that can be written as they come."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, cycle, islice
from typing import Any, TextIO


def dumps(document: Any) -> str:
    """Exactly ``json.dumps(document, indent=2, ensure_ascii=False)``, many times faster."""
    return "".join(iter_dumps(document))


def write_json(document: Any, out: TextIO) -> None:
    """``dumps(document)`` and a newline, written to ``out`` a piece at a time: the whole
    text is never held at once."""
    for piece in iter_dumps(document):
        out.write(piece)
    out.write("\n")


def iter_dumps(document: Any) -> Iterator[str]:
    r"""``json.dumps(document, indent=2, ensure_ascii=False)`` in pieces of about a megabyte.

    With an indent the standard library encodes in pure Python, one generator step per
    token; a plan of 100,000 connections has millions. Its C encoder (which it uses only
    without an indent) is used here for the parts that make up most of a plan:

    * a list or dict of scalars (an allowlist, a flat record): one call with an item
      separator that carries the newline and the indentation (``",\n    "``), and the
      opening and closing lines around it;
    * a list of dicts with the same keys (exclusions, connections, unverified entries):
      every value of a slice of records is encoded in one call, one value a line, and
      interleaved with the key text, which is encoded once. A literal newline appears in
      the C encoder's output only in its separators (a string's newline is escaped), so
      ``split("\n")`` finds exactly the values. A value that is itself a container is
      written by the same rules in its place.

    The whole document is checked before the first piece is produced; anything unexpected
    (a non-str key outside a flat dict, a custom type, a cycle) leaves the document to
    ``json.dumps`` itself, as a single piece.
    """
    steps: list[_Step] = []
    try:
        if _c_encoder is None:  # pragma: no cover - CPython has it
            raise _Unexpected
        _walk(document, 0, steps)
    except (_Unexpected, RecursionError):
        return iter((json.dumps(document, indent=2, ensure_ascii=False),))
    return _pieces(steps)


class _Unexpected(Exception):
    """A value this encoder leaves to the standard library (a non-str key, a custom type)."""


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PIECE = 1 << 20
"""About how many characters a piece holds."""
_SLICE = 2048
"""How many records one call of the C encoder writes (about 0.6 MB of connections)."""


@dataclass(frozen=True)
class _Records:
    """A list of dicts with the same keys at ``depth``; ``nested`` the values (by their
    index among all the list's values, in order) that are containers, walked."""

    records: list[dict[str, Any]] | tuple[dict[str, Any], ...]
    depth: int
    keys: list[str]
    nested: list[tuple[int, list[_Step]]]
    texts_only: bool
    """Every scalar value is a str or None: equal values are written alike."""


_Step = str | tuple[Any, int] | _Records
"""Text; a list or dict of scalars with its depth; records."""


def _newline(depth: int) -> str:
    return "\n" + "  " * depth


@functools.cache
def _encoder(separator: str) -> Callable[[Any, int], list[str]]:
    """The C encoder with this item separator, as json.dumps(ensure_ascii=False) sets it up."""
    assert _c_encoder is not None
    encoder: Callable[[Any, int], list[str]] = _c_encoder(
        None, _no_default, _quote, None, ": ", separator, False, False, True)
    return encoder


def _no_default(value: Any) -> Any:  # pragma: no cover - every value is checked first
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _walk(value: Any, depth: int, steps: list[_Step]) -> None:
    """Append the steps that write ``value``, which starts on a line at ``depth``."""
    kind = type(value)
    if kind is dict:
        if not value:
            steps.append("{}")
            return
        if not {str}.issuperset(map(type, value)):
            raise _Unexpected
        if _SCALARS.issuperset(map(type, value.values())):
            steps.append((value, depth))
            return
        inner = _newline(depth + 1)
        opening = "{" + inner
        for key, item in value.items():
            steps.append(opening + _quote(key) + ": ")
            opening = "," + inner
            _walk(item, depth + 1, steps)
        steps.append(_newline(depth) + "}")
    elif kind is list or kind is tuple:
        if not value:
            steps.append("[]")
            return
        kinds = set(map(type, value))
        if _SCALARS.issuperset(kinds):
            steps.append((value, depth))
            return
        if kinds == {dict}:
            records = _records(value, depth)
            if records is not None:
                steps.append(records)
                return
        inner = _newline(depth + 1)
        opening = "[" + inner
        for item in value:
            steps.append(opening)
            opening = "," + inner
            _walk(item, depth + 1, steps)
        steps.append(_newline(depth) + "]")
    elif kind in _SCALARS:
        steps.append(_scalar(value))
    else:
        raise _Unexpected


def _records(value: list[dict[str, Any]] | tuple[dict[str, Any], ...],
             depth: int) -> _Records | None:
    """``value`` as records when every dict has the first one's keys (the same objects, in
    the same order, all str); None otherwise."""
    keys = list(value[0])
    if not keys or not {str}.issuperset(map(type, keys)) or set(map(len, value)) != {len(keys)}:
        return None
    if not all(map(operator.is_, chain.from_iterable(value), cycle(keys))):
        return None
    kinds = set(map(type, chain.from_iterable(map(dict.values, value))))
    nested: list[tuple[int, list[_Step]]] = []
    if not _SCALARS.issuperset(kinds):
        scalar = list(map(_SCALARS.__contains__, map(type, chain.from_iterable(
            map(dict.values, value)))))
        index = -1
        while True:
            try:
                index = scalar.index(False, index + 1)
            except ValueError:
                break
            steps: list[_Step] = []
            _walk(value[index // len(keys)][keys[index % len(keys)]], depth + 2, steps)
            nested.append((index, steps))
    return _Records(value, depth, keys, nested, _TEXTS.issuperset(kinds & _SCALARS))


_TEXTS = frozenset({str, type(None)})
"""Scalars no two of which are equal unless they are written alike (unlike 1, 1.0, True)."""


def _scalar(value: Any) -> str:
    return "".join(_encoder("")(value, 0))


def _pieces(steps: list[_Step]) -> Iterator[str]:
    """The text of the steps, the short ones joined into pieces of about ``_PIECE``."""
    buffer: list[str] = []
    size = 0
    for step in steps:
        if type(step) is str:
            buffer.append(step)
            size += len(step)
        else:
            for text in (_write_records(step) if type(step) is _Records
                         else _write_flat(*step)):  # type: ignore[misc]
                if len(text) >= _PIECE // 16:
                    if buffer:
                        yield "".join(buffer)
                        buffer.clear()
                        size = 0
                    yield text
                else:
                    buffer.append(text)
                    size += len(text)
        if size >= _PIECE:
            yield "".join(buffer)
            buffer.clear()
            size = 0
    if buffer:
        yield "".join(buffer)


def _write_flat(value: Any, depth: int) -> Iterator[str]:
    """A non-empty list or dict of scalars at ``depth``."""
    text = "".join(_encoder("," + _newline(depth + 1))(value, 0))
    yield text[0] + _newline(depth + 1) + text[1:-1] + _newline(depth) + text[-1]


def _write_records(step: _Records) -> Iterator[str]:
    """A list of records, a slice of ``_SLICE`` records at a time.

    Many values repeat (a provider, a reason, the fix shared by a provider's exclusions);
    when every scalar is a str or None, each distinct value is encoded once.
    """
    records, depth, keys, nested = step.records, step.depth, step.keys, step.nested
    width = len(keys)
    outer = _newline(depth + 1)
    inner = _newline(depth + 2)
    first = "{" + inner + _quote(keys[0]) + ": "
    between = [outer + "}," + outer + first] + ["," + inner + _quote(key) + ": "
                                                 for key in keys[1:]]
    opening = "[" + outer + first
    one_a_line = _encoder("\n")
    known: dict[Any, str] = {}
    done = 0  # nested values written
    for start in range(0, len(records), _SLICE):
        values = list(chain.from_iterable(map(dict.values, records[start:start + _SLICE])))
        base = start * width
        end = base + len(values)
        taken = done
        while taken < len(nested) and nested[taken][0] < end:
            values[nested[taken][0] - base] = None
            taken += 1
        if step.texts_only:
            if len(known) > _KNOWN:
                known.clear()
            new = list(dict.fromkeys(values).keys() - known.keys())
            if new:
                known.update(zip(new, "".join(one_a_line(new, 0))[1:-1].split("\n"),
                                 strict=True))
            texts = list(map(known.__getitem__, values))
        else:
            texts = "".join(one_a_line(values, 0))[1:-1].split("\n")
        for index, steps in nested[done:taken]:
            texts[index - base] = "".join(_pieces(steps))
        done = taken
        yield "".join(chain.from_iterable(zip(
            chain((opening,), islice(cycle(between), 1, None)), texts, strict=False)))
        opening = between[0]
    yield outer + "}" + _newline(depth) + "]"


_KNOWN = 1 << 16
"""How many distinct encoded values a list of records keeps at most."""


_quote = json.encoder.encode_basestring  # the C version when available; ensure_ascii=False

_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
"""The standard library's C encoder; None without its accelerator module."""
