"""What every ``omniladder import <source>`` does around its parser, written once.

1. Find the connection (``--connection``) in the connections file, and its models (its own
   ``models``, else the model catalog's models for its provider, as the planner does).
2. Find the quota file (``--quota``, else the settings file's ``[inputs] quota``).
3. Scope each parsed reading's windows through the window-scope catalog and merge the
   readings into the quota file (``merge``).

No typer and no rich here: the command edge only turns options into an ``ImportRequest``
and an ``ImportOutcome`` into talk.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omniladder.errors import InputError, UsageError
from omniladder.scopes import WindowScopes
from omniladder.sources.common import ScopeReport, SourceReading, reading_document
from omniladder.sources.merge import MergeOutcome, merge_readings
from omniladder.sources.request import ImportRequest

STDIN = "-"

SnapshotParser = Callable[[Any, str, datetime], SourceReading]
"""A snapshot source's ``parse(document, file, checked_at)``."""


@dataclass(frozen=True)
class Target:
    """Where readings go, and what a window of this connection can limit."""

    connection_id: str
    provider: str
    models: tuple[str, ...]
    quota: Path
    scopes: WindowScopes
    read: tuple[tuple[str, Path], ...] = ()
    """The files read to find all this, shipped catalogs included: (what it is, path)."""


@dataclass
class ImportOutcome:
    merge: MergeOutcome
    parsed: int
    empty: int
    """Readings that kept no window, status or overage after scoping: nothing to write."""
    report: ScopeReport = field(default_factory=ScopeReport)

    def notes(self) -> list[str]:
        out = self.report.notes()
        if self.empty:
            out.append(f"{self.empty} reading{'s' if self.empty != 1 else ''} kept no window "
                       "and no overage after scoping, and were not written")
        return out


def resolve_target(request: ImportRequest) -> Target:
    """The connection, its models and the quota file, from the options and settings."""
    from omniladder.loading import (
        catalog_paths,
        display_path,
        find_settings,
        load_catalogs,
        load_model,
        load_settings,
        resolve_files,
    )
    from omniladder.models import ConnectionsFile
    from omniladder.scopes import load_window_scopes, window_catalog_paths

    settings_path = find_settings(request.config)
    settings = load_settings(settings_path)
    files = resolve_files(settings_path, settings, connections=request.connections,
                          quota=request.quota, models_catalogs=request.models_catalogs,
                          no_shipped_catalogs=request.no_shipped_catalogs,
                          windows_catalogs=request.windows_catalogs)
    if files.connections is None:
        raise UsageError(
            "no connections file: pass --connections, or --config with [inputs] connections "
            "(or run where an omniladder.toml is)")
    if files.quota is None:
        raise UsageError("no quota file to write: pass --quota FILE, or --config with "
                         "[inputs] quota", field="--quota")
    shown = display_path(files.connections)
    fleet = load_model(ConnectionsFile, files.connections, shown).connections
    by_id = {connection.id: connection for connection in fleet}
    connection = by_id.get(request.connection_id)
    if connection is None:
        close = difflib.get_close_matches(request.connection_id, list(by_id), n=3, cutoff=0.5)
        hint = (f"; closest: {', '.join(close)}" if close
                else f"; it has {len(by_id)} connection{'s' if len(by_id) != 1 else ''}")
        raise UsageError(f"no connection {request.connection_id!r} in {shown}{hint}",
                         field="--connection")
    if connection.models is not None:
        models = tuple(dict.fromkeys(connection.models))
    else:
        catalogs = load_catalogs((), files.model_catalogs,
                                 include_shipped=not files.no_shipped_catalogs)
        models = catalogs.models_of(connection.provider)
    scopes = load_window_scopes(files.window_catalogs,
                                include_shipped=not files.no_shipped_catalogs)
    read = [("the settings file", settings_path)] if settings_path is not None else []
    read.append(("the connections file", files.connections))
    if connection.models is None:
        billing, model = catalog_paths((), files.model_catalogs, not files.no_shipped_catalogs)
        read += [("a billing catalog", path) for path, _ in billing]
        read += [("a model catalog", path) for path, _ in model]
    read += [("a window-scope catalog", path) for path, _ in window_catalog_paths(
        files.window_catalogs, not files.no_shipped_catalogs)]
    return Target(connection.id, connection.provider, models, files.quota, scopes,
                  tuple(read))


def import_readings(target: Target, readings: Iterable[SourceReading]) -> ImportOutcome:
    """Scope the readings to the connection's models and merge them into the quota file."""
    report = ScopeReport()
    documents: list[dict[str, Any]] = []
    parsed = empty = 0
    for reading in readings:
        parsed += 1
        document = reading_document(target.connection_id, target.provider, target.models,
                                    reading, target.scopes, report)
        if not ({"windows", "status", "overage"} & document.keys()):
            empty += 1
            continue
        documents.append(document)
    merged = merge_readings(target.quota, documents)
    return ImportOutcome(merged, parsed, empty, report)


# --- snapshot files: one JSON response each ------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    raw: bytes
    shown: str
    checked_at: datetime


def read_snapshots(files: Sequence[Path], at: datetime | None,
                   stdin: Callable[[], bytes] | None = None,
                   clock: Callable[[], datetime] | None = None) -> Iterator[Snapshot]:
    """Each FILE's bytes and its instant: ``at``, else the file's modification time.

    ``-`` reads standard input, stamped with the clock (it has no modification time).
    """
    from omniladder.loading import display_path, read_bytes

    if sum(1 for path in files if str(path) == STDIN) > 1:
        raise UsageError("standard input ('-') can be read only once", field="FILE")
    for path in files:
        if str(path) == STDIN:
            raw = (stdin or _read_stdin)()
            now = (clock or _now)()
            yield Snapshot(raw, "<stdin>", at or now.replace(microsecond=0))
            continue
        shown = display_path(path)
        raw = read_bytes(path, shown)
        try:
            mtime = path.stat().st_mtime
        except OSError as exc:
            raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
        stamp = at or datetime.fromtimestamp(int(mtime), UTC)
        yield Snapshot(raw, shown, stamp)


def parse_snapshots(snapshots: Iterable[Snapshot],
                    parse: SnapshotParser
                    ) -> Iterator[SourceReading]:
    """Each snapshot's reading, through a source's ``parse(document, file, checked_at)``."""
    from omniladder.sources.fields import load_json

    for snapshot in snapshots:
        yield parse(load_json(snapshot.raw, snapshot.shown), snapshot.shown,
                    snapshot.checked_at)


def _read_stdin() -> bytes:
    from omniladder.loading import read_stdin

    return read_stdin()


def _now() -> datetime:
    return datetime.now(UTC)


