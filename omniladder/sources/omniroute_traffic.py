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

Every row read is an event or counted under the reason it is none (``TrafficImport``): no
connection, no timestamp, before ``--since``, after the import instant. A row of a connection
whose model the ledger cannot take is still its attempt: kept with the model ``unknown``,
counted. Token counts and the requested name follow the rule every traffic importer shares
(``omniladder.sources.ledger_values``). docs/traffic.md#omniroute-call-logs says the rest.
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
from omniladder.inputs.ledger.events import event_line, millis
from omniladder.inputs.ledger.merge import event_key
from omniladder.models import IDENTIFIER_PATTERN
from omniladder.sources.ledger_values import dropped_note, requested_name, token_count
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


NO_CONNECTION = ("name no connection (a combo's summary of targets that all failed: no "
                 "attempt of any connection)")
BAD_CONNECTION = "hold a control character in connection_id"
NO_TIMESTAMP = "have no timestamp"
BEFORE_SINCE = "are before --since"
UNKNOWN_MODEL = "unknown"
"""The model of an attempt whose call_logs row names none (NULL, blank) or one the ledger
cannot take (a control character): the attempt of its connection is kept under it."""


@dataclass(kw_only=True)
class TrafficImport:
    """The ledger's lines and what the import counted: every row read is an event (served
    or failed) or counted in ``left_out`` under its reason, so the counts add up to
    ``rows``."""

    lines: list[str] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    """Each line's deduplication key (``event_key``), as ``merge_lines_into`` takes it."""
    notes: list[str] = field(default_factory=list)
    rows: int = 0
    served: int = 0
    failed: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    """Rows that are no event, by reason."""
    no_model: dict[str, int] = field(default_factory=dict)
    """Events kept with the model ``unknown``, by what the row's model was."""
    dropped: dict[str, int] = field(default_factory=dict)
    """Values dropped from kept events (``omniladder.sources.ledger_values``)."""
    unknown: dict[str, int] = field(default_factory=dict)
    models: dict[str, set[str]] = field(default_factory=dict)
    """The models each connection's events name (``unknown`` aside)."""
    found: bool = False
    """Whether the database has a call_logs table at all."""
    joined: bool = True
    """Whether call_logs has correlation_id, so a request's attempts share an id."""
    redacted: dict[str, int] = field(default_factory=dict)
    """Per column, the values that looked like a key and were written as a marker."""

    def text(self) -> str:
        return "".join(self.lines)

    def keyed(self) -> Iterator[tuple[bytes | None, str]]:
        return zip(self.keys, self.lines, strict=True)

    def leave_out(self, reason: str) -> None:
        self.left_out[reason] = self.left_out.get(reason, 0) + 1

    @property
    def left_out_total(self) -> int:
        return sum(self.left_out.values())


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


def model_name(model: str, provider: str | None) -> str:
    """The model as the plan names it: OmniRoute logs ``provider/model``
    (``openai/gpt-4o-mini``); the provider's own prefix is dropped."""
    if provider and model.startswith(provider + "/"):
        return model[len(provider) + 1:]
    return model


def read_call_logs(db: sqlite3.Connection, shown: str, known: Mapping[str, object],
                   since: datetime | None, until: datetime) -> TrafficImport:
    """The traffic ledger of an OmniRoute database, read in the import's own read-only
    transaction (``db``); ``known`` holds the connection ids of ``provider_connections``;
    rows stamped after ``until`` are left out (counted)."""
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
    found.joined = "correlation_id" in present
    names = NEEDED + tuple(name for name in OPTIONAL if name in present)
    after = f"are stamped after the import instant {millis(until)}"
    for row in _rows(db, names, since, shown):
        _event(row, found, known, since, until, after, shown)
    found.notes += _notes(found)
    return found


