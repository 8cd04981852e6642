"""`omniladder quota prune`: take readings out of a quota file, atomically.

The way out of R6.4's hold when a window really reset early (a plan upgrade, a provider's
goodwill reset), and of a quota file that only grows. It prints every reading it removes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import ConfigOpt, refuse_overwriting, say, user_errors

quota_app = typer.Typer(
    name="quota",
    help="Maintain a quota file: remove readings that no longer tell the truth.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@quota_app.command("prune")
def prune(
    connection: Annotated[list[str] | None, typer.Option(
        "--connection", metavar="ID", help="Only this connection's readings (repeat for "
        "more); default: every connection's.", show_default=False)] = None,
    before: Annotated[str | None, typer.Option(
        "--before", metavar="RFC3339|now",
        help="Remove the readings checked before this instant (with --after: between the "
        "two).", show_default=False)] = None,
    after: Annotated[str | None, typer.Option(
        "--after", metavar="RFC3339|now",
        help="Remove the readings checked after this instant (a clock that ran ahead; with "
        "--before: between the two).", show_default=False)] = None,
    quota: Annotated[Path | None, typer.Option(
        "--quota", metavar="FILE", help="The quota file; default: the settings file's "
        "[inputs] quota.", show_default=False)] = None,
    config: ConfigOpt = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print what would be removed; write nothing.")] = False,
    emptying: Annotated[bool, typer.Option(
        "--all", help="Allow removing every reading of a connection (it then plans as quota "
        "unknown); without it such a prune is exit 2 naming each connection.")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Rewrite a TOML quota file even though its comments and its own "
        "spelling are lost (without it such a prune is exit 2 saying what would be "
        "lost).")] = False,
) -> None:
    """Remove a connection's readings before, after or between instants from a quota file."""
    with user_errors():
        from datetime import datetime

        from omniladder import timefmt
        from omniladder.engine.autoid import parse_instant_or_now
        from omniladder.errors import UsageError
        from omniladder.inputs.files import display_path
        from omniladder.inputs.input_set import find_settings, load_settings, resolve_files
        from omniladder.sources.merge import prune_readings

        def instant(text: str | None, what: str) -> datetime | None:
            return parse_instant_or_now(text, what) if text is not None else None

        path = quota
        if path is None:
            settings_path = find_settings(config)
            path = resolve_files(settings_path, load_settings(settings_path)).quota
            if settings_path is not None:  # the quota file is updated in place, on purpose
                refuse_overwriting([("--quota", path)], [("the settings file", settings_path)])
        if path is None:
            raise UsageError("no quota file: pass --quota FILE, or --config with [inputs] "
                             "quota", field="--quota")
        outcome = prune_readings(path, tuple(connection or ()), instant(before, "--before"),
                                 instant(after, "--after"), dry_run=dry_run,
                                 emptying=emptying, force=force)
        shown = display_path(path)
        verb = "would remove" if dry_run else "removed"
        for item in outcome.removed:
            typer.echo(f"{verb} readings[{item.index}]: {item.connection} at "
                       f"{timefmt.iso(item.checked_at)}")
        count = len(outcome.removed)
        noun = "reading" if count == 1 else "readings"
        if not count:
            say(f"omniladder: {shown}: no reading matched; nothing written")
        elif dry_run:
            say(f"omniladder: {shown}: {count} {noun} would be removed, {outcome.kept} kept; "
                "nothing written (--dry-run)")
        else:
            taken = (f"; taken_at {timefmt.iso(outcome.taken_at)}"
                     if outcome.taken_at is not None else "")
            say(f"omniladder: {shown}: {count} {noun} removed, {outcome.kept} kept{taken}")
