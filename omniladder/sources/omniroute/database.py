"""The OmniRoute database, opened read-only: the tables and the only columns the importer
may read (an SQLite authorizer refuses any other), its timestamps and values as
written, and one read transaction (``Database``) that the table modules read in."""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omniladder import timefmt
from omniladder.errors import InputError
from omniladder.inputs.files import check_input_file

CONNECTIONS_TABLE = "provider_connections"
SNAPSHOTS_TABLE = "quota_snapshots"

CONNECTION_COLUMNS: tuple[str, ...] = (
    "id", "provider", "auth_type", "name", "display_name", "is_active", "test_status",
    "rate_limited_until", "default_model", "priority",
)
LAST_ERROR_AT = "last_error_at"
"""Optional (read when the table has it): when the connection last failed, ISO text as
OmniRoute writes it (``new Date().toISOString()``; the column is in its
``001_initial_schema.sql``). Read only for a connection in cooldown, as the cooldown's
recorded start (docs/sources.md#omniroute)."""
SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "id", "connection_id", "window_key", "remaining_percentage", "is_exhausted",
    "next_reset_at", "created_at",
)
RAW_DATA = "raw_data"
"""Optional (databases older than the third writer generation may lack it). Only its key
``fractionReported`` is ever looked at; its content is never printed or written."""
CALL_LOGS_TABLE = "call_logs"
CALL_LOG_COLUMNS: tuple[str, ...] = (
    "id", "timestamp", "status", "model", "provider", "connection_id", "correlation_id",
    "requested_model", "combo_name", "tokens_in", "tokens_out", "tokens_cache_read",
    "tokens_cache_creation",
)
"""What the traffic ledger reads of call_logs (``omniroute_traffic``): never a body, an
error text or an API key column."""
READABLE: Mapping[str, frozenset[str]] = {
    CONNECTIONS_TABLE: frozenset((*CONNECTION_COLUMNS, LAST_ERROR_AT)),
    SNAPSHOTS_TABLE: frozenset((*SNAPSHOT_COLUMNS, RAW_DATA)),
    CALL_LOGS_TABLE: frozenset(CALL_LOG_COLUMNS),
}
"""The only (table, column) pairs the importer may read; the authorizer enforces it."""

SECRET_COLUMNS: frozenset[str] = frozenset(
    {"access_token", "refresh_token", "api_key", "id_token"})


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
            parsed = timefmt.from_rfc3339(text)
        except ValueError:
            raise InputError(f"not an ISO 8601 timestamp: {text!r}", file=db,
                             field=where) from None
        if parsed.utcoffset() is None:  # no offset written: UTC
            parsed = parsed.replace(tzinfo=UTC)
        if not timefmt.in_utc_range(parsed):
            raise InputError(timefmt.OUT_OF_RANGE, file=db, field=where)
        return parsed
    raise InputError(f"not a timestamp: {type(value).__name__}", file=db, field=where)


def db_flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def db_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None,
                _trigger: str | None) -> int:
    """Allow SELECTs of the mapped columns and PRAGMA table_info; deny everything else."""
    if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_TRANSACTION):
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_READ:
        assert arg1 is not None  # SQLite names the table of every SQLITE_READ
        allowed = READABLE.get(arg1)
        if allowed is not None and arg2 in allowed:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg1 == "table_info":
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and arg2 in _SQL_FUNCTIONS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


_SQL_FUNCTIONS = frozenset({"instr"})
"""The SQL functions the importer's own queries call (the authorizer allows no other)."""


def open_readonly(path: Path, shown: str, notes: list[str] | None = None
                  ) -> sqlite3.Connection:
    """Open the database read-only through a ``file:`` URI, with the column allowlist, leaving
    the gateway's folder as it was.

    A reader of a WAL-mode database needs the ``-wal`` file and its shared index ``-shm``
    beside it, and SQLite creates them when they are missing; a read-only connection cannot
    remove them again, so a plain ``mode=ro`` read of a cleanly closed database (OmniRoute's,
    after the gateway stopped) leaves an empty ``-wal`` and a ``-shm`` behind. SQLite's rules
    (https://www.sqlite.org/wal.html, "Read-Only Databases" and "Persistence of WAL mode";
    https://www.sqlite.org/uri.html, ``immutable``): the last connection to close removes the
    ``-wal``, so a WAL database without one has no writer and nothing outside the main file;
    ``immutable=1`` then reads the main file alone and creates nothing. With a ``-wal``
    present (a live gateway), the read shares the gateway's ``-wal`` and ``-shm``
    (``mode=ro``): it sees every committed row, and creates nothing that was not there.
    ``immutable=1`` is never used on a database with a ``-wal``: it would not read it.

    A WAL-mode database in a folder the importer cannot write, whose ``-shm`` is missing
    beside a ``-wal``, cannot be read with ``mode=ro``: SQLite fails with "attempt to write
    a readonly database" (SQLITE_READONLY_DIRECTORY). It is then opened with ``immutable=1``,
    and a note (in ``notes``) says that the snapshot may be torn and what the ``-wal`` file
    holds that is not read.
    """
    check_input_file(path, shown)
    if not path.exists():
        raise InputError("file not found", file=shown)
    if not path.is_file():
        raise InputError("is not a file", file=shown)
    uri = path.resolve().as_uri() + "?mode=ro"
    if _cleanly_closed_wal(path):
        connection = _connect(uri + "&immutable=1", shown)
        connection.set_authorizer(_authorizer)
        return connection
    connection = _connect(uri, shown)
    try:
        # the header only (no table is read); the first read is where WAL needs its index
        connection.execute("PRAGMA schema_version").fetchone()
    except sqlite3.OperationalError as exc:
        if _cannot_share_wal(exc, path):
            connection.close()
            connection = _connect(uri + "&immutable=1", shown)
            if notes is not None:
                notes.append(immutable_note(path, shown))
        # any other error is reported by the first checked read, as before
    except sqlite3.DatabaseError:
        pass
    connection.set_authorizer(_authorizer)
    return connection


