"""`omniladder import SOURCE`: input files from a gateway's database, readings from telemetry.

`omniroute DB --out DIR` writes a whole input set; the quota sources (`claude-usage`,
`codex-sessions`, `copilot-user`, `gemini-quota`) merge one connection's readings into a
quota file through one shared path (`omniladder.sources.run`).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from omniladder.commands.common import (
    ConfigOpt,
    ConnectionsOpt,
    ModelsCatalogOpt,
    NoShippedOpt,
    WindowsCatalogOpt,
    gathering,
    refuse_overwriting,
    say,
    user_errors,
)
from omniladder.quota_sources import QUOTA_SOURCES, Reads
from omniladder.sources.request import ImportRequest

import_app = typer.Typer(
    name="import",
    help="Write omniladder input files from a gateway's own database (read-only), or merge "
    "quota readings from provider telemetry into a quota file.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@import_app.command("omniroute")
def omniroute(
    db: Annotated[Path, typer.Argument(
        metavar="DB",
        help="The OmniRoute SQLite database; opened read-only, credentials never read.",
        show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", "-o", metavar="DIR",
        help="Directory for connections.toml, quota.json and omniladder.toml, and the "
        "traffic ledger traffic.jsonl (created, or merged into: re-import adds nothing).",
        show_default=False)],
    since: Annotated[str, typer.Option(
        "--since", help="History to import: 'all', a duration back from the import instant "
        "(90m, 24h, 7d, 2w) or an RFC 3339 instant. The reading in force at that instant is "
        "always kept.")] = "7d",
    now: Annotated[str | None, typer.Option(
        "--now", metavar="RFC3339|now", help="The import instant (RFC 3339 with offset), "
        "written as the snapshot's taken_at; default: the current time.",
        show_default=False)] = None,
    group_seconds: Annotated[float, typer.Option(
        "--group-seconds", min=0, help="Snapshot rows of one connection this close to the "
        "first row of a group form one reading.")] = 2.0,
    confirmed_at: Annotated[str | None, typer.Option(
        "--confirmed-at", metavar="RFC3339|now",
        help="Opt-in: the gateway was still polling at this instant (at or before the import "
        "instant), so each connection with history gets one more reading there carrying its "
        "latest values. Default: readings keep their real created_at only.",
        show_default=False)] = None,
    models_catalog: ModelsCatalogOpt = None,
    windows_catalog: WindowsCatalogOpt = None,
    no_shipped_catalogs: NoShippedOpt = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Overwrite connections.toml, quota.json, omniladder.toml (and "
        "custom-models.toml) if they already exist in DIR. The traffic ledger is always "
        "merged into, never replaced: its events are kept, whatever importer wrote "
        "them.")] = False,
) -> None:
    """Import connections and quota history from an OmniRoute database."""
    with interruptible("omniroute") as outputs, user_errors():
        from omniladder.engine.autoid import is_clock_word, parse_instant_or_now
        from omniladder.inputs.catalogs import load_catalogs
        from omniladder.inputs.files import display_path
        from omniladder.inputs.ledger.merge import merge_lines_into
        from omniladder.inputs.scopes import load_window_scopes
        from omniladder.inputs.writing import make_directory, refuse_existing, write_files
        from omniladder.sources.omniroute.importer import import_omniroute, render_files
        from omniladder.sources.omniroute.options import (
            ImportOptions,
            check_group_seconds,
            parse_confirmed_at,
            parse_since,
        )

        instant = parse_instant_or_now(now if now is not None else "now", "--now")
        confirmed = (parse_confirmed_at(confirmed_at, instant) if confirmed_at is not None
                     else None)
        options = ImportOptions(now=instant, since=parse_since(since, instant),
                                group_seconds=check_group_seconds(group_seconds),
                                confirmed_at=confirmed,
                                traffic_until=None if now is None or is_clock_word(now)
                                else instant)
        catalogs = load_catalogs((), tuple(models_catalog or ()),
                                 include_shipped=not no_shipped_catalogs)
        scopes = load_window_scopes(tuple(windows_catalog or ()),
                                    include_shipped=not no_shipped_catalogs)
        from omniladder.inputs.catalogs import catalog_paths
        from omniladder.inputs.scopes import window_catalog_paths
        from omniladder.sources.omniroute.custom import CATALOG_NAME
        from omniladder.sources.omniroute.importer import (
            CONNECTIONS_NAME,
            QUOTA_NAME,
            SETTINGS_NAME,
        )
        from omniladder.sources.omniroute_traffic import TRAFFIC_NAME

        replaced = (CONNECTIONS_NAME, QUOTA_NAME, SETTINGS_NAME, CATALOG_NAME)
        refuse_overwriting([("--out", out / name) for name in (*replaced, TRAFFIC_NAME)], [
            ("the OmniRoute database", db),
            *((what, path) for what, paths in zip(
                ("a billing catalog", "a model catalog"),
                catalog_paths((), tuple(models_catalog or ()), not no_shipped_catalogs),
                strict=True) for path, _ in paths),
            *(("a window-scope catalog", path) for path, _ in window_catalog_paths(
                tuple(windows_catalog or ()), not no_shipped_catalogs))],
            makes_directories=True)
        if not force:  # checked before anything is read or written
            refuse_existing(out, replaced)
        outputs.watch(*(out / name for name in (*replaced, TRAFFIC_NAME)))
        shown = display_path(db)
        result = import_omniroute(db, shown, catalogs, scopes, options)
        traffic = result.traffic
        found = traffic is not None and traffic.found
        files = render_files(result, shown, TRAFFIC_NAME if found else None)
        merged = None
        if traffic is not None and found:
            make_directory(out)
            merged = merge_lines_into(out / TRAFFIC_NAME, traffic.keyed())
        written = write_files(out, files, force=True)
        for note in (*result.notes, *(traffic.notes if traffic is not None else ()),
                     *(merged.notes if merged is not None else ())):
            say(f"omniladder: note: {note}")
        counts = result.counts
        say(f"omniladder: imported {_count(counts['connections'], 'connection')} and "
            f"{_count(counts['readings'], 'reading')} "
            f"({_count(counts['connections_with_readings'], 'connection')} with quota history, "
            f"from {_count(counts['snapshot_rows'], 'snapshot row')})")
        if traffic is not None and merged is not None:
            left = traffic.left_out_total
            state = ("created" if merged.created
                     else "updated" if merged.written else "unchanged")
            say(f"omniladder: imported {_count(traffic.served, 'served event')} and "
                f"{_count(traffic.failed, 'failed attempt')} from "
                f"{_count(traffic.rows, 'call_logs row')}"
                f"{f' ({left} left out)' if left else ''}; "
                f"{_count(merged.added, 'event')} added, {merged.skipped} already in the "
                f"ledger → {merged.shown} ({state})")
        for path in written:
            typer.echo(display_path(path))
        if merged is not None:
            typer.echo(merged.shown)


# --- an interrupted import -----------------------------------------------------------------


class Outputs:
    """The files an import writes, each as it stood when the import named it, so that an
    interrupted import says truly what it left: every file is replaced whole
    (``inputs.writing.write_atomic``: a temporary file beside it, renamed over it, removed
    on any interruption), so each is either as it was or written whole."""

    def __init__(self) -> None:
        self._before: dict[Path, tuple[int, ...] | None] = {}

    def watch(self, *paths: Path) -> None:
        for path in paths:
            self._before.setdefault(path, _identity(path))

    def said(self) -> str:
        """What the interruption left, in one sentence."""
        from omniladder.inputs.files import display_path

        now = {path: _identity(path) for path in self._before}
        kept = [display_path(p) for p, was in self._before.items()
                if was is not None and now[p] == was]
        absent = [display_path(p) for p, was in self._before.items()
                  if was is None and now[p] is None]
        done = [display_path(p) for p, was in self._before.items() if now[p] != was]
        if not self._before:
            return "nothing was written"
        parts = []
        if kept:
            parts.append(f"{', '.join(kept)} {'was' if len(kept) == 1 else 'were'} left as "
                         f"{'it was' if len(kept) == 1 else 'they were'}")
        if absent:
            parts.append(f"{', '.join(absent)} {'was' if len(absent) == 1 else 'were'} not "
                         "created")
        if done:
            parts.append(f"{', '.join(done)} had already been written whole")
        return "; ".join(parts) + " (a file is only ever replaced whole)"


def _identity(path: Path) -> tuple[int, ...] | None:
    """What tells a replaced file from the one before it (a rename gives a new inode)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


