"""Views of a gateway audit: one table per kind of finding with a verdict line, and JSON.

Each format is one function behind ``RENDERERS``; a new format (markdown) is one more
function and one more key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from omniladder import timefmt
from omniladder.analyses.audit import KINDS, Audit, Finding, gateway_text
from omniladder.rendering import Format

AUDIT_FORMAT_VERSION = "1"

KIND_TITLES = {
    "would-bill": "would-bill — the gateway uses what the plan keeps out to avoid billing",
    "would-dispatch-exhausted": "would-dispatch-exhausted — the gateway uses what the plan "
    "finds exhausted, cooling down or gated",
    "would-dispatch-unknown": "would-dispatch-unknown — the gateway uses what the plan cannot "
    "vouch for (not in its inputs)",
    "unknown-to-plan": "unknown-to-plan — the gateway uses what the plan's inputs do not have",
    "missed-capacity": "missed-capacity — the plan admits what the gateway skips",
}


def _rows(count: int) -> str:
    return f"{count} row{'' if count == 1 else 's'}"


def render_audit(audit: Audit, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](audit, out)


def audit_document(audit: Audit) -> dict[str, Any]:
    return {
        "format_version": AUDIT_FORMAT_VERSION,
        "auto_id": audit.auto_id.text,
        "now": timefmt.iso(audit.now),
        "now_source": audit.now_source,
        "candidates_file": audit.file,
        "channel": audit.channel,
        "inputs": dict(audit.files),
        "strict": audit.strict,
        "passed": audit.passed,
        "findings": [finding_document(f) for f in audit.findings],
        "counts": {"rows": audit.rows, "used": audit.used, **audit.counts},
        "plan_summary": audit.plan_summary,
        "warnings": list(audit.warnings),
        "summary": audit.summary,
    }


def finding_document(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "connection_id": finding.connection_id,
        "provider": finding.provider,
        "model": finding.model,
        "reason": finding.reason,
        "detail": finding.detail,
        "plan_rung": finding.plan_rung,
        "gateway": finding.gateway.flags() if finding.gateway is not None else None,
    }


def _json(audit: Audit, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(audit_document(audit), out)


def _table(audit: Audit, out: TextIO) -> None:
    from rich import box
    from rich.text import Text

    from omniladder.rendering.table import ID, TEXT, fitted_table, make_console

    console = make_console(out)
    header = Text()
    header.append("omniladder audit omniroute ", style="bold")
    header.append(audit.file, style="bold cyan")
    console.print(header, soft_wrap=True)
    channel = f"channel {audit.channel}" if audit.channel else "no channel"
    console.print(Text(f"{audit.auto_id.text} at {timefmt.iso(audit.now)} "
                       f"({timefmt.now_source(audit.now_source)}) · {channel} · "
                       f"{_rows(audit.rows)}, {audit.used} in use"), soft_wrap=True)
    if audit.files:
        console.print(Text("inputs: " + ", ".join(f"{k} {v}" for k, v in audit.files.items()),
                           style="dim"), soft_wrap=True)
    console.print(Text(f"plan: {audit.plan_summary}", style="dim"), soft_wrap=True)
    console.print()
    for kind in KINDS:
        found = audit.of_kind(kind)
        if not found:
            continue
        fitted_table(
            console, [("connection", ID), ("model", ID), ("rung", ID), ("reason", ID),
                      ("gateway", ID), ("detail", TEXT)],
            [[Text(f.connection_id), Text(f"{f.provider}/{f.model}"), Text(f.plan_rung or "-"),
              Text(f.reason, style="yellow"), Text(gateway_text(f)), Text(f.detail)]
             for f in found],
            title=f"{KIND_TITLES[kind]} ({len(found)})", box=box.SIMPLE_HEAD, pad_edge=False)
    if not audit.findings:
        console.print(Text("No findings: every row the gateway uses is admitted by the plan, "
                           "and the gateway uses all the plan admits."))
        console.print()
    console.print(Text(audit.summary, style="bold green" if audit.passed else "bold red"),
                  soft_wrap=True)


def _markdown(audit: Audit, out: TextIO) -> None:
    from omniladder.rendering import markdown as md

    channel = f"channel {md.code(audit.channel)}" if audit.channel else "no channel"
    lines = [f"### omniladder audit omniroute {md.code(audit.file)}", "",
             *md.warning_lines(audit.warnings),
             f"{md.code(audit.auto_id.text)} at {md.code(timefmt.iso(audit.now))} "
             f"({md.text(timefmt.now_source(audit.now_source))}) · {channel} · "
             f"{_rows(audit.rows)}, {audit.used} in use", "",
             f"plan: {md.text(audit.plan_summary)}", ""]
    for kind in KINDS:
        found = audit.of_kind(kind)
        if not found:
            continue
        lines += [f"#### {md.text(KIND_TITLES[kind])} ({len(found)})", ""]
        lines += md.table(
            ["connection", "model", "rung", "reason", "gateway", "detail"],
            [[md.code(f.connection_id), md.code(f"{f.provider}/{f.model}"),
              md.code(f.plan_rung or "-"), md.code(f.reason), md.text(gateway_text(f)),
              md.text(f.detail)] for f in found])
        lines.append("")
    if not audit.findings:
        lines += ["No findings: every row the gateway uses is admitted by the plan, and the "
                  "gateway uses all the plan admits.", ""]
    lines.append(f"**{md.text(audit.summary)}**")
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[Audit, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}
