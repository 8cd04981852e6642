"""``quota_snapshots``: rows written when a value changes, read as readings that carry the
latest value of every window at their instant, streamed from ``--since`` on
(docs/sources.md#omniroute)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from omniladder import timefmt
from omniladder.errors import InputError
from omniladder.inputs.documents import RepeatedKey, unique_keys
from omniladder.inputs.scopes import WindowScopes
from omniladder.sources.common import (
    ScopeReport,
    SourceReading,
    SourceWindow,
    reading_document,
    scope_windows,
)
from omniladder.sources.fit import OLDEST_READING
from omniladder.sources.omniroute.connections import identifiers
from omniladder.sources.omniroute.database import (
    CONNECTIONS_TABLE,
    RAW_DATA,
    SNAPSHOT_COLUMNS,
    SNAPSHOTS_TABLE,
    Reader,
    db_flag,
    db_instant,
    db_text,
    quote,
    stream,
)
from omniladder.sources.omniroute.options import ImportOptions


def fraction_unreported(raw: Any) -> bool:
    """Whether raw_data says ``fractionReported: false``; nothing else of it is looked at.

    raw_data is provider-defined: anything that is not a JSON object with that key set to
    false (absent, not JSON, another shape) says nothing, and is never echoed.
    """
    if not isinstance(raw, str) or "fractionReported" not in raw:
        return False
    try:
        document = json.loads(raw, object_pairs_hook=unique_keys)
    except RepeatedKey:
        raise  # the row's caller names it
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("fractionReported") is False


# Where an instant in created_at's three real forms sits (docs/sources.md#omniroute): ISO text with
# milliseconds and Z, SQLite datetime('now') text, epoch milliseconds. The epoch form may be
# stored as an integer or, in a TEXT column, as a string of digits; epoch seconds are
# accepted the same way. Each form is a range of its own in SQLite's ordering (numbers before
# text; digit strings before "1970-..." and "2026-..."), so a filter over the created_at
# index is an OR of ranges. The ranges are a superset (whole seconds); the exact comparison
# is made in Python. No range stops at the import instant: rows dated after it are read, so
# they are skipped and counted as without --since (docs/sources.md#omniroute-streaming).
_RECENT = (
    "(created_at >= :iso_t"
    " OR (created_at >= :iso_space AND created_at < :iso_date_t)"
    # numbers: milliseconds from since on (every number below '' , the least text)
    " OR (created_at >= :ms_lo AND created_at < '')"
    # numbers: seconds from since on, below db_instant's seconds/milliseconds split
    " OR (created_at >= :s_lo AND created_at < :split)"
    # digit strings, seconds or milliseconds: from since's seconds on, as text
    " OR (created_at >= :s_lo_text AND created_at < :floor))"
)
EPOCH_SPLIT = 100_000_000_000
"""db_instant's split: a number at or above it is epoch milliseconds, below it seconds."""

# The value in force at since, per (connection, window_key), read through OmniRoute's
# (connection_id, created_at) index: a walk down from since over the series' text rows (ISO
# and datetime('now') forms sort by date first; on one date every datetime('now') row sorts
# below every ISO row, so the walk reads the whole date of the first row before since), and,
# only if the table holds any, a few rows of the numeric forms (below TEXT_FLOOR).
TEXT_FLOOR = "1970-"
"""Text below this is no ISO or datetime('now') timestamp: epoch digits (``17…``), numbers."""
_SERIES = (f"SELECT DISTINCT connection_id, window_key FROM {SNAPSHOTS_TABLE} NOT INDEXED")
_TEXT_WALK = ("WHERE connection_id = :cid AND window_key = :window AND created_at >= :floor "
              "AND created_at < :upper ORDER BY created_at DESC")
_NUMERIC_WALKS = (
    # epoch digits in a TEXT column (13-digit milliseconds order as text)
    "WHERE connection_id = :cid AND window_key = :window AND created_at >= '0' "
    "AND created_at < :ms_text ORDER BY created_at DESC LIMIT 3",
    # milliseconds stored as numbers (a column without TEXT affinity)
    "WHERE connection_id = :cid AND window_key = :window AND created_at >= :split "
    "AND created_at < :ms_int ORDER BY created_at DESC LIMIT 3",
    # seconds stored as numbers: all below the split, so the walk above never sees them
    "WHERE connection_id = :cid AND window_key = :window AND created_at < :s_int "
    "ORDER BY created_at DESC LIMIT 3",
)
_HAS_NUMERIC = f"SELECT 1 FROM {SNAPSHOTS_TABLE} WHERE created_at < :floor LIMIT 1"


