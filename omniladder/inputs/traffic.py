"""The traffic ledger (SPEC §7.1): what served each request, read one event at a time.

A ledger is JSONL (``.jsonl`` or ``.ndjson``: one event per line, streamed, so a ledger of
millions of events is never held whole) or a JSON/TOML document ``{"events": [...]}``. Every
event is validated by one function (``event_from``), whichever form carries it; a bad event
is exit 2 naming the file, the line (or ``events[N]``) and the field. A JSONL file whose
final line has no newline and is not JSON is being written: it is read up to that line, with
a note. Every reader and the one writer (``event_line``) hold an event to the same bounds
(``LEDGER_COUNT_MAX`` tokens, ``LEDGER_COST_MAX`` dollars), and a line to what a JSON
document is held to (no key twice, no lone surrogate); a JSONL ledger is at most
``STREAMED_LIMIT`` bytes, refused by its size, a line at most ``LINE_LIMIT``.

Two events with the same ``request_id``, ``connection`` and ``status`` are one (re-importing
a ledger is idempotent); the first is kept. A ledger is read twice (``Ledger.scan`` first,
then ``Ledger.events``): the scan validates every line and marks, in a fixed-size Bloom
filter, the keys that may repeat; the second read compares exact keys only for those, so the
memory spent on deduplication does not grow with the ledger. ``audit traffic`` reads a JSONL
ledger once when it can (``Ledger.one_pass``: each key's hash in a fixed table, the events
whose hash repeats held aside and compared once the ledger is read), and twice when that
read cannot give the same answer.

A traffic ledger is also a spend ledger (``spend_events``): each served event with a
recorded ``cost_usd`` counts toward the R8 budgets like a spend event.
"""

from __future__ import annotations

import dataclasses
import json
import json.encoder
import math
import os
import re
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field

from omniladder import timefmt
from omniladder.errors import InputError, close_match
from omniladder.inputs.input_set import LINE_SUFFIXES
from omniladder.models import (
    IDENTIFIER_PATTERN,
    LEDGER_COST_MAX,
    LEDGER_COUNT_MAX,
    NO_OFFSET,
    SECRET_KEYS,
    Identifier,
    Record,
    SpendEvent,
    StrictModel,
    Timestamp,
)

STATUSES = ("served", "failed")
TOKEN_FIELDS = ("tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write")
COUNT_FIELDS = (*TOKEN_FIELDS, "attempts_before")
TEXT_FIELDS = ("connection", "model", "requested", "request_id")
FIELDS = ("at", "connection", "model", "requested", "status", *TOKEN_FIELDS, "cost_usd",
          "request_id", "attempts_before")
REQUIRED = ("at", "connection", "model")
TRAFFIC_ONLY = frozenset(FIELDS) - {"at", "connection", "model", "cost_usd"}
"""Keys a traffic event may carry and a spend event may not: a document whose events carry
one is a traffic ledger wherever a spend ledger is taken."""

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


# --- the schema ---------------------------------------------------------------------------

_Count = Annotated[int, Field(ge=0, le=LEDGER_COUNT_MAX)]
"""A whole number, 0 up to ``LEDGER_COUNT_MAX``."""
_Cost = Annotated[float, Field(ge=0, le=LEDGER_COST_MAX, allow_inf_nan=False)]
"""US dollars, 0 up to ``LEDGER_COST_MAX``."""


@dataclasses.dataclass(frozen=True, slots=True)
class TrafficEvent(Record):
    """One event of a traffic ledger: a request served, or an attempt that failed."""

    at: Timestamp
    connection: Identifier
    model: Identifier
    requested: Identifier | None = None
    status: Literal["served", "failed"] = "served"
    tokens_in: _Count | None = None
    tokens_out: _Count | None = None
    tokens_cache_read: _Count | None = None
    tokens_cache_write: _Count | None = None
    cost_usd: _Cost | None = None
    request_id: Identifier | None = None
    attempts_before: _Count | None = None


class TrafficFile(StrictModel):
    events: tuple[TrafficEvent, ...] = ()


# --- one event ----------------------------------------------------------------------------


