"""LiteLLM's spend logs → a traffic ledger (SPEC §7.1), for ``import litellm-spend``.

Facts (docs/traffic.md#litellm-spend-logs), from BerriAI/litellm ``schema.prisma`` at commit
029f645f1c81cbd6c6c48fbc8490d91da937066f, model ``LiteLLM_SpendLogs`` (the table
``"LiteLLM_SpendLogs"``, quoted: Prisma keeps the model's case):

* one row per request: ``request_id`` (the key), ``call_type``, ``spend`` (Float, default
  0), ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` (Int, default 0),
  ``"startTime"`` and ``"endTime"`` (DateTime: ``timestamp(3) without time zone``, holding
  UTC), ``model`` (the provider's model name), ``model_id`` (the deployment's
  ``model_info.id``; may be blank), ``model_group`` (the public name the client asked for),
  ``custom_llm_provider``, ``api_base``, ``status`` (``success`` or ``failure``; absent from
  older databases), and columns never read here (``api_key``, a hashed key; ``messages``,
  ``response``, ``proxy_server_request``, ``metadata``: bodies and caller data).
* the proxy's ``GET /spend/logs`` answers the same rows as a JSON array (its ``/v2`` a page
  ``{"data": [...]}``).

Each row becomes one event. It joins its connection through ``model_id`` (the id ``export
litellm`` writes, read back by ``omniladder.analyses.export.litellm.parse_deployment_id``), else
through the export map (``--map``: the one route whose ``api_base`` is the row's and whose
connection serves the row's model). A row that joins nothing is kept under a connection id
no connections file holds (``litellm:<model_id>``, or ``litellm:no-model-id``) and counted
and listed as unattributed: ``audit traffic`` counts such events as ``unknown-connection``;
it is never dropped and never given to a connection it did not name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from omniladder import timefmt
from omniladder.errors import InputError, UsageError
from omniladder.inputs.credentials import (
    KEY_FIRST,
    KEY_STARTS,
    guarded,
    redacted_note,
    shown_value,
)
from omniladder.inputs.ledger.events import event_line, millis
from omniladder.inputs.ledger.merge import event_key
from omniladder.models import IDENTIFIER_PATTERN
from omniladder.sources.ledger_values import dropped_note, requested_name, token_count

TABLE = "LiteLLM_SpendLogs"
SCHEMA_COMMIT = "029f645f1c81cbd6c6c48fbc8490d91da937066f"
NEEDED = ("request_id", "startTime", "model", "spend", "prompt_tokens", "completion_tokens")
"""The columns every LiteLLM database has had since the spend logs began."""
OPTIONAL = ("model_id", "model_group", "api_base", "custom_llm_provider", "status")
"""Read when present: an older database lacks some (``status`` came later)."""
COLUMNS = NEEDED + OPTIONAL
"""The columns a row of ``postgres_batches`` holds, in order."""
UNATTRIBUTED_PREFIX = "litellm:"
NO_MODEL_ID = UNATTRIBUTED_PREFIX + "no-model-id"
EXTRA = "postgres"
_CURSOR = "omniladder_spend_logs"
_BATCH = 5000

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


@dataclass(kw_only=True)
class SpendImport:
    """What the import counted, beside the events it yields."""

    rows: int = 0
    served: int = 0
    failed: int = 0
    by_model_id: int = 0
    by_map: int = 0
    unattributed: dict[str, int] = field(default_factory=dict)
    """Per connection id the rows were kept under: rows that joined no connection."""
    not_in_fleet: dict[str, int] = field(default_factory=dict)
    """Connections an id names that the connections file does not hold."""
    ambiguous: int = 0
    """Rows whose api_base and model fit more than one connection of the map."""
    before_since: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    """Values a row held that the ledger cannot take, by ``"column: fault"``
    (``omniladder.sources.ledger_values``): dropped, the row kept."""
    redacted: dict[str, int] = field(default_factory=dict)
    """Per column, the values that looked like a key and were written as a marker."""

    def notes(self) -> list[str]:
        out: list[str] = []
        keys = redacted_note(self.redacted, "the spend logs")
        if keys is not None:
            out.append(keys)
        if self.unattributed:
            listed = ", ".join(f"{cid} ({n})" for cid, n in sorted(self.unattributed.items()))
            total = sum(self.unattributed.values())
            out.append(f"{total} row{'s' if total != 1 else ''} joined no connection "
                       "(no model_id the export wrote, and no single --map route for "
                       "its api_base and model), kept unattributed under: " + listed
                       + "; audit traffic counts them as unknown-connection")
        if self.ambiguous:
            out.append(f"{self.ambiguous} of them fit more than one connection of the map "
                       "(the same api_base and model): not given to either")
        if self.not_in_fleet:
            listed = ", ".join(f"{cid} ({n})" for cid, n in sorted(self.not_in_fleet.items()))
            out.append("rows of connections not in the connections file were kept under "
                       f"their own id (audit traffic counts them as unknown-connection): "
                       f"{listed}")
        dropped = dropped_note(TABLE, self.dropped)
        if dropped is not None:
            out.append(dropped)
        return out


# --- joining a row to a connection ----------------------------------------------------------


class Route(NamedTuple):
    """Where the export map sends one connection: what a row joins through its api_base."""

    id: str
    model_prefix: str
    api_base: str | None


def _base(url: str) -> str:
    """An api_base as compared: no trailing ``/``, scheme and host in lower case."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"),
                       parts.query, "")).rstrip("/")


