"""``provider_connections``: one row is one connection (docs/sources.md#omniroute)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from omniladder import timefmt
from omniladder.engine.inputs import Catalogs
from omniladder.errors import InputError
from omniladder.inputs.credentials import key_kind
from omniladder.models import identifier_problem
from omniladder.sources.omniroute.database import (
    CONNECTION_COLUMNS,
    CONNECTIONS_TABLE,
    LAST_ERROR_AT,
    Reader,
    db_flag,
    db_instant,
    db_text,
    quote,
    stream,
)

OMNIROUTE_TERMINAL: frozenset[str] = frozenset(
    {"credits_exhausted", "banned", "expired", "deactivated"})
"""OmniRoute's own terminal set (docs/sources.md#omniroute); ``unavailable`` is a cooldown there."""
_KEPT_STATUSES: frozenset[str] = frozenset({"ok", "unknown", "error"}) | OMNIROUTE_TERMINAL
_STATUS_SYNONYMS: Mapping[str, str] = {"active": "ok", "success": "ok"}
COOLDOWN_STATUS = "unavailable"

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def looks_like_email(text: str) -> bool:
    return _EMAIL.search(text) is not None


def label_of(display_name: Any, name: Any) -> str | None:
    """display_name, else name; never a value that looks like an e-mail address or a key
    (omniladder.inputs.credentials: a key pasted as a name would be written and printed)."""
    for value in (display_name, name):
        text = db_text(value)
        if text is not None and not looks_like_email(text) and key_kind(text) is None:
            return text
    return None


def map_status(raw: Any, cooldown: bool = False) -> tuple[str | None, str | None]:
    """(status for the connections file, the unmapped raw value if it was dropped).

    ``unavailable`` is OmniRoute's cooldown, not a terminal status: with a
    ``rate_limited_until`` (``cooldown``) it maps to no status, and R5's cooldown gate
    decides; without one OmniRoute has no instant to recover at, and it maps to the
    non-terminal ``error``.
    """
    text = db_text(raw)
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
                    notes: list[str], now: datetime | None = None) -> list[dict[str, Any]]:
    """provider_connections rows → connection tables, ordered by priority then id.

    ``now`` is the import instant: the table holds each connection's state as of then
    (``is_active``, ``test_status``, ``rate_limited_until``: state, not history,
    docs/sources.md#omniroute), so every table gets ``state_as_of`` = now, and a cooldown its
    recorded start (``cooldown_start``). None (a test of the mapping alone): neither.
    """
    mapped: list[tuple[float, str, dict[str, Any]]] = []
    dropped_status: dict[str, int] = {}
    modelless: list[str] = []
    cooling: list[str] = []
    failing: list[str] = []
    seen: set[str] = set()
    for row in rows:
        cid = db_text(row["id"])
        if cid is None:
            notes.append(f"skipped a {CONNECTIONS_TABLE} row with an empty id")
            continue
        if cid in seen:
            raise InputError(f"duplicate connection id {cid!r}", file=shown,
                             field=f"{CONNECTIONS_TABLE}.id")
        seen.add(cid)
        where = f"{CONNECTIONS_TABLE}[id={cid}]"
        provider = db_text(row["provider"])
        auth_type = db_text(row["auth_type"])
        if provider is None or auth_type is None:
            missing = "provider" if provider is None else "auth_type"
            raise InputError("is empty", file=shown, field=f"{where}.{missing}")
        default_model = db_text(row["default_model"])
        identifiers(shown, where, id=cid, provider=provider, auth_type=auth_type,
                     default_model=default_model)
        table: dict[str, Any] = {"id": cid, "provider": provider, "auth_type": auth_type}
        models = catalogs.models_of(provider)
        if models:
            table["models"] = list(models)
        elif default_model is not None:
            table["models"] = [default_model]
        else:
            modelless.append(cid)
        table["active"] = db_flag(row["is_active"])
        until = db_instant(row["rate_limited_until"], f"{where}.rate_limited_until", shown)
        status, dropped = map_status(row["test_status"], cooldown=until is not None)
        raw_status = (db_text(row["test_status"])
                      or "")  # pragma: no mutate (no status is not the cooldown either)
        if raw_status.lower() == COOLDOWN_STATUS:
            (cooling if until is not None else failing).append(cid)
        if status is not None:
            table["status"] = status
        if dropped is not None:
            dropped_status[dropped] = dropped_status.get(dropped, 0) + 1
        if until is not None:
            table["rate_limited_until"] = timefmt.iso(until)
            since = cooldown_start(row.get(LAST_ERROR_AT), until, now, where, shown)
            if since is not None:
                table["rate_limited_since"] = timefmt.iso(since)
        if now is not None:
            table["state_as_of"] = timefmt.iso(now)
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


def cooldown_start(raw: Any, until: datetime, now: datetime | None, where: str,
                   shown: str) -> datetime | None:
    """The recorded start of a cooldown ending at ``until``: ``last_error_at`` (when the
    connection last failed) when it is before the cooldown's end and at or before the import
    instant; None otherwise (a failure after the end, or after the snapshot, is not this
    cooldown's start). OmniRoute records no other start (docs/sources.md#omniroute)."""
    if now is None:
        return None
    since = db_instant(raw, f"{where}.{LAST_ERROR_AT}", shown)
    if since is None or since >= until or since > now:
        return None
    return since


def identifiers(shown: str, where: str, **values: str | None) -> None:
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


def connection_rows(reader: Reader) -> Iterator[dict[str, Any]]:
    """Every provider_connections row, its mapped columns only (and ``last_error_at``,
    NULL when the table lacks it)."""
    listed = ", ".join(quote(name) for name in CONNECTION_COLUMNS)
    listed += (", " + quote(LAST_ERROR_AT) if LAST_ERROR_AT in reader.connection_columns
               else ", NULL")
    return stream(reader.db, f"SELECT {listed} FROM {CONNECTIONS_TABLE}", {},
                   (*CONNECTION_COLUMNS, LAST_ERROR_AT), CONNECTIONS_TABLE, reader.shown)