class LedgerEvent(NamedTuple):
    """One validated event (``event_from``); ``line`` says where it was read."""

    at: datetime
    connection: str
    model: str
    requested: str | None
    status: str
    tokens_in: int | None
    tokens_out: int | None
    tokens_cache_read: int | None
    tokens_cache_write: int | None
    cost_usd: float | None
    request_id: str | None
    attempts_before: int | None
    line: int
    """The line of a JSONL ledger, or the index in a document's ``events``."""

    @property
    def served(self) -> bool:
        return self.status == "served"

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line > 0 else f"events[{-self.line - 1}]"


class _Place(NamedTuple):
    """Where an event is, for its messages: a line of a JSONL file or events[N]."""

    file: str
    line: int | None
    prefix: str

    def error(self, field: str | None, message: str) -> InputError:
        name = None if field is None else f"{self.prefix}{field}"
        if name is None and self.prefix:
            name = self.prefix.rstrip(".")
        return InputError(message, file=self.file, field=name, line=self.line)


def _instant(value: Any, place: _Place) -> datetime:
    if type(value) is datetime:
        parsed = value  # a TOML document's own date-time
    elif type(value) is not str:
        raise place.error("at", f"must be an RFC 3339 timestamp string, got {_kind(value)}")
    else:
        try:
            parsed = timefmt.from_rfc3339(value)
        except ValueError:
            raise place.error("at", f"not an RFC 3339 timestamp: {value!r} "
                                    "(expected e.g. 2026-11-29T12:00:00Z)") from None
    if parsed.tzinfo is None:
        raise place.error("at", NO_OFFSET)
    if not timefmt.in_utc_range(parsed):
        raise place.error("at", timefmt.OUT_OF_RANGE)
    return parsed


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null",
             LongNumber: "an integer"}
    return names.get(type(value), type(value).__name__)


class LongNumber(NamedTuple):
    """An integer of a JSONL line too long for Python to convert (more digits than
    ``sys.get_int_max_str_digits()``): read as its length, for the message that refuses
    it (``_loads``)."""

    digits: int


def _long_or_int(text: str) -> int | LongNumber:
    digits = len(text.lstrip("-"))
    if digits > 4000:  # under every limit Python sets by default (4,300)
        return LongNumber(digits)
    return int(text)


def _loads(raw: bytes) -> Any:
    """``json.loads`` of a line, an integer of thousands of digits read as a
    ``LongNumber`` (``json.loads`` raises a bare ValueError for one)."""
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:
        return json.loads(raw, parse_int=_long_or_int)


def _past(value: float | LongNumber) -> str:
    """A number past a bound as a message shows it: as JSON writes it, or how many digits
    it has when that is more than 20."""
    if isinstance(value, LongNumber):
        return f"a number of {value.digits:,} digits"
    if isinstance(value, float):
        return repr(value)
    digits = len(str(abs(value)))
    return f"a number of {digits:,} digits" if digits > 20 else str(value)


def count_refusal(value: float | LongNumber) -> str:
    """Why a count past ``LEDGER_COUNT_MAX`` is refused: one wording for every reader and
    the writer of a ledger."""
    return (f"must be at most {LEDGER_COUNT_MAX:,} (10^12: more than any request counts; "
            f"check the units), got {_past(value)}")


def cost_refusal(value: float | LongNumber) -> str:
    """Why a cost past ``LEDGER_COST_MAX`` is refused (a traffic or a spend ledger's)."""
    return (f"must be at most {LEDGER_COST_MAX:,.0f} US dollars an event (more than any "
            f"request costs; check the units), got {_past(value)}")


_CHECKED: dict[str, None] = {}
"""Connection, model and requested texts already found valid: a ledger repeats a few
thousand of them millions of times (request ids, each new, are not kept)."""
_CHECKED_MAX = 1 << 16


def _known_text(value: Any, field: str, place: _Place) -> str:
    """``_text`` for the values a ledger repeats, remembered once valid."""
    if type(value) is str and value in _CHECKED:
        return value
    found = _text(value, field, place)
    if len(_CHECKED) < _CHECKED_MAX:
        _CHECKED[found] = None
    return found


def _text(value: Any, field: str, place: _Place) -> str:
    if type(value) is not str:
        raise place.error(field, f"must be a string, got {_kind(value)}")
    if _IDENTIFIER.match(value) is None:
        raise place.error(field, "must not be blank nor hold a control character")
    return value