class Joiner:
    """Finds the connection and model of a row (module docstring).

    ``parse_id`` is the export's own reader of the ``model_info.id`` it writes
    (``omniladder.analyses.export.litellm.parse_deployment_id``) and ``groups`` maps each exported
    group's name to its auto id (``managed_name``): the command passes them in, so the ids
    are read by the code that writes them."""

    def __init__(self, parse_id: Callable[[str], tuple[str, str, str, str] | None],
                 groups: Mapping[str, str], routes: Iterable[Route],
                 fleet: Mapping[str, frozenset[str] | None] | None) -> None:
        self.parse_id = parse_id
        self.groups = groups
        self.fleet = fleet
        self.by_base: dict[str, list[Route]] = {}
        self._known: dict[tuple[str | None, str | None, str], tuple[str, Any]] = {}
        """Each (model_id, api_base, model) joined once: a log repeats a few thousand."""
        for route in routes:
            if route.api_base is not None:
                self.by_base.setdefault(_base(route.api_base), []).append(route)

    def serves(self, cid: str, model: str) -> bool:
        if self.fleet is None:
            return True
        models = self.fleet.get(cid, frozenset())
        return models is None or model in models

    def join(self, model_id: str | None, api_base: str | None, model: str,
             found: SpendImport) -> tuple[str, str] | None:
        """(connection, model as the plan names it), or None."""
        key = (model_id, api_base, model)
        known = self._known.get(key)
        if known is None:
            probe = SpendImport()
            joined = self._join(model_id, api_base, model, probe)
            how = ("by_model_id" if probe.by_model_id else "by_map" if probe.by_map
                   else "ambiguous" if probe.ambiguous else "")
            known = (how, joined)
            if len(self._known) < _KNOWN_MAX:
                self._known[key] = known
        how, joined = known
        if how:
            setattr(found, how, getattr(found, how) + 1)
        return joined

    def _join(self, model_id: str | None, api_base: str | None, model: str,
              found: SpendImport) -> tuple[str, str] | None:
        if model_id:
            parsed = self.parse_id(model_id)
            if parsed is not None and parsed[0] in self.groups and _IDENTIFIER.match(
                    parsed[1]) and _IDENTIFIER.match(parsed[3]):
                found.by_model_id += 1
                return parsed[1], parsed[3]
        if api_base and self.by_base:
            fits: list[tuple[str, str]] = []
            for route in self.by_base.get(_base(api_base), ()):
                plain = model
                if route.model_prefix and plain.startswith(route.model_prefix):
                    plain = plain[len(route.model_prefix):]
                if self.serves(route.id, plain):
                    fits.append((route.id, plain))
            if len(fits) == 1:
                found.by_map += 1
                return fits[0]
            if len(fits) > 1:
                found.ambiguous += 1
        return None


# --- one row ------------------------------------------------------------------------------


_STATUSES = {"success": "served", "failure": "failed"}
_STATUS_TEXTS = frozenset({None, "", *_STATUSES})


