"""A traffic ledger read without holding it (SPEC §7.1): ``Ledger`` reads a JSONL ledger
(``lines.json_lines``) or an events document, validating every event (``events``), twice
when asked for its events (``scan``, then ``records`` or ``events``), or once for ``audit
traffic`` when that gives the two reads' answer (``one_pass``, in ``one_read``).

Two events with the same ``request_id``, ``connection`` and ``status`` are one (re-importing
a ledger is idempotent); the first is kept. The scan validates every line and marks, in a
fixed-size Bloom filter, the keys that may repeat; the second read compares exact keys only
for those, so the memory spent on deduplication does not grow with the ledger.

A traffic ledger is also a spend ledger (``spend_events``): each served event with a
recorded ``cost_usd`` counts toward the R8 budgets like a spend event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from omniladder.errors import InputError, close_match
from omniladder.inputs.documents import read_document
from omniladder.inputs.files import display_path
from omniladder.inputs.ledger import one_read
from omniladder.inputs.ledger.events import (
    TRAFFIC_ONLY,
    LedgerEvent,
    LedgerRecord,
    Place,
    event_from,
    fast_check,
    instant_of,
    kind_of,
    ledger_event,
)
from omniladder.inputs.ledger.lines import identity, json_lines
from omniladder.inputs.ledger.suffixes import LINE_SUFFIXES, refuse_suffix
from omniladder.models import SpendEvent


class Scan(NamedTuple):
    """What the first read of a ledger found: every event valid, and its span."""

    first: datetime | None
    last: datetime | None
    events: int
    """Events read, before duplicates are dropped."""


_BLOOM_BITS = 1 << 27
"""The Bloom filter of keys that may repeat: 16 MiB, whatever the ledger's size, two bits a
key in one block of 512 (a cache line: one memory access a key). At a million keys about
one in 4,000 is a false alarm, at two million one in 1,000, which only costs an exact
comparison of that request's events in the second read."""
_IN_BLOCK = 511
_BLOCK_MASK = (_BLOOM_BITS - 1) & ~_IN_BLOCK


def _bloom_positions(key: int) -> tuple[int, int]:
    one = key & (_BLOOM_BITS - 1)
    return one, one & _BLOCK_MASK | (key >> 40) & _IN_BLOCK


_FROMISOFORMAT = datetime.fromisoformat


def _none(data: Any) -> None:
    """``fast_check`` for the events of a document, which ``event_from`` built already."""


