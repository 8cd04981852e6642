"""A JSONL ledger's lines, read a block at a time without holding the file: each line as
``json.loads`` gives it, held to what a JSON document is held to (no key given twice, no
lone surrogate), the file to ``STREAMED_LIMIT`` bytes and a line to ``LINE_LIMIT``. A final
line without its newline that is not JSON is a file still being written: the read stops
before it, with a note. Every read of a JSONL ledger (``read.Ledger``'s two, the one read of
``one_read``) goes through ``json_lines``."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from omniladder.errors import InputError
from omniladder.inputs import files
from omniladder.inputs.direct import keys_spelled_at_most
from omniladder.inputs.documents import (
    RepeatedKey,
    reject_lone_surrogates,
    repeated_key,
    unique_keys,
)
from omniladder.inputs.ledger.events import Place, loads_line, long_or_int

_SCAN: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]
"""The C scanner under ``json.loads`` (its decoder, with the same defaults): a line that is
one JSON text reads to the same value through it without the two Python layers above it."""
BLOCK = 1 << 20
"""A JSONL ledger is read a megabyte at a time."""
_BLANK = object()
"""``_one``'s answer for a line of whitespace, which a JSONL ledger may hold."""


LINE_LIMIT = BLOCK
"""The longest line of a JSONL ledger, its newline included: 1 MiB. An event with every
field is a few hundred bytes; a longer line is the wrong file or a log without newlines,
refused once this much of it is read."""


def _too_long(shown: str, line: int) -> InputError:
    return InputError(f"a line longer than {files.byte_size(LINE_LIMIT)}, longer than any "
                      "event; is it the right file?", file=shown, line=line)


def _size_of(stream: Any) -> int:
    try:
        return os.fstat(stream.fileno()).st_size
    except OSError:
        return 0


def _names_at_most(text: str | bytes) -> int | None:
    """``keys_spelled_at_most`` of a line's text."""
    return keys_spelled_at_most(text.encode("utf-8", "surrogatepass")
                                if isinstance(text, str) else text)


def _keys_in(data: Any) -> int:
    """The keys of every object in parsed JSON, nested ones included."""
    count = 0
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


class Progress:
    """How far a long read of a ledger is, on standard error when it is a terminal: every
    few seconds, the bytes read of the file's size. Never on standard output, never when
    standard error is not a terminal (a log, a pipe, a CI job)."""

    EVERY = 2.0
    """Seconds between two reports (the first after as long)."""

    def __init__(self, shown: str, size: int) -> None:
        self.shown = shown
        self.size = size
        self.clock = time.monotonic
        stderr = sys.stderr
        self.stream = stderr if stderr is not None and _is_terminal(stderr) else None
        self.next = self.clock() + self.EVERY
        self.shown_once = False

    def due(self) -> bool:
        return self.stream is not None and self.clock() >= self.next

    def show(self, done: int) -> None:
        assert self.stream is not None
        mib = 1024 * 1024
        total = f" of {self.size / mib:,.0f} MiB" if self.size else ""
        share = f" ({min(done / self.size, 1):.0%})" if self.size else ""
        try:
            self.stream.write(f"\r{self.shown}: read {done // mib:,} MiB{total}{share}\x1b[K")
            self.stream.flush()
        except (OSError, ValueError):
            self.stream = None
            return
        self.shown_once = True
        self.next = self.clock() + self.EVERY

    def done(self) -> None:
        if self.stream is not None and self.shown_once:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _too_large(shown: str) -> InputError:
    return files.too_large(shown, files.STREAMED_LIMIT)