def _notes(found: TrafficImport) -> list[str]:
    notes: list[str] = []
    if found.left_out:
        total = found.left_out_total
        listed = "; ".join(f"{n} {reason}" for reason, n in sorted(
            found.left_out.items(), key=lambda item: (-item[1], item[0])))
        notes.append(f"{total} of {found.rows} {TABLE} rows are no event and were left out: "
                     f"{listed}")
    if found.no_model:
        total = sum(found.no_model.values())
        listed = ", ".join(f"{what} ({n})" for what, n in sorted(found.no_model.items()))
        notes.append(f"{total} {TABLE} row{'s' if total != 1 else ''} of a connection "
                     f"name{'s' if total == 1 else ''} no model the ledger can take "
                     f"({listed}): kept as attempts of their connection with the model "
                     f"{UNKNOWN_MODEL!r} (audit traffic cannot price them)")
    dropped = dropped_note(TABLE, found.dropped)
    if dropped is not None:
        notes.append(dropped)
    keys = redacted_note(found.redacted, TABLE)
    if keys is not None:
        notes.append(keys)
    if not found.joined:
        notes.append(_unjoined_note(found))
    if found.unknown:
        listed = ", ".join(f"{cid} ({n})" for cid, n in sorted(found.unknown.items()))
        notes.append(f"{TABLE} rows of connections not in provider_connections were "
                     f"kept under their own id (audit traffic counts them as "
                     f"unknown-connection): {listed}")
    return notes


def _unjoined_note(found: TrafficImport) -> str:
    """What a call_logs without correlation_id (OmniRoute 3.7.9 and older) costs the counts:
    each failed attempt is a request of its own, though it may have been one attempt of a
    request another row served or failed. At least one request was made (one served each,
    at least one if only attempts failed), so the count is overstated by at most the rest."""
    events = found.served + found.failed
    requests_at_least = max(found.served, 1 if events else 0)
    text = (f"{TABLE} has no correlation_id (OmniRoute 3.7.9 and older): each attempt is "
            "its own request")
    if found.failed:
        one = found.failed == 1
        text += (f", so {found.failed} failed attempt{'' if one else 's'} could not be "
                 f"joined to the request {'it belongs' if one else 'they belong'} to; the "
                 "request count "
                 f"({events}) may be overstated by up to {events - requests_at_least}")
    return text


def _event(row: dict[str, Any], found: TrafficImport, known: Mapping[str, object],
           since: datetime | None, until: datetime, after: str, shown: str) -> None:
    found.rows += 1
    connection = _text(row["connection_id"])
    if connection is None:
        blank = row["connection_id"] is None or not str(row["connection_id"]).strip()
        found.leave_out(NO_CONNECTION if blank else BAD_CONNECTION)
        return
    at = db_instant(row["timestamp"], f"{TABLE}[id={row['id']}].timestamp", shown)
    if at is None:
        found.leave_out(NO_TIMESTAMP)
        return
    if since is not None and at < since:
        found.leave_out(BEFORE_SINCE)
        return
    if at > until:
        found.leave_out(after)
        return
    keys = found.redacted  # every text written or listed is guarded: never a key
    connection = guarded(connection, "connection_id", keys)
    provider = _text(row["provider"])
    status = row["status"]
    served = type(status) is int and 200 <= status < 300
    model = guarded(_model(row["model"], provider, found), "model", keys)
    event: dict[str, Any] = {"at": millis(at), "connection": connection, "model": model}
    if model != UNKNOWN_MODEL:
        found.models.setdefault(connection, set()).add(model)
    requested = (requested_name(row.get("combo_name"), "combo_name", found.dropped)
                 or requested_name(row.get("requested_model"), "requested_model",
                                   found.dropped))
    if requested is not None:
        event["requested"] = guarded(requested, "combo_name or requested_model", keys)
    event["status"] = "served" if served else "failed"
    for column, name in TOKENS:
        if column in row:
            value = token_count(row[column], column, found.dropped)
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
    found.keys.append(event_key(event.get("request_id"), connection, event["status"]))


def _model(value: Any, provider: str | None, found: TrafficImport) -> str:
    """The event's model; ``unknown`` (counted) when the row names none the ledger takes."""
    model = _text(value)
    if model is not None:
        return model_name(model, provider)
    what = ("NULL" if value is None else "blank" if not str(value).strip()
            else "a control character")
    found.no_model[what] = found.no_model.get(what, 0) + 1
    return UNKNOWN_MODEL
