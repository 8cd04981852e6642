"""`omniladder audit omniroute CANDIDATES [AUTO_ID]`: a gateway's candidate list vs the plan."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    FormatOpt,
    InputOptions,
    NowOpt,
    answer_is_no,
    now_for,
    say,
    user_errors,
    with_input_options,
)
from omniladder.commands.lifetime import hold

audit_app = typer.Typer(
    name="audit",
    help="Hold what a running gateway would dispatch against the plan for the same fleet.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def read_candidates(path: Path) -> tuple[bytes, str]:
    """The document's bytes and the name messages give it; ``-`` is standard input."""
    from omniladder.inputs.files import (
        STDIN_NAME,
        check_input_file,
        display_path,
        read_bytes,
        read_stdin,
    )

    if str(path) == "-":
        return read_stdin(), STDIN_NAME
    shown = display_path(path)
    check_input_file(path, shown)
    return read_bytes(path, shown), shown


@audit_app.command("omniroute")
@with_input_options
def omniroute(
    candidates: Annotated[Path, typer.Argument(
        metavar="CANDIDATES",
        help="OmniRoute's GET /api/v1/auto-combo/{channel}/candidates JSON, saved to a file, "
        "or - for standard input.", show_default=False)],
    auto_id: Annotated[str | None, typer.Argument(
        metavar="[AUTO_ID]", help="The auto id to plan; default: the document's channel.",
        show_default=False)] = None,
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON audit document (the same as --format json).")] = False,
    fmt: FormatOpt = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Also fail when the gateway uses a connection or model the plan's "
        "inputs do not have under auto/thrifty (a subscription id always fails on them).")
    ] = False,
    *,
    options: InputOptions,
) -> None:
    """Audit an OmniRoute gateway: would it bill or dispatch what the plan keeps out?

    Exit 1 when any row the gateway would use is would-bill, would-dispatch-exhausted or
    would-dispatch-unknown (a row the plan cannot vouch for: under a subscription id, or
    with --strict).
    """
    with user_errors():
        from omniladder.analyses.audit import audit_auto_id, audit_plan, parse_candidates
        from omniladder.commands.common import output_format
        from omniladder.engine.plan import make_plan
        from omniladder.rendering import Format
        from omniladder.rendering.audit_view import render_audit

        chosen = output_format(fmt, json_out)
        raw, shown = read_candidates(candidates)
        document = parse_candidates(raw, shown)
        parsed, warning = audit_auto_id(document, auto_id)
        inputs = options.load()
        instant, source, inputs = now_for(now, inputs)
        made = make_plan(inputs, parsed, instant, source)
        hold(made)
        result = audit_plan(document, made, (warning,) if warning else (), strict=strict)
        if chosen is not Format.JSON:
            for line in result.warnings:
                say(f"omniladder: warning: {line}")
        render_audit(result, chosen, sys.stdout)
        if not result.passed:
            counts = result.counts
            answer_is_no(f"the gateway's {document.channel or parsed.text} candidates "
                         f"against {parsed.text}: {counts['would-bill']} would-bill, "
                         f"{counts['would-dispatch-exhausted']} would-dispatch-exhausted, "
                         f"{counts['would-dispatch-unknown']} would-dispatch-unknown")


def _register_traffic() -> None:
    from omniladder.commands.traffic_cmd import TrafficCommand, traffic

    audit_app.command("traffic", cls=TrafficCommand)(traffic)


_register_traffic()
