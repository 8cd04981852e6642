"""The import's options: ``--since``, ``--confirmed-at`` and ``--group-seconds``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from omniladder import timefmt
from omniladder.engine.autoid import aware_instant
from omniladder.errors import UsageError

DEFAULT_GROUP_SECONDS = 2.0
MAX_GROUP_SECONDS = 7 * 86_400.0
"""A week: rows further apart than that are never one gateway write."""
DEFAULT_SINCE = "7d"


def check_group_seconds(value: float) -> float:
    """--group-seconds as a finite tolerance from 0 to a week, or a UsageError."""
    if not math.isfinite(value) or not 0 <= value <= MAX_GROUP_SECONDS:
        raise UsageError(f"must be a number of seconds from 0 to {MAX_GROUP_SECONDS:g} "
                         f"(a week), got {value!r}", field="--group-seconds")
    return value


@dataclass(frozen=True)
class ImportOptions:
    now: datetime
    """The instant of the import: the snapshot's taken_at and the origin of --since."""
    since: datetime | None
    """Readings before this instant are dropped, except the one in force at it."""
    group_seconds: float = DEFAULT_GROUP_SECONDS
    confirmed_at: datetime | None = None
    """Opt-in: one more reading per connection at this instant, carrying its latest values."""
    traffic_until: datetime | None = None
    """call_logs rows stamped after this are left out (counted): the ``--now`` given. None
    (no ``--now``): the clock when call_logs is read, inside the read transaction, so a row
    the gateway wrote in the second ``now`` was cut to is kept (docs/traffic.md)."""


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: datetime) -> datetime | None:
    """``all``, a duration back from now (``90m``, ``24h``, ``7d``, ``2w``) or an instant."""
    value = text.strip()
    if value == "all":
        return None
    match = _DURATION.fullmatch(value)
    if match:
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        try:
            start = now - timedelta(seconds=seconds)
        except OverflowError:
            start = None
        if start is None or not timefmt.in_utc_range(start):
            raise UsageError(f"{text!r} reaches back before year 1; use 'all' for the whole "
                             "history", field="--since")
        return start
    try:
        return aware_instant(value, "--since")
    except ValueError:
        raise UsageError(f"expected 'all', a duration such as 7d, 24h or 90m, or an RFC 3339 "
                         f"instant, got {text!r}", field="--since") from None


def parse_confirmed_at(text: str, now: datetime) -> datetime:
    """``now`` (the import instant) or an RFC 3339 instant at or before it."""
    value = text.strip()
    if value == "now":
        return now
    try:
        instant = aware_instant(value, "--confirmed-at")
    except ValueError:
        raise UsageError(f"expected 'now' or an RFC 3339 instant, got {text!r}",
                         field="--confirmed-at") from None
    if instant > now:
        raise UsageError(f"{text!r} is after the import instant {timefmt.iso(now)}: a value "
                         "cannot be confirmed in the future", field="--confirmed-at")
    return instant
