"""`omniladder audit traffic AUTO_ID --traffic FILE`: what served each request vs the plan
in force at its instant (SPEC §7)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer

from omniladder.commands.common import (
    InputOptions,
    PlanFormatOpt,
    answer_is_no,
    say,
    user_errors,
    with_input_options,
)
from omniladder.errors import UsageError


def traffic_path(flag: Path | None, options: InputOptions) -> Path:
    """``--traffic``, else the settings file's ``[inputs] traffic`` (relative to it)."""
    if flag is not None:
        return flag
    from omniladder.inputs.input_set import find_settings, load_settings

    settings_path = find_settings(options.config)
    settings = load_settings(settings_path)
    if settings.inputs.traffic is None:
        raise UsageError("no traffic ledger: pass --traffic, or --config with [inputs] traffic",
                         field="--traffic")
    base = settings_path.parent if settings_path is not None else Path(".")
    return base / settings.inputs.traffic


def check_allowance(value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"must be a finite amount of US dollars, 0 or more, got {value:g}",
                         field="--max-leak-usd")
    return value


@with_input_options
def traffic(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="The auto id whose traffic to audit, e.g. auto/thrifty.",
        show_default=False)],
    ledger: Annotated[Path | None, typer.Option(
        "--traffic", help="Traffic ledger (JSONL, or JSON/TOML with events); overrides "
        "[inputs] traffic.", show_default=False)] = None,
    start: Annotated[str | None, typer.Option(
        "--from", help="Start of the audited span (RFC 3339 with offset); default: the "
        "ledger's first event.", show_default=False)] = None,
    end: Annotated[str | None, typer.Option(
        "--to", help="End of the audited span (RFC 3339 with offset); default: the ledger's "
        "last event.", show_default=False)] = None,
    all_requests: Annotated[bool, typer.Option(
        "--all-requests", help="Also audit events that name no requested id against "
        "AUTO_ID.")] = False,
    max_leak_usd: Annotated[float, typer.Option(
        "--max-leak-usd", help="Exit 1 when the leak is more than this many US dollars.",
        show_default=True)] = 0.0,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print the JSON audit document (the same as --format json).")] = False,
    fmt: PlanFormatOpt = None,
    *,
    options: InputOptions,
) -> None:
    """Audit a gateway's traffic: what served each request, against the plan in force.

    Each served event of AUTO_ID is held against the plan at its instant (SPEC §7.2) and
    gets one finding: unknown-connection, off-plan-billed, served-excluded, early-paid,
    above-head or on-plan. The leak is the cost of off-plan-billed and early-paid events.
    Exit 1 when the leak is more than --max-leak-usd or a leak event cannot be priced.
    """
    with user_errors():
        from omniladder.analyses.traffic import audit_traffic
        from omniladder.commands.common import plan_output_format
        from omniladder.engine.autoid import parse_auto_id, parse_instant
        from omniladder.inputs.traffic import Ledger
        from omniladder.rendering import Format
        from omniladder.rendering.traffic_view import render_traffic, traffic_metrics

        chosen = plan_output_format(fmt, json_out)
        parsed = parse_auto_id(auto_id)
        allowance = check_allowance(max_leak_usd)
        begin = parse_instant(start, "--from") if start is not None else None
        finish = parse_instant(end, "--to") if end is not None else None
        if begin is not None and finish is not None and begin > finish:
            raise UsageError(f"--from {start} is after --to {end}", field="--from")
        path = traffic_path(ledger, options)
        inputs = options.load()
        found = Ledger(path)
        result = audit_traffic(inputs, parsed, found, start=begin, end=finish,
                               all_requests=all_requests, max_leak_usd=allowance)
        if chosen is not Format.JSON:
            for line in result.warnings:
                say(f"omniladder: warning: {line}")
        if chosen is None:
            sys.stdout.write(traffic_metrics(result))
        else:
            render_traffic(result, chosen, sys.stdout)
        if not result.passed:
            answer_is_no(result.verdict)
