"""`omniladder show PLAN`: a saved plan in the human view, as `plan` printed it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import FormatOpt, output_format, say, user_errors


def show(
    plan_file: Annotated[Path, typer.Argument(
        metavar="PLAN", help="A saved plan: the JSON `plan --out` writes (or `plan --json` "
        "prints).", show_default=False)],
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the saved document as it is (the same as --format json).")]
    = False,
    fmt: FormatOpt = None,
    detail: Annotated[bool, typer.Option(
        "--detail", help="Also list not-in-category exclusions in the table view.")] = False,
) -> None:
    """Show a saved plan in the human view, as `plan` printed it, without planning again.

    The plan is validated first: a file that is not a saved plan of this format_version is
    exit 2, with the file and the field named.
    """
    with user_errors():
        from omniladder.inputs.files import display_path
        from omniladder.inputs.plan_document import read_saved_plan
        from omniladder.rendering import Format
        from omniladder.rendering.show_view import ShownPlan, render_show

        chosen = output_format(fmt, json_out)
        saved, text = read_saved_plan(plan_file)
        if chosen != Format.JSON:
            for warning in saved.warnings:
                say(f"omniladder: warning: {warning}")
        render_show(ShownPlan(saved, text, display_path(plan_file)), chosen, sys.stdout,
                    detail=detail)