def _count(value: Any, field: str, place: _Place) -> int:
    if type(value) is LongNumber:
        raise place.error(field, count_refusal(value))
    if type(value) is not int:
        raise place.error(field, f"must be a whole number, got {_kind(value)}")
    if value < 0:
        raise place.error(field, f"must be 0 or more, got {_past(value)}")
    if value > LEDGER_COUNT_MAX:
        raise place.error(field, count_refusal(value))
    return value


def _cost(value: Any, place: _Place) -> float:
    if type(value) is LongNumber:
        raise place.error("cost_usd", cost_refusal(value))
    if type(value) is not int and type(value) is not float:
        raise place.error("cost_usd", f"must be a number of US dollars, got {_kind(value)}")
    if value < 0 or value != value:  # NaN compares false with anything, itself included
        raise place.error("cost_usd", f"must be a finite number, 0 or more, got "
                                      f"{_past(value)}")
    if value > LEDGER_COST_MAX:
        if type(value) is float and not math.isfinite(value):
            raise place.error("cost_usd", f"must be a finite number, 0 or more, got {value!r}")
        raise place.error("cost_usd", cost_refusal(value))
    return float(value)


def _unknown(keys: list[Any], place: _Place) -> InputError:
    key = keys[0]
    if isinstance(key, str) and key.strip().lower() in SECRET_KEYS:
        return place.error(str(key), "looks like a secret; omniladder never needs "
                           "credentials, remove it (its value is never shown)")
    near = close_match(str(key), FIELDS)
    hint = f" (did you mean {near!r}?)" if near else ""
    return place.error(str(key), f"unknown field{hint}; a traffic event has "
                       f"{', '.join(FIELDS)}")


def event_from(data: Any, place: _Place, line: int) -> LedgerEvent:
    """One event validated (SPEC §7.1), or the InputError naming its field."""
    if type(data) is not dict:
        raise place.error(None, f"an event must be an object, got {_kind(data)}")
    for name in REQUIRED:
        if data.get(name) is None:
            raise place.error(name, "field required")
    if len(data) > 3:
        extra = [key for key in data if key not in _KNOWN]
        if extra:
            raise _unknown(extra, place)
    get = data.get
    status = get("status")
    if status is None:
        status = "served"
    elif status not in STATUSES:
        raise place.error("status", f"must be served or failed, got {status!r}")
    counts: list[int | None] = []
    for name in COUNT_FIELDS:
        value = get(name)
        counts.append(None if value is None else _count(value, name, place))
    cost = get("cost_usd")
    requested = get("requested")
    request_id = get("request_id")
    return LedgerEvent(
        _instant(data["at"], place), _known_text(data["connection"], "connection", place),
        _known_text(data["model"], "model", place),
        None if requested is None else _known_text(requested, "requested", place),
        status, counts[0], counts[1], counts[2], counts[3],
        None if cost is None else _cost(cost, place),
        None if request_id is None else _text(request_id, "request_id", place),
        counts[4], line)


_KNOWN = frozenset(FIELDS)


_FROMISOFORMAT = datetime.fromisoformat
_UTC = UTC


def _instant_of(text: str) -> datetime:
    """The instant of an ``at`` text the scan accepted. ``timefmt.from_rfc3339`` strips and
    upper-cases the text before ``datetime.fromisoformat``; an ASCII text that
    ``fromisoformat`` parses as it is has no blank at either end and no lower-case letter
    but its date-time separator (``t``; any character separates), so upper-casing it
    changes nothing it reads: it is parsed as it is (``_fast`` relies on the same)."""
    if text.isascii():
        try:
            return _FROMISOFORMAT(text)
        except ValueError:
            pass
    return timefmt.from_rfc3339(text)


def ledger_event(at: datetime, data: dict[str, Any], line: int) -> LedgerEvent:
    """An event ``event_from`` already accepted, built again without its checks."""
    get = data.get
    cost = get("cost_usd")
    return LedgerEvent(
        at, data["connection"], data["model"], get("requested"), get("status") or "served",
        get("tokens_in"), get("tokens_out"), get("tokens_cache_read"),
        get("tokens_cache_write"), None if cost is None else float(cost),
        get("request_id"), get("attempts_before"), line)