class Ledger:
    """A traffic ledger on disk; ``scan`` validates it, then ``events`` yields its events
    without duplicates, as often as asked."""

    def __init__(self, path: Path, shown: str | None = None) -> None:
        self.path = path
        self.shown = shown if shown is not None else display_path(path)
        self.by_line = path.suffix.lower() in LINE_SUFFIXES
        self.notes: list[str] = []
        self.duplicates = 0
        self.failed_by_request: Counter[int] = Counter()
        """Per request (the hash of its ``request_id``), the failed attempts the ledger holds."""
        self._document: list[LedgerEvent] | None = None
        self._maybe_repeated: set[str] = set()
        """The request ids of the keys the Bloom filter may have seen twice."""
        self._scan: Scan | None = None
        self._lines_seen = 0
        """The last line of an event the scan read."""
        self._scanned: tuple[int, ...] | None = None
        """The file's ``identity`` before the scan read it."""
        self.gave_up: str | None = None
        """Why ``one_pass`` gave its read up for the two reads, None when it did not."""

    # --- reading ------------------------------------------------------------------------

    def _line_events(self) -> Iterator[LedgerEvent]:
        """Every event of a JSONL ledger in line order (duplicates included)."""
        shown = self.shown
        for number, data in self.lines():
            yield event_from(data, Place(shown, number, ""), number)

    def lines(self) -> Iterator[tuple[int, Any]]:
        """Every non-blank line of a JSONL ledger as ``json.loads`` gives it, in line order
        (``lines.json_lines``: each is validated by the caller before the next is read)."""
        return json_lines(self.path, self.shown, self.notes)

    def _line(self, number: int, data: Any) -> LedgerEvent:
        return event_from(data, Place(self.shown, number, ""), number)

    def _read_document(self) -> list[LedgerEvent]:
        refuse_suffix(self.path, self.shown)
        document = read_document(self.path, self.shown)
        extra = [key for key in document if key != "events"]
        if extra:
            near = close_match(str(extra[0]), ["events"])
            hint = " (did you mean 'events'?)" if near else ""
            raise InputError(f"unknown field{hint}; a traffic ledger document has only "
                             "events", file=self.shown, field=str(extra[0]))
        events = document.get("events", ())
        if not isinstance(events, tuple):
            raise InputError(f"must be an array of events, got {kind_of(events)}",
                             file=self.shown, field="events")
        return [event_from(_thawed(item), Place(self.shown, None, f"events[{index}]."),
                           -index - 1)
                for index, item in enumerate(events)]

    def _again(self) -> Iterator[LedgerRecord]:
        """``records`` of a JSONL ledger, once ``scan`` validated every line: what
        ``event_from`` accepted, without checking each field again, when the file is as the
        scan found it. A ledger changed since (a gateway still appending, a log rewritten)
        is validated again line by line, and no line past the scan's last is read: the
        span and the keys that may repeat are the scan's."""
        seen_lines = self._lines_seen
        trusted = self._scanned is not None and identity(self.path) == self._scanned
        fromisoformat = _FROMISOFORMAT
        maybe = self._maybe_repeated
        seen: set[tuple[str, str, str]] = set()
        duplicates = 0
        for number, data in self.lines():
            if number > seen_lines:
                break
            if trusted:
                try:
                    text = data["at"]
                    at = fromisoformat(text) if text.isascii() else instant_of(text)
                except (ValueError, TypeError, KeyError, AttributeError):
                    at = self._line(number, data).at  # a lower-case t or z, or a fault
            else:
                at = self._line(number, data).at
            connection = data["connection"]
            status = data.get("status") or "served"
            if maybe:
                request = data.get("request_id")
                if request is not None and request in maybe:
                    exact = (request, connection, status)
                    if exact in seen:
                        duplicates += 1
                        continue
                    seen.add(exact)
            yield number, at, connection, status, data
        self._count_duplicates(duplicates)

    def _count_duplicates(self, duplicates: int) -> None:
        """The note of the events a read found repeated (SPEC §7.1)."""
        self.duplicates = duplicates
        if duplicates:
            note = (f"{self.shown}: {duplicates} event{'s' if duplicates != 1 else ''} "
                    "repeated an earlier one's request_id, connection and status and "
                    f"{'were' if duplicates != 1 else 'was'} read once (SPEC §7.1)")
            if note not in self.notes:
                self.notes.append(note)

    def _all(self) -> Iterator[LedgerEvent]:
        if self.by_line:
            return self._line_events()
        if self._document is None:
            self._document = self._read_document()
        return iter(self._document)

    # --- the two reads ------------------------------------------------------------------

    def scan(self) -> Scan:
        """Validate every event, find the span, and mark the keys that may repeat."""
        if self._scan is not None:
            return self._scan
        bits = bytearray(_BLOOM_BITS // 8)
        mask = _BLOOM_BITS - 1
        maybe: set[str] = set()
        failed = self.failed_by_request
        first: datetime | None = None
        last: datetime | None = None
        count = 0
        last_line = 0
        self._scanned = identity(self.path) if self.by_line else None
        shown = self.shown
        fast = fast_check if self.by_line else _none
        lines: Iterator[tuple[int, Any]] = (self.lines() if self.by_line
                                            else enumerate(self._all()))
        for line, data in lines:
            found = fast(data)
            if found is None:
                event = (data if type(data) is LedgerEvent
                         else event_from(data, Place(shown, line, ""), line))
                line = event.line
                found = (event.at, event.connection, event.status, event.request_id)
            at, connection, status, request = found
            count += 1
            last_line = line
            if first is None or at < first:
                first = at
            if last is None or at > last:
                last = at
            if request is None:
                continue
            if status == "failed":
                hashed = hash(request)
                failed[hashed] = failed.get(hashed, 0) + 1
            key = hash((request, connection, status))
            # the two positions of _bloom_positions, inline: this runs once per event
            one = key & mask
            two = one & _BLOCK_MASK | (key >> 40) & _IN_BLOCK
            if bits[one >> 3] & 1 << (one & 7) and bits[two >> 3] & 1 << (two & 7):
                maybe.add(request)
            else:
                bits[one >> 3] |= 1 << (one & 7)
                bits[two >> 3] |= 1 << (two & 7)
        self._maybe_repeated = maybe
        self._lines_seen = last_line
        self._scan = Scan(first, last, count)
        return self._scan

    # --- one read -----------------------------------------------------------------------

    @property
    def unread(self) -> bool:
        """Whether this is a JSONL ledger not read yet: ``one_pass`` may read it."""
        return self.by_line and self._scan is None

    def ends(self) -> tuple[datetime, datetime] | None:
        """The instants of the events on the first and the last line of a JSONL ledger
        (``one_read.ends``): the span ``one_pass`` checks its read against."""
        return one_read.ends(self.path, self.shown)

    def one_pass(self, first: datetime | None, last: datetime | None) -> Iterator[LedgerRecord]:
        """``records`` of a JSONL ledger not read yet, in one read (``one_read.one_pass``),
        or ``Unsettled`` when that read cannot give the two reads' answer (its reason also
        in ``gave_up``): the caller then ``forget``s it and reads the ledger twice."""
        return one_read.one_pass(self, first, last)

    def keep_one_read(self, *, first: datetime | None, last: datetime | None, count: int,
                      identity: tuple[int, ...] | None, last_line: int, repeated: set[str],
                      duplicates: int) -> None:
        """What ``one_pass`` found, kept as ``scan`` keeps it: ``records`` then reads the
        ledger again, the same events."""
        self._scanned = identity
        self._lines_seen = last_line
        self._maybe_repeated = repeated
        self._scan = Scan(first, last, count)
        self._count_duplicates(duplicates)

    def forget(self) -> None:
        """Forget what a read found, for the two reads after ``one_pass`` gave up."""
        self.failed_by_request = Counter()
        self.duplicates = 0
        self._maybe_repeated = set()
        self._scan = None
        self._lines_seen = 0
        self._scanned = None

    def records(self) -> Iterator[LedgerRecord]:
        """The ledger's events in file order, each (request_id, connection, status) once, as
        (line, at, connection, status, fields): each field as the event has it (a JSONL
        line's own values, which ``event_from`` accepted: a cost may be an integer), ``at``
        as the instant, the status ``served`` when the event gives none. What a reader of
        millions of events takes instead of building each ``LedgerEvent``."""
        self.scan()
        if self.by_line:
            return self._again()
        return self._documented()

    def _documented(self) -> Iterator[LedgerRecord]:
        """``records`` of a document ledger."""
        maybe = self._maybe_repeated
        seen: set[tuple[str, str, str]] = set()
        duplicates = 0
        for event in self._all():
            request = event.request_id
            if request is not None and request in maybe:
                exact = (request, event.connection, event.status)
                if exact in seen:
                    duplicates += 1
                    continue
                seen.add(exact)
            yield event.line, event.at, event.connection, event.status, event._asdict()
        self._count_duplicates(duplicates)

    def events(self) -> Iterator[LedgerEvent]:
        """The ledger's events in file order, each (request_id, connection, status) once."""
        if not self.by_line:
            for _, _, _, _, data in self.records():
                yield LedgerEvent(**data)
            return
        for number, at, _, _, data in self.records():
            yield ledger_event(at, data, number)


def _thawed(value: Any) -> Any:
    """A document's event as a JSON line gives it (the loader hands arrays as tuples)."""
    if isinstance(value, Mapping):
        return dict(value)
    return value


# --- as a spend ledger --------------------------------------------------------------------


def is_traffic(path: Path, shown: str) -> bool:
    """Whether a ledger given as a spend ledger is a traffic ledger: one event per line, or
    a document whose events carry a key only traffic has or no cost (a spend event needs
    one)."""
    if path.suffix.lower() in LINE_SUFFIXES:
        return True
    try:
        document = read_document(path, shown)
    except InputError:
        return False  # the spend loader says what is wrong with it
    events = document.get("events")
    if set(document) != {"events"} or not isinstance(events, tuple):
        return False
    return any(isinstance(event, Mapping) and (
        not TRAFFIC_ONLY.isdisjoint(event) or ("cost_usd" not in event
                                               and "rung" not in event))
        for event in events)


def spend_events(path: Path, shown: str) -> tuple[tuple[SpendEvent, ...], list[str]]:
    """SPEC §7.1: the served events of a traffic ledger with a recorded cost, as spend
    events (R8 counts them like a spend ledger's), and the notes its reading made. A
    recorded 0 is no recorded cost (SPEC §7.4 v1.4: a gateway writes 0 when its price map
    lacks the model), so it neither counts nor reads as a paid rung's spend of $0."""
    ledger = Ledger(path, shown)
    events = tuple(SpendEvent(at=event.at, cost_usd=event.cost_usd,
                              connection=event.connection, model=event.model)
                   for event in ledger.events()
                   if event.cost_usd and event.status == "served")
    return events, ledger.notes
