"""`import omniroute` options and database timestamps: exact values, exact messages.

Every refusal is one line naming the option (``--since``, ``--group-seconds``,
``--confirmed-at``) or the database file and the row's field, and saying what is wrong
(docs/sources.md#omniroute; SPEC §4.3: a usage or input error is exit 2 with one clear message).
The functions are called directly; ``str(error)`` is the line the command prints.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from omniladder import timefmt
from omniladder.errors import InputError, UsageError
from omniladder.sources.omniroute.database import db_instant
from omniladder.sources.omniroute.options import (
    MAX_GROUP_SECONDS,
    check_group_seconds,
    parse_confirmed_at,
    parse_since,
)

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
PLUS_14 = timezone(timedelta(hours=14))


# --- --group-seconds: a finite tolerance from 0 to a week, both ends included --------------


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0, 2.0, MAX_GROUP_SECONDS])
def test_group_seconds_accepts_zero_to_a_week_inclusive(value: float) -> None:
    assert check_group_seconds(value) == value


@pytest.mark.parametrize(("value", "shown"), [
    (-0.001, "-0.001"), (MAX_GROUP_SECONDS + 0.001, "604800.001"), (float("inf"), "inf"),
    (float("nan"), "nan"), (float("-inf"), "-inf"),
])
def test_group_seconds_outside_zero_to_a_week_is_refused_naming_the_option(
        value: float, shown: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_group_seconds(value)
    assert str(caught.value) == (
        f"--group-seconds: must be a number of seconds from 0 to 604800 (a week), got {shown}")


# --- --since ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("all", None), (" all ", None), ("30s", NOW - timedelta(seconds=30)),
    ("1.5h", NOW - timedelta(minutes=90)), ("1w", NOW - timedelta(days=7)),
    ("2026-11-29T13:00:00+01:00", NOW), ("2026-11-29t12:00:00z", NOW),
])
def test_since_values(text: str, expected: datetime | None) -> None:
    assert parse_since(text, NOW) == expected


@pytest.mark.parametrize(("text", "now", "message"), [
    # timedelta itself overflows: no instant at all
    ("99999999999999d", NOW,
     "--since: '99999999999999d' reaches back before year 1; use 'all' for the whole history"),
    # the subtraction overflows datetime
    ("800000d", NOW,
     "--since: '800000d' reaches back before year 1; use 'all' for the whole history"),
    # an instant that exists locally but not in UTC (year 1 at +14:00)
    ("1d", datetime(1, 1, 2, 12, tzinfo=PLUS_14),
     "--since: '1d' reaches back before year 1; use 'all' for the whole history"),
    ("yesterday", NOW, "--since: expected 'all', a duration such as 7d, 24h or 90m, or an "
     "RFC 3339 instant, got 'yesterday'"),
    ("2026-11-01T00:00:00", NOW,
     "--since: timestamp '2026-11-01T00:00:00' has no offset; add one, e.g. Z or +02:00"),
    ("0001-01-01T01:00:00+14:00", NOW,
     f"--since: '0001-01-01T01:00:00+14:00': {timefmt.OUT_OF_RANGE}"),
])
def test_since_refusals_name_the_option_and_the_problem(text: str, now: datetime,
                                                        message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_since(text, now)
    assert str(caught.value) == message


# --- --confirmed-at: now, or an instant at or before the import instant ---------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("now", NOW), (" now ", NOW), ("2026-11-29T12:00:00Z", NOW),  # exactly now is allowed
    ("2026-11-29T11:59:59Z", NOW - timedelta(seconds=1)),
    ("2026-11-29T13:00:00+01:00", NOW),
])
def test_confirmed_at_values(text: str, expected: datetime) -> None:
    assert parse_confirmed_at(text, NOW) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("soon", "--confirmed-at: expected 'now' or an RFC 3339 instant, got 'soon'"),
    ("2026-11-29T11:00:00", "--confirmed-at: timestamp '2026-11-29T11:00:00' has no offset; "
     "add one, e.g. Z or +02:00"),
    ("0001-01-01T01:00:00+14:00",
     f"--confirmed-at: '0001-01-01T01:00:00+14:00': {timefmt.OUT_OF_RANGE}"),
    ("2026-11-29T12:00:00.000001Z", "--confirmed-at: '2026-11-29T12:00:00.000001Z' is after "
     "the import instant 2026-11-29T12:00:00Z: a value cannot be confirmed in the future"),
])
def test_confirmed_at_refusals_name_the_option_and_the_problem(text: str,
                                                               message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_confirmed_at(text, NOW)
    assert str(caught.value) == message


# --- database timestamps (docs/sources.md#omniroute: ISO text, datetime('now') text, epoch ms)

WHERE = "quota_snapshots[id=7].created_at"


@pytest.mark.parametrize(("raw", "expected"), [
    # 1e11 is the split: at and above it the number is milliseconds, below it seconds
    (100_000_000_000, datetime(1973, 3, 3, 9, 46, 40, tzinfo=UTC)),
    (99_999_999_999, datetime(5138, 11, 16, 9, 46, 39, tzinfo=UTC)),
    (100_000_000_001, datetime(1973, 3, 3, 9, 46, 40, 1000, tzinfo=UTC)),
    (-100_000_000_000, datetime(1966, 10, 31, 14, 13, 20, tzinfo=UTC)),
    (1795953600.5, NOW + timedelta(milliseconds=500)),
    ("1795953600", NOW), (" 1795953600000 ", NOW), ("-1.5", datetime(1969, 12, 31, 23, 59, 58,
                                                                     500000, tzinfo=UTC)),
    ("2026-11-29T12:00:00", NOW), ("  ", None),
])
def test_db_instant_values(raw: Any, expected: datetime | None) -> None:
    assert db_instant(raw, WHERE, "storage.sqlite") == expected


@pytest.mark.parametrize(("raw", "message"), [
    (True, "not a timestamp: True"),
    (float("nan"), "not a timestamp: nan"),
    (float("inf"), "not a timestamp: inf"),
    (1e300, "timestamp out of range: 1e+300"),
    ("1e300", "not an ISO 8601 timestamp: '1e300'"),
    ("99999999999999999", "timestamp out of range: 1e+17"),
    ("soon", "not an ISO 8601 timestamp: 'soon'"),
    ("0001-01-01T00:00:00+14:00", timefmt.OUT_OF_RANGE),
    ("9999-12-31T23:00:00-14:00", timefmt.OUT_OF_RANGE),
    (b"\x00", "not a timestamp: bytes"),
])
def test_db_instant_refusals_name_the_file_and_the_field(raw: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        db_instant(raw, WHERE, "storage.sqlite")
    assert str(caught.value) == f"storage.sqlite: {WHERE}: {message}"
