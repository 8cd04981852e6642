"""R8: budget periods are UTC calendar periods; when the next one starts (the budget remedy
and `why`'s earliest comeback name that instant)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from omniladder.engine.budgets import next_period_start, period_start


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(("now", "period", "start", "following"), [
    # a day: midnight UTC to midnight UTC
    ("2026-11-29T12:00:00+00:00", "day", "2026-11-29T00:00:00+00:00",
     "2026-11-30T00:00:00+00:00"),
    ("2026-11-29T00:00:00+00:00", "day", "2026-11-29T00:00:00+00:00",
     "2026-11-30T00:00:00+00:00"),
    ("2026-11-29T23:59:59+00:00", "day", "2026-11-29T00:00:00+00:00",
     "2026-11-30T00:00:00+00:00"),
    ("2026-12-31T23:00:00+00:00", "day", "2026-12-31T00:00:00+00:00",
     "2027-01-01T00:00:00+00:00"),
    # an ISO week from Monday: 2026-11-29 is a Sunday, 2026-11-30 a Monday
    ("2026-11-29T12:00:00+00:00", "week", "2026-11-23T00:00:00+00:00",
     "2026-11-30T00:00:00+00:00"),
    ("2026-11-30T00:00:00+00:00", "week", "2026-11-30T00:00:00+00:00",
     "2026-12-07T00:00:00+00:00"),
    ("2026-12-30T08:00:00+00:00", "week", "2026-12-28T00:00:00+00:00",
     "2027-01-04T00:00:00+00:00"),
    # a calendar month, across a year end and a short February
    ("2026-11-29T12:00:00+00:00", "month", "2026-11-01T00:00:00+00:00",
     "2026-12-01T00:00:00+00:00"),
    ("2026-12-15T12:00:00+00:00", "month", "2026-12-01T00:00:00+00:00",
     "2027-01-01T00:00:00+00:00"),
    ("2027-01-31T23:59:59+00:00", "month", "2027-01-01T00:00:00+00:00",
     "2027-02-01T00:00:00+00:00"),
    ("2028-02-29T12:00:00+00:00", "month", "2028-02-01T00:00:00+00:00",
     "2028-03-01T00:00:00+00:00"),
])
def test_R8_the_period_and_the_next_one_start_at_utc_calendar_boundaries(
        now: str, period: str, start: str, following: str) -> None:
    at = utc(now)
    assert period_start(at, period) == utc(start)
    found = next_period_start(at, period)
    assert found == utc(following)
    assert found.tzinfo is not None
    assert found.utcoffset() == timedelta(0)
    assert period_start(found, period) == found  # the next period starts exactly there
    assert period_start(found - timedelta(microseconds=1), period) == utc(start)


@pytest.mark.parametrize(("now", "period", "following"), [
    # 01:00 at +02:00 is still 23:00 on the day before in UTC
    ("2026-12-01T01:00:00+02:00", "day", "2026-12-01T00:00:00+00:00"),
    ("2026-12-01T01:00:00+02:00", "month", "2026-12-01T00:00:00+00:00"),
    ("2026-11-30T01:00:00+02:00", "week", "2026-11-30T00:00:00+00:00"),
    # and 23:00 at -05:00 is already the next UTC day
    ("2026-11-30T23:00:00-05:00", "day", "2026-12-02T00:00:00+00:00"),
])
def test_R8_the_next_period_is_counted_in_utc_whatever_the_offset_of_now(
        now: str, period: str, following: str) -> None:
    at = datetime.fromisoformat(now)
    assert at.utcoffset() != timedelta(0)
    assert next_period_start(at, period) == utc(following)


def test_the_next_period_keeps_an_aware_utc_instant() -> None:
    found = next_period_start(datetime(2026, 11, 29, 12, tzinfo=timezone(timedelta(hours=9))),
                              "month")
    assert found == datetime(2026, 12, 1, tzinfo=UTC)
    assert found.tzinfo == UTC
