"""A payload must fit its source and its connection (SPEC §6, v1.2), checked once for every
quota source and before anything is written.

* **The document.** A provider's error body (an expired token, a rate limit, GitHub's
  ``Not Found``) is no reading: it is exit 2 saying what it is. So is a document with none of
  the source's own keys (each source module declares them as ``OWN_KEYS``): a Claude usage
  body given to ``copilot-user`` is named as the ``claude-usage`` document it is.
* **The connection.** The window-scope catalog's ``[[sources]]`` table says which providers
  each source serves, and of which auth types (an OAuth login's plan windows are no API
  key's); a connection of another provider or auth type is exit 2 naming the connections
  that would fit, unless forced.
* **The instants.** A reading later than the clock by more than ``FUTURE_TOLERANCE`` is exit
  2: it would move the quota file's ``taken_at`` into the future for good.

Only key names, provider ids, connection ids and the short fields that say what an error
body is ever appear in a message: a captured response may carry a token elsewhere.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omniladder import timefmt
from omniladder.errors import InputError, UsageError
from omniladder.inputs.normalise import AHEAD_SLACK
from omniladder.quota_sources import QUOTA_SOURCES
from omniladder.sources.common import SourceReading
from omniladder.sources.fields import shown_value

FUTURE_TOLERANCE = AHEAD_SLACK
"""How far past the clock a reading may lie (clocks of two machines disagree a little): the
bound the loader warns at (SPEC §2.2), which an import refuses (SPEC §6)."""

_NOTHING_WRITTEN = "nothing was written"
_SHOWN_KEYS = 6
_FIRST_LINE_BYTES = 1 << 20
_WHOLE_DOCUMENT_BYTES = 8 << 20
_PLAIN = re.compile(r"[\w .:/()-]{1,60}")
_SAID_CHARS = 80


def own_keys(source: str) -> frozenset[str]:
    """The top-level keys that make a document one of ``source``'s (its module's OWN_KEYS)."""
    keys: frozenset[str] = importlib.import_module(QUOTA_SOURCES[source].module).OWN_KEYS
    return keys


# --- the document --------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorBody:
    """What a provider's error body says, in the fields that name the failure."""

    field: str
    kind: str
    message: str | None = None

    def text(self) -> str:
        return f"{self.kind}, {self.message}" if self.message else self.kind


def _plain(value: Any) -> str:
    """A short token (``authentication_error``, ``401``) as is; anything else quoted, cut."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and _PLAIN.fullmatch(value.strip()):
        return value.strip()
    return shown_value(value)


def _said(value: Any) -> str | None:
    """A provider's own message about the failure, quoted and cut short."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.split())
    return json.dumps(text if len(text) <= _SAID_CHARS else text[:_SAID_CHARS - 1] + "…",
                      ensure_ascii=False)


def error_body(document: Any) -> ErrorBody | None:
    """The error a provider answered instead of a payload, or None.

    Recognised: ``{"error": {...}}`` (Anthropic ``{type, message}``, Google ``{code, message,
    status}``, OpenAI-style ``{type, code, message}``), ``{"error": "..."}`` (OAuth's
    ``error`` / ``error_description``), a top-level ``"type": "error"``, GitHub's
    ``{"message", "documentation_url"}``, an ``errors`` list of ``{message}``, and a JSON
    array of such bodies (Google's streaming endpoints answer one).
    """
    if isinstance(document, list):
        if document and isinstance(document[0], dict):
            inner = error_body(document[0])
            if inner is not None:
                return ErrorBody(f"[0].{inner.field}", inner.kind, inner.message)
        return None
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    if isinstance(error, dict) and error:
        named = [(key, error[key]) for key in ("type", "status", "code")
                 if isinstance(error.get(key), str | int) and not isinstance(error[key], bool)
                 and str(error[key]).strip()]
        if isinstance(error.get("code"), int) and isinstance(error.get("status"), str):
            field, kind = "error.status", f"{error['code']} {_plain(error['status'])}"
        elif named:
            field, kind = f"error.{named[0][0]}", _plain(named[0][1])
        else:
            field, kind = "error", "error"
        return ErrorBody(field, kind, _said(error.get("message")))
    if isinstance(error, str) and error.strip():
        return ErrorBody("error", _plain(error),
                         _said(document.get("error_description") or document.get("message")))
    if document.get("type") == "error":
        return ErrorBody("type", "error", _said(document.get("message")))
    message = document.get("message")
    if isinstance(message, str) and message.strip() and "documentation_url" in document:
        status = document.get("status")
        kind = _plain(message) + (f" (status {_plain(status)})" if status is not None else "")
        return ErrorBody("message", kind)
    errors = document.get("errors")
    if (isinstance(errors, list) and errors and isinstance(errors[0], dict)
            and isinstance(errors[0].get("message"), str)):
        return ErrorBody("errors[0].message", _plain(errors[0]["message"]))
    return None