_COUNT_MAX = LEDGER_COUNT_MAX
_COST_MAX = LEDGER_COST_MAX


def _none(data: Any) -> None:
    """``_fast`` for the events of a document, which ``event_from`` built already."""


def _fast(data: Any) -> tuple[datetime, str, str, str | None] | None:
    """(at, connection, status, request_id) of an event every check of ``event_from``
    accepts, or None when one may not (``event_from`` then decides and words the fault).
    The same checks, without building the event: the scan runs this once per line, so each
    is written out (a property test holds it to ``event_from``)."""
    if type(data) is not dict or not _KNOWN.issuperset(data):
        return None
    get = data.get
    connection = get("connection")
    model = get("model")
    if (type(connection) is not str or connection not in _CHECKED
            or type(model) is not str or model not in _CHECKED):
        return None
    # the fields a line most often gives first, each counted off the line's keys: when none
    # is left (at, connection and model are there, or the line is refused below), the
    # others are absent and their checks are skipped
    left = len(data) - 3
    requested = get("requested")
    if requested is not None:
        if type(requested) is not str or requested not in _CHECKED:
            return None
        left -= 1
    value = get("tokens_in")
    if value is not None:
        if type(value) is not int or not 0 <= value <= _COUNT_MAX:
            return None
        left -= 1
    value = get("tokens_out")
    if value is not None:
        if type(value) is not int or not 0 <= value <= _COUNT_MAX:
            return None
        left -= 1
    cost = get("cost_usd")
    if cost is not None:
        if type(cost) is not float or not 0.0 <= cost <= _COST_MAX:
            return None
        left -= 1
    request = get("request_id")
    if request is not None:
        # a printable text holds no control character and no blank but the space: one
        # other character is what _IDENTIFIER asks
        if type(request) is not str or (not (request.isprintable() and request.strip(" "))
                                        and _IDENTIFIER.match(request) is None):
            return None
        left -= 1
    status: Any = "served"
    if left:
        status = get("status")
        if status is None:
            status = "served"
        elif status != "served" and status != "failed":
            return None
        value = get("tokens_cache_read")
        if value is not None and (type(value) is not int or not 0 <= value <= _COUNT_MAX):
            return None
        value = get("tokens_cache_write")
        if value is not None and (type(value) is not int or not 0 <= value <= _COUNT_MAX):
            return None
        value = get("attempts_before")
        if value is not None and (type(value) is not int or not 0 <= value <= _COUNT_MAX):
            return None
    text = get("at")
    if type(text) is not str or not text.isascii():
        return None
    try:
        at = _FROMISOFORMAT(text)
    except ValueError:
        return None
    if at.tzinfo is None or (not 1 < at.year < 9999 and not timefmt.in_utc_range(at)):
        return None
    return at, connection, status, request


# --- the ledger ---------------------------------------------------------------------------


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


LedgerRecord = tuple[int, datetime, str, str, dict[str, Any]]
"""An event as ``Ledger.records`` gives it: (line, at, connection, status, fields)."""


class Unsettled(Exception):
    """``Ledger.one_pass`` cannot give the two reads' answer: read the ledger twice."""


_SCAN: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]
"""The C scanner under ``json.loads`` (its decoder, with the same defaults): a line that is
one JSON text reads to the same value through it without the two Python layers above it."""
_BLOCK = 1 << 20
"""A JSONL ledger is read a megabyte at a time."""
_BLANK = object()
"""``Ledger._one``'s answer for a line of whitespace, which a JSONL ledger may hold."""


LINE_LIMIT = _BLOCK
"""The longest line of a JSONL ledger, its newline included: 1 MiB. An event with every
field is a few hundred bytes; a longer line is the wrong file or a log without newlines,
refused once this much of it is read."""


def _too_long(shown: str, line: int) -> InputError:
    from omniladder.inputs.files import _size

    return InputError(f"a line longer than {_size(LINE_LIMIT)}, longer than any event; is "
                      "it the right file?", file=shown, line=line)


def _size_of(stream: Any) -> int:
    try:
        return os.fstat(stream.fileno()).st_size
    except OSError:
        return 0


def _names_at_most(text: str | bytes) -> int | None:
    """``keys_spelled_at_most`` of a line's text."""
    from omniladder.inputs.direct import keys_spelled_at_most

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


