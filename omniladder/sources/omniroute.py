"""Import a fleet from an OmniRoute SQLite database into omniladder's input files.

The database is opened read-only (``file:...?mode=ro``) and read in one short transaction.
Only the columns mapped below are ever selected, by name, and an SQLite authorizer refuses
any read of any other column, so credential columns (``access_token``, ``refresh_token``,
``api_key``, ``id_token``, ``provider_specific_data``) and ``email`` can never reach
memory, let alone an output file.

Facts about the database, and the mapping, are in ``docs/sources.md#omniroute``. In short:

* one ``provider_connections`` row is one connection: ``id``, ``provider``, ``auth_type``,
  ``is_active`` → active, ``test_status`` → status (OmniRoute's terminal set
  ``credits_exhausted``, ``banned``, ``expired``, ``deactivated`` is kept; ``unavailable``
  is OmniRoute's cooldown and maps to *no* status, its end being ``rate_limited_until``; an
  ``unavailable`` row without that instant maps to the non-terminal ``error``),
  ``rate_limited_until``, ``display_name`` or else ``name`` → label, unless it looks like an
  e-mail address; models come from the model catalog, else ``default_model``;
* ``quota_snapshots`` rows are written only when a value changes, so each reading carries
  the latest value of every window of its connection at its instant; rows of one connection
  within a small tolerance form one reading (a gateway restart re-writes every window once);
* a value is "no value", never 0 %, when the writer said so: ``raw_data`` with
  ``fractionReported: false`` (only that key is ever looked at), a stored 0 of a window the
  window-scope catalog marks ``zero_is_sentinel`` (older Copilot adapters), or NULL;
* ``is_exhausted = 1`` reads as 0 % remaining under every writer generation: generation 1
  sets it only when every window of the connection is at or below 0, so the row's own window
  is empty too; generations 2 and 3 set it per window;
* windows are scoped to the connection's models through the window-scope catalog
  (``omniladder.sources.common``): ignored windows and windows limiting none of the models
  are dropped, unmatched windows limit every model;
* with ``--since``, rows are filtered in SQL and streamed: only rows at or after the since
  instant, plus the latest row before it of every (connection, window_key), are read.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniladder import timefmt
from omniladder.engine.autoid import aware_instant
from omniladder.engine.inputs import Catalogs
from omniladder.errors import InputError, UsageError
from omniladder.inputs.credentials import key_kind
from omniladder.inputs.documents import RepeatedKey, unique_keys
from omniladder.inputs.files import check_input_file
from omniladder.inputs.scopes import WindowScopes
from omniladder.models import identifier_problem
from omniladder.sources.common import (
    ScopeReport,
    SourceReading,
    SourceWindow,
    reading_document,
    scope_windows,
)
from omniladder.sources.fit import OLDEST_READING

if TYPE_CHECKING:
    from omniladder.sources.omniroute_traffic import TrafficImport

CONNECTIONS_TABLE = "provider_connections"
SNAPSHOTS_TABLE = "quota_snapshots"

CONNECTION_COLUMNS: tuple[str, ...] = (
    "id", "provider", "auth_type", "name", "display_name", "is_active", "test_status",
    "rate_limited_until", "default_model", "priority",
)
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
    CONNECTIONS_TABLE: frozenset(CONNECTION_COLUMNS),
    SNAPSHOTS_TABLE: frozenset((*SNAPSHOT_COLUMNS, RAW_DATA)),
    CALL_LOGS_TABLE: frozenset(CALL_LOG_COLUMNS),
}
"""The only (table, column) pairs the importer may read; the authorizer enforces it."""

SECRET_COLUMNS: frozenset[str] = frozenset(
    {"access_token", "refresh_token", "api_key", "id_token"})

OMNIROUTE_TERMINAL: frozenset[str] = frozenset(
    {"credits_exhausted", "banned", "expired", "deactivated"})
"""OmniRoute's own terminal set (docs/sources.md#omniroute); ``unavailable`` is a cooldown there."""
_KEPT_STATUSES: frozenset[str] = frozenset({"ok", "unknown", "error"}) | OMNIROUTE_TERMINAL
_STATUS_SYNONYMS: Mapping[str, str] = {"active": "ok", "success": "ok"}
COOLDOWN_STATUS = "unavailable"

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")

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