_KNOWN_MAX = 1 << 16
_TEXTS: dict[Any, str | None] = {}
"""Model, id, group and api_base texts already read: a log repeats a few thousand of them."""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if type(value) is str and value.isprintable():
        # a printable text holds no control character and no blank but the space: stripped,
        # any character left is one _IDENTIFIER asks for (a request id, every row)
        return value.strip() or None
    text = str(value).strip()
    return text if text and _IDENTIFIER.match(text) else None


def _known_text(value: Any) -> str | None:
    """``_text`` for the values a log repeats, remembered (request ids, each new, are not)."""
    if type(value) is str:
        found = _TEXTS.get(value, _TEXTS)
        if found is not _TEXTS:
            return found  # type: ignore[return-value]
        text = _text(value)
        if len(_TEXTS) < _KNOWN_MAX:
            _TEXTS[value] = text
        return text
    return _text(value)


def _instant(value: Any, where: str, shown: str) -> datetime:
    """``startTime``: a datetime (PostgreSQL's timestamp without time zone, UTC) or an
    ISO text (the JSON of /spend/logs; without an offset it is UTC, as LiteLLM stores it)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"not an ISO 8601 timestamp: {shown_value(value)}", file=shown,
                             field=f"{where}.startTime") from None
    else:
        raise InputError("field required (an ISO 8601 timestamp)" if value is None
                         else f"must be an ISO 8601 timestamp, got {type(value).__name__}",
                         file=shown, field=f"{where}.startTime")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if not timefmt.in_utc_range(parsed):
        raise InputError(timefmt.OUT_OF_RANGE, file=shown, field=f"{where}.startTime")
    return parsed


def _spend(value: Any, where: str, shown: str) -> float | None:
    import math

    if value is None:
        return None
    from omniladder.models import LEDGER_COST_MAX

    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise InputError(f"must be a number of US dollars, 0 or more, got {shown_value(value)}",
                         file=shown, field=f"{where}.spend")
    if value > LEDGER_COST_MAX:
        raise InputError(f"is more than any request costs (at most ${LEDGER_COST_MAX:,.0f} an "
                         "event, the bound every reader of a ledger holds): check the units",
                         file=shown, field=f"{where}.spend")
    return float(value)


def row_event(row: Mapping[str, Any], where: str, shown: str, joiner: Joiner,
              found: SpendImport, since: datetime | None) -> dict[str, Any] | None:
    """The ledger event of one spend-log row (None: before ``since``), or the InputError
    naming the row and the column."""
    found.rows += 1
    request = _text(row.get("request_id"))
    if request is None:
        raise InputError("field required (LiteLLM's key of a spend log): a non-blank text "
                         "without control characters", file=shown, field=f"{where}.request_id")
    at = _instant(row.get("startTime"), where, shown)
    if since is not None and at < since:
        found.before_since += 1
        return None
    status = row.get("status")
    if status is None or status == "":
        state = "served"
    elif status in _STATUSES:
        state = _STATUSES[status]
    else:
        raise InputError(f"must be success or failure, got {shown_value(status)}", file=shown,
                         field=f"{where}.status")
    model = _known_text(row.get("model"))
    model_id = _known_text(row.get("model_id"))
    joined = joiner.join(model_id, _known_text(row.get("api_base")), model or "", found) \
        if model is not None or model_id is not None else None
    keys = found.redacted
    request = guarded(request, "request_id", keys)
    if joined is None:  # what the row named is written and listed, never a key (guarded)
        connection = (UNATTRIBUTED_PREFIX + guarded(model_id, "model_id", keys) if model_id
                      else NO_MODEL_ID)
        found.unattributed[connection] = found.unattributed.get(connection, 0) + 1
        served_model = guarded(model, "model", keys) if model else "unknown"
    else:
        connection, served_model = joined
        connection = guarded(connection, "model_id", keys)
        served_model = guarded(served_model, "model_id", keys)
        if joiner.fleet is not None and connection not in joiner.fleet:
            found.not_in_fleet[connection] = found.not_in_fleet.get(connection, 0) + 1
    event: dict[str, Any] = {"at": millis(at), "connection": connection,
                             "model": served_model}
    group = requested_name(row.get("model_group"), "model_group", found.dropped)
    if group is not None:
        event["requested"] = joiner.groups.get(group) or guarded(group, "model_group", keys)
    event["status"] = state
    tokens_in = token_count(row.get("prompt_tokens"), "prompt_tokens", found.dropped)
    tokens_out = token_count(row.get("completion_tokens"), "completion_tokens", found.dropped)
    if tokens_in is not None:
        event["tokens_in"] = tokens_in
    if tokens_out is not None:
        event["tokens_out"] = tokens_out
    cost = _spend(row.get("spend"), where, shown)
    if cost is not None:
        event["cost_usd"] = cost
    event["request_id"] = request
    if state == "served":
        found.served += 1
    else:
        found.failed += 1
    return event


def events(rows: Iterable[tuple[str, Mapping[str, Any]]], shown: str, joiner: Joiner,
           found: SpendImport, since: datetime | None) -> Iterator[dict[str, Any]]:
    """The events of ``(where, row)`` pairs, in order."""
    for where, row in rows:
        event = row_event(row, where, shown, joiner, found, since)
        if event is not None:
            yield event


# --- the rows of the database, straight to ledger lines ---------------------------------


_COUNTED = ("rows", "served", "failed", "by_model_id", "by_map", "ambiguous", "before_since")
_PROBE_START = datetime(2000, 1, 1, tzinfo=UTC)


class _Shape(NamedTuple):
    """What every row of one (status, model, model_id, api_base, model_group) gets: the
    line from ``"connection"`` to ``"status"`` encoded once, the tail of its deduplication
    key, and what it adds to the counts."""

    middle: str
    key_tail: bytes
    probe: SpendImport
    rows: list[int]


def _add(found: SpendImport, probe: SpendImport, times: int) -> None:
    for name in _COUNTED:
        setattr(found, name, getattr(found, name) + times * getattr(probe, name))
    for into, source in ((found.unattributed, probe.unattributed),
                         (found.not_in_fleet, probe.not_in_fleet),
                         (found.dropped, probe.dropped),
                         (found.redacted, probe.redacted)):
        for cid, n in source.items():
            into[cid] = into.get(cid, 0) + times * n


def _shape(status: Any, model: Any, model_id: Any, api_base: Any, group: Any,
           shown: str, joiner: Joiner) -> _Shape:
    """``row_event`` of a row with these five values, read back as a ``_Shape``: the
    line a database row gets is the line ``row_event`` gives it."""
    probe = SpendImport()
    row = {"request_id": "r", "startTime": _PROBE_START, "status": status, "model": model,
           "model_id": model_id, "api_base": api_base, "model_group": group}
    event = row_event(row, "", shown, joiner, probe, None)
    assert event is not None
    line = event_line(event)
    head = line.index(', "connection": ') + 2
    tail = line.rindex(', "request_id": ')
    return _Shape(line[head:tail], ("\x00" + event["connection"] + "\x00" + event["status"])
                  .encode("utf-8", "surrogatepass"), probe, [0])


def database_lines(batches: Iterable[list[tuple[Any, ...]]], shown: str, joiner: Joiner,
                   found: SpendImport, since: datetime | None
                   ) -> Iterator[tuple[bytes | None, str]]:
    """Each row of ``postgres_batches`` as ``merge_lines_into`` takes it: its key and its
    line, byte for byte what ``events`` and ``event_line`` give the row as a mapping.

    The rows a database holds take a shortcut: the part of the line that depends only on
    the row's status, model, model_id, api_base and model_group is built once by
    ``row_event`` itself (``_shape``), and the rest (instant, tokens, spend, request id)
    is written around it. A row the shortcut does not cover (a value of another type, or
    out of range) goes through ``row_event``: the same event, or the same error."""
    import hashlib
    import json

    from omniladder.models import LEDGER_COST_MAX, LEDGER_COUNT_MAX

    blake2b = hashlib.blake2b
    quote: Callable[[str], str] = json.encoder.encode_basestring
    most, dear = LEDGER_COUNT_MAX, LEDGER_COST_MAX  # what event_line writes (row_event else)
    floor = None if since is None else since.astimezone(UTC).replace(tzinfo=None)
    shapes: dict[tuple[Any, ...], _Shape] = {}
    number = 0
    try:
        for batch in batches:
            for values in batch:
                number += 1
                (request, start, model, spend, tokens_in, tokens_out, model_id, group,
                 api_base, _provider, status) = values
                line = None
                if (type(request) is str and request.isprintable()
                        and type(start) is datetime and start.tzinfo is None
                        and 1 < start.year < 9999
                        and (tokens_in is None
                             or (type(tokens_in) is int and 0 <= tokens_in <= most))
                        and (tokens_out is None
                             or (type(tokens_out) is int and 0 <= tokens_out <= most))
                        and (spend is None or (type(spend) is float and 0 <= spend <= dear))
                        and (request := request.strip())
                        and (request[0] not in KEY_FIRST  # else row_event guards it
                             or not request.startswith(KEY_STARTS))):
                    if floor is not None and start < floor:
                        found.rows += 1
                        found.before_since += 1
                        continue
                    key = (status, model, model_id, api_base, group)
                    shape = shapes.get(key)
                    if shape is None and status in _STATUS_TEXTS and all(
                            value is None or type(value) is str for value in key):
                        shape = _shape(status, model, model_id, api_base, group, shown,
                                       joiner)
                        if len(shapes) < _KNOWN_MAX:
                            shapes[key] = shape
                        else:
                            _add(found, shape.probe, 1)
                            shape = shape._replace(rows=[])
                    if shape is not None:
                        if shape.rows:
                            shape.rows[0] += 1
                        at = start.isoformat(timespec="milliseconds")
                        if tokens_in is None or tokens_out is None or spend is None:
                            counts = ("" if tokens_in is None
                                      else f', "tokens_in": {tokens_in}') \
                                + ("" if tokens_out is None
                                   else f', "tokens_out": {tokens_out}') \
                                + ("" if spend is None else f', "cost_usd": {spend!r}')
                            line = (f'{{"at": "{at}Z", {shape.middle}{counts}, '
                                    f'"request_id": {quote(request)}}}\n')
                        else:  # the row every log is full of: one format
                            line = (f'{{"at": "{at}Z", {shape.middle}, "tokens_in": '
                                    f'{tokens_in}, "tokens_out": {tokens_out}, "cost_usd": '
                                    f'{spend!r}, "request_id": {quote(request)}}}\n')
                        yield blake2b(request.encode("utf-8", "surrogatepass")
                                      + shape.key_tail, digest_size=16).digest(), line
                        continue
                row = dict(zip(COLUMNS, values, strict=True))
                event = row_event(row, f"{TABLE}[{number}]", shown, joiner, found, since)
                if event is not None:
                    yield event_key(event.get("request_id"), event["connection"],
                                    event.get("status")), event_line(event)
    finally:
        for shape in shapes.values():
            if shape.rows[0]:
                _add(found, shape.probe, shape.rows[0])
                shape.rows[0] = 0


# --- the JSON of GET /spend/logs ----------------------------------------------------------


def json_rows(raw: bytes, shown: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The rows of a saved ``/spend/logs`` answer: a JSON array of rows, or a page
    ``{"data": [...]}`` (``/spend/logs/v2``)."""
    from omniladder.sources.fields import load_json

    document = load_json(raw, shown)
    prefix = ""
    if isinstance(document, Mapping):
        if "data" not in document:
            what = "an error body" if "error" in document or "detail" in document else \
                "an object without data"
            raise InputError(f"not the JSON of LiteLLM's GET /spend/logs (a list of spend-log "
                             f"rows): {what}", file=shown)
        document, prefix = document["data"], "data"
    if not isinstance(document, list | tuple):
        raise InputError("not the JSON of LiteLLM's GET /spend/logs: expected a list of "
                         "spend-log rows", file=shown, field=prefix or None)
    for index, row in enumerate(document):
        where = f"{prefix}[{index}]"
        if not isinstance(row, Mapping):
            raise InputError("a spend-log row must be an object", file=shown, field=where)
        yield where, row