class _Progress:
    """How far a long read of a ledger is, on standard error when it is a terminal: every
    few seconds, the bytes read of the file's size. Never on standard output, never when
    standard error is not a terminal (a log, a pipe, a CI job)."""

    EVERY = 2.0
    """Seconds between two reports (the first after as long)."""

    def __init__(self, shown: str, size: int) -> None:
        import sys
        import time

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
    from omniladder.inputs.files import STREAMED_LIMIT, too_large

    return too_large(shown, STREAMED_LIMIT)


def _identity(path: Path) -> tuple[int, ...] | None:
    """What tells a file changed between two reads: its inode, size and times."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


class Ledger:
    """A traffic ledger on disk; ``scan`` validates it, then ``events`` yields its events
    without duplicates, as often as asked."""

    def __init__(self, path: Path, shown: str | None = None) -> None:
        from omniladder.inputs.files import display_path

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
        """The file's ``_identity`` before the scan read it."""
        self.gave_up: str | None = None
        """Why ``one_pass`` gave its read up for the two reads, None when it did not."""

    # --- reading ------------------------------------------------------------------------

    def _lines(self) -> Iterator[LedgerEvent]:
        """Every event of a JSONL ledger in line order (duplicates included)."""
        shown = self.shown
        for number, data in self._parsed():
            yield event_from(data, _Place(shown, number, ""), number)

    def _parsed(self) -> Iterator[tuple[int, Any]]:
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
        from omniladder.inputs.documents import reject_lone_surrogates
        from omniladder.inputs.files import STREAMED_LIMIT, open_input

        shown = self.shown
        scan = _SCAN
        number = total = 0
        rest = b""
        with open_input(self.path, shown) as stream:
            size = _size_of(stream)
            if size > STREAMED_LIMIT:
                raise _too_large(shown)
            progress = _Progress(shown, size)
            while True:
                try:
                    block = stream.read(_BLOCK)
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
                if total + len(body) > STREAMED_LIMIT:  # the file grew while it was read
                    for piece in body.split(b"\n")[:-1]:
                        raw = piece + b"\n"
                        number += 1
                        total += len(raw)
                        if total > STREAMED_LIMIT:
                            raise _too_large(shown)
                        data = self._one(number, raw)
                        if data is not _BLANK:
                            yield number, data
                    continue
                total += len(body)
                first = number + 1
                try:
                    lines = body.decode("utf-8").split("\n")
                except UnicodeDecodeError:
                    for number, raw in enumerate(body.split(b"\n")[:-1], first):
                        data = self._one(number, raw + b"\n")
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
                    data = self._one(number, line.encode("utf-8") + b"\n")  # its own bytes
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
                    self._repeats(lines, first)
            progress.done()
        if len(rest) > LINE_LIMIT:
            raise _too_long(shown, number + 1)
        if rest:
            number += 1
            if total + len(rest) > STREAMED_LIMIT:
                raise _too_large(shown)
            if rest.strip():
                try:
                    data = _loads(rest)
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    note = (f"{shown}: line {number}, the last, is cut short (no newline, not "
                            "JSON): the ledger is read up to it, as a file still being "
                            "written")
                    if note not in self.notes:
                        self.notes.append(note)
                    return
                self._check(number, rest, data)
                yield number, data

    def _one(self, number: int, raw: bytes) -> Any:
        """A whole line (with its newline) as ``json.loads`` gives it, ``_BLANK`` for a line
        of whitespace, or the InputError of a line that is not JSON, holds a lone surrogate
        or gives a key twice."""
        try:
            data = _loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            if raw.isspace():
                return _BLANK
            raise _not_json(exc, _Place(self.shown, number, "")) from None
        self._check(number, raw, data)
        return data

    def _repeats(self, lines: list[str], first: int) -> None:
        """The InputError of the first of a block's lines that gives a key twice, if any:
        the block's counts did not clear it (a value holding a comma or an object, a
        repeat). Its lines were given already: a fault the caller found in a later line
        of the block is the one reported."""
        from omniladder.inputs.documents import RepeatedKey, repeated_key, unique_keys

        for number, line in enumerate(lines, first):
            try:
                json.loads(line, object_pairs_hook=unique_keys, parse_int=_long_or_int)
            except RepeatedKey:
                raise repeated_key(line, self.shown, line=number) from None
            except (ValueError, RecursionError):
                continue  # blank, or refused as it was read

    def _check(self, number: int, text: str | bytes, data: Any) -> None:
        """The InputError of a line that holds a lone surrogate or gives a key twice, as
        a JSON document holding one gets (``parse_json``)."""
        from omniladder.inputs.documents import (
            RepeatedKey,
            reject_lone_surrogates,
            repeated_key,
            unique_keys,
        )

        if isinstance(data, dict | list):
            if _names_at_most(text) != _keys_in(data):
                try:
                    json.loads(text, object_pairs_hook=unique_keys,
                               parse_int=_long_or_int)
                except RepeatedKey:
                    raise repeated_key(text, self.shown, line=number) from None
            reject_lone_surrogates(text, data, self.shown, number)

    def _line(self, number: int, data: Any) -> LedgerEvent:
        return event_from(data, _Place(self.shown, number, ""), number)

    def _read_document(self) -> list[LedgerEvent]:
        from omniladder.inputs.documents import read_document

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
            raise InputError(f"must be an array of events, got {_kind(events)}",
                             file=self.shown, field="events")
        return [event_from(_thawed(item), _Place(self.shown, None, f"events[{index}]."),
                           -index - 1)
                for index, item in enumerate(events)]

    def _again(self) -> Iterator[LedgerRecord]:
        """``records`` of a JSONL ledger, once ``scan`` validated every line: what
        ``event_from`` accepted, without checking each field again, when the file is as the
        scan found it. A ledger changed since (a gateway still appending, a log rewritten)
        is validated again line by line, and no line past the scan's last is read: the
        span and the keys that may repeat are the scan's."""
        seen_lines = self._lines_seen
        trusted = self._scanned is not None and _identity(self.path) == self._scanned
        fromisoformat = _FROMISOFORMAT
        maybe = self._maybe_repeated
        seen: set[tuple[str, str, str]] = set()
        duplicates = 0
        for number, data in self._parsed():
            if number > seen_lines:
                break
            if trusted:
                try:
                    text = data["at"]
                    at = fromisoformat(text) if text.isascii() else _instant_of(text)
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
        self._read_once(duplicates)

    def _read_once(self, duplicates: int) -> None:
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
            return self._lines()
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
        self._scanned = _identity(self.path) if self.by_line else None
        shown = self.shown
        fast = _fast if self.by_line else _none
        lines: Iterator[tuple[int, Any]] = (self._parsed() if self.by_line
                                            else enumerate(self._all()))
        for line, data in lines:
            found = fast(data)
            if found is None:
                event = (data if type(data) is LedgerEvent
                         else event_from(data, _Place(shown, line, ""), line))
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
        """The instants of the events on the first and the last line of a JSONL ledger, read
        from the file's two ends; None when either is not a valid event (a blank file, a line
        longer than ``_ENDS``) or the file cannot be read (the read that follows says why).
        A ledger in time order (as importers and appending gateways write it) spans these;
        ``one_pass`` finds out whether it does."""
        from omniladder.inputs.files import open_input

        try:
            with open_input(self.path, self.shown) as stream:
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
        instants = [self._instant_of_line(line) for line in (first, last)]
        if instants[1] is None and not tail.endswith(b"\n"):  # a last line cut short
            last = next((line for line in reversed(lines[:-1]) if line.strip()), None)
            instants[1] = None if last is None else self._instant_of_line(last)
        if instants[0] is None or instants[1] is None:
            return None
        return instants[0], instants[1]

    def _instant_of_line(self, line: bytes) -> datetime | None:
        """The instant of an event line, None when it is not a valid event."""
        try:
            return event_from(json.loads(line), _Place(self.shown, None, ""), 0).at
        except (InputError, ValueError, RecursionError):
            return None

    def one_pass(self, first: datetime | None, last: datetime | None) -> Iterator[LedgerRecord]:
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
        shown = self.shown
        identity = _identity(self.path)
        slots = _slots(identity[2] if identity is not None else None)
        table = array("q", [0]) * slots
        mask = slots - 1
        room = slots * 3 // 4
        held: list[tuple[int, tuple[str, str, str], int]] = []
        failed = self.failed_by_request
        low = first if first is not None else _LATEST
        high = last if last is not None else _EARLIEST
        first_at: datetime | None = None
        at_last = last is not None
        at = _EARLIEST
        count = line = 0
        for line, data in self._parsed():
            found = _fast(data)
            if found is None:
                event = event_from(data, _Place(shown, line, ""), line)
                found = (event.at, event.connection, event.status, event.request_id)
            at, connection, status, request = found
            count += 1
            if first_at is None:
                first_at = at
            if at < low:
                if first is not None:
                    raise self._give_up("an event before the first line's instant")
                low = at
            if at >= high:
                if at > high:
                    if last is not None:
                        raise self._give_up("an event after the last line's instant")
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
                    raise self._give_up("more keys than the table holds")
                yield line, at, connection, status, data
            elif len(held) > _HELD_MAX:
                raise self._give_up("more repeated keys than are held aside")
        del table
        if count and ((first is not None and first_at != first)
                      or (last is not None and at != last)):
            raise self._give_up("the first or last event is not at the span's end")
        if held:
            self._settle(held, identity)
        self._scanned = identity
        self._lines_seen = line if count else 0
        self._maybe_repeated = {request for _, (request, _, _), _ in held}
        self._scan = Scan(low if count else None, high if count else None, count)
        self._read_once(len(held))

    def _settle(self, held: list[tuple[int, tuple[str, str, str], int]],
                identity: tuple[int, ...] | None) -> None:
        """Each held event's key compared with the key of the line that put its hash in
        the table; ``Unsettled`` unless every one is a duplicate."""
        if identity is None or _identity(self.path) != identity:
            raise self._give_up("the file changed while it was read")
        wanted = self._lines_at({put for _, _, put in held})
        for _, key, put in held:
            data = wanted.get(put)
            if type(data) is not dict or key != (data.get("request_id"), data["connection"],
                                                 data.get("status") or "served"):
                raise self._give_up("a key whose hash another key holds")
        if _identity(self.path) != identity:
            raise self._give_up("the file changed while it was read")

    def _lines_at(self, numbers: set[int]) -> dict[int, Any]:
        """The JSONL lines of these numbers as ``json.loads`` gives them (lines ``one_pass``
        read as events), found by counting newlines: only they are parsed."""
        from omniladder.inputs.files import open_input

        found: dict[int, Any] = {}
        wanted = sorted(numbers)
        number = 0
        rest = b""
        with open_input(self.path, self.shown) as stream:
            while found.keys() != numbers:
                block = stream.read(_BLOCK)
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

    def _give_up(self, why: str) -> Unsettled:
        self.gave_up = why
        return Unsettled(why)

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
        self._read_once(duplicates)

    def events(self) -> Iterator[LedgerEvent]:
        """The ledger's events in file order, each (request_id, connection, status) once."""
        if not self.by_line:
            for _, _, _, _, data in self.records():
                yield LedgerEvent(**data)
            return
        for number, at, _, _, data in self.records():
            yield ledger_event(at, data, number)


