"""`omniladder simulate AUTO_ID --from T1 --to T2`: plan at every step and chart the day."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    InputOptions,
    files_read,
    refuse_overwriting,
    say,
    span_instants,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.lifetime import hold


@with_input_options
def simulate(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="auto/subscription, auto/thrifty or auto/<category>:<tier>.")],
    start: Annotated[str, typer.Option(
        "--from", metavar="RFC3339|now", help="First instant (RFC 3339 with offset, or "
        "'now' for the current time).", show_default=False)],
    end: Annotated[str, typer.Option(
        "--to", metavar="RFC3339|now", help="Last instant (RFC 3339 with offset, or 'now').",
        show_default=False)],
    step: Annotated[str, typer.Option(
        "--step", help="Time between plans: 30s, 5m, 1h, 1h30m.")] = "5m",
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Also write the chart as an SVG picture to FILE.", show_default=False)]
    = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the series as JSON.")]
    = False,
    traffic: Annotated[Path | None, typer.Option(
        "--traffic", help="Traffic ledger: mark its leak events (paid while quota was left, "
        "billed off plan) on the timeline and in the SVG (docs/traffic.md).",
        show_default=False)] = None,
    *,
    options: InputOptions,
) -> None:
    """Plan at every step between two instants: head rung, pool per rung, transitions, flaps."""
    with user_errors():
        from datetime import datetime

        from omniladder.analyses.simulate import parse_step, simulate, step_instants
        from omniladder.engine.autoid import parse_auto_id

        parsed = parse_auto_id(auto_id)
        first, last = span_instants(start, end)
        assert first is not None  # both options are required
        assert last is not None
        every = parse_step(step)
        step_instants(first, last, every)  # usage errors before any file is read
        inputs = options.load()
        read = files_read(inputs)
        if traffic is not None:
            read.append(("the traffic ledger (--traffic)", traffic))
        refuse_overwriting([("--svg", svg)], read)
        series = simulate(inputs, parsed, first, last, every)
        hold(series)
        audit = None
        if traffic is not None:
            from omniladder.analyses.traffic import audit_traffic
            from omniladder.inputs.ledger.read import Ledger

            audit = audit_traffic(inputs, parsed, Ledger(traffic), start=first, end=last,
                                  all_requests=True)
        if svg is not None:
            from omniladder.rendering.timeline import timeline_svg

            markers: tuple[tuple[datetime, str, str], ...] = ()
            if audit is not None:
                from omniladder.rendering.traffic_view import leak_markers

                markers = leak_markers(audit)
            write_atomic(svg, timeline_svg(series, markers=markers))
        if json_out:
            from omniladder.rendering.json_text import write_json
            from omniladder.rendering.timeline import series_document

            document = series_document(series)
            if audit is not None:
                from omniladder.rendering.traffic_view import leaks_document

                document["traffic"] = leaks_document(audit)
            write_json(document, sys.stdout)
        else:
            from omniladder.rendering.timeline import render_timeline

            for warning in series.warnings:
                say(f"omniladder: warning: {warning}")
            render_timeline(series, sys.stdout)
            if audit is not None:
                from omniladder.rendering.traffic_view import leak_lines

                sys.stdout.write("\n" + "\n".join(leak_lines(audit)) + "\n")
            sys.stdout.flush()
            if svg is not None:
                say(f"omniladder: wrote {svg}")