def _recent_bounds(since: datetime) -> dict[str, Any]:
    """Parameters of ``_RECENT``: every form of an instant from since's whole second on."""
    # strftime drops microseconds, and int() too from 1970 on (OmniRoute writes no earlier
    # row): a microsecond left here reads the same
    low = since.astimezone(UTC).replace(
        microsecond=0)  # pragma: no mutate (strftime drops it)
    low_s = int(low.timestamp())
    return {
        "iso_t": low.strftime("%Y-%m-%dT%H:%M:%S"),
        "iso_space": low.strftime("%Y-%m-%d %H:%M:%S"),
        "iso_date_t": low.strftime("%Y-%m-%dT"),
        "ms_lo": low_s * 1000, "s_lo": low_s, "split": EPOCH_SPLIT,
        "s_lo_text": str(low_s), "floor": TEXT_FLOOR,
    }


def _snapshot_select(present: set[str]) -> tuple[str, tuple[str, ...]]:
    """The select list of snapshot rows, and the names of its values."""
    listed = ", ".join(quote(name) for name in SNAPSHOT_COLUMNS)
    if RAW_DATA in present:
        # raw_data reaches Python only when it may carry the flag (never printed).
        listed += (f", CASE WHEN instr({RAW_DATA}, 'fractionReported') > 0 "
                   f"THEN {RAW_DATA} END")
    else:
        listed += ", NULL"  # pragma: no mutate (SQL keywords read the same in any case)
    return listed, (*SNAPSHOT_COLUMNS, RAW_DATA)


def snapshot_rows(reader: Reader, since: datetime | None) -> Iterator[dict[str, Any]]:
    """Every row (since None), else the rows at or after since (a superset by whole
    seconds) followed by the latest row before since of every (connection, window_key)."""
    listed, names = _snapshot_select(reader.snapshot_columns)
    if since is None:
        yield from stream(reader.db, f"SELECT {listed} FROM {SNAPSHOTS_TABLE}", {}, names,
                           SNAPSHOTS_TABLE, reader.shown)
        return
    yield from stream(reader.db, f"SELECT {listed} FROM {SNAPSHOTS_TABLE} WHERE {_RECENT}",
                       _recent_bounds(since), names, SNAPSHOTS_TABLE, reader.shown)
    yield from _in_force(reader, since, listed, names)

def _in_force(reader: Reader, since: datetime, listed: str, names: tuple[str, ...]
              ) -> Iterator[dict[str, Any]]:
    """Candidates for the latest row before since of every (connection, window_key);
    the exact instants are compared by the caller."""
    # Equivalent mutants: a later upper bound (a microsecond kept, a second more, text
    # above every date) only reads more rows, and each instant is compared exactly below.
    upper = (since.astimezone(UTC).replace(
                 microsecond=0)  # pragma: no mutate (a later bound reads more)
             + timedelta(seconds=1)  # pragma: no mutate (a later bound reads more)
             ).strftime("%Y-%m-%dT%H:%M:%S")  # pragma: no mutate (a later bound reads more)
    series = list(stream(reader.db, _SERIES, {}, ("cid", "window"), SNAPSHOTS_TABLE,
                          reader.shown))
    # through stream like every other read: a damaged page is an InputError, not a crash
    numeric = next(stream(reader.db, _HAS_NUMERIC, {"floor": TEXT_FLOOR},
                           ("one",),  # pragma: no mutate (only a row's presence counts)
                           SNAPSHOTS_TABLE, reader.shown), None) is not None
    text_walk = f"SELECT {listed} FROM {SNAPSHOTS_TABLE} {_TEXT_WALK}"
    numeric_walks = [f"SELECT {listed} FROM {SNAPSHOTS_TABLE} {walk}"
                     for walk in _NUMERIC_WALKS]
    since_ms = math.floor(since.timestamp() * 1000)
    bounds = {"ms_int": since_ms, "ms_text": str(since_ms), "split": EPOCH_SPLIT,
              "s_int": math.floor(since.timestamp()) + 1}
    for key in series:
        parameters = {**key, "floor": TEXT_FLOOR, "upper": upper}
        date = ""  # the first row's date, once read; no date sorts below ""
        for row in stream(reader.db, text_walk, parameters, names, SNAPSHOTS_TABLE,
                           reader.shown):
            stamp = str(row["created_at"])
            day = stamp[:10]
            if day < date:
                break
            at = db_instant(stamp, f"{SNAPSHOTS_TABLE}[id={row['id']}].created_at",
                            reader.shown)
            if at is not None and at < since:
                date = date or day
                yield row
        if numeric:
            for walk in numeric_walks:
                yield from stream(reader.db, walk, {**key, **bounds}, names,
                                   SNAPSHOTS_TABLE, reader.shown)


