"""`omniladder diff OLD NEW`: how two saved plans route differently; exit 1 when they do."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    FormatOpt,
    answer_is_no,
    differences,
    output_format,
    user_errors,
)


def diff(
    old: Annotated[Path, typer.Argument(
        metavar="OLD", help="The earlier saved plan (JSON from `plan --out`).",
        show_default=False)],
    new: Annotated[Path, typer.Argument(
        metavar="NEW", help="The later saved plan.", show_default=False)],
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON diff document (the same as --format json).")] = False,
    fmt: FormatOpt = None,
) -> None:
    """Compare two saved plans: pool entries, allowlists, rung states, exclusions, billing.

    Notes say when the plans were made by other omniladder versions or from other inputs
    (the sha256 stamps `plan --out` writes); those alone are not differences.
    """
    with user_errors():
        from omniladder.analyses.diff import diff_plans
        from omniladder.inputs.files import display_path
        from omniladder.inputs.plan_document import load_saved_plan
        from omniladder.rendering.diff_view import render_diff

        chosen = output_format(fmt, json_out)
        before = load_saved_plan(old)
        after = load_saved_plan(new)
        result = diff_plans(before, after, display_path(old), display_path(new))
        render_diff(result, chosen, sys.stdout)
        if not result.equal:
            answer_is_no(f"the plans route differently ({differences(result.counts())})")
