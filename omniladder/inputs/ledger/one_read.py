"""``audit traffic``'s one read of a JSONL ledger (``Ledger.one_pass``), when it gives the
answer the two reads give: each line validated as the scan validates it and given at once,
each key's hash kept in a fixed table, the events whose hash repeats held aside and compared
once the ledger is read. Whenever its answer could differ from the two reads', it gives up
(``Unsettled``) and the ledger is read twice (docs/traffic.md#one-read)."""

from __future__ import annotations

import json
import os
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from omniladder.errors import InputError
from omniladder.inputs import files
from omniladder.inputs.ledger.events import LedgerRecord, Place, event_from, fast_check
from omniladder.inputs.ledger.lines import BLOCK, identity


class Reading(Protocol):
    """What the one read asks of the ledger it reads (``read.Ledger`` is one)."""

    path: Path
    shown: str
    failed_by_request: Counter[int]
    gave_up: str | None

    def lines(self) -> Iterator[tuple[int, Any]]:
        """The ledger's lines as ``lines.json_lines`` gives them."""

    def keep_one_read(self, *, first: datetime | None, last: datetime | None, count: int,
                      identity: tuple[int, ...] | None, last_line: int, repeated: set[str],
                      duplicates: int) -> None:
        """What the read found, kept as the scan keeps it."""


_SLOTS = 1 << 23
"""The table of ``one_pass``'s deduplication, 64 MiB at most whatever the ledger's size:
per key (request_id, connection, status) one slot of 8 bytes, found by the low 23 bits of
the key's hash, holding 36 more bits of the hash (``_MARK``) and the line that put it there
(``_LINE_BITS``), filled to three quarters at most (6.3 million keys; a ledger of more is
read twice). At 2 million keys, two keys look alike about once in 100,000 ledgers."""
_LINE_BITS = 27
_LINE_MAX = (1 << _LINE_BITS) - 1
_MARK = (1 << 36) - 1


def _slots(size: int | None) -> int:
    """The table's slots for a ledger of ``size`` bytes: a line of a key takes 16 bytes at
    least (its instant alone 20), so the table is filled to a quarter at most, and small
    for a small ledger."""
    wanted = 1 << max(64, (size or 0) // 16).bit_length()
    return min(_SLOTS, wanted)


_HELD_MAX = 1 << 16
"""The most events ``one_pass`` holds aside before it reads the ledger twice instead."""
_ENDS = 1 << 16
"""``Ledger.ends`` reads this much of each end of the file."""
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)


class Unsettled(Exception):
    """``Ledger.one_pass`` cannot give the two reads' answer: read the ledger twice."""


def ends(path: Path, shown: str) -> tuple[datetime, datetime] | None:
    """The instants of the events on the first and the last line of a JSONL ledger, read
    from the file's two ends; None when either is not a valid event (a blank file, a line
    longer than ``_ENDS``) or the file cannot be read (the read that follows says why).
    A ledger in time order (as importers and appending gateways write it) spans these;
    ``one_pass`` finds out whether it does."""
    try:
        with files.open_input(path, shown) as stream:
            size = os.fstat(stream.fileno()).st_size
            head = stream.read(_ENDS)
            tail = head
            if size > _ENDS:
                stream.seek(size - _ENDS)
                tail = stream.read(_ENDS)
    except (InputError, OSError):
        return None
    whole = size <= _ENDS
    lines = head.split(b"\n")
    if not whole:
        lines.pop()  # a line the head may have cut
    first = next((line for line in lines if line.strip()), None)
    lines = tail.split(b"\n")
    if not whole:
        lines = lines[1:]  # a line the tail may have cut
    last = next((line for line in reversed(lines) if line.strip()), None)
    if first is None or last is None:
        return None
    instants = [_instant_of_line(line, shown) for line in (first, last)]
    if instants[1] is None and not tail.endswith(b"\n"):  # a last line cut short
        last = next((line for line in reversed(lines[:-1]) if line.strip()), None)
        instants[1] = None if last is None else _instant_of_line(last, shown)
    if instants[0] is None or instants[1] is None:
        return None
    return instants[0], instants[1]


def _instant_of_line(line: bytes, shown: str) -> datetime | None:
    """The instant of an event line, None when it is not a valid event."""
    try:
        return event_from(json.loads(line), Place(shown, None, ""), 0).at
    except (InputError, ValueError, RecursionError):
        return None


