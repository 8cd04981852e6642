"""`omniladder whatif AUTO_ID --traffic FILE`: the recorded demand replayed against the fleet
as it is, against alternatives, and against the best possible (SPEC §10)."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omniladder.commands.common import (
    FormatOpt,
    InputOptions,
    files_read,
    refuse_overwriting,
    say,
    span_instants,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.traffic_cmd import LedgerOpt, SpanEndOpt, SpanStartOpt, traffic_path
from omniladder.errors import UsageError

if TYPE_CHECKING:
    from omniladder.analyses.whatif.scenario import ScenarioSpec

MAX_BUCKET_MINUTES = 24 * 60


def pairs(values: list[str], option: str, low: float, high: float | None,
          what: str) -> tuple[tuple[str, float], ...]:
    """``ID=NUMBER`` options, each number in [low, high] (above ``low`` when high is None)."""
    out: list[tuple[str, float]] = []
    for text in values:
        key, sep, number = text.rpartition("=")
        if not sep or not key:
            raise UsageError(f"{text!r} is not ID={what}", field=option)
        try:
            value = float(number)
        except ValueError:
            raise UsageError(f"{text!r}: {number!r} is not a number", field=option) from None
        if not math.isfinite(value) or value < low or (high is not None and value > high) or (
                high is None and value <= low):
            bounds = f"{low:g} to {high:g}" if high is not None else f"more than {low:g}"
            raise UsageError(f"{text!r}: {what} must be {bounds}", field=option)
        out.append((key, value))
    return tuple(out)


def scenarios_of(order: str | None, remove: list[str], add: list[str], reserve: list[str],
                 weight: list[str], scenario_file: Path | None) -> list[ScenarioSpec]:
    """The scenarios the options build: one from the options (named after them), then each
    of the scenario file's."""
    from omniladder.analyses.whatif.scenario import ScenarioSpec

    out: list[ScenarioSpec] = []
    if order is not None and order not in ("declared", "expiring-first"):
        raise UsageError(f"{order!r} is not an order: declared or expiring-first",
                         field="--order")
    spec = ScenarioSpec(
        name="", order=order,  # type: ignore[arg-type]
        remove=tuple(remove), add=tuple(add),
        reserve=pairs(reserve, "--reserve", 0.0, 100.0, "PERCENT"),
        weight=pairs(weight, "--weight", 0.0, None, "W"))
    if spec.changes():
        out.append(dataclasses.replace(spec, name=" ".join(spec.changes())))
    if scenario_file is not None:
        from omniladder.analyses.whatif.scenario import from_entries
        from omniladder.inputs.scenarios import load_scenarios

        shown = str(scenario_file)
        names = {s.name for s in out}
        for spec in from_entries(load_scenarios(scenario_file), shown):
            if spec.name in names:
                raise UsageError(f"{spec.where}: name {spec.name!r} is given twice",
                                 field="--scenario")
            names.add(spec.name)
            out.append(spec)
    return out


@with_input_options
def whatif(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="The auto id whose demand to replay, e.g. auto/thrifty.",
        show_default=False)],
    ledger: LedgerOpt = None,
    start: SpanStartOpt = None,
    end: SpanEndOpt = None,
    order: Annotated[str | None, typer.Option(
        "--order", metavar="declared|expiring-first", help="A scenario with this "
        "within-rung order (R15).", show_default=False)] = None,
    remove: Annotated[list[str] | None, typer.Option(
        "--remove", metavar="ID", help="A scenario without this connection (repeatable).",
        show_default=False)] = None,
    add: Annotated[list[str] | None, typer.Option(
        "--add", metavar="LIKE[:NEW_ID]", help="A scenario with a copy of connection LIKE, "
        "full at the span's start (repeatable).", show_default=False)] = None,
    reserve: Annotated[list[str] | None, typer.Option(
        "--reserve", metavar="ID=PERCENT", help="A scenario keeping this reserve on the "
        "connection (R16; repeatable).", show_default=False)] = None,
    weight: Annotated[list[str] | None, typer.Option(
        "--weight", metavar="ID=W", help="A scenario giving the connection this "
        "capacity_weight (repeatable).", show_default=False)] = None,
    scenario_file: Annotated[Path | None, typer.Option(
        "--scenario", metavar="FILE", help="Several named scenarios (TOML; `omniladder "
        "schema whatif-scenarios`).", show_default=False)] = None,
    all_requests: Annotated[bool, typer.Option(
        "--all-requests", help="Also replay events that name no requested id.")] = False,
    no_bound: Annotated[bool, typer.Option(
        "--no-bound", help="Skip the best possible (the linear program).")] = False,
    bucket: Annotated[float, typer.Option(
        "--bound-bucket", metavar="MINUTES", help="The bound's time bucket.",
        show_default=True)] = 60.0,
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Also write paid dollars over the span per scenario, and the bound, "
        "as an SVG picture to FILE.", show_default=False)] = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON document (the same as --format json).")] = False,
    fmt: FormatOpt = None,
    *,
    options: InputOptions,
) -> None:
    """Replay your recorded demand against the fleet as it is, against alternatives (another
    order, a seat removed or added, a reserve, a weight) and against the best possible: paid
    dollars, regret, blocked requests, quota that expired unused, a seat's break-even."""
    with user_errors():
        from omniladder.analyses.whatif.run import catalog_of, whatif
        from omniladder.commands.common import output_format
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.inputs.input_set import find_settings, resolve_files
        from omniladder.inputs.ledger.read import Ledger
        from omniladder.inputs.scopes import load_window_scopes, window_catalog_paths
        from omniladder.rendering import Format
        from omniladder.rendering.whatif_view import render_whatif, whatif_svg

        chosen = output_format(fmt, json_out)
        parsed = parse_auto_id(auto_id)
        begin, finish = span_instants(start, end)
        if begin is not None and finish is not None and begin >= finish:
            raise UsageError("--from must be before --to", field="--from")
        if not math.isfinite(bucket) or not 1 <= bucket <= MAX_BUCKET_MINUTES:
            raise UsageError(f"must be 1 to {MAX_BUCKET_MINUTES} minutes, got {bucket:g}",
                             field="--bound-bucket")
        specs = scenarios_of(order, remove or [], add or [], reserve or [], weight or [],
                             scenario_file)
        path = traffic_path(ledger, options)
        inputs = options.load()
        files = resolve_files(find_settings(options.config), inputs.settings,
                              no_shipped_catalogs=options.no_shipped_catalogs)
        read = files_read(inputs)
        read.append(("the traffic ledger (--traffic)", path))
        if scenario_file is not None:
            read.append(("the scenario file (--scenario)", scenario_file))
        read += [("a window-scope catalog", window)
                 for window, _ in window_catalog_paths(files.window_catalogs,
                                                       not options.no_shipped_catalogs)]
        refuse_overwriting([("--svg", svg)], read)
        scopes = load_window_scopes(files.window_catalogs,
                                    include_shipped=not options.no_shipped_catalogs)
        catalog = catalog_of(scopes)
        report = whatif(inputs, parsed, Ledger(path), scenarios=specs, start=begin,
                        end=finish, all_requests=all_requests, catalog=catalog,
                        bound=not no_bound, bucket_seconds=bucket * 60.0)
        if svg is not None:
            write_atomic(svg, whatif_svg(report))
        if chosen != Format.JSON:
            for line in (*inputs.warnings, *report.warnings):
                say(f"omniladder: warning: {line}")
        render_whatif(report, chosen, sys.stdout)
        sys.stdout.flush()
        if svg is not None and chosen != Format.JSON:
            say(f"omniladder: wrote {svg}")
