"""What every ``omniladder import <source>`` does around its parser, written once.

1. Find the connection (``--connection``) in the connections file, and its models (its own
   ``models``, else the model catalog's models for its provider, as the planner does); the
   source must serve its provider (``fit``), unless forced.
2. Find the quota file (``--quota``, else the settings file's ``[inputs] quota``).
3. Check that each document fits its source and that no reading lies in the future
   (``fit``), then scope each parsed reading's windows through the window-scope catalog and
   merge the readings into the quota file (``merge``). Every check runs before the merge: a
   misfit writes nothing.

No typer and no rich here: the command edge only turns options into an ``ImportRequest``
and an ``ImportOutcome`` into talk.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniladder.errors import InputError, UsageError
from omniladder.inputs.scopes import WindowScopes
from omniladder.sources import fit
from omniladder.sources.common import ScopeReport, SourceReading, reading_document
from omniladder.sources.merge import MergeOutcome, merge_readings
from omniladder.sources.request import ImportRequest

if TYPE_CHECKING:
    from omniladder.inputs.input_set import InputFiles

STDIN = "-"

SnapshotParser = Callable[[Any, str, datetime], SourceReading]
"""A snapshot source's ``parse(document, file, checked_at)``."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where readings go, and what a window of this connection can limit."""

    connection_id: str
    provider: str
    models: tuple[str, ...]
    quota: Path
    scopes: WindowScopes
    notes: tuple[str, ...] = ()
    """What the fit check has to say (a forced misfit, an unchecked source)."""
    read: tuple[tuple[str, Path], ...] = ()
    """The files read to find all this, shipped catalogs included: (what it is, path)."""


@dataclass(kw_only=True)
class ImportOutcome:
    merge: MergeOutcome
    parsed: int
    empty: int
    """Readings that kept no window, status or overage after scoping: nothing to write."""
    report: ScopeReport = field(default_factory=ScopeReport)
    source_notes: list[str] = field(default_factory=list)
    """What the source itself said while it was read (a money cap not read as a window, a
    torn last line skipped), each text once, with a count when it repeated."""

    def notes(self) -> list[str]:
        out = self.report.notes() + self.source_notes
        if self.empty:
            out.append("1 reading kept no window and no overage after scoping, and was not "
                       "written" if self.empty == 1 else
                       f"{self.empty} readings kept no window and no overage after scoping, "
                       "and were not written")
        return out


def catalogs_read(files: InputFiles) -> list[tuple[str, Path]]:
    """The billing and model catalogs an import reads to find a connection's models when
    it lists none, as ``refuse_overwriting`` takes them."""
    from omniladder.inputs.catalogs import catalog_paths

    billing, model = catalog_paths((), files.model_catalogs, not files.no_shipped_catalogs)
    return ([("a billing catalog", path) for path, _ in billing]
            + [("a model catalog", path) for path, _ in model])


def resolve_target(request: ImportRequest, source: str | None = None) -> Target:
    """The connection, its models and the quota file, from the options and settings.

    With ``source``, the connection's provider must be one the source serves (SPEC §6).
    """
    from omniladder.inputs.catalogs import load_catalogs
    from omniladder.inputs.documents import load_model
    from omniladder.inputs.files import display_path
    from omniladder.inputs.input_set import (
        find_settings,
        load_settings,
        named_by_settings,
        resolve_files,
    )
    from omniladder.inputs.scopes import load_window_scopes, window_catalog_paths
    from omniladder.models import ConnectionsFile

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
    with named_by_settings(files):
        fleet = load_model(ConnectionsFile, files.connections, shown).connections
    by_id = {connection.id: connection for connection in fleet}
    connection = by_id.get(request.connection_id)
    if connection is None:
        close = difflib.get_close_matches(request.connection_id, list(by_id), n=3, cutoff=0.5)
        hint = (f"; closest: {', '.join(close)}" if close
                else f"; it has {len(by_id)} connection{'s' if len(by_id) != 1 else ''}")
        raise UsageError(f"no connection {request.connection_id!r} in {shown}{hint}",
                         field="--connection")
    notes: list[str] = []
    if source is not None:
        fits = fit.load_source_fit(files.window_catalogs,
                                   include_shipped=not files.no_shipped_catalogs)
        notes = fit.check_connection(
            source, fit.FleetConnection(connection.id, connection.provider,
                                        connection.auth_type),
            [fit.FleetConnection(c.id, c.provider, c.auth_type) for c in fleet], fits, shown,
            force=request.force)
    with named_by_settings(files):
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
        read += catalogs_read(files)
    read += [("a window-scope catalog", path) for path, _ in window_catalog_paths(
        files.window_catalogs, not files.no_shipped_catalogs)]
    return Target(connection_id=connection.id, provider=connection.provider, models=models,
                  quota=files.quota, scopes=scopes,
                  notes=tuple(notes), read=tuple(read))


