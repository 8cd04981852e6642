"""Import a fleet from an OmniRoute SQLite database into omniladder's input files.

The database is opened read-only (``file:...?mode=ro``) and read in one short transaction.
Only the columns mapped below are ever selected, by name, and an SQLite authorizer refuses
any read of any other column, so credential columns (``access_token``, ``refresh_token``,
``api_key``, ``id_token``) can never reach memory, let alone an output file.

Mapping (documented in the README, "Real inputs"):

* one ``provider_connections`` row is one connection: ``id`` → id, ``provider``,
  ``auth_type``, ``is_active`` → active, ``test_status`` → status (terminal values and the
  other values of the status enum are kept; ``active``/``success`` read as ``ok``; anything
  else is dropped and reported), ``rate_limited_until`` → rate_limited_until,
  ``display_name`` or else ``name`` → label; models come from the model catalog for the
  provider, else ``default_model``; connections are ordered by ``priority`` (lower first,
  none last), then by id;
* ``quota_snapshots`` rows of one connection whose ``created_at`` lie within a small
  tolerance of the first row of a group form one reading; as the gateway writes a row only
  when a window's value changes, every reading carries the latest known value of each
  window at its instant; ``is_exhausted = 1`` reads as 0 % remaining;
* timestamps without an offset are UTC.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from omniladder import timefmt
from omniladder.errors import InputError, UsageError
from omniladder.loading import Catalogs
from omniladder.models import TERMINAL_STATUSES

CONNECTIONS_TABLE = "provider_connections"
SNAPSHOTS_TABLE = "quota_snapshots"

CONNECTION_COLUMNS: tuple[str, ...] = (
    "id", "provider", "auth_type", "name", "display_name", "is_active", "test_status",
    "rate_limited_until", "default_model", "priority",
)
SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "connection_id", "window_key", "remaining_percentage", "is_exhausted", "next_reset_at",
    "created_at",
)
READABLE: Mapping[str, frozenset[str]] = {
    CONNECTIONS_TABLE: frozenset(CONNECTION_COLUMNS),
    SNAPSHOTS_TABLE: frozenset(SNAPSHOT_COLUMNS),
}
"""The only (table, column) pairs the importer may read; the authorizer enforces it."""

SECRET_COLUMNS: frozenset[str] = frozenset(
    {"access_token", "refresh_token", "api_key", "id_token"})

_KEPT_STATUSES: frozenset[str] = frozenset({"ok", "unknown", "error"}) | TERMINAL_STATUSES
_STATUS_SYNONYMS: Mapping[str, str] = {"active": "ok", "success": "ok"}

DEFAULT_GROUP_SECONDS = 2.0
DEFAULT_SINCE = "7d"


# --- options and results -------------------------------------------------------------------


@dataclass(frozen=True)
class ImportOptions:
    now: datetime
    """The instant of the import: the snapshot's taken_at and the origin of --since."""
    since: datetime | None
    """Readings before this instant are dropped, except the one in force at it."""
    group_seconds: float = DEFAULT_GROUP_SECONDS


@dataclass(frozen=True)
class ImportResult:
    connections: dict[str, Any]
    """The connections document (``{"connections": [...]}``)."""
    quota: dict[str, Any]
    """The quota document (``{"taken_at": ..., "readings": [...]}``)."""
    notes: tuple[str, ...] = field(default=())
    """What an operator should know about the import (stderr talk)."""
    counts: dict[str, int] = field(default_factory=dict)


# --- parsing helpers -----------------------------------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: datetime) -> datetime | None:
    """``all``, a duration back from now (``90m``, ``24h``, ``7d``, ``2w``) or an instant."""
    value = text.strip()
    if value == "all":
        return None
    match = _DURATION.fullmatch(value)
    if match:
        return now - timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"expected 'all', a duration such as 7d, 24h or 90m, or an RFC 3339 "
                         f"instant, got {text!r}", field="--since") from None
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise UsageError(f"instant {text!r} has no offset; add one, e.g. Z", field="--since")
    return instant