# --- options and results -------------------------------------------------------------------


@dataclass(frozen=True)
class ImportOptions:
    now: datetime
    """The instant of the import: the snapshot's taken_at and the origin of --since."""
    since: datetime | None
    """Readings before this instant are dropped, except the one in force at it."""
    group_seconds: float = DEFAULT_GROUP_SECONDS
    confirmed_at: datetime | None = None
    """Opt-in: one more reading per connection at this instant, carrying its latest values."""


@dataclass(frozen=True)
class ImportResult:
    connections: dict[str, Any]
    """The connections document (``{"connections": [...]}``)."""
    quota: dict[str, Any]
    """The quota document (``{"taken_at": ..., "readings": [...]}``)."""
    notes: tuple[str, ...] = field(default=())
    """What an operator should know about the import (stderr talk)."""
    counts: dict[str, int] = field(default_factory=dict)
    traffic: TrafficImport | None = None
    """The traffic ledger read from call_logs in the same transaction (omniroute_traffic)."""


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


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


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


def looks_like_email(text: str) -> bool:
    return _EMAIL.search(text) is not None


def label_of(display_name: Any, name: Any) -> str | None:
    """display_name, else name; never a value that looks like an e-mail address or a key
    (omniladder.inputs.credentials: a key pasted as a name would be written and printed)."""
    for value in (display_name, name):
        text = _text(value)
        if text is not None and not looks_like_email(text) and key_kind(text) is None:
            return text
    return None


# --- reading the database ------------------------------------------------------------------


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
    """Open the database read-only through a ``file:`` URI, with the column allowlist.

    A WAL-mode database (OmniRoute's) in a folder the importer cannot write cannot be read
    with ``mode=ro``: SQLite must create the ``-shm`` index beside it and fails with "attempt
    to write a readonly database" (SQLITE_READONLY_DIRECTORY). It is then opened with
    ``immutable=1``, which reads the main file only, and a note (in ``notes``) says that the
    snapshot may be torn and what the ``-wal`` file holds that is not read.
    """
    check_input_file(path, shown)
    if not path.exists():
        raise InputError("file not found", file=shown)
    if not path.is_file():
        raise InputError("is not a file", file=shown)
    uri = path.resolve().as_uri() + "?mode=ro"
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


def _connect(uri: str, shown: str) -> sqlite3.Connection:
    try:
        # Equivalent mutants: this SQLite is built with SQLITE_USE_URI, so it reads a file:
        # name as a URI without uri=True (other builds need it); and the importer never runs
        # INSERT/UPDATE/DELETE, so the default isolation_level opens no implicit transaction.
        return sqlite3.connect(uri, timeout=2.0,
                               uri=True,  # pragma: no mutate
                               isolation_level=None)  # pragma: no mutate
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
        rows = db.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read the SQLite database ({exc})", file=shown) from None
    return {str(row[1]) for row in rows}


def _quote(name: str) -> str:
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


def _stream(db: sqlite3.Connection, query: str, parameters: Mapping[str, Any],
            names: Sequence[str], table: str, shown: str) -> Iterator[dict[str, Any]]:
    """The rows of a query, one at a time, as dicts keyed by ``names``."""
    try:
        cursor = db.execute(query, parameters)
        for row in cursor:
            # the select list is built from names: strict never fires
            yield dict(zip(names, row,
                           strict=True))  # pragma: no mutate
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read table {table!r} ({exc})", file=shown) from None


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
        microsecond=0)  # pragma: no mutate
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
    listed = ", ".join(_quote(name) for name in SNAPSHOT_COLUMNS)
    if RAW_DATA in present:
        # raw_data reaches Python only when it may carry the flag (never printed).
        listed += (f", CASE WHEN instr({RAW_DATA}, 'fractionReported') > 0 "
                   f"THEN {RAW_DATA} END")
    else:
        listed += ", NULL"  # pragma: no mutate (SQL keywords read the same in any case)
    return listed, (*SNAPSHOT_COLUMNS, RAW_DATA)