@dataclass
class _Row:
    at: datetime
    window: str
    remaining: float | None
    """Percent remaining; None when the row carries no value (a sentinel or NULL)."""
    reset_at: datetime | None
    row_id: int = 0


@dataclass
class _SentinelCounts:
    unreported: int = 0
    """raw_data said fractionReported: false."""
    zero: int = 0
    """A stored 0 of a window the window-scope catalog marks zero_is_sentinel."""
    null: int = 0

    def note(self) -> str | None:
        parts = [f"{count} {what}" for count, what in (
            (self.unreported, "with fractionReported false"),
            (self.zero, "storing 0 in a window the window-scope catalog marks "
                        "zero_is_sentinel"),
            (self.null, "with no remaining_percentage")) if count]
        if not parts:
            return None
        return ("snapshot rows read as no value, not as exhaustion: " + ", ".join(parts)
                + " (their windows are left out of the readings)")


class _RowParser:
    def __init__(self, shown: str, scopes: WindowScopes) -> None:
        self.shown = shown
        self.scopes = scopes
        self.sentinels = _SentinelCounts()
        self._zero_sentinel: dict[tuple[str, str], bool] = {}

    def zero_is_sentinel(self, provider: str, window: str) -> bool:
        # a memo of a pure lookup: a miss computes the same answer again
        key = (provider, window)  # pragma: no mutate (a memo)
        known = self._zero_sentinel.get(key)  # pragma: no mutate (a memo)
        if known is None:
            matched = self.scopes.match(provider, window)
            known = matched is not None and matched.entry.zero_is_sentinel
            self._zero_sentinel[key] = known  # pragma: no mutate (a memo)
        return known

    def parse(self, row: Mapping[str, Any], provider: str) -> _Row | None:
        row_id = row["id"]
        where = f"{SNAPSHOTS_TABLE}[id={row_id}]"
        at = db_instant(row["created_at"], f"{where}.created_at", self.shown)
        window = db_text(row["window_key"])
        if at is None or window is None:
            return None
        identifiers(self.shown, where, window_key=window)
        if at < OLDEST_READING:
            raise InputError(f"{timefmt.iso(at)} is before 2000: no quota telemetry is that "
                             "old (a writer's 0 for \"not given\", or a clock reset); nothing "
                             "was written", file=self.shown, field=f"{where}.created_at")
        reset_at = db_instant(row["next_reset_at"], f"{where}.next_reset_at", self.shown)
        remaining: float | None
        if db_flag(row["is_exhausted"]):
            remaining = 0.0  # the writer's own verdict, in every generation
        elif self._unreported(row[RAW_DATA], where):
            self.sentinels.unreported += 1
            remaining = None
        else:
            remaining = self._number(row["remaining_percentage"], where)
            if remaining is None:
                self.sentinels.null += 1
            elif remaining == 0 and self.zero_is_sentinel(provider, window):
                self.sentinels.zero += 1
                remaining = None
        return _Row(at, window, remaining, reset_at, row_id if isinstance(row_id, int) else 0)

    def _unreported(self, raw: Any, where: str) -> bool:
        try:
            return fraction_unreported(raw)
        except RepeatedKey:
            raise InputError(
                "gives a key twice in one object, so whether it says fractionReported false "
                "is not defined (its content is never shown); fix the row or drop its "
                "raw_data", file=self.shown, field=f"{where}.{RAW_DATA}") from None

    def _number(self, raw: Any, where: str) -> float | None:
        if raw is None or isinstance(raw, bool):
            return None
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise InputError(f"not a number: {raw!r}", file=self.shown,
                             field=f"{where}.remaining_percentage") from None
        if not math.isfinite(value):
            raise InputError(f"not a number: {raw!r}", file=self.shown,
                             field=f"{where}.remaining_percentage")
        # below 0 reads as 0, which the zero_is_sentinel test sees; reading_document caps
        # every percent at 100 (common.clamp_percent)
        return max(0.0, value)


def group_readings(rows: Sequence[_Row], tolerance: timedelta,
                   state: Mapping[str, _Row] | None = None
                   ) -> list[tuple[datetime, dict[str, _Row]]]:
    """One connection's rows → (checked_at, state of every known window at that instant).

    Rows within ``tolerance`` of the first row of a group form one reading, stamped with the
    latest created_at of the group. Each reading carries every window's latest known value:
    a window absent from a group kept the value of its last row (``state`` is the value of
    each window before the first row).
    """
    ordered = sorted(rows, key=lambda r: r.at)
    current: dict[str, _Row] = dict(state or {})
    out: list[tuple[datetime, dict[str, _Row]]] = []
    index = 0
    while index < len(ordered):
        start = ordered[index].at
        last = start  # pragma: no mutate (the loop below runs at least once and sets it)
        while index < len(ordered) and ordered[index].at - start <= tolerance:
            row = ordered[index]
            current[row.window] = row
            last = row.at
            index += 1
        out.append((last, dict(current)))
    return out