def one_pass(ledger: Reading, first: datetime | None, last: datetime | None
             ) -> Iterator[LedgerRecord]:
    """``records`` of a JSONL ledger not read yet, in one read: each line validated as
    ``scan`` validates it and given at once. ``first`` and ``last`` are the span's ends
    the caller took from ``ends`` (None: an end the caller chose, which no event needs to
    be inside); the ledger's span is theirs only if every event falls between them and
    the first and the last events are at them.

    Deduplication keeps each key's hash in a fixed table (``_SLOTS``) with the line that
    put it there; an event whose hash is held already is held aside, not given. Once the
    ledger is read, each held event is compared with the line its hash names: the same
    request_id, connection and status is a duplicate, read once as ``records`` reads
    it. Whenever the answer would not be the two reads' (an event outside the span, a
    held event that is not a duplicate, a file changed before the comparison, more keys
    or held events than the table holds), this raises ``Unsettled`` (its reason also in
    ``gave_up``): the caller drops what it made of the events and reads the ledger the
    two-read way (``forget``, then ``scan`` and ``records``). Once it ends, the ledger
    is as ``scan`` leaves it: ``records`` reads it again, the same events."""
    shown = ledger.shown
    found_as = identity(ledger.path)
    slots = _slots(found_as[2] if found_as is not None else None)
    table = array("q", [0]) * slots
    mask = slots - 1
    room = slots * 3 // 4
    held: list[tuple[int, tuple[str, str, str], int]] = []
    failed = ledger.failed_by_request
    low = first if first is not None else _LATEST
    high = last if last is not None else _EARLIEST
    first_at: datetime | None = None
    at_last = last is not None
    at = _EARLIEST
    count = line = 0
    for line, data in ledger.lines():
        found = fast_check(data)
        if found is None:
            event = event_from(data, Place(shown, line, ""), line)
            found = (event.at, event.connection, event.status, event.request_id)
        at, connection, status, request = found
        count += 1
        if first_at is None:
            first_at = at
        if at < low:
            if first is not None:
                raise _give_up(ledger, "an event before the first line's instant")
            low = at
        if at >= high:
            if at > high:
                if last is not None:
                    raise _give_up(ledger, "an event after the last line's instant")
                high = at
            elif at_last:  # the first event at the last line's instant is the span's
                high = at  # end, as the scan has it (an offset it was written with kept)
                at_last = False
        if request is None:
            yield line, at, connection, status, data
            continue
        if status == "failed":
            hashed = hash(request)
            failed[hashed] = failed.get(hashed, 0) + 1
        key = hash((request, connection, status))
        slot = key & mask
        mark = key >> 23 & _MARK
        while True:
            there = table[slot]
            if not there:
                table[slot] = mark << _LINE_BITS | line
                room -= 1
                break
            if there >> _LINE_BITS == mark:
                held.append((line, (request, connection, status), there & _LINE_MAX))
                break
            slot = slot + 1 & mask
        if not there:
            if room < 0 or line > _LINE_MAX:
                raise _give_up(ledger, "more keys than the table holds")
            yield line, at, connection, status, data
        elif len(held) > _HELD_MAX:
            raise _give_up(ledger, "more repeated keys than are held aside")
    del table
    if count and ((first is not None and first_at != first)
                  or (last is not None and at != last)):
        raise _give_up(ledger, "the first or last event is not at the span's end")
    if held:
        _settle(ledger, held, found_as)
    ledger.keep_one_read(first=low if count else None, last=high if count else None,
                         count=count, identity=found_as, last_line=line if count else 0,
                         repeated={request for _, (request, _, _), _ in held},
                         duplicates=len(held))


def _settle(ledger: Reading, held: list[tuple[int, tuple[str, str, str], int]],
            found_as: tuple[int, ...] | None) -> None:
    """Each held event's key compared with the key of the line that put its hash in
    the table; ``Unsettled`` unless every one is a duplicate."""
    if found_as is None or identity(ledger.path) != found_as:
        raise _give_up(ledger, "the file changed while it was read")
    wanted = _lines_at(ledger.path, ledger.shown, {put for _, _, put in held})
    for _, key, put in held:
        data = wanted.get(put)
        if type(data) is not dict or key != (data.get("request_id"), data["connection"],
                                             data.get("status") or "served"):
            raise _give_up(ledger, "a key whose hash another key holds")
    if identity(ledger.path) != found_as:
        raise _give_up(ledger, "the file changed while it was read")


def _lines_at(path: Path, shown: str, numbers: set[int]) -> dict[int, Any]:
    """The JSONL lines of these numbers as ``json.loads`` gives them (lines ``one_pass``
    read as events), found by counting newlines: only they are parsed."""
    found: dict[int, Any] = {}
    wanted = sorted(numbers)
    number = 0
    rest = b""
    with files.open_input(path, shown) as stream:
        while found.keys() != numbers:
            block = stream.read(BLOCK)
            if not block:
                if number + 1 in numbers:  # the last line, without its newline
                    found[number + 1] = json.loads(rest)
                break
            if rest:
                block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            whole = block.count(b"\n", 0, cut)
            first = bisect_left(wanted, number + 1)
            if first < len(wanted) and wanted[first] <= number + whole:
                for offset, piece in enumerate(block[:cut].split(b"\n"), number + 1):
                    if offset in numbers:
                        found[offset] = json.loads(piece)
            number += whole
    return found


def _give_up(ledger: Reading, why: str) -> Unsettled:
    ledger.gave_up = why
    return Unsettled(why)
