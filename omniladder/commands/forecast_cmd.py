"""`omniladder forecast AUTO_ID`: when the auto id steps up a rung, and when it starts paying."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    InputOptions,
    NowOpt,
    PlanFormatOpt,
    files_read,
    now_for,
    plan_output_format,
    refuse_overwriting,
    say,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.lifetime import hold

ForecastMetricsOutOpt = Annotated[Path | None, typer.Option(
    "--metrics-out", show_default=False,
    help="Also write the OpenMetrics text to this file, atomically (for the node_exporter "
    "textfile collector: name it *.prom in its directory).")]
"""--metrics-out as forecast words it: forecast has no --out."""


@with_input_options
def forecast(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="auto/subscription, auto/thrifty or auto/<category>:<tier>.")],
    now: NowOpt = None,
    horizon: Annotated[str, typer.Option(
        "--horizon", help="How far ahead to step the plan: 6h, 24h, 2d.")] = "24h",
    step: Annotated[str, typer.Option(
        "--step", help="Time between projected plans: 1m, 5m, 15m.")] = "5m",
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON forecast document (the same as --format json).")]
    = False,
    fmt: PlanFormatOpt = None,
    metrics_out: ForecastMetricsOutOpt = None,
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Also write the timeline as an SVG picture to FILE (projected after "
                      "now).", show_default=False)] = None,
    *,
    options: InputOptions,
) -> None:
    """Project each window at its burn rate and step the plan: escalations, first paid."""
    with user_errors():
        from omniladder import timefmt
        from omniladder.analyses.simulate import MAX_STEPS
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.errors import UsageError
        from omniladder.forecast import catalog_lengths, forecast, parse_span
        from omniladder.inputs.input_set import find_settings, resolve_files
        from omniladder.inputs.scopes import load_window_scopes, window_catalog_paths
        from omniladder.rendering.forecast_view import RENDERERS

        chosen = plan_output_format(fmt, json_out)
        parsed = parse_auto_id(auto_id)
        ahead = parse_span(horizon, "--horizon")
        every = parse_span(step, "--step")
        inputs = options.load()
        instant, source, inputs = now_for(now, inputs)
        end = timefmt.shifted(instant, ahead)
        if end is None:
            raise UsageError(f"{horizon!r} from {timefmt.iso(instant)} runs past the end of "
                             "the calendar (year 9999)", field="--horizon")
        steps = int(ahead / every) + 1
        if steps > MAX_STEPS:
            raise UsageError(f"{horizon} every {step} (--step) is {steps:,} steps; at "
                             f"most {MAX_STEPS:,}: shorten --horizon or lengthen --step",
                             field="--horizon")
        files = resolve_files(find_settings(options.config), inputs.settings,
                              no_shipped_catalogs=options.no_shipped_catalogs)
        windows = window_catalog_paths(files.window_catalogs, not options.no_shipped_catalogs)
        refuse_overwriting([("--metrics-out", metrics_out), ("--svg", svg)], [
            *files_read(inputs), *(("a window-scope catalog", path) for path, _ in windows)])
        scopes = load_window_scopes(files.window_catalogs,
                                    include_shipped=not options.no_shipped_catalogs)
        result = forecast(inputs, parsed, instant, ahead, every, now_source=source,
                          lengths=catalog_lengths(scopes))
        hold(result)
        if svg is not None:
            from omniladder.rendering.timeline import forecast_svg

            write_atomic(svg, forecast_svg(result))
        from omniladder.rendering import Format

        metrics = None
        if metrics_out is not None or chosen is None:
            from omniladder.rendering.openmetrics import forecast_metrics

            metrics = forecast_metrics(result)
        if metrics_out is not None and metrics is not None:
            write_atomic(metrics_out, metrics)
        if chosen != Format.JSON:
            for warning in result.warnings:
                say(f"omniladder: warning: {warning}")
        if chosen is None:
            assert metrics is not None
            sys.stdout.write(metrics)
        else:
            RENDERERS[chosen](result, sys.stdout)
        sys.stdout.flush()
        if svg is not None and chosen != Format.JSON:
            say(f"omniladder: wrote {svg}")
