"""`omniladder export TARGET (PLAN | AUTO_ID)`: the plan as gateway configuration."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from omniladder.analyses.export.targets import help_text, names
from omniladder.commands.common import (
    FormatOpt,
    InputOptions,
    NowOpt,
    answer_is_no,
    files_read,
    now_for,
    output_format,
    refuse_overwriting,
    say,
    user_errors,
    with_input_options,
    write_atomic,
)
from omniladder.commands.lifetime import hold

if TYPE_CHECKING:
    from omniladder.analyses.export.source import ExportPlan
    from omniladder.engine.records import Plan

    TargetName = str
else:
    TargetName = Literal[names()]
    """The registered targets, the choices of TARGET (typer reads a Literal as a choice)."""


@with_input_options
def export(
    target: Annotated[TargetName, typer.Argument(
        metavar="TARGET", help=help_text(), case_sensitive=False)],
    plan_or_id: Annotated[str, typer.Argument(
        metavar="PLAN|AUTO_ID", help="A saved plan (the JSON `plan --out` writes), or an auto "
        "id to plan now from the input options.", show_default=False)],
    route_map: Annotated[Path | None, typer.Option(
        "--map", help="litellm: where LiteLLM reaches each connection (TOML or JSON: "
        "model_prefix, api_base and api_key_env, the *name* of the key's variable).",
        show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the document to this file (atomically) instead of standard "
        "output.", show_default=False)] = None,
    current: Annotated[Path | None, typer.Option(
        "--current", help="Compare with what is deployed (the file a previous export wrote; "
        "for omniroute also GET /api/combos's answer): exit 1 when it differs.",
        show_default=False)] = None,
    verified_only: Annotated[bool, typer.Option(
        "--verified-only", help="Leave out connections the plan admits with an unknown "
        "quota verdict (unverified, R11); by default they are exported as the plan admits "
        "them.")] = False,
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON report, the document included (the same as --format "
        "json).")] = False,
    fmt: FormatOpt = None,
    *,
    options: InputOptions,
) -> None:
    """Export a plan as gateway configuration, with a report of what the gateway cannot hold.

    The document goes to standard output (or --out) and the fidelity report to standard
    error; --json and --format markdown print the report, the document inside it. Nothing
    is sent to a gateway: applying the document is your step (docs/gateways.md#export).
    """
    with user_errors():
        from omniladder.analyses.export.core import check_map, compare_current
        from omniladder.analyses.export.core import export as build_export
        from omniladder.analyses.export.targets import target as registered
        from omniladder.errors import UsageError
        from omniladder.inputs.files import display_path
        from omniladder.rendering import Format
        from omniladder.rendering.export_view import ExportReport, render_report

        chosen = output_format(fmt, json_out)
        check_map(registered(target), route_map is not None)
        routes = None
        if route_map is not None:
            from omniladder.analyses.export.routes import load_routes

            routes = load_routes(route_map)
        if plan_or_id.startswith("auto/"):
            from omniladder.engine.autoid import parse_auto_id
            from omniladder.engine.plan import make_plan

            parsed = parse_auto_id(plan_or_id)
            inputs = options.load()
            read = files_read(inputs)
            instant, source, inputs = now_for(now, inputs)
            made = make_plan(inputs, parsed, instant, source)
            hold(made)
            plan = exported_plan(made)
        else:
            from omniladder.analyses.export.source import from_document
            from omniladder.inputs.plan_document import read_saved_plan

            if options != InputOptions() or now is not None:
                raise UsageError("the input options and --now plan an AUTO_ID; a saved plan "
                                 "is exported as it was planned (drop them, or give an auto "
                                 "id)", field="PLAN")
            path = Path(plan_or_id)
            saved, _ = read_saved_plan(path)
            plan = from_document(saved, display_path(path))
            read = [("the saved plan", path)]
        # --current may be the --out file: compared first, then replaced (the cron update).
        refuse_overwriting([("--out", out)], [
            *read, *([("the route map of --map", route_map)] if route_map is not None else [])])
        result = build_export(target, plan, routes=routes, verified_only=verified_only,
                              map_file=display_path(route_map) if route_map else None)
        comparison = compare_current(result, current) if current is not None else None
        if out is not None:
            write_atomic(out, result.text)
        report = ExportReport(result, comparison, display_path(out) if out else None)
        if chosen is not Format.JSON:
            for warning in plan.warnings:
                say(f"omniladder: warning: {warning}")
        if chosen is Format.TABLE:
            if out is None:
                sys.stdout.write(result.text)
                sys.stdout.flush()
            render_report(report, Format.TABLE, sys.stderr)
        else:
            render_report(report, chosen, sys.stdout)
        if comparison is not None and not comparison.equal:
            count = len(comparison.differences)
            what = result.target.group
            answer_is_no((f"the export empties the deployed {what} {comparison.empties}; "
                          if comparison.empties else "")
                         + f"the export differs from {comparison.file} ({count} "
                         f"difference{'' if count == 1 else 's'})")


def exported_plan(made: Plan) -> ExportPlan:
    """The export's view of a plan just made: its plan document, as the JSON writer writes it
    and a saved plan is read back, so the two exports cannot differ."""
    from omniladder.analyses.export.source import from_document
    from omniladder.inputs.plan_document import parse_saved_plan
    from omniladder.rendering.json_view import plan_document

    return from_document(parse_saved_plan(plan_document(made), "(current plan)"), None)
