"""JSON text exactly as ``json.dumps(document, indent=2, ensure_ascii=False)`` writes it,
many times faster, and in pieces that can be written as they come."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, repeat
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
    without an indent) writes the parts that make up most of a plan here:

    * a list or dict of scalars (an allowlist, a flat record): one call with an item
      separator that carries the newline and the indentation (``",\n    "``), and the
      opening and closing lines around it; a long list a slice at a time;
    * a list of dicts with the same keys (exclusions, connections, unverified entries),
      a slice of records at a time: the values of each key are encoded in one call, one
      value a line, and interleaved with the key text, which is encoded once. A literal
      newline appears in the C encoder's output only in its separators (a string's
      newline is escaped), so ``split("\n")`` finds exactly the values. A value that is
      a container is written by the same rules in its place. A key whose values repeat
      (a provider, a reason, the fix a provider's exclusions share) has each distinct
      value encoded once in the document, over every list of records with the same keys,
      when they are all str or None (1, 1.0 and True are equal keys of a dict, and
      written differently).

    Anything else (a custom type, a str or int subclass, a non-str key) is written by
    ``json.dumps`` itself, its lines indented to where it stands: again exact, since every
    newline of the text is followed by its indentation. A value json.dumps refuses raises
    the same error, and so does a cycle; the pieces written before it stay written.
    """
    if _c_encoder is None:  # pragma: no cover - CPython has it
        return iter((json.dumps(document, indent=2, ensure_ascii=False),))
    return _pieces(_write(document, 0, _Written()))


_SCALARS = frozenset({str, int, float, bool, type(None)})
_TEXTS = frozenset({str, type(None)})
"""Scalars no two of which are equal unless they are written alike."""
_PIECE = 1 << 20
"""About how many characters a piece holds."""
_SLICE = 2048
"""How many items of a list one call of the C encoder writes."""
_KNOWN = 1 << 16
"""How many distinct encoded values a key of a list of records keeps at most."""


def _pieces(texts: Iterator[str]) -> Iterator[str]:
    """The texts, the short ones joined into pieces of about ``_PIECE``."""
    buffer: list[str] = []
    size = 0
    for text in texts:
        if len(text) >= _PIECE >> 4:
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


@functools.cache
def _newline(depth: int) -> str:
    return "\n" + "  " * depth


@functools.cache
def _encoder(separator: str) -> Callable[[Any, int], list[str]]:
    """The C encoder with this item separator, as json.dumps(ensure_ascii=False) sets it up."""
    encoder: Callable[[Any, int], list[str]] = _c_encoder(
        None, _refuse, _quote, None, ": ", separator, False, False, True)
    return encoder


def _refuse(value: Any) -> Any:  # pragma: no cover - every value is checked first
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _Written:
    """What writing one document keeps: ``path``, the ids of the containers the value being
    written is in (a cycle is refused as json.dumps refuses it), and ``known``, per set of
    record keys, what ``_Records`` learnt of their values. The lists of records of one kind
    (each pool entry's unverified marks) share it: a key whose values are mostly distinct
    is found so once, and the values of the others are encoded once for the document."""

    __slots__ = ("known", "path")

    def __init__(self) -> None:
        self.path: set[int] = set()
        self.known: dict[tuple[str, ...], list[dict[str, str] | None]] = {}


def _write(value: Any, depth: int, written: _Written) -> Iterator[str]:
    """The text of ``value``, which starts on a line at ``depth``."""
    kind = type(value)
    if kind in _SCALARS:
        yield "".join(_encoder("")(value, 0))
    elif kind is list or kind is tuple:
        if not value:
            yield "[]"
        else:
            yield from _enter(value, written.path, _write_list(value, depth, written))
    elif kind is dict and {str}.issuperset(map(type, value)):
        if not value:
            yield "{}"
        elif _SCALARS.issuperset(map(type, value.values())):
            yield _flat(value, depth)
        else:
            yield from _enter(value, written.path, _write_dict(value, depth, written))
    else:
        yield _standard(value, depth)


def _enter(value: Any, path: set[int], texts: Iterator[str]) -> Iterator[str]:
    if id(value) in path:
        raise ValueError("Circular reference detected")
    path.add(id(value))
    yield from texts
    path.discard(id(value))