@dataclass
class _Reader:
    """One open read transaction over a database, and what was found in it."""

    db: sqlite3.Connection
    shown: str
    snapshot_columns: set[str]

    def connections(self) -> Iterator[dict[str, Any]]:
        listed = ", ".join(_quote(name) for name in CONNECTION_COLUMNS)
        return _stream(self.db, f"SELECT {listed} FROM {CONNECTIONS_TABLE}", {},
                       CONNECTION_COLUMNS, CONNECTIONS_TABLE, self.shown)

    def snapshots(self, since: datetime | None) -> Iterator[dict[str, Any]]:
        """Every row (since None), else the rows at or after since (a superset by whole
        seconds) followed by the latest row before since of every (connection, window_key)."""
        listed, names = _snapshot_select(self.snapshot_columns)
        if since is None:
            yield from _stream(self.db, f"SELECT {listed} FROM {SNAPSHOTS_TABLE}", {}, names,
                               SNAPSHOTS_TABLE, self.shown)
            return
        yield from _stream(self.db, f"SELECT {listed} FROM {SNAPSHOTS_TABLE} WHERE {_RECENT}",
                           _recent_bounds(since), names, SNAPSHOTS_TABLE, self.shown)
        yield from self._in_force(since, listed, names)

    def _in_force(self, since: datetime, listed: str, names: tuple[str, ...]
                  ) -> Iterator[dict[str, Any]]:
        """Candidates for the latest row before since of every (connection, window_key);
        the exact instants are compared by the caller."""
        # Equivalent mutants: a later upper bound (a microsecond kept, a second more, text
        # above every date) only reads more rows, and each instant is compared exactly below.
        upper = (since.astimezone(UTC).replace(
                     microsecond=0)  # pragma: no mutate
                 + timedelta(seconds=1)  # pragma: no mutate
                 ).strftime("%Y-%m-%dT%H:%M:%S")  # pragma: no mutate
        series = list(_stream(self.db, _SERIES, {}, ("cid", "window"), SNAPSHOTS_TABLE,
                              self.shown))
        # through _stream like every other read: a damaged page is an InputError, not a crash
        numeric = next(_stream(self.db, _HAS_NUMERIC, {"floor": TEXT_FLOOR},
                               ("one",),  # pragma: no mutate (only a row's presence counts)
                               SNAPSHOTS_TABLE, self.shown), None) is not None
        text_walk = f"SELECT {listed} FROM {SNAPSHOTS_TABLE} {_TEXT_WALK}"
        numeric_walks = [f"SELECT {listed} FROM {SNAPSHOTS_TABLE} {walk}"
                         for walk in _NUMERIC_WALKS]
        since_ms = math.floor(since.timestamp() * 1000)
        bounds = {"ms_int": since_ms, "ms_text": str(since_ms), "split": EPOCH_SPLIT,
                  "s_int": math.floor(since.timestamp()) + 1}
        for key in series:
            parameters = {**key, "floor": TEXT_FLOOR, "upper": upper}
            date = ""  # the first row's date, once read; no date sorts below ""
            for row in _stream(self.db, text_walk, parameters, names, SNAPSHOTS_TABLE,
                               self.shown):
                stamp = str(row["created_at"])
                day = stamp[:10]
                if day < date:
                    break
                at = db_instant(stamp, f"{SNAPSHOTS_TABLE}[id={row['id']}].created_at",
                                self.shown)
                if at is not None and at < since:
                    date = date or day
                    yield row
            if numeric:
                for walk in numeric_walks:
                    yield from _stream(self.db, walk, {**key, **bounds}, names,
                                       SNAPSHOTS_TABLE, self.shown)


class _Database:
    """``with _Database(path, shown) as reader``: checked tables, one read transaction."""

    def __init__(self, path: Path, shown: str, notes: list[str] | None = None) -> None:
        self.path = path
        self.shown = shown
        self.notes = notes

    db: sqlite3.Connection
    """Set by ``__enter__``; ``__exit__`` runs only after it returned."""

    def __enter__(self) -> _Reader:
        db = open_readonly(self.path, self.shown, self.notes)
        self.db = db
        try:
            # _require reports a damaged file as an InputError itself, and a deferred BEGIN
            # reads no page: nothing here raises a DatabaseError
            _require(db, CONNECTIONS_TABLE, CONNECTION_COLUMNS, self.shown)
            present = _require(db, SNAPSHOTS_TABLE, SNAPSHOT_COLUMNS, self.shown)
            db.execute("BEGIN")  # pragma: no mutate (SQL keywords read the same in any case)
        except BaseException:
            db.close()
            raise
        return _Reader(db, self.shown, present)

    def __exit__(self, *_exc: object) -> None:
        # closing ends the read transaction; nothing was written, so there is nothing to commit
        self.db.close()