_TERMINATED = 143
"""The status cli.py's SIGTERM handler raises SystemExit with (128 + 15)."""


@contextlib.contextmanager
def interruptible(source: str) -> Iterator[Outputs]:
    """Ctrl-C (or SIGTERM) during an import: one line saying the import was interrupted
    and what it left of the files it writes, then the shell's status (130, or 143)."""
    outputs = Outputs()
    try:
        yield outputs
    except KeyboardInterrupt:
        say(f"omniladder: {source}: import interrupted; {outputs.said()}")
        raise typer.Exit(130) from None
    except SystemExit as stop:
        if stop.code == _TERMINATED:
            say(f"omniladder: {source}: import interrupted; {outputs.said()}")
        raise


# --- quota sources: telemetry an operator already has, merged into a quota file ------------

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from omniladder.sources.common import SourceReading
    from omniladder.sources.run import SnapshotParser

SnapshotFilesArg = Annotated[list[Path], typer.Argument(
    metavar="FILE...", help="Saved JSON responses; '-' reads standard input.",
    show_default=False)]
AtOpt = Annotated[str | None, typer.Option(
    "--at", metavar="RFC3339|now", help="When the response was taken (RFC 3339 with offset,"
    " or 'now'); "
    "default: each file's modification time, the current time for standard input.",
    show_default=False)]