def import_readings(target: Target, readings: Iterable[SourceReading],
                    notes: Sequence[str] = ()) -> ImportOutcome:
    """Scope the readings to the connection's models and merge them into the quota file.

    ``notes`` is what the source says beside its readings; it is read once every reading
    has been, so a source may add to it while it is read."""
    report = ScopeReport()
    documents: list[dict[str, Any]] = []
    said: dict[str, int] = {}
    parsed = empty = 0
    for reading in readings:
        parsed += 1
        for note in reading.notes:
            said[note] = said.get(note, 0) + 1
        document = reading_document(target.connection_id, target.provider, target.models,
                                    reading, target.scopes, report)
        if not ({"windows", "status", "overage"} & document.keys()):
            empty += 1
            continue
        documents.append(document)
    for note in notes:
        said[note] = said.get(note, 0) + 1
    merged = merge_readings(target.quota, documents)
    return ImportOutcome(merge=merged, parsed=parsed, empty=empty, report=report,
                         source_notes=[note if n == 1 else f"{note} (×{n})"
                                       for note, n in said.items()])


# --- snapshot files: one JSON response each ------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    raw: bytes
    shown: str
    checked_at: datetime
    stamped_by: str = "--at"
    """Where ``checked_at`` comes from: ``--at``, the file's modification time, the clock."""


def read_snapshots(files: Sequence[Path], at: datetime | None,
                   stdin: Callable[[], bytes] | None = None,
                   clock: Callable[[], datetime] | None = None) -> Iterator[Snapshot]:
    """Each FILE's bytes and its instant: ``at``, else the file's modification time.

    ``-`` reads standard input, stamped with the clock (it has no modification time).
    """
    from omniladder.inputs.files import display_path, read_bytes

    if sum(1 for path in files if str(path) == STDIN) > 1:
        raise UsageError("standard input ('-') can be read only once", field="FILE")
    for path in files:
        if str(path) == STDIN:
            raw = (stdin or _read_stdin)()
            now = (clock or _now)()
            yield Snapshot(raw, "<stdin>", at or now.replace(microsecond=0),
                           "--at" if at else "clock")
            continue
        shown = display_path(path)
        raw = read_bytes(path, shown)
        try:
            mtime = path.stat().st_mtime
        except OSError as exc:
            raise InputError(f"cannot read file ({exc.strerror})", file=shown) from None
        stamp = at or datetime.fromtimestamp(int(mtime), UTC)
        yield Snapshot(raw, shown, stamp, "--at" if at else MODIFICATION_TIME)


MODIFICATION_TIME = "modification time"


def parse_snapshots(snapshots: Iterable[Snapshot],
                    parse: SnapshotParser, source: str | None = None,
                    clock: Callable[[], datetime] | None = None
                    ) -> Iterator[SourceReading]:
    """Each snapshot's reading, through a source's ``parse(document, file, checked_at)``.

    With ``source``, each document must fit that source first (``fit.check_document``); no
    snapshot may be stamped later than the clock (``fit.check_not_future``).
    """
    from omniladder.sources.fields import load_json

    now = (clock or _now)()
    for snapshot in snapshots:
        document = load_json(snapshot.raw, snapshot.shown)
        if source is not None:
            fit.check_document(document, snapshot.shown, source)
        where = None if snapshot.stamped_by == "--at" else snapshot.shown
        fit.check_not_future(snapshot.checked_at, now, file=where, field=snapshot.stamped_by)
        reading = parse(document, snapshot.shown, snapshot.checked_at)
        fit.check_plausible(reading, file=where, field=snapshot.stamped_by)
        yield reading


def within_clock(readings: Iterable[SourceReading], file: str, field: str,
                 clock: Callable[[], datetime] | None = None) -> Iterator[SourceReading]:
    """The readings of one file, none later than the clock (``fit.check_not_future``)."""
    now = (clock or _now)()
    for reading in readings:
        fit.check_not_future(reading.checked_at, now, file=file, field=field)
        fit.check_plausible(reading, file=file, field=field)
        yield reading


def _read_stdin() -> bytes:
    from omniladder.inputs.files import read_stdin

    return read_stdin()


def _now() -> datetime:
    return datetime.now(UTC)


