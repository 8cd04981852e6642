"""A traffic ledger's event (SPEC §7.1): its fields, the one validation every reader holds
each event to (``event_from``, and ``fast_check``, the same checks without building it),
and the one writer of an event's line (``event_line``).

Every reader and the writer hold an event to the same bounds (``LEDGER_COUNT_MAX`` tokens,
``LEDGER_COST_MAX`` dollars); a bad event is exit 2 naming the file, the line (or
``events[N]``) and the field.
"""

from __future__ import annotations

import json
import json.encoder
import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from omniladder import timefmt
from omniladder.errors import InputError, close_match
from omniladder.models import (
    IDENTIFIER_PATTERN,
    LEDGER_COST_MAX,
    LEDGER_COUNT_MAX,
    NO_OFFSET,
    SECRET_KEYS,
)

STATUSES = ("served", "failed")
TOKEN_FIELDS = ("tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write")
COUNT_FIELDS = (*TOKEN_FIELDS, "attempts_before")
FIELDS = ("at", "connection", "model", "requested", "status", *TOKEN_FIELDS, "cost_usd",
          "request_id", "attempts_before")
REQUIRED = ("at", "connection", "model")
TRAFFIC_ONLY = frozenset(FIELDS) - {"at", "connection", "model", "cost_usd"}
"""Keys a traffic event may carry and a spend event may not: a document whose events carry
one is a traffic ledger wherever a spend ledger is taken."""

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


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


class Place(NamedTuple):
    """Where an event is, for its messages: a line of a JSONL file or events[N]."""

    file: str
    line: int | None
    prefix: str

    def error(self, field: str | None, message: str) -> InputError:
        name = None if field is None else f"{self.prefix}{field}"
        if name is None and self.prefix:
            name = self.prefix.rstrip(".")
        return InputError(message, file=self.file, field=name, line=self.line)


def _instant(value: Any, place: Place) -> datetime:
    if type(value) is datetime:
        parsed = value  # a TOML document's own date-time
    elif type(value) is not str:
        raise place.error("at", f"must be an RFC 3339 timestamp string, got {kind_of(value)}")
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


def kind_of(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null",
             LongNumber: "an integer"}
    return names.get(type(value), type(value).__name__)


class LongNumber(NamedTuple):
    """An integer of a JSONL line too long for Python to convert (more digits than
    ``sys.get_int_max_str_digits()``): read as its length, for the message that refuses
    it (``loads_line``)."""

    digits: int


def long_or_int(text: str) -> int | LongNumber:
    digits = len(text.lstrip("-"))
    if digits > 4000:  # under every limit Python sets by default (4,300)
        return LongNumber(digits)
    return int(text)


def loads_line(raw: bytes) -> Any:
    """``json.loads`` of a line, an integer of thousands of digits read as a
    ``LongNumber`` (``json.loads`` raises a bare ValueError for one)."""
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:
        return json.loads(raw, parse_int=long_or_int)


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


def _known_text(value: Any, field: str, place: Place) -> str:
    """``_text`` for the values a ledger repeats, remembered once valid."""
    if type(value) is str and value in _CHECKED:
        return value
    found = _text(value, field, place)
    if len(_CHECKED) < _CHECKED_MAX:
        _CHECKED[found] = None
    return found


def _text(value: Any, field: str, place: Place) -> str:
    if type(value) is not str:
        raise place.error(field, f"must be a string, got {kind_of(value)}")
    if _IDENTIFIER.match(value) is None:
        raise place.error(field, "must not be blank nor hold a control character")
    return value


def _count(value: Any, field: str, place: Place) -> int:
    if type(value) is LongNumber:
        raise place.error(field, count_refusal(value))
    if type(value) is not int:
        raise place.error(field, f"must be a whole number, got {kind_of(value)}")
    if value < 0:
        raise place.error(field, f"must be 0 or more, got {_past(value)}")
    if value > LEDGER_COUNT_MAX:
        raise place.error(field, count_refusal(value))
    return value


def _cost(value: Any, place: Place) -> float:
    if type(value) is LongNumber:
        raise place.error("cost_usd", cost_refusal(value))
    if type(value) is not int and type(value) is not float:
        raise place.error("cost_usd", f"must be a number of US dollars, got {kind_of(value)}")
    if value < 0 or value != value:  # NaN compares false with anything, itself included
        raise place.error("cost_usd", f"must be a finite number, 0 or more, got "
                                      f"{_past(value)}")
    if value > LEDGER_COST_MAX:
        if type(value) is float and not math.isfinite(value):
            raise place.error("cost_usd", f"must be a finite number, 0 or more, got {value!r}")
        raise place.error("cost_usd", cost_refusal(value))
    return float(value)


def _unknown(keys: list[Any], place: Place) -> InputError:
    key = keys[0]
    if isinstance(key, str) and key.strip().lower() in SECRET_KEYS:
        return place.error(str(key), "looks like a secret; omniladder never needs "
                           "credentials, remove it (its value is never shown)")
    near = close_match(str(key), FIELDS)
    hint = f" (did you mean {near!r}?)" if near else ""
    return place.error(str(key), f"unknown field{hint}; a traffic event has "
                       f"{', '.join(FIELDS)}")


def event_from(data: Any, place: Place, line: int) -> LedgerEvent:
    """One event validated (SPEC §7.1), or the InputError naming its field."""
    if type(data) is not dict:
        raise place.error(None, f"an event must be an object, got {kind_of(data)}")
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
_RARE_COUNTS = ("tokens_cache_read", "tokens_cache_write", "attempts_before")
"""The counts ``fast_check`` looks for only when a line has keys its common fields leave."""


_FROMISOFORMAT = datetime.fromisoformat
_UTC = UTC


def instant_of(text: str) -> datetime:
    """The instant of an ``at`` text the scan accepted. ``timefmt.from_rfc3339`` strips and
    upper-cases the text before ``datetime.fromisoformat``; an ASCII text that
    ``fromisoformat`` parses as it is has no blank at either end and no lower-case letter
    but its date-time separator (``t``; any character separates), so upper-casing it
    changes nothing it reads: it is parsed as it is (``fast_check`` relies on the same)."""
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


def fast_check(data: Any) -> tuple[datetime, str, str, str | None] | None:
    """(at, connection, status, request_id) of an event every check of ``event_from``
    accepts, or None when one may not (``event_from`` then decides and words the fault).
    The same checks, without building the event: the scan runs this once per line, so each
    is written out (a property test holds it to ``event_from``).

    Each field found is counted off the line's keys: once at, connection and model are
    there and every field of ``FIELDS`` is counted, a key left over is one ``FIELDS``
    lacks (a line's keys are distinct), so no set of the line's keys is made. A field
    given as null is not counted, and so leaves the line to ``event_from``."""
    if type(data) is not dict:
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
        else:
            left -= 1
        for name in _RARE_COUNTS:
            value = get(name)
            if value is not None:
                if type(value) is not int or not 0 <= value <= _COUNT_MAX:
                    return None
                left -= 1
        if left:  # a key FIELDS lacks, or a field given as null
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


LedgerRecord = tuple[int, datetime, str, str, dict[str, Any]]
"""An event as ``Ledger.records`` gives it: (line, at, connection, status, fields)."""


# --- writing: the importers' one way to write an event ------------------------------------


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