_IMPORT_SHARED: tuple[tuple[str, Any, object], ...] = (
    ("connection", Annotated[str, typer.Option(
        "--connection", metavar="ID", help="The connection these readings are of (its id in "
        "the connections file).", show_default=False)], inspect.Parameter.empty),
    ("quota", Annotated[Path | None, typer.Option(
        "--quota", metavar="FILE", help="Quota file (.json or .toml) to create or merge into; "
        "default: the settings file's [inputs] quota.", show_default=False)], None),
    ("config", ConfigOpt, None),
    ("connections", ConnectionsOpt, None),
    ("windows_catalog", WindowsCatalogOpt, None),
    ("models_catalog", ModelsCatalogOpt, None),
    ("no_shipped_catalogs", NoShippedOpt, False),
    ("force", Annotated[bool, typer.Option(
        "--force", help="Import even onto a connection whose provider this source does not "
        "serve (the window catalog's [[sources]] table says which it serves).")], False),
)


def _import_request(kwargs: dict[str, Any]) -> ImportRequest:
    return ImportRequest(
        connection_id=kwargs.pop("connection"), quota=kwargs.pop("quota"),
        config=kwargs.pop("config"), connections=kwargs.pop("connections"),
        windows_catalogs=tuple(kwargs.pop("windows_catalog") or ()),
        models_catalogs=tuple(kwargs.pop("models_catalog") or ()),
        no_shipped_catalogs=kwargs.pop("no_shipped_catalogs"), force=kwargs.pop("force"))


with_import_options = gathering(_IMPORT_SHARED, "request", _import_request)
"""Give a source command the options every source takes, gathered in ``request``."""


