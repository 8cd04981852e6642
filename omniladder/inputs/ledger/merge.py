"""The importers' one way into a traffic ledger: events merged into a JSONL ledger atomically
and idempotently (SPEC §7.1: an event whose ``request_id``, ``connection`` and ``status`` the
ledger holds is not written again), each written by ``events.event_line``."""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from omniladder.errors import InputError
from omniladder.inputs import writing
from omniladder.inputs.files import display_path
from omniladder.inputs.ledger.events import event_line
from omniladder.inputs.ledger.read import Ledger
from omniladder.inputs.ledger.suffixes import LINE_SUFFIXES


def _key_digest(request_id: str, connection: str, status: str) -> bytes:
    """The deduplication key (request, connection, status) as a 128-bit digest: a set of
    them costs a fixed size per event, and two different keys share one with a probability
    far below any hardware fault's."""
    return hashlib.blake2b("\x00".join((request_id, connection, status)).encode(
        "utf-8", "surrogatepass"), digest_size=16).digest()


@dataclasses.dataclass
class LedgerMerge:
    """What ``merge_into`` did."""

    path: Path
    shown: str
    added: int = 0
    skipped: int = 0
    """Events the ledger already held (same request_id, connection and status), or that
    the import gave twice."""
    created: bool = False
    written: bool = False
    notes: list[str] = dataclasses.field(default_factory=list)


def merge_into(path: Path, events: Iterator[Mapping[str, Any]],
               shown: str | None = None) -> LedgerMerge:
    """``merge_lines_into`` of each event's key and line."""
    return merge_lines_into(path, _keyed_lines(events), shown)


def event_key(request_id: Any, connection: Any, status: Any) -> bytes | None:
    """The deduplication key of an event's fields as ``merge_lines_into`` takes it (None:
    no ``request_id``, always new)."""
    if request_id is None:
        return None
    return _key_digest(str(request_id), str(connection), str(status or "served"))


def _keyed_lines(events: Iterator[Mapping[str, Any]]) -> Iterator[tuple[bytes | None, str]]:
    for item in events:
        yield event_key(item.get("request_id"), item["connection"], item.get("status")), \
            event_line(item)


def merge_lines_into(path: Path, lines: Iterator[tuple[bytes | None, str]],
                     shown: str | None = None) -> LedgerMerge:
    """Append the events a ledger does not hold yet to the JSONL ledger at ``path``
    (created if missing), atomically: the file is replaced whole or not at all, its own
    lines kept byte for byte, and left untouched when nothing is new. An event is new when
    no event of the ledger, nor an earlier one of ``events``, has its ``request_id``,
    ``connection`` and ``status`` (SPEC §7.1); an event without a ``request_id`` is always
    new. The ledger is validated first (a bad line is exit 2 naming it); one whose last
    line is cut short is being written by someone else and is not merged into.

    ``lines`` gives each event as its deduplication key (``event_key``) and its line
    (``event_line``): an importer may build both straight from its rows."""
    shown = shown if shown is not None else display_path(path)
    if path.suffix.lower() not in LINE_SUFFIXES:
        raise InputError("an import merges into a JSONL traffic ledger: give a file named "
                         "*.jsonl or *.ndjson", file=shown)
    merged = LedgerMerge(path, shown)
    held: set[bytes] = set()
    ends_open = False
    if path.exists():
        ledger = Ledger(path, shown)
        for event in ledger.events():
            if event.request_id is not None:
                held.add(_key_digest(event.request_id, event.connection, event.status))
        if ledger.notes and any("cut short" in note for note in ledger.notes):
            raise InputError("the last line is cut short (no newline, not JSON): the ledger "
                             "is being written; import into it once it is complete, or into "
                             "another file", file=shown)
        merged.notes += ledger.notes
        size = path.stat().st_size
        if size:
            with path.open("rb") as stream:
                stream.seek(size - 1)
                ends_open = stream.read(1) != b"\n"
    else:
        merged.created = True
    if merged.created:  # nothing to keep: the events go straight to the new file
        writing.write_atomic(path, _new_lines(lines, held, merged))
        merged.written = True
        return merged
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="\n") as pending:
        for chunk in _new_lines(lines, held, merged):
            pending.write(chunk)
        if not merged.added:
            return merged
        pending.seek(0)

        def pieces() -> Iterator[str]:
            with path.open("r", encoding="utf-8", newline="") as kept:
                while chunk := kept.read(1 << 20):
                    yield chunk
            if ends_open:
                yield "\n"
            while chunk := pending.read(1 << 20):
                yield chunk

        writing.write_atomic(path, pieces())
        merged.written = True
    return merged


_CHUNK_LINES = 4096


def _new_lines(lines: Iterator[tuple[bytes | None, str]], held: set[bytes],
               merged: LedgerMerge) -> Iterator[str]:
    """The lines of the events not held yet, each key once (``merge_into``), a few
    thousand joined into one piece: one write a piece, not one a line."""
    pending: list[str] = []
    for key, line in lines:
        if key is not None:
            if key in held:
                merged.skipped += 1
                continue
            held.add(key)
        merged.added += 1
        pending.append(line)
        if len(pending) >= _CHUNK_LINES:
            yield "".join(pending)
            pending.clear()
    if pending:
        yield "".join(pending)