def _source_reading(checked_at: datetime, windows: Mapping[str, _Row]) -> SourceReading:
    return SourceReading(checked_at, tuple(
        SourceWindow(name, row.remaining, reset_at=row.reset_at)
        for name, row in sorted(windows.items())))


@dataclass
class _History:
    """One connection's rows as read: the latest before since per window, the rest."""

    before: dict[str, _Row] = field(default_factory=dict)
    rows: list[_Row] = field(default_factory=list)


def _histories(rows: Iterable[Mapping[str, Any]], providers: Mapping[str, str],
               options: ImportOptions, parser: _RowParser, notes: list[str]
               ) -> tuple[dict[str, _History], int]:
    """Snapshot rows, streamed, → per connection history; (histories, rows read)."""
    histories: dict[str, _History] = {}
    unknown: set[str] = set()
    future = 0
    count = 0
    since = options.since
    for row in rows:
        count += 1
        cid = db_text(row["connection_id"])
        if cid is None:
            continue
        provider = providers.get(cid)
        if provider is None:
            unknown.add(cid)
            continue
        parsed = parser.parse(row, provider)
        if parsed is None:
            continue
        if parsed.at > options.now:
            future += 1
            continue
        history = histories.setdefault(cid, _History())
        if since is not None and parsed.at < since:
            held = history.before.get(parsed.window)
            # (created_at, id) pairs are unique: > and >= keep the same row
            if held is None or (
                (parsed.at, parsed.row_id) > (held.at, held.row_id)):  # pragma: no mutate (unique)
                history.before[parsed.window] = parsed
            continue
        history.rows.append(parsed)
    if unknown:
        notes.append(f"{len(unknown)} connection id(s) in {SNAPSHOTS_TABLE} are not in "
                     f"{CONNECTIONS_TABLE}; their rows were skipped")
    if future:
        notes.append(f"{future} {SNAPSHOTS_TABLE} row(s) dated after the import instant "
                     "were skipped")
    return histories, count


def _scope_report(connections: Sequence[Mapping[str, Any]],
                  histories: Mapping[str, _History], scopes: WindowScopes) -> ScopeReport:
    """What scoping did, counted once per (connection, window name)."""
    report = ScopeReport()
    for table in connections:
        history = histories.get(table["id"])
        if history is None:
            continue
        names = set(history.before) | {row.window for row in history.rows}
        scope_windows(table["provider"], table.get("models", ()),
                      [SourceWindow(name,
                                    100.0)  # pragma: no mutate (any value: only not None counts)
                       for name in sorted(names)], scopes, report)
    return report


def map_snapshots(rows: Iterable[Mapping[str, Any]], connections: Sequence[Mapping[str, Any]],
                  options: ImportOptions, scopes: WindowScopes, shown: str,
                  notes: list[str]) -> tuple[list[dict[str, Any]], int]:
    """quota_snapshots rows → readings, in connection-file order then time order."""
    providers = {table["id"]: table["provider"] for table in connections}
    parser = _RowParser(shown, scopes)
    histories, count = _histories(rows, providers, options, parser, notes)
    tolerance = timedelta(seconds=options.group_seconds)
    readings: list[dict[str, Any]] = []
    confirmed = 0
    for table in connections:
        history = histories.get(table["id"])
        if history is None:
            continue
        models = table.get("models", ())
        grouped: list[tuple[datetime, dict[str, _Row]]] = []
        if history.before:
            grouped.append((max(row.at for row in history.before.values()),
                            dict(history.before)))
        grouped += group_readings(history.rows, tolerance, history.before)
        if options.confirmed_at is not None and grouped and \
                options.confirmed_at > grouped[-1][0]:
            grouped.append((options.confirmed_at, grouped[-1][1]))
            confirmed += 1
        for at, windows in grouped:
            document = reading_document(table["id"], table["provider"], models,
                                        _source_reading(at, windows), scopes)
            if "windows" not in document:
                document["status"] = "unknown"
            readings.append(document)
    sentinel = parser.sentinels.note()
    if sentinel is not None:
        notes.append(sentinel)
    notes.extend(_scope_report(connections, histories, scopes).notes(
        " (count: connections)"))
    if options.confirmed_at is not None:
        notes.append(f"--confirmed-at {timefmt.iso(options.confirmed_at)}: {confirmed} "
                     "connection(s) got one more reading carrying their latest values (the "
                     "others have none, or a newer reading)")
    return readings, count