# --- LiteLLM's PostgreSQL database ----------------------------------------------------------


def is_postgres_url(source: str) -> bool:
    return source.startswith(("postgresql://", "postgres://"))


def shown_url(url: str) -> str:
    """The URL as messages name it: no user's password, no query (where one may hide)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError as exc:
        raise UsageError(f"SOURCE is not a valid postgresql:// URL ({exc}; the URL is not "
                         "shown, it may hold a password)", field="SOURCE") from None
    user = f"{unquote(parts.username)}@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, "", ""))


def _secrets(url: str) -> list[str]:
    """Every form of the URL's password a driver message could quote."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [password, unquote(password)] if password else []
    for key, value in parse_qsl(parts.query):
        if key.lower() in ("password", "sslpassword"):
            found.append(value)
    return [secret for secret in found if secret]


def _scrubbed(message: str, url: str) -> str:
    text = " ".join(message.split())
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


PRISMA_ONLY = ("connection_limit", "pool_timeout", "pgbouncer", "statement_cache_size",
               "socket_timeout", "sslaccept", "sslidentity")
"""Query parameters of a Prisma connection URL that libpq refuses (Prisma's PostgreSQL
connector docs, "Arguments"): the pool's and the driver's own settings. LiteLLM's proxy
reads its DATABASE_URL through Prisma, so the URL its users have carries them
(``connection_limit`` always, often ``pool_timeout`` and ``pgbouncer=true``); a one-off
read-only import has no pool, so they are left out. ``schema`` is Prisma's too, and read."""


