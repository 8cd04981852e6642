"""OmniRoute's ``call_logs`` → a traffic ledger (SPEC §7.1), for ``import omniroute``.

Facts (docs/traffic.md#omniroute-call-logs), from diegosouzapw/OmniRoute:

* ``call_logs`` holds one row per *attempt*: ``src/lib/db/migrations/001_initial_schema.sql``
  (commit 39bbc410069fb46c2ed7b0f28e6e997945422485) creates it with ``id``, ``timestamp``
  (TEXT), ``status`` (the HTTP status), ``model``, ``requested_model``, ``provider``,
  ``connection_id``, the token columns ``tokens_in``, ``tokens_out``, ``tokens_cache_read``,
  ``tokens_cache_creation`` and the combo columns; ``src/lib/db/schemaColumns.ts``
  ``ensureCallLogsColumns`` (commit 025c05349910492ded1b94c4b64566d5621b8aa1) adds
  ``correlation_id`` to older files. It has no cost column.
* The attempts of one request share ``correlation_id`` (OmniRoute's test
  ``tests/unit/13481-combo-calllog-unique-collision.test.ts``: a failed 400 attempt and the
  200 attempt that served, one ``correlationId``). ``combo_execution_key`` names a combo
  step, the same across requests: it is never used to group.
* A combo whose every target failed writes a summary row without ``connection_id``: no
  attempt of any connection.

Each row with a connection becomes one event: a 2xx status is the served event, any other a
failed attempt of the same ``request_id`` (the ``correlation_id``, else the row's own id).
``at`` is the row's ``timestamp`` to the millisecond, in UTC. No ``cost_usd`` is written:
nothing joins a row to a cost exactly, so ``audit traffic`` prices it (SPEC §7.4). A
connection id that is not in ``provider_connections`` is kept as it is (the audit counts it
as ``unknown-connection``), never given to another connection.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from omniladder.errors import InputError
from omniladder.inputs.credentials import guarded, redacted_note
from omniladder.inputs.traffic import event_line, millis
from omniladder.models import IDENTIFIER_PATTERN
from omniladder.sources.omniroute.database import CALL_LOG_COLUMNS, CALL_LOGS_TABLE, db_instant

TRAFFIC_NAME = "traffic.jsonl"
TABLE = CALL_LOGS_TABLE
NEEDED = CALL_LOG_COLUMNS[:6]
OPTIONAL = CALL_LOG_COLUMNS[6:]
TOKENS = (("tokens_in", "tokens_in"), ("tokens_out", "tokens_out"),
          ("tokens_cache_read", "tokens_cache_read"),
          ("tokens_cache_creation", "tokens_cache_write"))
"""(call_logs column, ledger field)."""
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


@dataclass
class TrafficImport:
    """The ledger's lines and what the import counted."""

    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: int = 0
    served: int = 0
    failed: int = 0
    without_connection: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    found: bool = False
    """Whether the database has a call_logs table at all."""
    redacted: dict[str, int] = field(default_factory=dict)
    """Per column, the values that looked like a key and were written as a marker."""

    def text(self) -> str:
        return "".join(self.lines)


def _columns(db: sqlite3.Connection, shown: str) -> set[str]:
    try:
        rows = db.execute(f'PRAGMA table_info("{TABLE}")').fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read the SQLite database ({exc})", file=shown) from None
    return {str(row[1]) for row in rows}


