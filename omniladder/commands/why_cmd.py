"""`omniladder why CONNECTION_ID [AUTO_ID]`: the step-by-step trace of one connection."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from omniladder.commands.common import (
    CatalogOpt,
    ConfigOpt,
    ConnectionsOpt,
    InputOptions,
    ModelsCatalogOpt,
    NoShippedOpt,
    NowOpt,
    QuotaOpt,
    SpendOpt,
    now_for,
    say,
    user_errors,
)


def why(
    connection_id: Annotated[str, typer.Argument(
        metavar="CONNECTION_ID", help="The connection to explain.")],
    auto_id: Annotated[str | None, typer.Argument(
        metavar="AUTO_ID",
        help="The auto id to judge it under (default: auto/subscription and auto/thrifty).",
        show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Trace only this model of the connection.", show_default=False)]
    = None,
    config: ConfigOpt = None,
    connections: ConnectionsOpt = None,
    quota: QuotaOpt = None,
    spend: SpendOpt = None,
    catalog: CatalogOpt = None,
    models_catalog: ModelsCatalogOpt = None,
    no_shipped_catalogs: NoShippedOpt = False,
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the JSON trace.")] = False,
) -> None:
    """Explain one connection: billing, gates, tiers, quota replay, budget and verdict."""
    with user_errors():
        from omniladder.autoid import parse_auto_id
        from omniladder.explain import explain
        from omniladder.plan import make_plan

        ids = [parse_auto_id(auto_id)] if auto_id is not None else [
            parse_auto_id("auto/subscription"), parse_auto_id("auto/thrifty")]
        options = InputOptions(config, connections, quota, spend, tuple(catalog or ()),
                               tuple(models_catalog or ()), no_shipped_catalogs)
        inputs = options.load()
        instant, source = now_for(now, inputs)
        plans = [make_plan(inputs, parsed, instant, source)
                 for parsed in ids]
        trace = explain(inputs, plans, connection_id, model)
        if json_out:
            from omniladder.rendering.why_view import why_json

            sys.stdout.write(why_json(trace) + "\n")
        else:
            from omniladder.rendering.why_view import render_why

            for warning in plans[0].warnings:
                say(f"omniladder: warning: {warning}")
            render_why(trace, sys.stdout)
