"""`omniladder who PROVIDER/MODEL [AUTO_ID]`: every connection that could serve a model, and
why each is in or out of the pool (the inverse of `why`, like `cargo tree -i`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from omniladder.commands.common import (
    InputOptions,
    NowOpt,
    now_for,
    say,
    user_errors,
    with_input_options,
)
from omniladder.commands.lifetime import hold


@with_input_options
def who(
    target: Annotated[str, typer.Argument(
        metavar="PROVIDER/MODEL", help="The model to ask about, e.g. claude/claude-opus-4-1.")],
    auto_id: Annotated[str | None, typer.Argument(
        metavar="AUTO_ID",
        help="The auto id to judge under (default: auto/subscription and auto/thrifty).",
        show_default=False)] = None,
    all_ids: Annotated[bool, typer.Option(
        "--all-ids", help="Judge under all twelve auto ids (`omniladder ids`).")] = False,
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the JSON answer.")] = False,
    *,
    options: InputOptions,
) -> None:
    """Who serves a model: each connection that lists it, its rung, and why it is in or out.

    Connections of the provider that do not list the model are shown too; an answer where
    nobody serves the model is still an answer (exit 0).
    """
    with user_errors():
        from omniladder.analyses.who import check_target, split_target, who
        from omniladder.engine.autoid import all_auto_ids, parse_auto_id
        from omniladder.engine.fleet import Fleet
        from omniladder.engine.plan import make_plan
        from omniladder.errors import UsageError

        split_target(target)
        if auto_id is not None and all_ids:
            raise UsageError("give either AUTO_ID or --all-ids, not both", field="--all-ids")
        names = ([auto_id] if auto_id is not None else list(all_auto_ids()) if all_ids
                 else ["auto/subscription", "auto/thrifty"])
        ids = [parse_auto_id(name) for name in names]
        inputs = options.load()
        instant, source, inputs = now_for(now, inputs)
        fleet = Fleet(inputs)
        plans = [make_plan(inputs, parsed, instant, source, fleet) for parsed in ids]
        hold(plans)
        provider, model, in_catalog = check_target(target, plans[0], inputs.catalogs.models)
        answer = who(plans, provider, model, in_catalog)
        if json_out:
            from omniladder.rendering.json_text import write_json
            from omniladder.rendering.who_view import who_document

            write_json(who_document(answer), sys.stdout)
        else:
            from omniladder.rendering.who_view import render_who

            for warning in answer.warnings:
                say(f"omniladder: warning: {warning}")
            render_who(answer, sys.stdout)
