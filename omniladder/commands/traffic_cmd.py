"""`omniladder audit traffic AUTO_ID --traffic FILE`: what served each request vs the plan
in force at its instant (SPEC §7)."""

from __future__ import annotations

import inspect
import math
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperCommand

from omniladder.commands.common import (
    InputOptions,
    PlanFormatOpt,
    answer_is_no,
    say,
    span_instants,
    user_errors,
    with_input_options,
)
from omniladder.errors import UsageError

if TYPE_CHECKING:
    from datetime import datetime

    from typer._click import Context, HelpFormatter

    from omniladder.inputs.ledger.read import Scan


def findings_help() -> str:
    """The help's words on the findings, from ``findings.FINDINGS`` as it is now."""
    from omniladder import findings

    return (f"Each served event of AUTO_ID is held against the plan at its instant (SPEC "
            f"§7.2) and gets one finding, the first whose rule holds: "
            f"{findings.in_words(findings.kinds(), 'or')}. The leak is the cost of "
            f"{findings.in_words(findings.leaking())} events.")


class TrafficCommand(TyperCommand):
    """``audit traffic``: its help names the findings of the one table of them when it is
    shown (after the docstring's first paragraph), so a finding added to the table is in
    the help with no edit here."""

    def format_help_text(self, ctx: Context, formatter: HelpFormatter) -> None:
        first, _, rest = inspect.cleandoc(self.help or "").partition("\n\n")
        for paragraph in (first, findings_help(), rest):
            formatter.write_paragraph()
            with formatter.indentation():
                # wrapped here, kept whole by click (``\b``): a finding is not cut at a hyphen
                width = formatter.width - formatter.current_indent
                formatter.write_text("\b\n" + "\n".join(
                    textwrap.wrap(paragraph, width, break_on_hyphens=False)))


LedgerOpt = Annotated[Path | None, typer.Option(
    "--traffic", help="Traffic ledger (JSONL, or JSON/TOML with events); overrides "
    "[inputs] traffic.", show_default=False)]
"""``--traffic`` of the commands that read a whole ledger (``traffic_path`` resolves it)."""
SpanStartOpt = Annotated[str | None, typer.Option(
    "--from", metavar="RFC3339|now", help="Start of the span (RFC 3339 with offset, or 'now' "
    "for the current time); default: the ledger's first event.", show_default=False)]
SpanEndOpt = Annotated[str | None, typer.Option(
    "--to", metavar="RFC3339|now", help="End of the span (RFC 3339 with offset, or 'now'); "
    "default: the ledger's last event.", show_default=False)]
"""``--from`` and ``--to`` of the commands that read a span of a ledger (``span_instants``)."""


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


def check_span(begin: datetime | None, finish: datetime | None, scan: Scan,
               start: str | None, end: str | None) -> None:
    """A --from after the ledger's last event with no --to (the span would end at that
    event, before it starts), or a --to before its first with no --from, is a usage error
    naming both instants, not an audit of no events. Given both, a span outside the
    ledger is a question with an answer: nothing was served in it."""
    from omniladder import timefmt

    if begin is not None and finish is None and scan.last is not None and begin > scan.last:
        raise UsageError(f"--from {start} is after the ledger's last event "
                         f"({timefmt.iso(scan.last)}); give --to as well to audit a span "
                         "past the ledger", field="--from")
    if finish is not None and begin is None and scan.first is not None and finish < scan.first:
        raise UsageError(f"--to {end} is before the ledger's first event "
                         f"({timefmt.iso(scan.first)}); give --from as well to audit a span "
                         "before the ledger", field="--to")


@with_input_options
def traffic(
    auto_id: Annotated[str, typer.Argument(
        metavar="AUTO_ID", help="The auto id whose traffic to audit, e.g. auto/thrifty.",
        show_default=False)],
    ledger: LedgerOpt = None,
    start: SpanStartOpt = None,
    end: SpanEndOpt = None,
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

    Exit 1 when the leak is more than --max-leak-usd or a leak event cannot be priced.
    """
    with user_errors():
        from omniladder.analyses.traffic import audit_traffic
        from omniladder.commands.common import plan_output_format
        from omniladder.engine.autoid import parse_auto_id
        from omniladder.inputs.ledger.read import Ledger
        from omniladder.rendering import Format
        from omniladder.rendering.traffic_view import render_traffic, traffic_metrics

        chosen = plan_output_format(fmt, json_out)
        parsed = parse_auto_id(auto_id)
        allowance = check_allowance(max_leak_usd)
        begin, finish = span_instants(start, end)
        path = traffic_path(ledger, options)
        inputs = options.load()
        found = Ledger(path)
        result = audit_traffic(inputs, parsed, found, start=begin, end=finish,
                               all_requests=all_requests, max_leak_usd=allowance)
        check_span(begin, finish, found.scan(), start, end)  # the read is over: no read again
        if chosen is not Format.JSON:
            for line in result.warnings:
                say(f"omniladder: warning: {line}")
        if chosen is None:
            sys.stdout.write(traffic_metrics(result))
        else:
            render_traffic(result, chosen, sys.stdout)
        if not result.passed:
            answer_is_no(result.verdict)