class PostgresUrl(NamedTuple):
    """A LiteLLM DATABASE_URL as libpq reads it."""

    target: str
    """The URL without Prisma's parameters."""
    schema: str | None
    """Prisma's ``?schema=``: where the table is read from (None: the server's default)."""
    ignored: tuple[str, ...]
    """Prisma's parameters left out, by name, in the URL's order."""

    def note(self) -> str | None:
        """The one line that says what was left out, naming parameters only (never a
        value: the URL holds a password)."""
        if not self.ignored:
            return None
        where = (f"; the table is read from schema {self.schema!r} (?schema=)"
                 if self.schema else "")
        return (f"the URL's Prisma pool settings were ignored ({', '.join(self.ignored)}: "
                f"LiteLLM's DATABASE_URL carries them, libpq knows none){where}")


def libpq_url(url: str) -> PostgresUrl:
    """The URL libpq reads, the schema Prisma's ``?schema=`` names (libpq knows no such
    parameter) and Prisma's pool settings left out (``PRISMA_ONLY``)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((value for key, value in query if key == "schema"), None) or None
    ignored: list[str] = []
    kept: list[tuple[str, str]] = []
    for key, value in query:
        if key in PRISMA_ONLY:
            if key not in ignored:
                ignored.append(key)
        elif key != "schema":
            kept.append((key, value))
    return PostgresUrl(urlunsplit(parts._replace(query=urlencode(kept))), schema,
                       tuple(ignored))


def _search_path(schema: str) -> str:
    """libpq's ``options`` that make ``schema`` the search path: the name quoted as an
    identifier, a space or backslash in it escaped as libpq's options text asks."""
    quoted = '"' + schema.replace('"', '""') + '"'
    return "-c search_path=" + quoted.replace("\\", "\\\\").replace(" ", "\\ ")


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError(f"reading a postgresql:// URL needs the PostgreSQL driver psycopg: "
                         f"install the extra, pip install 'omniladder[{EXTRA}]'",
                         field="SOURCE") from None
    return psycopg


