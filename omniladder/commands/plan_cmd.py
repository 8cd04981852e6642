"""`omniladder plan AUTO_ID`: the pool, the ladder and every exclusion."""

# No `from __future__ import annotations`: typer reads the command's annotations when it
# runs, and as values they need no compiling from text first (docs/performance.md#start-up).

import sys
from itertools import chain
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    InputOptions,
    MetricsOutOpt,
    NowOpt,
    PlanFormatOpt,
    answer_is_no,
    differences,
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


@with_input_options
def plan(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="auto/subscription, auto/thrifty or auto/<category>:<tier>.")],
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON plan document (the same as --format json).")] = False,
    fmt: PlanFormatOpt = None,
    fail_on_empty: Annotated[bool, typer.Option(
        "--fail-on-empty", help="Exit 1 when the pool is empty.")] = False,
    detail: Annotated[bool, typer.Option(
        "--detail", help="Also list not-in-category exclusions in the table view.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Also save the JSON plan document to this file, stamped with the "
        "omniladder version and each input's sha256 (for `show`, `diff` and --compare).",
        show_default=False)] = None,
    compare: Annotated[Path | None, typer.Option(
        "--compare", help="Compare with this saved plan: print the diff (in the --format "
        "chosen) instead of the plan and exit 1 when they differ.",
        show_default=False)] = None,
    metrics_out: MetricsOutOpt = None,
    *,
    options: InputOptions,
) -> None:
    """Plan an auto id: the ladder, the pool in dispatch order, and why the rest is out."""
    with user_errors():
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.engine.plan import make_plan
        from omniladder.rendering import Format, render

        chosen = plan_output_format(fmt, json_out)
        if chosen is None and compare is not None:
            from omniladder.errors import UsageError

            raise UsageError("--compare prints the diff, which has no openmetrics view; "
                             "choose another --format (--metrics-out still writes the "
                             "metrics)", field="--format")
        parsed = parse_auto_id(auto_id)
        saved = None
        if compare is not None:
            from omniladder.inputs.plan_document import load_saved_plan

            saved = load_saved_plan(compare)
        digests: dict[str, str] = {}
        if out is not None or saved is not None:
            from omniladder.inputs.files import digests_kept

            # The stamp records the bytes planned from, whatever the files hold later.
            with digests_kept() as digests:
                inputs = options.load()
        else:
            inputs = options.load()
        # --compare F --out F is the update workflow (compare, then replace), as export's
        # --current F --out F: the saved plan is read whole before anything is written.
        # Only --out may replace it: the metrics text is no plan.
        refuse_overwriting([("--out", out), ("--metrics-out", metrics_out)],
                           files_read(inputs))
        if compare is not None:
            refuse_overwriting([("--metrics-out", metrics_out)],
                               [("the saved plan of --compare", compare)])
        instant, source, inputs = now_for(now, inputs)
        result = make_plan(inputs, parsed, instant, source)
        hold(result)
        document = None
        if out is not None or saved is not None:
            from omniladder.inputs.stamp import stamped
            from omniladder.rendering.json_view import plan_document

            document = stamped(plan_document(result), inputs, digests)
        if out is not None:
            from omniladder.rendering.json_text import iter_dumps

            write_atomic(out, chain(iter_dumps(document), ("\n",)))
        metrics = None
        if metrics_out is not None or chosen is None:
            from omniladder.rendering.openmetrics import plan_metrics

            metrics = plan_metrics(result, inputs.readings, inputs.settings.ladder)
        if metrics_out is not None and metrics is not None:
            write_atomic(metrics_out, metrics)
        if chosen != Format.JSON:
            for warning in result.warnings:
                say(f"omniladder: warning: {warning}")
        reasons = []
        if saved is not None and compare is not None and chosen is not None:
            from omniladder.analyses.diff import diff_plans
            from omniladder.inputs.files import display_path
            from omniladder.inputs.plan_document import parse_saved_plan
            from omniladder.rendering.diff_view import render_diff

            current = parse_saved_plan(document, "(current plan)")
            changes = diff_plans(saved, current, display_path(compare), "current plan")
            render_diff(changes, chosen, sys.stdout)
            if not changes.equal:
                reasons.append(f"the plan differs from {display_path(compare)} "
                               f"({differences(changes.counts())})")
        elif chosen is None:
            assert metrics is not None
            sys.stdout.write(metrics)
        else:
            render(result, chosen, sys.stdout, detail=detail)
        if fail_on_empty and not result.pool:
            reasons.append(f"the pool of {parsed.text} is empty (--fail-on-empty)")
        if reasons:
            answer_is_no("; ".join(reasons))
