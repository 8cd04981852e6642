"""`omniladder catalog show|check`: the effective curated catalogs, and their lint."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from omniladder.commands.common import (
    CatalogOpt,
    ConfigOpt,
    ConnectionsOpt,
    ModelsCatalogOpt,
    NoShippedOpt,
    WindowsCatalogOpt,
    answer_is_no,
    human_view,
    refuse_overwriting,
    say,
    user_errors,
    write_atomic,
)

catalog_app = typer.Typer(
    name="catalog",
    help="Show and lint the curated billing, model and quota-window scope catalogs.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON document.")]


def _files(config: Path | None, connections: Path | None, catalog: list[Path] | None,
           models_catalog: list[Path] | None, no_shipped_catalogs: bool,
           windows_catalog: list[Path] | None) -> tuple[Any, Any]:
    """(settings, InputFiles) as plan would resolve them."""
    from omniladder.inputs.input_set import find_settings, load_settings, resolve_files

    settings_path = find_settings(config)
    settings = load_settings(settings_path)
    files = resolve_files(settings_path, settings, connections=connections,
                          catalogs=tuple(catalog or ()),
                          models_catalogs=tuple(models_catalog or ()),
                          no_shipped_catalogs=no_shipped_catalogs,
                          windows_catalogs=tuple(windows_catalog or ()))
    return settings, files


@catalog_app.command("show")
def show(
    config: ConfigOpt = None,
    catalog: CatalogOpt = None,
    models_catalog: ModelsCatalogOpt = None,
    windows_catalog: WindowsCatalogOpt = None,
    no_shipped_catalogs: NoShippedOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """List the effective billing, model and window-scope catalogs, each entry with its file."""
    with user_errors():
        import json

        from omniladder.inputs.catalogs import load_catalogs
        from omniladder.inputs.scopes import load_window_scopes
        from omniladder.rendering.catalog_view import catalog_document, render_catalog_table

        settings, files = _files(config, None, catalog, models_catalog, no_shipped_catalogs,
                                 windows_catalog)
        catalogs = load_catalogs(files.billing_catalogs, files.model_catalogs,
                                 include_shipped=not files.no_shipped_catalogs)
        windows = load_window_scopes(files.window_catalogs,
                                     include_shipped=not files.no_shipped_catalogs)
        if json_out:
            sys.stdout.write(json.dumps(catalog_document(catalogs, settings.tiers, windows))
                             + "\n")
        else:
            render_catalog_table(catalogs, settings.tiers, sys.stdout, windows)


@catalog_app.command("check")
def check(
    config: ConfigOpt = None,
    connections: ConnectionsOpt = None,
    catalog: CatalogOpt = None,
    models_catalog: ModelsCatalogOpt = None,
    windows_catalog: WindowsCatalogOpt = None,
    no_shipped_catalogs: NoShippedOpt = False,
    max_age_days: Annotated[int, typer.Option(
        "--max-age-days", min=0, help="Flag reviewed / as_of dates older than this.")] = 180,
    today: Annotated[str | None, typer.Option(
        "--today", help="Judge review ages as of this date (YYYY-MM-DD); default: today (UTC). "
        "Shipped catalogs are judged against omniladder's release date and never fail.",
        show_default=False)] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", metavar="FILE", help="Accepted findings (TOML or JSON, as "
        "--write-baseline writes them): reported as accepted, they do not fail the check.",
        show_default=False)] = None,
    write_baseline: Annotated[Path | None, typer.Option(
        "--write-baseline", metavar="FILE", help="Write every finding to FILE as accepted "
        "(.toml or .json), then judge against it.", show_default=False)] = None,
    json_out: JsonOpt = False,
) -> None:
    """Lint the catalogs and list uncurated providers in use; exit 1 on any problem (with
    --baseline: on any problem it does not accept)."""
    with user_errors():
        import json
        from datetime import UTC, date, datetime

        from omniladder.analyses.catalog_check import Baseline, baseline_text, check_catalogs
        from omniladder.errors import UsageError
        from omniladder.inputs.catalogs import catalog_paths
        from omniladder.inputs.documents import load_model
        from omniladder.inputs.files import display_path
        from omniladder.inputs.scopes import window_catalog_paths
        from omniladder.models import ConnectionsFile
        from omniladder.rendering.catalog_view import lint_document, lint_lines

        if today is None:
            day = datetime.now(UTC).date()
        else:
            try:
                day = date.fromisoformat(today.strip())
            except ValueError:
                raise UsageError(f"not a date: {today!r} (expected e.g. 2026-11-29)",
                                 field="--today") from None
        if write_baseline is not None and write_baseline.suffix not in (".toml", ".json"):
            raise UsageError(f"{write_baseline}: a baseline file is .toml or .json",
                             field="--write-baseline")
        accepted = load_model(Baseline, baseline) if baseline is not None else None
        _, files = _files(config, connections, catalog, models_catalog, no_shipped_catalogs,
                          windows_catalog)
        billing_paths, model_paths = catalog_paths(
            files.billing_catalogs, files.model_catalogs,
            include_shipped=not files.no_shipped_catalogs)
        window_paths = window_catalog_paths(files.window_catalogs,
                                            include_shipped=not files.no_shipped_catalogs)
        # --write-baseline may rewrite its own --baseline (the documented update in place).
        refuse_overwriting([("--write-baseline", write_baseline)], [
            *((what, path) for what, path in (("the settings file", files.settings_file),
                                              ("the connections file", files.connections))
              if path is not None),
            *(("a billing catalog", path) for path, _ in billing_paths),
            *(("a model catalog", path) for path, _ in model_paths),
            *(("a window-scope catalog", path) for path, _ in window_paths)])
        fleet = None
        if files.connections is not None:
            fleet = (load_model(ConnectionsFile, files.connections).connections,
                     display_path(files.connections))
        written = write_baseline if write_baseline is not None else baseline
        result = check_catalogs(
            billing_paths=billing_paths, model_paths=model_paths, window_paths=window_paths,
            fleet=fleet, day=day, max_age_days=max_age_days, baseline=accepted,
            against=display_path(written) if written is not None else None,
            rewrite=write_baseline is not None)
        if write_baseline is not None and result.baseline is not None:
            write_atomic(write_baseline, baseline_text(result.baseline, write_baseline.suffix))
            count = len(result.baseline.accepted)
            say(f"omniladder: wrote {count} accepted finding{'' if count == 1 else 's'} to "
                f"{result.against}")
        if json_out:
            sys.stdout.write(json.dumps(lint_document(result)) + "\n")
        else:
            for index, entry in result.judged.stale if result.judged is not None else ():
                say(f"omniladder: warning: {result.against}: accepted[{index}]: "
                    f"{entry.label()} matches no finding any more (stale); remove it from the "
                    "baseline")
            from omniladder.rendering.escape import printable

            human_view()
            sys.stdout.write(printable("\n".join(lint_lines(result))) + "\n")
        verdict = result.verdict()
        if verdict is not None:
            answer_is_no(verdict)