def _keys_text(keys: Iterable[str]) -> str:
    names = sorted(keys)
    shown = [name if len(name) <= 40 else name[:39] + "…" for name in names[:_SHOWN_KEYS]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _likely_source(keys: frozenset[str], source: str) -> tuple[str, frozenset[str]] | None:
    """The other source whose own keys the document shares most, with those keys."""
    best: tuple[str, frozenset[str]] | None = None
    for other in QUOTA_SOURCES:
        if other == source:
            continue
        shared = keys & own_keys(other)
        if shared and (best is None or len(shared) > len(best[1])):
            best = (other, shared)
    return best


def check_document(document: Any, file: str, source: str) -> None:
    """Exit 2 (InputError) unless ``document`` can be a ``source`` payload.

    A document that is not an object at all is left to the source's parser, which names
    what it expected.
    """
    found = error_body(document)
    if found is not None:
        raise InputError(
            f"an error response, not a {source} document: {found.text()}; {_NOTHING_WRITTEN} "
            "(fetch it again once the request succeeds)", file=file, field=found.field)
    if not isinstance(document, dict):
        return
    keys = frozenset(key for key in document if isinstance(key, str))
    mine = own_keys(source)
    if keys & mine:
        return
    likely = _likely_source(keys, source)
    if likely is not None:
        other, shared = likely
        raise InputError(
            f"a {other} document ({_keys_text(shared)}), not a {source} one; "
            f"{_NOTHING_WRITTEN} (import it with `omniladder import {other}`)",
            file=file, field="the top level")
    what = (f"its keys: {_keys_text(keys)}" if keys else "it is an empty object")
    raise InputError(
        f"not a {source} document: it has none of its keys ({_keys_text(mine)}); {what}; "
        f"{_NOTHING_WRITTEN}", file=file, field="the top level")


def check_rollout(path: Path, shown: str) -> None:
    """A codex-sessions file must be a rollout: its first line one of Codex's JSON lines.

    Only the first non-blank line is read (a rollout's later lines are read as they come). A
    first line that is not JSON at all may be a whole pretty-printed document: when the file
    is small enough it is read as one, so a saved error body or another source's response is
    named as such. Anything else is left to the line reader.
    """
    from omniladder.inputs.files import open_input

    try:
        with open_input(path, shown) as stream:
            first = b""
            while not first.strip():
                first = stream.readline(_FIRST_LINE_BYTES)
                if not first:
                    return
    except (OSError, InputError):
        return  # the line reader says what is wrong with the file
    try:
        line = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, or holding an integer too long to read
        line = _whole_document(path)
    if isinstance(line, dict | list):
        check_document(line, shown, "codex-sessions")


def _whole_document(path: Path) -> Any:
    from omniladder.inputs.files import read_bytes

    try:
        if path.stat().st_size > _WHOLE_DOCUMENT_BYTES:
            return None
        return json.loads(read_bytes(path, str(path)))
    except (OSError, InputError, ValueError, RecursionError):
        return None


# --- the connection ------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceFit:
    """The providers (and auth types) one source serves, and the catalog file that says so."""

    importer: str
    providers: tuple[str, ...]
    file: str
    auth_types: tuple[str, ...] | None = None
    """None: connections of any auth type."""

    def serves(self, connection: FleetConnection) -> bool:
        return connection.provider in self.providers and (
            self.auth_types is None or connection.auth_type in self.auth_types)


def load_source_fit(window_files: Iterable[Path] = (),
                    include_shipped: bool = True) -> dict[str, SourceFit]:
    """Each source's served providers from the window-scope catalogs' ``[[sources]]``.

    Files are read in override order (shipped first): a later file's entry for an importer
    replaces an earlier one's.
    """
    from omniladder.inputs.documents import load_model
    from omniladder.inputs.scopes import window_catalog_paths
    from omniladder.scope_models import WindowScopeCatalog

    fits: dict[str, SourceFit] = {}
    for path, shown in window_catalog_paths(window_files, include_shipped):
        for entry in load_model(WindowScopeCatalog, path, shown).sources:
            fits[entry.importer] = SourceFit(entry.importer, tuple(entry.providers), shown,
                                             entry.auth_types)
    return fits


@dataclass(frozen=True)
class FleetConnection:
    id: str
    provider: str
    auth_type: str = ""


def check_connection(source: str, connection: FleetConnection,
                     fleet: Sequence[FleetConnection], fits: Mapping[str, SourceFit],
                     connections_file: str, *, force: bool = False) -> list[str]:
    """Exit 2 (UsageError on ``--connection``) when ``source`` does not serve the
    connection's provider, or its auth type (an API key carries no plan windows), unless
    ``force``; the notes to print otherwise."""
    fit = fits.get(source)
    if fit is None:
        return [f"no window catalog says which providers {source} serves ([[sources]]): "
                f"the provider of connection {connection.id!r} was not checked"]
    if fit.serves(connection):
        return []
    if connection.provider not in fit.providers:
        served = ", ".join(fit.providers)
        misfit = (f"connection {connection.id!r} is provider {connection.provider!r}, which "
                  f"{source} does not serve (it serves {served}: {fit.file} [[sources]])")
    else:
        served = ", ".join(fit.auth_types or ())
        misfit = (f"connection {connection.id!r} is auth_type {connection.auth_type!r}, "
                  f"whose connections carry no {source} telemetry (it describes "
                  f"{connection.provider} connections of auth_type {served}: {fit.file} "
                  "[[sources]])")
    if force:
        return [f"{misfit}; imported anyway (--force)"]
    fitting = [other.id for other in fleet if fit.serves(other)]
    if fitting:
        shown = ", ".join(fitting[:_SHOWN_KEYS])
        more = len(fitting) - _SHOWN_KEYS
        hint = (f"connections of {connections_file} that fit: {shown}"
                + (f" and {more} more" if more > 0 else ""))
    else:
        hint = (f"no connection of {connections_file} is of a provider {source} serves"
                if not any(other.provider in fit.providers for other in fleet) else
                f"no connection of {connections_file} is of a provider and auth_type "
                f"{source} serves")
    raise UsageError(f"{misfit}; {hint}; {_NOTHING_WRITTEN} (--force imports anyway)",
                     field="--connection")


# --- the instants --------------------------------------------------------------------------


def check_not_future(instant: datetime, now: datetime, *, file: str | None,
                     field: str) -> None:
    """Exit 2 when a reading's instant lies more than ``FUTURE_TOLERANCE`` after ``now``."""
    if instant - now <= FUTURE_TOLERANCE:
        return
    minutes = int(FUTURE_TOLERANCE.total_seconds() // 60)
    clock = timefmt.iso(now.replace(microsecond=0))
    message = (f"a reading at {timefmt.iso(instant)} is later than the clock ({clock}) by "
               f"more than {minutes} minutes: a reading cannot come from the future, and it "
               f"would move the quota file's taken_at forward for good; {_NOTHING_WRITTEN}")
    if file is None:
        raise UsageError(message, field=field)
    raise InputError(message, file=file, field=field)


OLDEST_READING = datetime(2000, 1, 1, tzinfo=UTC)
"""No quota telemetry is older: a reading before it is a clock reset, a file whose modification
time was lost (1970), or a writer's 0 or year 1 for "not given"."""


def check_plausible(reading: SourceReading, *, file: str | None, field: str) -> None:
    """Exit 2 when a reading's instant cannot be when it was taken: before 2000 (the Unix
    epoch and year 1 among them), while its windows reset in the present. A window reset
    further than the window's length after its reading is not refused: captures other
    tools publish carry such instants (docs/sources.md#fit), and the plan reads the reset
    as given."""
    checked = reading.checked_at
    if checked >= OLDEST_READING:
        return
    message = (f"a reading at {timefmt.iso(checked)} is before 2000: no quota telemetry is "
               "that old (a lost modification time, a clock reset, or a writer's 0 for \"not "
               f"given\"); {_NOTHING_WRITTEN}")
    if file is None:
        raise UsageError(message, field=field)
    raise InputError(message, file=file, field=field)