def _rows(db: sqlite3.Connection, names: tuple[str, ...], since: datetime | None,
          shown: str) -> Iterator[dict[str, Any]]:
    listed = ", ".join(f'"{name}"' for name in names)
    query = f'SELECT {listed} FROM "{TABLE}"'
    parameters: dict[str, Any] = {}
    if since is not None:
        # timestamp is toISOString() text: ordered as text, a whole second earlier is a
        # superset; each instant is compared exactly below
        query += " WHERE timestamp >= :since"
        parameters["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    query += " ORDER BY timestamp, id"
    try:
        for row in db.execute(query, parameters):
            yield dict(zip(names, row, strict=True))
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read table {TABLE!r} ({exc})", file=shown) from None


def _text(value: Any) -> str | None:
    """A text value as the ledger takes it: not blank, no control character; else None."""
    if value is None:
        return None
    text = str(value).strip()
    return text if text and _IDENTIFIER.match(text) else None


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def model_name(model: str, provider: str | None) -> str:
    """The model as the plan names it: OmniRoute logs ``provider/model``
    (``openai/gpt-4o-mini``); the provider's own prefix is dropped."""
    if provider and model.startswith(provider + "/"):
        return model[len(provider) + 1:]
    return model


def read_call_logs(db: sqlite3.Connection, shown: str, known: Mapping[str, object],
                   since: datetime | None, now: datetime) -> TrafficImport:
    """The traffic ledger of an OmniRoute database, read in the import's own read-only
    transaction (``db``); ``known`` holds the connection ids of ``provider_connections``."""
    found = TrafficImport()
    present = _columns(db, shown)
    if not present:
        found.notes.append(f"{shown} has no {TABLE} table (an OmniRoute older than its "
                           "request log): no traffic ledger was written")
        return found
    missing = [name for name in NEEDED if name not in present]
    if missing:
        found.notes.append(f"{TABLE} has no column {', '.join(missing)}: no traffic "
                           "ledger was written")
        return found
    found.found = True
    names = NEEDED + tuple(name for name in OPTIONAL if name in present)
    if "correlation_id" not in present:
        found.notes.append(
            f"{TABLE} has no correlation_id (an OmniRoute before it was added): each "
            "attempt is its own request, so failed attempts are not linked to the "
            "request they preceded")
    for row in _rows(db, names, since, shown):
        _event(row, found, known, since, now, shown)
    if found.without_connection:
        found.notes.append(f"{found.without_connection} {TABLE} row(s) name no connection "
                           "(a combo's summary of targets that all failed): not attempts "
                           "of any connection, left out")
    keys = redacted_note(found.redacted, TABLE)
    if keys is not None:
        found.notes.append(keys)
    if found.unknown:
        listed = ", ".join(f"{cid} ({n})" for cid, n in sorted(found.unknown.items()))
        found.notes.append(f"{TABLE} rows of connections not in provider_connections were "
                           f"kept under their own id (audit traffic counts them as "
                           f"unknown-connection): {listed}")
    return found


def _event(row: dict[str, Any], found: TrafficImport, known: Mapping[str, object],
           since: datetime | None, now: datetime, shown: str) -> None:
    found.rows += 1
    connection = _text(row["connection_id"])
    if connection is None and row["connection_id"] is not None and str(
            row["connection_id"]).strip():
        found.notes.append(f"{TABLE}[id={row['id']}].connection_id holds a control "
                           "character: the row was left out")
        return
    if connection is None:
        found.without_connection += 1
        return
    at = db_instant(row["timestamp"], f"{TABLE}[id={row['id']}].timestamp", shown)
    model = _text(row["model"])
    if at is None or model is None or at > now or (since is not None and at < since):
        return
    keys = found.redacted  # every text written or listed is guarded: never a key
    connection = guarded(connection, "connection_id", keys)
    model = guarded(model, "model", keys)
    provider = _text(row["provider"])
    status = row["status"]
    served = type(status) is int and 200 <= status < 300
    event: dict[str, Any] = {"at": millis(at), "connection": connection,
                             "model": model_name(model, provider)}
    requested = _text(row.get("combo_name")) or _text(row.get("requested_model"))
    if requested is not None:
        event["requested"] = guarded(requested, "combo_name or requested_model", keys)
    event["status"] = "served" if served else "failed"
    for column, name in TOKENS:
        if column in row:
            value = _count(row[column])
            if value is not None:
                event[name] = value
    request = _text(row.get("correlation_id")) or _text(row["id"])
    if request is not None:
        event["request_id"] = guarded(request, "correlation_id", keys)
    if connection not in known:
        found.unknown[connection] = found.unknown.get(connection, 0) + 1
    if served:
        found.served += 1
    else:
        found.failed += 1
    found.lines.append(event_line(event))
