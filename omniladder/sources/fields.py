"""Reading one field of a source's JSON: the value in omniladder's units, or one InputError.

Every source is an undocumented API, so a missing field or an unknown one is never an error
(the caller decides what absence means); a value that is present but unusable is, and the
error names the file and the field path (``seven_day.utilization``). Values outside their
range are accepted only in the conservative direction: a percent *used* above 100 reads as
nothing left, a percent *remaining* below 0 as nothing left; the other direction would
invent quota and is an error.

Only the value of the field being read can ever appear in a message, so a token elsewhere
in the same document is never echoed.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

from omniladder.errors import InputError
from omniladder.timefmt import OUT_OF_RANGE, from_rfc3339, in_utc_range

_SHOWN_CHARS = 40


def shown_value(value: Any) -> str:
    """A value as an error message quotes it: JSON, cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 1] + "…"


def fail(file: str, path: str, expected: str, value: Any) -> InputError:
    return InputError(f"expected {expected}, got {shown_value(value)}", file=file, field=path)


def load_json(raw: bytes, file: str) -> Any:
    """A whole JSON document; an unreadable one names the file and the line."""
    from omniladder.inputs.documents import parse_text
    from omniladder.inputs.files import decode_text

    return parse_text(decode_text(raw, file), ".json", file)


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def obj(value: Any, file: str, path: str) -> dict[str, Any] | None:
    """An object, or None for null/absent."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise fail(file, path or "the top level", "an object", value)
    return value


def name(value: str, file: str, path: str) -> str:
    """A name a source gives a window (a key of its payload, or a value such as a model
    id): one the quota file can hold, or the InputError naming the field. A control
    character or a blank is refused here, where the file and the field are known, not by
    the quota file's check after scoping (the name is escaped in the message)."""
    from omniladder.models import identifier_problem

    problem = identifier_problem(value)
    if problem is not None:
        raise InputError(f"the window name {shown_value(value)} {problem}", file=file,
                         field=path)
    return value


def top_object(value: Any, file: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(file, "the top level", "an object", value)
    return value


def array(value: Any, file: str, path: str) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise fail(file, path, "an array", value)
    return value


def text(value: Any, file: str, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise fail(file, path, "a non-empty string", value)
    return value.strip()


def flag(value: Any, file: str, path: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise fail(file, path, "true or false", value)
    return value


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def remaining_from_used(value: Any, file: str, path: str) -> float | None:
    """Percent *used* 0–100 → percent remaining. Above 100 (past the plan) reads as 0."""
    if value is None:
        return None
    used = _finite(value)
    if used is None or used < 0:
        raise fail(file, path, "a number 0–100 (percent used)", value)
    return max(0.0, 100.0 - used)


def remaining_percent(value: Any, file: str, path: str) -> float | None:
    """Percent *remaining* 0–100. Below 0 (overage drawn) reads as 0."""
    if value is None:
        return None
    number = _finite(value)
    if number is None or number > 100:
        raise fail(file, path, "a number 0–100 (percent remaining)", value)
    return max(0.0, number)


def remaining_from_fraction(value: Any, file: str, path: str) -> float | None:
    """A fraction *remaining* 0–1 → percent remaining 0–100 (0.25 is 25 %, not 0.25 %)."""
    if value is None:
        return None
    number = _finite(value)
    if number is None or number > 1:
        raise fail(file, path, "a fraction 0–1 (remaining)", value)
    return max(0.0, number) * 100.0


def seconds(value: Any, file: str, path: str) -> float | None:
    """A non-negative count of seconds."""
    if value is None:
        return None
    number = _finite(value)
    if number is None or number < 0:
        raise fail(file, path, "a number of seconds ≥ 0", value)
    return number


def minutes(value: Any, file: str, path: str) -> int | None:
    if value is None:
        return None
    number = _finite(value)
    if number is None or number <= 0 or not number.is_integer():
        raise fail(file, path, "a whole number of minutes > 0", value)
    return int(number)


_EPOCH_MAX = 253402300799  # 9999-12-31T23:59:59Z


def epoch(value: Any, file: str, path: str) -> datetime | None:
    """Unix epoch *seconds* → an aware UTC instant."""
    if value is None:
        return None
    number = _finite(value)
    if number is None or not 0 <= number <= _EPOCH_MAX:
        raise fail(file, path, "epoch seconds", value)
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=number)


def instant(value: Any, file: str, path: str) -> datetime | None:
    """An RFC 3339 timestamp with an offset → an aware instant."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(file, path, "an RFC 3339 timestamp", value)
    try:
        parsed = from_rfc3339(value)
    except ValueError:
        raise fail(file, path, "an RFC 3339 timestamp", value) from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise fail(file, path, "an RFC 3339 timestamp with an offset", value)
    if not in_utc_range(parsed):
        raise InputError(OUT_OF_RANGE, file=file, field=path)
    return parsed.astimezone(UTC)


def calendar_day(value: Any, file: str, path: str) -> datetime | None:
    """A ``YYYY-MM-DD`` date → 00:00Z that day."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(file, path, "a date YYYY-MM-DD", value)
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise fail(file, path, "a date YYYY-MM-DD", value) from None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def number_or_text(value: Any, file: str, field: str, *,
                   negative: bool = True) -> float | None:
    """A finite count sent as a number or as a numeric string (clients coerce such fields
    with ``Number()``; an int64 in a Google API travels as JSON text); None when absent.
    ``negative=False`` refuses a count below 0."""
    if value is None:
        return None
    expected = "a number" if negative else "a count ≥ 0"
    number: Any = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise fail(file, field, expected, value) from None
    if (isinstance(number, bool) or not isinstance(number, int | float)
            or not math.isfinite(number) or (not negative and number < 0)):
        raise fail(file, field, expected, value)
    return float(number)