def postgres_batches(url: str, since: datetime | None,
                     on_open: Callable[[], None] | None = None
                     ) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of ``"LiteLLM_SpendLogs"`` from ``since`` on, in ``startTime`` order, as
    tuples of the ``COLUMNS`` (a column an older database lacks is read as NULL), a batch
    at a time, read in one read-only transaction through a server-side (named) cursor:
    the table is streamed, never loaded. An unreachable or unauthenticated URL, or a
    database without the table, is exit 2, and no message ever holds the password."""
    psycopg = _driver()
    shown = shown_url(url)
    target, schema, _ = libpq_url(url)
    options = {"options": _search_path(schema)} if schema else {}
    try:
        connection = psycopg.connect(target, autocommit=False, connect_timeout=10, **options)
    except psycopg.Error as exc:
        raise InputError(f"cannot connect to the database: {_scrubbed(str(exc), url)}",
                         file=shown) from None
    except Exception as exc:  # a URL libpq cannot parse raises ProgrammingError or the like
        raise InputError(f"cannot connect to the database: {_scrubbed(str(exc), url)}",
                         file=shown) from None
    try:
        connection.read_only = True
        with connection.transaction():
            present = _columns(connection, psycopg, url, shown)
            missing = [name for name in NEEDED if name not in present]
            if missing:
                raise InputError(f'table "{TABLE}" has no column {", ".join(missing)}: not '
                                 "LiteLLM's spend logs", file=shown)
            listed = ", ".join(f'"{name}"' if name in present else f'NULL AS "{name}"'
                               for name in COLUMNS)
            query = f'SELECT {listed} FROM "{TABLE}"'
            parameters: list[Any] = []
            if since is not None:
                query += ' WHERE "startTime" >= %s'
                parameters.append(since.astimezone(UTC).replace(tzinfo=None))
            query += ' ORDER BY "startTime", request_id'
            if on_open is not None:
                on_open()
            with connection.cursor(name=_CURSOR) as cursor:
                cursor.itersize = _BATCH
                try:
                    cursor.execute(query, parameters)
                    yield from prefetched(cursor)
                except psycopg.Error as exc:
                    raise InputError(f'cannot read table "{TABLE}": '
                                     f"{_scrubbed(str(exc), url)}", file=shown) from None
    finally:
        connection.close()


def prefetched(cursor: Any, size: int = _BATCH
               ) -> Generator[list[tuple[Any, ...]], None, None]:
    """``cursor.fetchmany(size)`` until it is empty, the next batch fetched by a thread
    while the caller works on this one (the driver waits for the server without holding
    the interpreter). An error of the fetch is raised here, in the caller; a caller that
    stops early stops the thread (after the fetch under way) before the cursor closes."""
    import queue
    import threading

    ready: queue.Queue[list[tuple[Any, ...]] | BaseException] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def hand(item: list[tuple[Any, ...]] | BaseException) -> None:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def fetch() -> None:
        try:
            while not stop.is_set():
                batch = cursor.fetchmany(size)
                hand(batch)
                if not batch:
                    return
        except BaseException as exc:  # raised again in the caller
            hand(exc)

    thread = threading.Thread(target=fetch, name="omniladder-spend-logs", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item
    finally:
        stop.set()
        thread.join()


def _columns(connection: Any, psycopg: Any, url: str, shown: str) -> set[str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT column_name FROM information_schema.columns "
                           "WHERE table_name = %s AND table_schema = current_schema()",
                           [TABLE])
            present = {str(row[0]) for row in cursor.fetchall()}
    except psycopg.Error as exc:
        raise InputError(f"cannot read the database: {_scrubbed(str(exc), url)}",
                         file=shown) from None
    if not present:
        raise InputError(f'the database has no table "{TABLE}" (LiteLLM\'s spend logs) in '
                         "its schema: not LiteLLM's database, or the proxy's migrations "
                         "have not run", file=shown)
    return present


# --- the fleet ----------------------------------------------------------------------------


def load_fleet(config: Any, connections: Any, models_catalogs: tuple[Any, ...] = (),
               no_shipped_catalogs: bool = False
               ) -> tuple[dict[str, frozenset[str] | None] | None, list[tuple[str, Any]]]:
    """Each connection of the connections file (``--connections``, or the settings file's
    ``[inputs] connections``) → the models it serves (None: any the catalog does not list),
    or None when no connections file is named; and the files read for it."""
    from omniladder.inputs.catalogs import load_catalogs
    from omniladder.inputs.documents import load_model
    from omniladder.inputs.files import display_path
    from omniladder.inputs.input_set import (
        find_settings,
        load_settings,
        named_by_settings,
        resolve_files,
    )
    from omniladder.models import ConnectionsFile
    from omniladder.sources.run import catalogs_read

    settings_path = find_settings(config)
    settings = load_settings(settings_path)
    files = resolve_files(settings_path, settings, connections=connections,
                          models_catalogs=models_catalogs,
                          no_shipped_catalogs=no_shipped_catalogs)
    read: list[tuple[str, Any]] = []
    if settings_path is not None:
        read.append(("the settings file", settings_path))
    if files.connections is None:
        return None, read
    read.append(("the connections file", files.connections))
    with named_by_settings(files):
        fleet = load_model(ConnectionsFile, files.connections,
                           display_path(files.connections)).connections
        catalogs = None
        served: dict[str, frozenset[str] | None] = {}
        for connection in fleet:
            if connection.models is not None:
                served[connection.id] = frozenset(connection.models)
                continue
            if catalogs is None:
                catalogs = load_catalogs((), files.model_catalogs,
                                         include_shipped=not files.no_shipped_catalogs)
                read += catalogs_read(files)
            models = catalogs.models_of(connection.provider)
            served[connection.id] = frozenset(models) if models else None
    return served, read