def _import(source: str, request: ImportRequest,
            readings: Callable[[], Iterable[SourceReading]],
            sources: Callable[[], Iterable[tuple[str, Path]]],
            notes: Sequence[str] = ()) -> None:
    """The one edge of every source: resolve and fit, parse, merge, then talk on stderr.

    ``sources`` are the telemetry files the readings come from: the quota file merged into
    must be none of them, nor any other file the import reads. ``notes`` is what the source
    says beside its readings, filled while they are read."""
    with interruptible(source) as outputs, user_errors():
        from omniladder.inputs.files import display_path
        from omniladder.sources.run import import_readings, resolve_target

        target = resolve_target(request, source)
        outputs.watch(target.quota)
        refuse_overwriting([("--quota", target.quota)], [*target.read, *sources()])
        outcome = import_readings(target, readings(), notes)
        for note in target.notes:
            say(f"omniladder: note: {note}")
        merged = outcome.merge
        shown = display_path(merged.path)
        state = ("created" if merged.created
                 else "updated" if merged.written else "unchanged")
        say(f"omniladder: {source}: {_count(merged.added, 'reading')} added, "
            f"{merged.skipped} skipped as identical, for connection {target.connection_id!r} "
            f"→ {shown} ({state})")
        if outcome.parsed == 0:
            say(f"omniladder: note: the {source} input held no quota reading")
        for note in outcome.notes():
            say(f"omniladder: note: {note}")
        typer.echo(shown)


def _import_snapshots(source: str, files: list[Path], at: str | None, request: ImportRequest,
                      parser: Callable[[], SnapshotParser]) -> None:
    def readings() -> Iterable[SourceReading]:
        from omniladder.engine.autoid import parse_instant_or_now
        from omniladder.sources.run import parse_snapshots, read_snapshots

        instant = parse_instant_or_now(at, "--at") if at is not None else None
        return parse_snapshots(read_snapshots(files, instant), parser(), source)

    _import(source, request, readings, lambda: [("a FILE argument", path) for path in files])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _responses_command(source: str, module: str) -> Callable[..., None]:
    """The import command of a source read from saved JSON responses (``module.parse``)."""
    @with_import_options
    def command(files: SnapshotFilesArg, *, request: ImportRequest,
                at: AtOpt = None) -> None:
        def parser() -> SnapshotParser:
            parse: SnapshotParser = importlib.import_module(module).parse
            return parse

        _import_snapshots(source, files, at, request, parser)

    return command


def _rollouts_command(source: str, module: str) -> Callable[..., None]:
    """The import command of a source read from Codex CLI rollout files (``module``'s
    ``find_rollouts`` and ``RolloutReader``)."""
    @with_import_options
    def command(
        paths: Annotated[list[Path], typer.Argument(
            metavar="PATH...", help="Codex CLI rollout-*.jsonl files, or folders searched for "
            "them (e.g. ~/.codex/sessions).", show_default=False)],
        *, request: ImportRequest,
    ) -> None:
        notes: list[str] = []
        found: list[Any] = []

        def sources() -> list[tuple[str, Path]]:
            from omniladder.inputs.files import display_path

            found[:] = importlib.import_module(module).find_rollouts(
                (path, display_path(path)) for path in paths)
            return [("a Codex rollout", rollout.path) for rollout in found]

        def readings() -> Iterable[SourceReading]:
            from omniladder.sources.fit import check_rollout
            from omniladder.sources.run import within_clock

            reader = importlib.import_module(module).RolloutReader(notes)
            for rollout in found:
                check_rollout(rollout.path, rollout.shown)
                yield from within_clock(reader.read(rollout), rollout.shown, "timestamp")
            reader.finish()

        _import(source, request, readings, sources, notes)

    return command


_COMMANDS: dict[Reads, Callable[[str, str], Callable[..., None]]] = {
    "responses": _responses_command, "rollouts": _rollouts_command}
"""The import command of each kind of quota source (``QuotaSourceEntry.reads``)."""

