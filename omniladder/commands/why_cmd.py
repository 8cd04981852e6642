"""`omniladder why CONNECTION_ID [AUTO_ID]`: the step-by-step trace of one connection."""

from __future__ import annotations

import sys
from pathlib import Path
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


@with_input_options
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
    now: NowOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the JSON trace.")] = False,
    traffic: Annotated[Path | None, typer.Option(
        "--traffic", help="Traffic ledger: also say what the connection served and what the "
        "plan in force held at those instants (docs/traffic.md).", show_default=False)]
    = None,
    *,
    options: InputOptions,
) -> None:
    """Explain one connection: billing, gates, tiers, quota replay, budget and verdict."""
    with user_errors():
        from omniladder.analyses.why import explain
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.engine.fleet import Fleet
        from omniladder.engine.plan import connection_plan

        ids = [parse_auto_id(auto_id)] if auto_id is not None else [
            parse_auto_id("auto/subscription"), parse_auto_id("auto/thrifty")]
        inputs = options.load()
        instant, source, inputs = now_for(now, inputs)
        # The connection's own plan: the rest of the fleet is decided only as far as the
        # positions of its pool entries need (the tests hold it to the whole plan's trace).
        fleet = Fleet(inputs)
        plans = [connection_plan(inputs, parsed, instant, source, connection_id, fleet)
                 for parsed in ids]
        from omniladder.analyses.forecast.pace import catalog_lengths
        from omniladder.inputs.input_set import find_settings, resolve_files
        from omniladder.inputs.scopes import load_window_scopes

        files = resolve_files(find_settings(options.config), inputs.settings,
                              no_shipped_catalogs=options.no_shipped_catalogs)
        lengths = catalog_lengths(load_window_scopes(
            files.window_catalogs, include_shipped=not options.no_shipped_catalogs))
        trace = explain(inputs, plans, connection_id, model, lengths, fleet)
        audits = []
        if traffic is not None:
            from omniladder.analyses.traffic import audit_traffic
            from omniladder.inputs.ledger.read import Ledger

            ledger = Ledger(traffic)
            audits = [audit_traffic(inputs, parsed, ledger, all_requests=True, fleet=fleet)
                      for parsed in ids]
        if json_out:
            from omniladder.rendering.why_view import why_document, why_json

            if not audits:
                sys.stdout.write(why_json(trace) + "\n")
                return
            from omniladder.rendering.json_text import dumps
            from omniladder.rendering.traffic_view import connection_document

            document = why_document(trace)
            document["traffic"] = [connection_document(a, connection_id) for a in audits]
            sys.stdout.write(dumps(document) + "\n")
        else:
            from omniladder.rendering.why_view import render_why

            for warning in plans[0].warnings:
                say(f"omniladder: warning: {warning}")
            render_why(trace, sys.stdout)
            if audits:
                from omniladder.rendering.traffic_view import connection_lines

                for audit in audits:
                    for line in connection_lines(audit, connection_id):
                        sys.stdout.write(line + "\n")