_WAL_VERSIONS = b"\x02\x02"
"""Bytes 18 and 19 of a WAL-mode database's header, its file format write and read
versions (https://www.sqlite.org/fileformat2.html, "File format version numbers": 1 is the
rollback journal, 2 is WAL)."""


def _cleanly_closed_wal(path: Path) -> bool:
    """A WAL-mode database with no ``-wal`` beside it: no connection has it open, and the
    main file holds every committed row."""
    if path.with_name(path.name + "-wal").exists():
        return False
    try:
        with path.open("rb") as stream:
            header = stream.read(20)
    except OSError:
        return False  # the first read reports it, as for any unreadable file
    return header.startswith(b"SQLite format 3\x00") and header[18:20] == _WAL_VERSIONS


def _connect(uri: str, shown: str) -> sqlite3.Connection:
    try:
        # Equivalent mutants: this SQLite is built with SQLITE_USE_URI, so it reads a file:
        # name as a URI without uri=True (other builds need it); and the importer never runs
        # INSERT/UPDATE/DELETE, so the default isolation_level opens no implicit transaction.
        return sqlite3.connect(uri, timeout=2.0,
                               uri=True,  # pragma: no mutate (this SQLite reads URIs)
                               isolation_level=None)  # pragma: no mutate (no writes)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open the SQLite database ({exc})", file=shown) from None


def _cannot_share_wal(exc: sqlite3.OperationalError, path: Path) -> bool:
    """SQLite's refusal to read a WAL database whose ``-shm`` it cannot create: "attempt to
    write a readonly database" (SQLITE_READONLY_DIRECTORY) without a ``-wal`` file, "unable
    to open database file" (SQLITE_CANTOPEN) with one and no ``-shm`` beside it."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_READONLY") or "readonly database" in str(exc):
        return True
    if name == "SQLITE_CANTOPEN" or "unable to open database file" in str(exc):
        return (path.with_name(path.name + "-wal").is_file()
                and not path.with_name(path.name + "-shm").exists())
    return False


def immutable_note(path: Path, shown: str) -> str:
    """What an immutable read of a WAL database may miss, and what to do about it."""
    wal = path.with_name(path.name + "-wal")
    try:
        size = wal.stat().st_size if wal.is_file() else 0
    except OSError:
        size = 0
    text = (f"{shown}: its folder is not writable, so SQLite cannot open the shared index "
            "(-shm) a read of a WAL-mode database needs; read it as an immutable snapshot "
            "instead, which may be torn if the gateway is writing")
    if size:
        text += (f", and the {size}-byte {wal.name} is not read: rows written since the "
                 "gateway's last checkpoint are missing")
    return text + (". For a consistent read, copy the database with its -wal file to a "
                   "folder you can write and import the copy, or import as a user who can "
                   "write the folder")


def _columns(db: sqlite3.Connection, table: str, shown: str) -> set[str]:
    try:
        rows = db.execute(f"PRAGMA table_info({quote(table)})").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read the SQLite database ({exc})", file=shown) from None
    return {str(row[1]) for row in rows}


def quote(name: str) -> str:
    # only the module's constant names are quoted, none of which holds a double quote
    return '"' + name + '"'


def _require(db: sqlite3.Connection, table: str, needed: Sequence[str],
             shown: str) -> set[str]:
    present = _columns(db, table, shown)
    if not present:
        raise InputError(f"table {table!r} is missing; is this an OmniRoute database?",
                         file=shown)
    missing = [name for name in needed if name not in present]
    if missing:
        raise InputError(f"table {table!r} has no column "
                         + ", ".join(repr(name) for name in missing), file=shown)
    return present


def stream(db: sqlite3.Connection, query: str, parameters: Mapping[str, Any],
            names: Sequence[str], table: str, shown: str) -> Iterator[dict[str, Any]]:
    """The rows of a query, one at a time, as dicts keyed by ``names``."""
    try:
        cursor = db.execute(query, parameters)
        for row in cursor:
            yield dict(zip(names, row, strict=True))
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read table {table!r} ({exc})", file=shown) from None


@dataclass
class Reader:
    """One open read transaction over a database, and what was found in it."""

    db: sqlite3.Connection
    shown: str
    snapshot_columns: set[str]
    connection_columns: set[str] = field(default_factory=set)


class Database:
    """``with Database(path, shown) as reader``: checked tables, one read transaction."""

    def __init__(self, path: Path, shown: str, notes: list[str] | None = None) -> None:
        self.path = path
        self.shown = shown
        self.notes = notes

    db: sqlite3.Connection
    """Set by ``__enter__``; ``__exit__`` runs only after it returned."""

    def __enter__(self) -> Reader:
        db = open_readonly(self.path, self.shown, self.notes)
        self.db = db
        try:
            # _require reports a damaged file as an InputError itself, and a deferred BEGIN
            # reads no page: nothing here raises a DatabaseError
            columns = _require(db, CONNECTIONS_TABLE, CONNECTION_COLUMNS, self.shown)
            present = _require(db, SNAPSHOTS_TABLE, SNAPSHOT_COLUMNS, self.shown)
            db.execute("BEGIN")  # pragma: no mutate (SQL keywords read the same in any case)
        except BaseException:
            db.close()
            raise
        return Reader(db, self.shown, present, columns)

    def __exit__(self, *_exc: object) -> None:
        # closing ends the read transaction; nothing was written, so there is nothing to commit
        self.db.close()