def identity(path: Path) -> tuple[int, ...] | None:
    """What tells a file changed between two reads: its inode, size and times."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def json_lines(path: Path, shown: str, notes: list[str]) -> Iterator[tuple[int, Any]]:
    """Every non-blank line of a JSONL ledger as ``json.loads`` gives it, in line order,
    or the InputError of a line that is not JSON, holds a lone surrogate or gives a key
    twice; each is validated by the caller before the next is read.

    The file is refused at once when its size is past ``STREAMED_LIMIT``, and at its
    first line past ``LINE_LIMIT``: the read holds a block and one line at most. It is
    read a megabyte at a time and each block of whole lines decoded at once; a line is
    parsed by the C scanner ``json.loads`` itself runs (``_SCAN``), which gives the same
    value for a line that starts with its JSON text and ends with whitespace only. Any
    other line (blank, not UTF-8, not JSON, with a byte-order mark, or led by
    whitespace) goes through ``_one``: ``json.loads`` on its bytes, with the same limits
    and messages. The checks a JSON document gets cost a block two C searches: its
    lines are looked at for a lone surrogate only when it holds a backslash, and parsed
    again for a repeated key (``_repeats``) only when it writes more commas than its
    objects' members need."""
    scan = _SCAN
    number = total = 0
    rest = b""
    limit = files.STREAMED_LIMIT
    with files.open_input(path, shown) as stream:
        size = _size_of(stream)
        if size > limit:
            raise _too_large(shown)
        progress = Progress(shown, size)
        while True:
            try:
                block = stream.read(BLOCK)
            except OSError as exc:
                raise InputError(f"cannot read file ({exc.strerror})",
                                 file=shown) from None
            if not block:
                break
            if progress.due():
                progress.show(total + len(rest) + len(block))
            cut = block.rfind(b"\n")
            if cut < 0:
                rest += block
                if len(rest) > LINE_LIMIT:
                    raise _too_long(shown, number + 1)
                continue
            # a line inside one block is no longer than the block: only the first, which
            # the block continues, can be past the limit
            if rest and len(rest) + block.find(b"\n") + 1 > LINE_LIMIT:
                raise _too_long(shown, number + 1)
            body = rest + block[:cut + 1] if rest else block[:cut + 1]
            rest = block[cut + 1:]
            if total + len(body) > limit:  # the file grew while it was read
                for piece in body.split(b"\n")[:-1]:
                    raw = piece + b"\n"
                    number += 1
                    total += len(raw)
                    if total > limit:
                        raise _too_large(shown)
                    data = _one(shown, number, raw)
                    if data is not _BLANK:
                        yield number, data
                continue
            total += len(body)
            first = number + 1
            try:
                lines = body.decode("utf-8").split("\n")
            except UnicodeDecodeError:
                for number, raw in enumerate(body.split(b"\n")[:-1], first):
                    data = _one(shown, number, raw + b"\n")
                    if data is not _BLANK:
                        yield number, data
                continue
            lines.pop()  # the empty text after the block's last newline
            # a lone surrogate comes only from a \\u escape, so only a line of a block
            # holding a backslash is looked at for one; a key given twice is found by
            # the block's counts once it is read (``_repeats``)
            escapes = b"\\" in body
            keys = 0
            for number, line in enumerate(lines, first):
                try:
                    data, end = scan(line, 0)
                except (StopIteration, ValueError, RecursionError):
                    end = -1
                if end == len(line) or (end > 0 and not line[end:].strip(" \t\r")):
                    if escapes and "\\u" in line:
                        reject_lone_surrogates(line, data, shown, number)
                    try:  # noqa: SIM105 (suppress() would cost each line two calls)
                        keys += len(data)
                    except TypeError:
                        pass  # not an object: refused as an event
                    yield number, data
                    continue
                data = _one(shown, number, line.encode("utf-8") + b"\n")  # its own bytes
                if data is _BLANK:
                    keys += 1  # a line without a member: one more than its commas
                else:
                    if type(data) is dict:
                        keys += len(data)
                    yield number, data
            # each object of n members writes n - 1 commas between them: with one object
            # a line, the block writes at most its commas and one a line of member
            # names, which is its objects' keys unless one is given twice (or a value
            # holds a comma or an object: the exact check then clears the block)
            if body.count(b",") + len(lines) > keys:
                _repeats(shown, lines, first)
        progress.done()
    if len(rest) > LINE_LIMIT:
        raise _too_long(shown, number + 1)
    if rest:
        number += 1
        if total + len(rest) > limit:
            raise _too_large(shown)
        if rest.strip():
            try:
                data = loads_line(rest)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                note = (f"{shown}: line {number}, the last, is cut short (no newline, not "
                        "JSON): the ledger is read up to it, as a file still being "
                        "written")
                if note not in notes:
                    notes.append(note)
                return
            _check(shown, number, rest, data)
            yield number, data


def _one(shown: str, number: int, raw: bytes) -> Any:
    """A whole line (with its newline) as ``json.loads`` gives it, ``_BLANK`` for a line
    of whitespace, or the InputError of a line that is not JSON, holds a lone surrogate
    or gives a key twice."""
    try:
        data = loads_line(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        if raw.isspace():
            return _BLANK
        raise _not_json(exc, Place(shown, number, "")) from None
    _check(shown, number, raw, data)
    return data


def _repeats(shown: str, lines: list[str], first: int) -> None:
    """The InputError of the first of a block's lines that gives a key twice, if any:
    the block's counts did not clear it (a value holding a comma or an object, a
    repeat). Its lines were given already: a fault the caller found in a later line
    of the block is the one reported."""

    for number, line in enumerate(lines, first):
        try:
            json.loads(line, object_pairs_hook=unique_keys, parse_int=long_or_int)
        except RepeatedKey:
            raise repeated_key(line, shown, line=number) from None
        except (ValueError, RecursionError):
            continue  # blank, or refused as it was read


def _check(shown: str, number: int, text: str | bytes, data: Any) -> None:
    """The InputError of a line that holds a lone surrogate or gives a key twice, as
    a JSON document holding one gets (``parse_json``)."""

    if isinstance(data, dict | list):
        if _names_at_most(text) != _keys_in(data):
            try:
                json.loads(text, object_pairs_hook=unique_keys,
                           parse_int=long_or_int)
            except RepeatedKey:
                raise repeated_key(text, shown, line=number) from None
        reject_lone_surrogates(text, data, shown, number)


def _not_json(exc: Exception, place: Place) -> InputError:
    if isinstance(exc, UnicodeDecodeError):
        return place.error(None, f"not UTF-8 text (byte {exc.start})")
    if isinstance(exc, json.JSONDecodeError):
        return place.error(None, f"not a JSON event: {exc.msg} (column {exc.colno})")
    return place.error(None, "not a JSON event: nested too deeply")