def db_instant(value: Any, where: str, db: str) -> datetime | None:
    """A database timestamp: ISO text (no offset means UTC) or epoch seconds/milliseconds."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InputError(f"not a timestamp: {value!r}", file=db, field=where)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise InputError(f"not a timestamp: {value!r}", file=db, field=where)
        seconds = value / 1000 if abs(value) >= 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise InputError(f"timestamp out of range: {value!r}", file=db,
                             field=where) from None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
            return db_instant(float(text), where, db)
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"not an ISO 8601 timestamp: {text!r}", file=db,
                             field=where) from None
        if parsed.tzinfo is None or parsed.utcoffset() is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed
    raise InputError(f"not a timestamp: {type(value).__name__}", file=db, field=where)


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


# --- reading the database ------------------------------------------------------------------


def _authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None,
                _trigger: str | None) -> int:
    """Allow SELECTs of the mapped columns and PRAGMA table_info; deny everything else."""
    if action == sqlite3.SQLITE_SELECT:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_READ:
        allowed = READABLE.get(arg1 or "")
        if allowed is not None and arg2 in allowed:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg1 == "table_info":
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_TRANSACTION:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_readonly(path: Path, shown: str) -> sqlite3.Connection:
    """Open the database read-only through a ``file:`` URI, with the column allowlist."""
    if not path.exists():
        raise InputError("file not found", file=shown)
    if not path.is_file():
        raise InputError("is not a file", file=shown)
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=2.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open the SQLite database ({exc})", file=shown) from None
    connection.set_authorizer(_authorizer)
    return connection


def _columns(db: sqlite3.Connection, table: str, shown: str) -> set[str]:
    try:
        rows = db.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read the SQLite database ({exc})", file=shown) from None
    return {str(row[1]) for row in rows}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _require(db: sqlite3.Connection, table: str, needed: Sequence[str], shown: str) -> None:
    present = _columns(db, table, shown)
    if not present:
        raise InputError(f"table {table!r} is missing; is this an OmniRoute database?",
                         file=shown)
    missing = [name for name in needed if name not in present]
    if missing:
        raise InputError(f"table {table!r} has no column "
                         + ", ".join(repr(name) for name in missing), file=shown)


def _select(db: sqlite3.Connection, table: str, columns: Sequence[str],
            shown: str) -> list[dict[str, Any]]:
    """The named columns of every row, in the table's storage order."""
    listed = ", ".join(_quote(name) for name in columns)
    query = f"SELECT {listed} FROM {_quote(table)}"
    try:
        cursor = db.execute(query)
        return [dict(zip(columns, row, strict=True)) for row in cursor]
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read table {table!r} ({exc})", file=shown) from None


