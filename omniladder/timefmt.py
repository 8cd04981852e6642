"""Readable instants and figures for details and views."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

OUT_OF_RANGE = "timestamp out of range: in UTC it falls before year 1 or after year 9999"


def in_utc_range(instant: datetime) -> bool:
    """Whether an aware instant exists in UTC: year 1 at +14:00 or 9999 at -14:00 do not.

    Inputs are checked with this, so every instant the engine compares, formats or puts
    in a budget period converts to UTC without an OverflowError.
    """
    if 1 < instant.year < 9999:
        return True
    try:
        instant.astimezone(UTC)
    except OverflowError:
        return False
    return True


def shifted(instant: datetime, span: timedelta) -> datetime | None:
    """``instant + span``, or None when that falls off the calendar (past year 9999 or
    before year 1, in UTC): each caller words what it was asked to reach."""
    try:
        found = instant + span
    except OverflowError:
        return None
    return found if in_utc_range(found) else None


def from_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 / ISO 8601 instant; lower-case ``t`` and ``z`` are accepted too.

    RFC 3339 (section 5.6) allows ``2026-11-29t12:00:00z``; ``datetime.fromisoformat`` does not,
    so the text is upper-cased first. Raises ValueError when it is not a timestamp.
    """
    return datetime.fromisoformat(text.strip().upper())


def iso(instant: datetime) -> str:
    """RFC 3339 in UTC with a Z, seconds precision (microseconds only when present)."""
    utc = instant.astimezone(UTC)
    text = utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def short(instant: datetime, now: datetime) -> str:
    """``15:00Z`` on the same UTC day as now, else ``2026-12-02 00:00Z``."""
    return _short(instant, now)


# A plan words the same few instants (readings' checked_at, resets) in thousands of details,
# all against one now. Equal instants are the same UTC instant, so they word alike: the
# words are kept rather than formatted again (bounded: simulate moves now at every step).
@functools.lru_cache(maxsize=4096)
def _short(instant: datetime, now: datetime) -> str:
    utc = instant.astimezone(UTC)
    clock = (f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z" if utc.second
             else f"{utc.hour:02d}:{utc.minute:02d}Z")
    day = utc.date()
    if day == now.astimezone(UTC).date():
        return clock
    return f"{day.isoformat()} {clock}"


def pct(value: float) -> str:
    return f"{value:g}%"


def usd(value: float) -> str:
    """Dollars to the cent, the sign before the dollar sign (-$4.00)."""
    return _signed(f"{value:,.2f}")


def _signed(text: str) -> str:
    """A formatted amount with its dollar sign after the minus; an amount that rounds to
    zero shows none ($0.00, not -$0.00)."""
    if not text.startswith("-"):
        return f"${text}"
    digits = text[1:]
    return f"${digits}" if digits.strip("0.,") == "" else f"-${digits}"


MONEY_PLACES = 6
"""The most decimals a sum of dollars is shown or compared with (the JSON's millionth)."""


def usd_exact(value: float, *beside: float) -> str:
    """Dollars as the traffic views show them: to the cent, with the decimals cents would
    hide. A non-zero amount under half a cent shows two significant digits ($0.0036, never
    $0.00), and an amount printed beside others (a leak beside its allowance) shows as many
    decimals as tell it from each of them ($3.004 beside $3.00); at most ``MONEY_PLACES``."""
    places = 2
    size = abs(value)
    if size and round(size, 2) == 0:
        while places < MONEY_PLACES and size < 10 ** (1 - places):
            places += 1
    for other in beside:
        while (places < MONEY_PLACES and round(value, MONEY_PLACES) != round(other, MONEY_PLACES)
               and f"{value:.{places}f}" == f"{other:.{places}f}"):
            places += 1
    text = f"{value:,.{places}f}"
    if places > 2:
        text = text.rstrip("0")
        text += "0" * max(0, 2 - len(text.partition(".")[2]))
    return _signed(text)


def duration(seconds: float) -> str:
    return _duration(seconds)


def age_beside(age: float, limit: float) -> str:
    """``duration`` of an age printed beside the max age it is held to. An age past the
    limit that rounds to the limit's own words (181 s beside a max of 3m) is given in exact
    seconds, so a stale reading never reads as "3m old (max 3m)"."""
    words = _duration(age)
    if age > limit and words == _duration(limit):
        return f"{format(age, 'f').rstrip('0').rstrip('.')}s"
    return words


# Kept like ``short``'s words: a plan words the same few ages and the max age again and again.
@functools.lru_cache(maxsize=1024)
def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds}s"
    minutes, _ = divmod(seconds, 60)
    if minutes < 120:
        return f"{minutes}m"
    return hours_and_minutes(minutes)


def hours_and_minutes(minutes: int) -> str:
    """A span of at least an hour in whole minutes: ``1h57m`` up to two days, ``3d00h``
    from there (the words ``duration`` and R15's reasons share)."""
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


NOW_SOURCES = {"flag": "from --now", "snapshot": "from the quota snapshot",
               "clock": "from the clock"}
"""R14's sources of now as the views' headers say them."""


def now_source(source: str) -> str:
    """``from the quota snapshot`` for ``snapshot``; an unknown source as it is."""
    return NOW_SOURCES.get(source, source)