LEDGER_SUFFIXES = (*LINE_SUFFIXES, ".json", ".toml")
"""The file types a traffic ledger is read from: one event per line, or a document."""


def refuse_suffix(path: Path, shown: str, what: str = "a traffic ledger") -> None:
    """The InputError of a ledger whose name ends in none of ``LEDGER_SUFFIXES`` (standard
    input, ``-``, is not one: a ledger is read twice, or streamed from a file)."""
    suffix = path.suffix.lower()
    if suffix in LEDGER_SUFFIXES:
        return
    from omniladder.inputs.files import STDIN_NAME, check_input_file

    check_input_file(path, shown)  # a directory or a device is named as what it is

    accepted = ", ".join(LEDGER_SUFFIXES[:-1]) + f" or {LEDGER_SUFFIXES[-1]}"
    message = f"unsupported file type; {what} is a {accepted} file"
    if shown in ("-", STDIN_NAME):
        message += " (not standard input: give the file)"
    elif Path(shown).suffix.lower() != suffix:
        message += f" (the type is read from the name given, '{path}')"
    raise InputError(message, file=shown)


def _thawed(value: Any) -> Any:
    """A document's event as a JSON line gives it (the loader hands arrays as tuples)."""
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _not_json(exc: Exception, place: _Place) -> InputError:
    if isinstance(exc, UnicodeDecodeError):
        return place.error(None, f"not UTF-8 text (byte {exc.start})")
    if isinstance(exc, json.JSONDecodeError):
        return place.error(None, f"not a JSON event: {exc.msg} (column {exc.colno})")
    return place.error(None, "not a JSON event: nested too deeply")