for _source, _entry in QUOTA_SOURCES.items():
    import_app.command(_source, help=_entry.help)(_COMMANDS[_entry.reads](_source, _entry.module))


# --- traffic sources: a gateway's request log, merged into a traffic ledger ---------------


@import_app.command("litellm-spend")
def litellm_spend(
    source: Annotated[str, typer.Argument(
        metavar="SOURCE", help="LiteLLM's database as a postgresql:// URL (read-only, "
        "streamed; needs the extra omniladder[postgres]), or a JSON file saved from the "
        "proxy's GET /spend/logs.", show_default=False)],
    traffic: Annotated[Path, typer.Option(
        "--traffic", metavar="FILE", help="The JSONL traffic ledger to create or merge "
        "into (re-import adds nothing).", show_default=False)],
    since: Annotated[str, typer.Option(
        "--since", help="History to import: 'all', a duration back from now (90m, 24h, 7d, "
        "2w) or an RFC 3339 instant.")] = "7d",
    map_file: Annotated[Path | None, typer.Option(
        "--map", metavar="FILE", help="The export map (export litellm --map): rows without "
        "an exported model_id join the one connection routed at their api_base that serves "
        "their model.", show_default=False)] = None,
    config: ConfigOpt = None,
    connections: ConnectionsOpt = None,
    models_catalog: ModelsCatalogOpt = None,
    no_shipped_catalogs: NoShippedOpt = False,
) -> None:
    """Import LiteLLM's spend logs (one row per request) into a traffic ledger."""
    with interruptible("litellm-spend") as outputs, user_errors():
        from omniladder.analyses.export.litellm import parse_deployment_id
        from omniladder.analyses.export.routes import load_routes
        from omniladder.analyses.export.source import managed_name
        from omniladder.engine.autoid import all_auto_ids, parse_auto_id, parse_instant_or_now
        from omniladder.inputs.files import display_path, read_bytes
        from omniladder.inputs.ledger.merge import merge_into, merge_lines_into
        from omniladder.sources import litellm_spend as spend
        from omniladder.sources.omniroute.options import parse_since

        instant = parse_instant_or_now("now", "--now")
        start = parse_since(since, instant)
        database = spend.is_postgres_url(source)
        shown = spend.shown_url(source) if database else display_path(Path(source))
        pool = spend.libpq_url(source).note() if database else None
        if pool is not None:
            say(f"omniladder: note: {pool}")
        fleet, read = spend.load_fleet(config, connections, tuple(models_catalog or ()),
                                       no_shipped_catalogs)
        if map_file is not None:
            read.append(("the --map file", map_file))
        if not database:
            read.append(("the SOURCE file", Path(source)))
        refuse_overwriting([("--traffic", traffic)], read)
        outputs.watch(traffic)
        routes = load_routes(map_file) if map_file is not None else {}
        joiner = spend.Joiner(
            parse_deployment_id, {managed_name(parse_auto_id(text)): text
                                  for text in all_auto_ids()},
            [spend.Route(route.id, route.model_prefix, route.api_base)
             for route in routes.values()], fleet)
        found = spend.SpendImport()
        if database:
            merged = merge_lines_into(traffic, spend.database_lines(
                spend.postgres_batches(source, start), shown, joiner, found, start))
        else:
            rows = spend.json_rows(read_bytes(Path(source), shown), shown)
            merged = merge_into(traffic, spend.events(rows, shown, joiner, found, start))
        for note in (*merged.notes, *found.notes()):
            say(f"omniladder: note: {note}")
        state = ("created" if merged.created
                 else "updated" if merged.written else "unchanged")
        say(f"omniladder: litellm-spend: {_count(found.rows, 'row')} read from {shown} "
            f"({found.served} served, {found.failed} failed"
            f"{f', {found.before_since} before --since' if found.before_since else ''}); "
            f"{_count(merged.added, 'event')} added, {merged.skipped} already in the ledger "
            f"→ {merged.shown} ({state})")
        typer.echo(merged.shown)
