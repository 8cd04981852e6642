"""`--since` reads the database in SQL: the rows from since on, and the value in force at it.

docs/sources.md#omniroute and the importer's docstring: with --since only the rows at or after the
since instant, plus the latest row before it of every (connection, window_key), are read;
the summary line counts the rows read ("from N snapshot rows"). Timestamps come in the three
forms of docs/sources.md#omniroute: ISO text with Z, SQLite datetime('now') text and
epoch milliseconds, as text or, in a column without TEXT affinity, as numbers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omniladder.errors import InputError
from tests.omniroute_db import REAL_SNAPSHOTS_DDL, build_db
from tests.omniroute_direct import NOW, run_import

ONE = (("conn-a", "claude", "oauth", "a", None, 1, "active", None, None, 1),)
WINDOW = "session (5h)"
SINCE = datetime(2026, 11, 29, 10, tzinfo=UTC)


def _row(value: float, created: Any, window: str = WINDOW) -> tuple[Any, ...]:
    return ("conn-a", window, value, 0, None, created)


def _values(result: Any, window: str = WINDOW) -> list[tuple[str, float]]:
    """(checked_at, remaining percent of ``window``) of every reading, in order."""
    out = []
    for reading in result.quota["readings"]:
        for item in reading.get("windows", ()):
            if item["name"] == window:
                out.append((reading["checked_at"], item["remaining_percent"]))
    return out


def _ms(instant: datetime) -> int:
    return int(instant.timestamp() * 1000)


def _db(tmp_path: Path, rows: list[tuple[Any, ...]], ddl: str = REAL_SNAPSHOTS_DDL) -> Path:
    return build_db(tmp_path / "since.sqlite", connections=ONE, snapshots=rows,
                    snapshots_ddl=ddl)


# --- how many rows are read -----------------------------------------------------------------


def test_since_reads_the_rows_from_since_on_and_the_date_of_the_row_in_force(
        tmp_path: Path) -> None:
    """Older dates are never read; the row exactly at since is read once, as a reading."""
    rows = [
        _row(90, "2026-11-27T08:00:00.000Z"),   # an older date: not read
        _row(80, "2026-11-28T08:00:00.000Z"),   # the date in force: read
        _row(70, "2026-11-28T09:00:00.000Z"),   # in force at since
        _row(60, "2026-11-29T10:00:00.000Z"),   # exactly at since
        _row(50, "2026-11-29T11:00:00.000Z"),
    ]
    path = _db(tmp_path, rows)
    result = run_import(path, since=SINCE)
    assert result.counts["snapshot_rows"] == 4
    assert _values(result) == [("2026-11-28T09:00:00Z", 70), ("2026-11-29T10:00:00Z", 60),
                               ("2026-11-29T11:00:00Z", 50)]
    assert run_import(path).counts["snapshot_rows"] == 5


@pytest.mark.parametrize(("created", "expected"), [
    ("2015-06-01T09:00:00.000Z", [("2015-06-01T09:00:00Z", 70), ("2015-06-01T11:00:00Z", 50)]),
    ("2015-06-01 09:00:00", [("2015-06-01T09:00:00Z", 70), ("2015-06-01T11:00:00Z", 50)]),
])
def test_the_value_in_force_is_found_in_any_century_year(tmp_path: Path, created: str,
                                                         expected: list[Any]) -> None:
    """A since in 2015 (a two-digit year below 20) still finds the row in force."""
    rows = [_row(70, created), _row(50, "2015-06-01T11:00:00.000Z")]
    result = run_import(_db(tmp_path, rows), since=datetime(2015, 6, 1, 10, tzinfo=UTC))
    assert _values(result) == expected


def test_a_bad_timestamp_before_since_names_the_row(tmp_path: Path) -> None:
    rows = [_row(70, "2026-11-28 at noon"), _row(50, "2026-11-29T11:00:00.000Z")]
    with pytest.raises(InputError) as caught:
        run_import(_db(tmp_path, rows), since=SINCE)
    assert str(caught.value) == ("storage.sqlite: quota_snapshots[id=1].created_at: not an "
                                 "ISO 8601 timestamp: '2026-11-28 at noon'")


# --- epoch forms ----------------------------------------------------------------------------

NUMERIC_DDL = REAL_SNAPSHOTS_DDL.replace("created_at TEXT NOT NULL DEFAULT (datetime('now'))",
                                         "created_at")


@pytest.mark.parametrize("ddl", [REAL_SNAPSHOTS_DDL, NUMERIC_DDL], ids=["text", "numeric"])
def test_the_epoch_ms_row_in_force_is_found_among_later_iso_rows(tmp_path: Path,
                                                                 ddl: str) -> None:
    """Writers changed form over time: an epoch-ms row in force, then ISO rows after since."""
    rows = [_row(90, _ms(SINCE - timedelta(hours=3))), _row(70, _ms(SINCE - timedelta(hours=1)))]
    rows += [_row(60 - n, f"2026-11-29T1{n}:30:00.000Z") for n in range(4)]
    result = run_import(_db(tmp_path, rows, ddl), since=SINCE)
    assert _values(result) == [
        ("2026-11-29T09:00:00Z", 70), ("2026-11-29T10:30:00Z", 60),
        ("2026-11-29T11:30:00Z", 59)]  # 12:30 and 13:30 are after the import instant
    assert "2 quota_snapshots row(s) dated after the import instant were skipped" in \
        result.notes


@pytest.mark.parametrize("ddl", [REAL_SNAPSHOTS_DDL, NUMERIC_DDL], ids=["text", "numeric"])
@pytest.mark.parametrize("scale", [1000, 1], ids=["ms", "s"])
def test_epoch_rows_at_since_and_at_the_import_instant_are_kept(
        tmp_path: Path, ddl: str, scale: int) -> None:
    """Both ends are inclusive in every form: exactly since, exactly the import instant;
    and the value in force at since is found for epoch seconds stored as numbers too (it
    was lost when three rows were at or after since)."""
    def at(instant: datetime) -> int:
        return int(instant.timestamp()) * scale
    rows = [_row(90, at(SINCE - timedelta(hours=1))), _row(80, at(SINCE)),
            _row(70, at(SINCE + timedelta(minutes=30))), _row(60, at(NOW))]
    result = run_import(_db(tmp_path, rows, ddl), since=SINCE)
    assert _values(result) == [
        ("2026-11-29T09:00:00Z", 90), ("2026-11-29T10:00:00Z", 80),
        ("2026-11-29T10:30:00Z", 70), ("2026-11-29T12:00:00Z", 60)]


# --- the machine's time zone plays no part ---------------------------------------------------


@pytest.fixture(params=["Etc/GMT+12", "Etc/GMT-14"])
def local_zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
               ) -> Iterator[str]:
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("form", ["iso", "sqlite"])
def test_since_does_not_depend_on_the_local_time_zone(tmp_path: Path, local_zone: str,
                                                      form: str) -> None:
    def text(instant: datetime) -> str:
        return instant.strftime("%Y-%m-%dT%H:%M:%S.000Z" if form == "iso"
                                else "%Y-%m-%d %H:%M:%S")
    rows = [_row(90, text(SINCE - timedelta(hours=20))),
            _row(80, text(SINCE - timedelta(hours=2))),
            _row(70, text(SINCE + timedelta(hours=1)))]
    result = run_import(_db(tmp_path, rows), since=SINCE)
    assert _values(result) == [("2026-11-29T08:00:00Z", 80), ("2026-11-29T11:00:00Z", 70)]


def test_since_reads_no_older_row_of_any_text_form(tmp_path: Path) -> None:
    """Rows of earlier dates, ISO or datetime('now') text, are never read; of the date in
    force, the rows before since are read once each."""
    rows = [
        _row(95, "2026-11-27 08:00:00"), _row(94, "2026-01-29 10:30:00"),
        _row(93, "2026-11-28T08:00:00.000Z"),
        _row(90, "2026-11-29 08:00:00"),          # the date in force, datetime('now') form
        _row(80, "2026-11-29T09:00:00.000Z"),     # in force at since
        _row(60, "2026-11-29 10:30:00"), _row(50, "2026-11-29T11:00:00.000Z"),
    ]
    result = run_import(_db(tmp_path, rows), since=SINCE)
    assert _values(result) == [("2026-11-29T09:00:00Z", 80), ("2026-11-29T10:30:00Z", 60),
                               ("2026-11-29T11:00:00Z", 50)]
    assert result.counts["snapshot_rows"] == 4


@pytest.mark.parametrize("ddl", [REAL_SNAPSHOTS_DDL, NUMERIC_DDL], ids=["text", "numeric"])
@pytest.mark.parametrize("form", ["iso", "sqlite", "ms", "s"])
def test_rows_after_the_import_instant_are_counted_with_since_as_with_all(
        tmp_path: Path, ddl: str, form: str) -> None:
    """docs/sources.md#omniroute: rows dated after the import instant are skipped and counted
    on stderr. With --since too, however far after it they are (an import with --now in the
    past)."""
    def stamp(instant: datetime) -> Any:
        if form == "iso":
            return instant.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        if form == "sqlite":
            return instant.strftime("%Y-%m-%d %H:%M:%S")
        return int(instant.timestamp()) * (1000 if form == "ms" else 1)
    later = [NOW + timedelta(seconds=s) for s in (1, 3, 3600, 86400 * 40)]
    rows = [_row(70, stamp(SINCE + timedelta(minutes=30)))] + [
        _row(60 - n, stamp(at)) for n, at in enumerate(later)]
    path = _db(tmp_path, rows, ddl)
    skipped = "4 quota_snapshots row(s) dated after the import instant were skipped"
    assert skipped in run_import(path).notes
    recent = run_import(path, since=SINCE)
    assert skipped in recent.notes
    assert _values(recent) == [("2026-11-29T10:30:00Z", 70)]


@pytest.mark.parametrize("ddl", [REAL_SNAPSHOTS_DDL, NUMERIC_DDL], ids=["text", "numeric"])
@pytest.mark.parametrize("scale", [1000, 1], ids=["ms", "s"])
def test_since_does_not_read_the_whole_epoch_history(tmp_path: Path, ddl: str,
                                                     scale: int) -> None:
    """docs/sources.md#omniroute-streaming: memory follows the rows selected, not the table.
    Ten days of old epoch rows are not all read; the one in force is."""
    def at(instant: datetime) -> int:
        return int(instant.timestamp()) * scale
    rows = [_row(90 - n, at(SINCE - timedelta(days=10 - n))) for n in range(10)]
    rows += [_row(50, at(SINCE + timedelta(minutes=30))), _row(40, at(NOW))]
    result = run_import(_db(tmp_path, rows, ddl), since=SINCE)
    assert _values(result) == [("2026-11-28T10:00:00Z", 81), ("2026-11-29T10:30:00Z", 50),
                               ("2026-11-29T12:00:00Z", 40)]
    assert result.counts["snapshot_rows"] < len(rows)


def test_an_epoch_seconds_row_one_second_before_since_is_in_force(tmp_path: Path) -> None:
    """Seconds stored as numbers: the last row before since, a second before it, is kept."""
    rows = [_row(90, int((SINCE - timedelta(hours=1)).timestamp())),
            _row(80, int((SINCE - timedelta(seconds=1)).timestamp())),
            _row(70, int((SINCE + timedelta(minutes=30)).timestamp()))]
    result = run_import(_db(tmp_path, rows, NUMERIC_DDL), since=SINCE)
    assert _values(result) == [("2026-11-29T09:59:59Z", 80), ("2026-11-29T10:30:00Z", 70)]