def _standard(value: Any, depth: int) -> str:
    """json.dumps's own text of ``value``, indented to ``depth``."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", _newline(depth))


def _flat(value: Any, depth: int) -> str:
    """A non-empty list or dict of scalars at ``depth``."""
    text = "".join(_encoder("," + _newline(depth + 1))(value, 0))
    return text[0] + _newline(depth + 1) + text[1:-1] + _newline(depth) + text[-1]


def _write_dict(value: dict[str, Any], depth: int, written: _Written) -> Iterator[str]:
    inner = _newline(depth + 1)
    opening = "{" + inner
    for key, item in value.items():
        yield opening + _quote(key) + ": "
        opening = "," + inner
        yield from _write(item, depth + 1, written)
    yield _newline(depth) + "}"


def _write_list(value: Sequence[Any], depth: int, written: _Written) -> Iterator[str]:
    """A non-empty list, a slice at a time: scalars in one call, records as records, the
    rest item by item."""
    inner = _newline(depth + 1)
    encode = _encoder("," + inner)
    records = _Records(depth, written)
    lead = "[" + inner
    for start in range(0, len(value), _SLICE):
        part = value[start:start + _SLICE]
        kinds = set(map(type, part))
        if _SCALARS.issuperset(kinds):
            yield lead + "".join(encode(part, 0))[1:-1]
        elif kinds == {dict} and records.fit(part):
            yield from records.write(part, lead)
        else:
            for item in part:
                yield lead
                lead = "," + inner
                yield from _write(item, depth + 1, written)
        lead = "," + inner
    yield _newline(depth) + "]"


class _Records:
    """Slices of a list of dicts at ``depth`` whose dicts have the same keys, the same
    objects in the same order, all str."""

    def __init__(self, depth: int, written: _Written) -> None:
        self.depth = depth
        self.written = written
        self.keys: list[str] = []
        self.known: list[dict[str, str] | None] = []
        """Per key, the encoded text of each distinct value met in the document's records
        with these keys; None once its values are not all str and None, or mostly
        distinct."""
        self.one_a_line = _encoder("\n")

    def fit(self, part: Sequence[dict[Any, Any]]) -> bool:
        keys = list(part[0])
        if (not keys or set(map(len, part)) != {len(keys)}
                or not all(map(operator.is_, chain.from_iterable(part),
                               chain.from_iterable(repeat(keys, len(part)))))
                or not {str}.issuperset(map(type, keys))):
            return False
        if keys != self.keys:
            self.keys = keys
            self.known = self.written.known.setdefault(tuple(keys), [{} for _ in keys])
        return True

    def write(self, part: Sequence[dict[str, Any]], lead: str) -> Iterator[str]:
        """The records of ``part``; ``lead`` comes before the first."""
        keys, width, depth = self.keys, len(self.keys), self.depth
        outer = _newline(depth + 1)
        inner = _newline(depth + 2)
        opening = "{" + inner + _quote(keys[0]) + ": "
        values = list(chain.from_iterable(map(dict.values, part)))
        columns: list[Any] = [chain((lead + opening,),
                                    repeat(outer + "}," + outer + opening, len(part) - 1))]
        nested: list[int] = []
        for column, key in enumerate(keys):
            if column:
                columns.append(repeat("," + inner + _quote(key) + ": ", len(part)))
            texts, inside = self._column(values[column::width], column)
            columns.append(texts)
            nested.extend(column + width * row for row in inside)
        parts = list(chain.from_iterable(zip(*columns, strict=True)))
        done = 0
        for index in sorted(nested):
            yield "".join(parts[done:2 * index + 1])
            yield from _write(values[index], depth + 2, self.written)
            done = 2 * index + 2
        parts.append(outer + "}")
        yield "".join(parts[done:])

    def _column(self, values: list[Any], column: int) -> tuple[list[str], list[int]]:
        """The encoded text of a key's values, and the rows whose value is not a scalar
        (their text is left empty)."""
        kinds = set(map(type, values))
        inside: list[int] = []
        if not _SCALARS.issuperset(kinds):
            scalar = list(map(_SCALARS.__contains__, map(type, values)))
            row = -1
            while True:
                try:
                    row = scalar.index(False, row + 1)
                except ValueError:
                    break
                inside.append(row)
                values[row] = None
            kinds = set(map(type, values))
        known = self.known[column]
        if known is not None and _TEXTS.issuperset(kinds):
            if len(known) > _KNOWN:
                known.clear()
            new = list(dict.fromkeys(values).keys() - known.keys())
            if new:
                known.update(zip(new, "".join(self.one_a_line(new, 0))[1:-1].split("\n"),
                                 strict=True))
            texts = list(map(known.__getitem__, values))
            if 2 * len(new) > len(values):  # mostly distinct (an id): not worth it
                self.known[column] = None
            return texts, inside
        self.known[column] = None
        return "".join(self.one_a_line(values, 0))[1:-1].split("\n"), inside


_quote = json.encoder.encode_basestring  # the C version when available; ensure_ascii=False
_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
"""The standard library's C encoder; None without its accelerator module."""
