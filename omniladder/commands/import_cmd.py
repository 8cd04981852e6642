"""`omniladder import omniroute DB --out DIR`: a gateway's database into input files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    ModelsCatalogOpt,
    NoShippedOpt,
    WindowsCatalogOpt,
    say,
    user_errors,
)

import_app = typer.Typer(
    name="import",
    help="Write omniladder input files from a gateway's own database (read-only).",
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
        help="Directory for connections.toml, quota.json and omniladder.toml.",
        show_default=False)],
    since: Annotated[str, typer.Option(
        "--since", help="History to import: 'all', a duration back from the import instant "
        "(90m, 24h, 7d, 2w) or an RFC 3339 instant. The reading in force at that instant is "
        "always kept.")] = "7d",
    now: Annotated[str | None, typer.Option(
        "--now", help="The import instant (RFC 3339 with offset), written as the snapshot's "
        "taken_at; default: the current time.", show_default=False)] = None,
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
        "--force", help="Overwrite files that already exist in DIR.")] = False,
) -> None:
    """Import connections and quota history from an OmniRoute database."""
    with user_errors():
        from datetime import UTC, datetime

        from omniladder.autoid import parse_instant
        from omniladder.loading import display_path, load_catalogs
        from omniladder.scopes import load_window_scopes
        from omniladder.sources.omniroute import (
            ImportOptions,
            import_omniroute,
            parse_confirmed_at,
            parse_since,
            render_files,
        )
        from omniladder.writing import write_files

        instant = parse_instant(now) if now else datetime.now(UTC).replace(microsecond=0)
        confirmed = parse_confirmed_at(confirmed_at, instant) if confirmed_at else None
        options = ImportOptions(now=instant, since=parse_since(since, instant),
                                group_seconds=group_seconds, confirmed_at=confirmed)
        catalogs = load_catalogs((), tuple(models_catalog or ()),
                                 include_shipped=not no_shipped_catalogs)
        scopes = load_window_scopes(tuple(windows_catalog or ()),
                                    include_shipped=not no_shipped_catalogs)
        shown = display_path(db)
        result = import_omniroute(db, shown, catalogs, scopes, options)
        written = write_files(out, render_files(result, shown), force=force)
        for note in result.notes:
            say(f"omniladder: note: {note}")
        counts = result.counts
        say(f"omniladder: imported {counts['connections']} connections and "
            f"{counts['readings']} readings ({counts['connections_with_readings']} connections "
            f"with quota history, from {counts['snapshot_rows']} snapshot rows)")
        for path in written:
            typer.echo(display_path(path))