# --- mapping connections -------------------------------------------------------------------


def map_status(raw: Any, cooldown: bool = False) -> tuple[str | None, str | None]:
    """(status for the connections file, the unmapped raw value if it was dropped).

    ``unavailable`` is OmniRoute's cooldown, not a terminal status: with a
    ``rate_limited_until`` (``cooldown``) it maps to no status, and R5's cooldown gate
    decides; without one OmniRoute has no instant to recover at, and it maps to the
    non-terminal ``error``.
    """
    text = _text(raw)
    if text is None:
        return None, None
    key = text.lower()
    if key == COOLDOWN_STATUS:
        return (None if cooldown else "error"), None
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
    cooling: list[str] = []
    failing: list[str] = []
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
        default_model = _text(row["default_model"])
        _identifiers(shown, where, id=cid, provider=provider, auth_type=auth_type,
                     default_model=default_model)
        table: dict[str, Any] = {"id": cid, "provider": provider, "auth_type": auth_type}
        models = catalogs.models_of(provider)
        if models:
            table["models"] = list(models)
        elif default_model is not None:
            table["models"] = [default_model]
        else:
            modelless.append(cid)
        table["active"] = _flag(row["is_active"])
        until = db_instant(row["rate_limited_until"], f"{where}.rate_limited_until", shown)
        status, dropped = map_status(row["test_status"], cooldown=until is not None)
        raw_status = (_text(row["test_status"])
                      or "")  # pragma: no mutate (no status is not the cooldown either)
        if raw_status.lower() == COOLDOWN_STATUS:
            (cooling if until is not None else failing).append(cid)
        if status is not None:
            table["status"] = status
        if dropped is not None:
            dropped_status[dropped] = dropped_status.get(dropped, 0) + 1
        if until is not None:
            table["rate_limited_until"] = timefmt.iso(until)
        label = label_of(row["display_name"], row["name"])
        if label is not None:
            table["label"] = label
        mapped.append((_priority(row["priority"]), cid, table))
    if cooling:
        notes.append("test_status 'unavailable' is OmniRoute's cooldown, imported as "
                     "rate_limited_until, not as a terminal status: " + ", ".join(cooling))
    if failing:
        notes.append("test_status 'unavailable' without rate_limited_until imported as "
                     "status 'error' (not terminal): " + ", ".join(failing))
    if dropped_status:
        listed = ", ".join(f"{value!r} ×{count}" for value, count in sorted(dropped_status.items()))
        notes.append(f"test_status values that are neither terminal nor a connection status "
                     f"were imported as no status: {listed}")
    if modelless:
        notes.append("no model known for " + ", ".join(modelless) + " (provider not in the "
                     "model catalog and no default_model): add models to connections.toml "
                     "or a model catalog overlay")
    mapped.sort()  # by priority, then id; ids are unique, so no table is ever compared
    return [table for _, _, table in mapped]


def _identifiers(shown: str, where: str, **values: str | None) -> None:
    """Exit 2 naming the table, the row and the column when a value that becomes an
    identifier of the written fleet (an id, a provider, a model, a window's name) holds a
    control character: every later command would refuse the files the import wrote."""
    for column, value in values.items():
        problem = None if value is None else identifier_problem(value)
        if problem is not None:
            raise InputError(f"{problem}; nothing was written (rename it in the gateway, or "
                             "import from a copy of the database without the row)",
                             file=shown, field=f"{where}.{column}")