# --- as a spend ledger --------------------------------------------------------------------


def is_traffic(path: Path, shown: str) -> bool:
    """Whether a ledger given as a spend ledger is a traffic ledger: one event per line, or
    a document whose events carry a key only traffic has or no cost (a spend event needs
    one)."""
    if path.suffix.lower() in LINE_SUFFIXES:
        return True
    from omniladder.inputs.documents import read_document

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


# --- writing: the importers' one way to write events and merge them into a ledger ---------


def millis(instant: datetime) -> str:
    """An instant as a ledger writes it: UTC, to the millisecond, with ``Z``: ``isoformat``
    in C (four-digit years, the microseconds cut to milliseconds, not rounded) with its
    ``+00:00`` written ``Z``; an importer writes one a row."""
    utc = instant if instant.tzinfo is _UTC else instant.astimezone(_UTC)
    return utc.isoformat(timespec="milliseconds")[:-6] + "Z"


_ENCODER = json.JSONEncoder(ensure_ascii=False)
_MAKE_ENCODER: Any = vars(json.encoder).get("c_make_encoder")
"""The C encoder's maker, None on a Python built without it (typeshed does not name it)."""
_CHUNKS: Callable[[Any, int], list[str]] | None = (
    None if _MAKE_ENCODER is None else _MAKE_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None,
        _ENCODER.key_separator, _ENCODER.item_separator, False, False, True))