def read_database(path: Path, shown: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The mapped columns of both tables, read in one short read transaction."""
    db = open_readonly(path, shown)
    try:
        _require(db, CONNECTIONS_TABLE, CONNECTION_COLUMNS, shown)
        _require(db, SNAPSHOTS_TABLE, SNAPSHOT_COLUMNS, shown)
        try:
            db.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot read the SQLite database ({exc})", file=shown) from None
        try:
            connections = _select(db, CONNECTIONS_TABLE, CONNECTION_COLUMNS, shown)
            snapshots = _select(db, SNAPSHOTS_TABLE, SNAPSHOT_COLUMNS, shown)
        finally:
            db.execute("COMMIT")
    finally:
        db.close()
    return connections, snapshots


# --- mapping -------------------------------------------------------------------------------


def map_status(raw: Any) -> tuple[str | None, str | None]:
    """(status for the connections file, the unmapped raw value if it was dropped)."""
    text = _text(raw)
    if text is None:
        return None, None
    key = text.lower()
    if key in _KEPT_STATUSES:
        return key, None
    if key in _STATUS_SYNONYMS:
        return _STATUS_SYNONYMS[key], None
    return None, text


def map_connections(rows: Iterable[Mapping[str, Any]], catalogs: Catalogs, shown: str,
                    notes: list[str]) -> list[dict[str, Any]]:
    """provider_connections rows → connection tables, ordered by priority then id."""
    mapped: list[tuple[float, str, dict[str, Any]]] = []
    dropped_status: dict[str, int] = {}
    modelless: list[str] = []
    seen: set[str] = set()
    for row in rows:
        cid = _text(row["id"])
        if cid is None:
            notes.append(f"skipped a {CONNECTIONS_TABLE} row with an empty id")
            continue
        if cid in seen:
            raise InputError(f"duplicate connection id {cid!r}", file=shown,
                             field=f"{CONNECTIONS_TABLE}.id")
        seen.add(cid)
        where = f"{CONNECTIONS_TABLE}[id={cid}]"
        provider = _text(row["provider"])
        auth_type = _text(row["auth_type"])
        if provider is None or auth_type is None:
            missing = "provider" if provider is None else "auth_type"
            raise InputError("is empty", file=shown, field=f"{where}.{missing}")
        table: dict[str, Any] = {"id": cid, "provider": provider, "auth_type": auth_type}
        models = catalogs.models_of(provider)
        default_model = _text(row["default_model"])
        if models:
            table["models"] = list(models)
        elif default_model is not None:
            table["models"] = [default_model]
        else:
            modelless.append(cid)
        table["active"] = _flag(row["is_active"])
        status, dropped = map_status(row["test_status"])
        if status is not None:
            table["status"] = status
        if dropped is not None:
            dropped_status[dropped] = dropped_status.get(dropped, 0) + 1
        until = db_instant(row["rate_limited_until"], f"{where}.rate_limited_until", shown)
        if until is not None:
            table["rate_limited_until"] = timefmt.iso(until)
        label = _text(row["display_name"]) or _text(row["name"])
        if label is not None:
            table["label"] = label
        mapped.append((_priority(row["priority"]), cid, table))
    if dropped_status:
        listed = ", ".join(f"{value!r} ×{count}" for value, count in sorted(dropped_status.items()))
        notes.append(f"test_status values that are neither terminal nor a connection status "
                     f"were imported as no status: {listed}")
    if modelless:
        notes.append("no model known for " + ", ".join(modelless) + " (provider not in the "
                     "model catalog and no default_model): add models to connections.toml "
                     "or a model catalog overlay")
    mapped.sort(key=lambda item: (item[0], item[1]))
    return [table for _, _, table in mapped]


def _priority(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return math.inf
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else math.inf
    try:
        return float(str(value))
    except ValueError:
        return math.inf


@dataclass
class _Row:
    at: datetime
    window: str
    remaining: float | None
    reset_at: datetime | None


def _snapshot_row(row: Mapping[str, Any], index: int, shown: str) -> _Row | None:
    where = f"{SNAPSHOTS_TABLE}[{index}]"
    at = db_instant(row["created_at"], f"{where}.created_at", shown)
    window = _text(row["window_key"])
    if at is None or window is None:
        return None
    reset_at = db_instant(row["next_reset_at"], f"{where}.next_reset_at", shown)
    remaining: float | None
    if _flag(row["is_exhausted"]):
        remaining = 0.0
    else:
        raw = row["remaining_percentage"]
        if raw is None or isinstance(raw, bool):
            remaining = None
        else:
            try:
                remaining = float(raw)
            except (TypeError, ValueError):
                raise InputError(f"not a number: {raw!r}", file=shown,
                                 field=f"{where}.remaining_percentage") from None
            if not math.isfinite(remaining):
                raise InputError(f"not a number: {raw!r}", file=shown,
                                 field=f"{where}.remaining_percentage")
            remaining = min(100.0, max(0.0, remaining))
    return _Row(at, window, remaining, reset_at)


def group_readings(rows: Sequence[_Row], tolerance: timedelta
                   ) -> list[tuple[datetime, dict[str, _Row]]]:
    """One connection's rows → (checked_at, state of every known window at that instant).

    Rows within ``tolerance`` of the first row of a group form one reading, stamped with the
    latest created_at of the group. Each reading carries every window's latest known value:
    a window absent from a group kept the value of its last row.
    """
    ordered = sorted(rows, key=lambda r: r.at)
    state: dict[str, _Row] = {}
    out: list[tuple[datetime, dict[str, _Row]]] = []
    index = 0
    while index < len(ordered):
        start = ordered[index].at
        last = start
        while index < len(ordered) and ordered[index].at - start <= tolerance:
            row = ordered[index]
            state[row.window] = row
            last = row.at
            index += 1
        out.append((last, dict(state)))
    return out


def _reading(connection: str, checked_at: datetime, windows: Mapping[str, _Row]
             ) -> dict[str, Any]:
    reading: dict[str, Any] = {"connection": connection, "checked_at": timefmt.iso(checked_at)}
    out: list[dict[str, Any]] = []
    for name in sorted(windows):
        row = windows[name]
        if row.remaining is None:
            continue
        window: dict[str, Any] = {"name": name, "remaining_percent": _number(row.remaining)}
        if row.reset_at is not None:
            window["reset_at"] = timefmt.iso(row.reset_at)
        out.append(window)
    if out:
        reading["windows"] = out
    else:
        reading["status"] = "unknown"
    return reading


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() else round(value, 4)


def map_snapshots(rows: Iterable[Mapping[str, Any]], known: Sequence[str], options: ImportOptions,
                  shown: str, notes: list[str]) -> list[dict[str, Any]]:
    """quota_snapshots rows → readings, in connection-file order then time order."""
    per_connection: dict[str, list[_Row]] = {}
    unknown: set[str] = set()
    future = 0
    known_ids = set(known)
    for index, row in enumerate(rows):
        cid = _text(row["connection_id"])
        if cid is None:
            continue
        if cid not in known_ids:
            unknown.add(cid)
            continue
        parsed = _snapshot_row(row, index, shown)
        if parsed is None:
            continue
        if parsed.at > options.now:
            future += 1
            continue
        per_connection.setdefault(cid, []).append(parsed)
    if unknown:
        notes.append(f"{len(unknown)} connection id(s) in {SNAPSHOTS_TABLE} are not in "
                     f"{CONNECTIONS_TABLE}; their rows were skipped")
    if future:
        notes.append(f"{future} {SNAPSHOTS_TABLE} row(s) dated after the import instant "
                     "were skipped")
    tolerance = timedelta(seconds=options.group_seconds)
    readings: list[dict[str, Any]] = []
    dropped = 0
    for cid in known:
        grouped = group_readings(per_connection.get(cid, ()), tolerance)
        if options.since is not None:
            since = options.since
            before = [item for item in grouped if item[0] < since]
            kept = [item for item in grouped if item[0] >= since]
            dropped += max(0, len(before) - 1)
            grouped = before[-1:] + kept
        readings += [_reading(cid, at, windows) for at, windows in grouped]
    if dropped:
        notes.append(f"{dropped} reading(s) older than --since were left out (the one in "
                     "force at that instant is kept for every connection)")
    return readings


def import_omniroute(path: Path, shown: str, catalogs: Catalogs,
                     options: ImportOptions) -> ImportResult:
    """Read an OmniRoute database and build the connections and quota documents."""
    connection_rows, snapshot_rows = read_database(path, shown)
    notes: list[str] = []
    connections = map_connections(connection_rows, catalogs, shown, notes)
    ids = [table["id"] for table in connections]
    readings = map_snapshots(snapshot_rows, ids, options, shown, notes)
    quota = {"taken_at": timefmt.iso(options.now), "readings": readings}
    with_history = len({reading["connection"] for reading in readings})
    counts = {"connections": len(connections), "readings": len(readings),
              "connections_with_readings": with_history, "snapshot_rows": len(snapshot_rows)}
    return ImportResult({"connections": connections}, quota, tuple(notes), counts)


# --- writing -------------------------------------------------------------------------------

SETTINGS_NAME = "omniladder.toml"
CONNECTIONS_NAME = "connections.toml"
QUOTA_NAME = "quota.json"


def render_files(result: ImportResult, source: str) -> dict[str, str]:
    """The three files' text, by file name: connections, quota, then the settings naming them."""
    import tomli_w

    header = (f"# Imported by `omniladder import omniroute` from {source}\n"
              f"# at {result.quota['taken_at']}. No credential was read.\n\n")
    connections = header + tomli_w.dumps(result.connections)
    quota = json.dumps(result.quota, indent=2, ensure_ascii=False) + "\n"
    settings = header + (
        "# Readings keep their real created_at. The gateway writes a row only when a value\n"
        "# changes, so an unchanged window looks old: raise [ladder] max_reading_age_seconds\n"
        "# if you trust the gateway to keep polling.\n\n"
    ) + tomli_w.dumps({"inputs": {"connections": CONNECTIONS_NAME, "quota": QUOTA_NAME}})
    return {CONNECTIONS_NAME: connections, QUOTA_NAME: quota, SETTINGS_NAME: settings}