def _priority(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return math.inf
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else math.inf
    try:
        return float(str(value))
    except ValueError:
        return math.inf


# --- mapping snapshot rows -----------------------------------------------------------------


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
        key = (provider, window)  # pragma: no mutate
        known = self._zero_sentinel.get(key)  # pragma: no mutate
        if known is None:
            matched = self.scopes.match(provider, window)
            known = matched is not None and matched.entry.zero_is_sentinel
            self._zero_sentinel[key] = known  # pragma: no mutate
        return known

    def parse(self, row: Mapping[str, Any], provider: str) -> _Row | None:
        row_id = row["id"]
        where = f"{SNAPSHOTS_TABLE}[id={row_id}]"
        at = db_instant(row["created_at"], f"{where}.created_at", self.shown)
        window = _text(row["window_key"])
        if at is None or window is None:
            return None
        _identifiers(self.shown, where, window_key=window)
        if at < OLDEST_READING:
            raise InputError(f"{timefmt.iso(at)} is before 2000: no quota telemetry is that "
                             "old (a writer's 0 for \"not given\", or a clock reset); nothing "
                             "was written", file=self.shown, field=f"{where}.created_at")
        reset_at = db_instant(row["next_reset_at"], f"{where}.next_reset_at", self.shown)
        remaining: float | None
        if _flag(row["is_exhausted"]):
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
        cid = _text(row["connection_id"])
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
                    (parsed.at, parsed.row_id) > (held.at, held.row_id)):  # pragma: no mutate
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


def import_omniroute(path: Path, shown: str, catalogs: Catalogs, scopes: WindowScopes,
                     options: ImportOptions) -> ImportResult:
    """Read an OmniRoute database and build the connections and quota documents."""
    notes: list[str] = []
    with _Database(path, shown, notes) as reader:
        connections = map_connections(reader.connections(), catalogs, shown, notes)
        readings, rows = map_snapshots(reader.snapshots(options.since),
                                       connections, options, scopes, shown, notes)
        from omniladder.sources.omniroute_traffic import read_call_logs

        traffic = read_call_logs(reader.db, shown, {c["id"]: None for c in connections},
                                 options.since, options.now)
    if options.since is not None:
        notes.append(f"history before --since {timefmt.iso(options.since)}: only the value in "
                     "force at that instant was read, for every window")
    quota = {"taken_at": timefmt.iso(options.now), "readings": readings}
    with_history = len({reading["connection"] for reading in readings})
    counts = {"connections": len(connections), "readings": len(readings),
              "connections_with_readings": with_history, "snapshot_rows": rows}
    return ImportResult({"connections": connections}, quota, tuple(notes), counts, traffic)


# --- writing -------------------------------------------------------------------------------

SETTINGS_NAME = "omniladder.toml"
CONNECTIONS_NAME = "connections.toml"
QUOTA_NAME = "quota.json"


def quota_text(quota: Mapping[str, Any]) -> str:
    """The quota document with one reading per line: valid JSON, diff-friendly, and written
    by json's C encoder (an indented dump of 100,000 readings takes seconds)."""
    readings = quota["readings"]
    head = json.dumps(quota["taken_at"])  # an RFC 3339 instant: ASCII
    if not readings:
        return f'{{"taken_at": {head}, "readings": []}}\n'
    # Equivalent mutant: ensure_ascii=None reads as False.
    lines = ",\n".join("  " + json.dumps(reading,
                                          ensure_ascii=False)  # pragma: no mutate
                        for reading in readings)
    return f'{{"taken_at": {head}, "readings": [\n{lines}\n]}}\n'


def render_files(result: ImportResult, source: str, traffic: str | None = None
                 ) -> dict[str, str]:
    """The three files' text, by file name: connections, quota, then the settings naming them
    (and the traffic ledger, when one is given: ``[inputs] traffic``)."""
    import tomli_w

    header = (f"# Imported by `omniladder import omniroute` from {source}\n"
              f"# at {result.quota['taken_at']}. No credential was read.\n\n")
    connections = header + tomli_w.dumps(result.connections)
    quota = quota_text(result.quota)
    settings = header + (
        "# Readings keep their real created_at. The gateway writes a row only when a value\n"
        "# changes, so an unchanged window looks old: re-import with --confirmed-at now, or\n"
        "# raise [ladder] max_reading_age_seconds, if you trust the gateway to keep polling.\n\n"
    ) + tomli_w.dumps({"inputs": {"connections": CONNECTIONS_NAME, "quota": QUOTA_NAME,
                                  **({"traffic": traffic} if traffic is not None else {})}})
    return {CONNECTIONS_NAME: connections, QUOTA_NAME: quota, SETTINGS_NAME: settings}