"""The C encoder ``_ENCODER.encode`` makes on each call, made once (the arguments
``JSONEncoder.iterencode`` passes it, without the check for circular references: an event
is a flat mapping of texts and numbers)."""


class UnwritableEvent(InputError):
    """An event ``event_line`` does not write: a count or a cost no request has, which
    every reader of the ledger would refuse (``field`` names it). An importer counts the
    row it came from, or refuses it; uncaught, it is the run's one exit-2 line."""


def unwritable(event: Mapping[str, Any]) -> UnwritableEvent | None:
    """Why ``event_line`` refuses ``event``: a count past ``LEDGER_COUNT_MAX`` or a cost past
    ``LEDGER_COST_MAX`` (or not finite); None for an event it writes. Only those bounds are
    looked at here: an importer checks the rest of its rows itself."""
    get = event.get
    for name in COUNT_FIELDS:
        value = get(name)
        if type(value) is int and value > _COUNT_MAX:
            return UnwritableEvent(count_refusal(value), field=name)
    cost = get("cost_usd")
    if cost is not None and (type(cost) is int or type(cost) is float) and not (
            cost <= _COST_MAX):  # NaN too
        if type(cost) is float and not math.isfinite(cost):
            return UnwritableEvent(f"must be a finite number, 0 or more, got {cost!r}",
                                   field="cost_usd")
        return UnwritableEvent(cost_refusal(cost), field="cost_usd")
    return None


def event_line(event: Mapping[str, Any]) -> str:
    """One event as a JSONL line, as ``json.dumps(event, ensure_ascii=False)`` writes it
    (keys in the caller's order), through one encoder built once: an importer writes a line
    a row. An event no reader would take (``unwritable``) raises its ``UnwritableEvent``
    instead: a ledger is never written with a line that refuses the whole file."""
    refused = unwritable(event)
    if refused is not None:
        raise refused
    if _CHUNKS is None:
        return _ENCODER.encode(event) + "\n"
    return "".join(_CHUNKS(event, 0)) + "\n"


def _key_digest(request_id: str, connection: str, status: str) -> bytes:
    """The deduplication key (request, connection, status) as a 128-bit digest: a set of
    them costs a fixed size per event, and two different keys share one with a probability
    far below any hardware fault's."""
    import hashlib

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
    import tempfile

    from omniladder.inputs.files import display_path
    from omniladder.inputs.writing import write_atomic

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
        write_atomic(path, _new_lines(lines, held, merged))
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

        write_atomic(path, pieces())
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
