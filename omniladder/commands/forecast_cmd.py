"""`omniladder forecast AUTO_ID`: when the auto id steps up a rung, and when it starts paying."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    span_instants,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.lifetime import hold

if TYPE_CHECKING:
    from omniladder.engine.autoid import AutoId
    from omniladder.rendering import Format

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
    horizon: Annotated[str | None, typer.Option(
        "--horizon", help="How far ahead to step the plan: 6h, 24h, 2d. [default: 24h]",
        show_default=False)] = None,
    step: Annotated[str | None, typer.Option(
        "--step", help="Time between projected plans: 1m, 5m, 15m. [default: 5m]",
        show_default=False)] = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON forecast document (the same as --format json).")]
    = False,
    fmt: PlanFormatOpt = None,
    metrics_out: ForecastMetricsOutOpt = None,
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Also write the timeline as an SVG picture to FILE (projected after "
                      "now).", show_default=False)] = None,
    backtest: Annotated[bool, typer.Option(
        "--backtest", help="Replay the forecast at each recorded reading from --from to --to "
        "and judge it by the readings that followed: the band's coverage and the p50's "
        "error by lead time (docs/forecast.md#backtest).")] = False,
    span_from: Annotated[str | None, typer.Option(
        "--from", metavar="RFC3339|now", help="With --backtest: the first reading instant "
        "to forecast at; default: the quota history's first.", show_default=False)] = None,
    span_to: Annotated[str | None, typer.Option(
        "--to", metavar="RFC3339|now", help="With --backtest: the last reading instant to "
        "forecast at; default: the quota history's last.", show_default=False)] = None,
    *,
    options: InputOptions,
) -> None:
    """Project each window at its burn rate and step the plan: escalations, first paid."""
    with user_errors():
        from omniladder import timefmt
        from omniladder.analyses.forecast.pace import catalog_lengths
        from omniladder.analyses.forecast.walk import forecast, parse_span
        from omniladder.analyses.simulate import MAX_STEPS
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.errors import UsageError
        from omniladder.inputs.input_set import find_settings, resolve_files
        from omniladder.inputs.scopes import load_window_scopes, window_catalog_paths
        from omniladder.rendering import Format
        from omniladder.rendering.forecast_view import RENDERERS

        chosen = plan_output_format(fmt, json_out)
        parsed = parse_auto_id(auto_id)
        if backtest:
            given = [name for name, value in (
                ("--now", now), ("--horizon", horizon), ("--step", step), ("--svg", svg),
                ("--metrics-out", metrics_out), ("--format openmetrics",
                                                 True if chosen is None else None))
                if value is not None]
            if given:
                raise UsageError(f"{given[0]} does not go with --backtest, which replays "
                                 "the forecast at each recorded reading (views: table, "
                                 "--json, --format markdown)", field=given[0].split()[0])
            assert chosen is not None
            run_backtest(parsed, span_from, span_to, chosen, options)
            return
        for name, value in (("--from", span_from), ("--to", span_to)):
            if value is not None:
                raise UsageError("a span to replay, only with --backtest (forecast itself "
                                 "starts at --now)", field=name)
        horizon = "24h" if horizon is None else horizon
        step = "5m" if step is None else step
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


def run_backtest(auto_id: AutoId, start: str | None, end: str | None, chosen: Format,
                 options: InputOptions) -> None:
    """``forecast AUTO_ID --backtest``: the span checked, the history replayed, the view."""
    from omniladder import timefmt
    from omniladder.analyses.backtest import backtest, reading_instants, serving_connections
    from omniladder.analyses.forecast.pace import catalog_lengths
    from omniladder.errors import UsageError
    from omniladder.inputs.input_set import find_settings, resolve_files
    from omniladder.inputs.scopes import load_window_scopes
    from omniladder.rendering import Format
    from omniladder.rendering.backtest_view import RENDERERS

    first, last = span_instants(start, end)
    inputs = options.load()
    instants = reading_instants(inputs, serving_connections(inputs, auto_id))
    if not instants:
        raise UsageError(f"no quota reading of a connection serving {auto_id.text} to "
                         "replay: --backtest needs a quota history", field="--backtest")
    first = instants[0] if first is None else first
    last = instants[-1] if last is None else last
    if not any(first <= at <= last for at in instants):
        raise UsageError(f"no reading from {timefmt.iso(first)} to {timefmt.iso(last)}: the "
                         f"quota history of {auto_id.text}'s connections runs from "
                         f"{timefmt.iso(instants[0])} to {timefmt.iso(instants[-1])}",
                         field="--from" if start is not None else "--to")
    files = resolve_files(find_settings(options.config), inputs.settings,
                          no_shipped_catalogs=options.no_shipped_catalogs)
    scopes = load_window_scopes(files.window_catalogs,
                                include_shipped=not options.no_shipped_catalogs)
    result = backtest(inputs, auto_id, first, last, lengths=catalog_lengths(scopes))
    if chosen != Format.JSON:
        for warning in result.warnings:
            say(f"omniladder: warning: {warning}")
    RENDERERS[chosen](result, sys.stdout)
    sys.stdout.flush()
