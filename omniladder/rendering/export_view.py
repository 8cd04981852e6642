"""Views of an export's fidelity report: a table (on stderr, beside the document on stdout),
the JSON report (schemas/export.schema.json) and markdown for a pull request.

Each format is one function behind ``RENDERERS``. The JSON and markdown views carry the
exported document too, since they take standard output's place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TextIO

from omniladder import timefmt
from omniladder.analyses.export.core import Comparison, Export
from omniladder.analyses.export.fidelity import LEVELS, Fidelity
from omniladder.rendering import Format

EXPORT_FORMAT_VERSION = "1"

LEVEL_TITLES = {
    "dropped": "dropped — in the plan, not in the export",
    "warning": "warning — exported, but the gateway may not do what the plan says",
    "info": "info — how the gateway differs from the plan",
}


class ExportReport(NamedTuple):
    export: Export
    current: Comparison | None
    out: str | None
    """The file the document was written to, or None for standard output."""

    def verdict(self) -> str:
        text = self.export.summary()
        if self.current is not None:
            if self.current.equal:
                text += f"; identical to {self.current.file}"
            else:
                count = len(self.current.differences)
                text += (f"; differs from {self.current.file} ({count} "
                         f"difference{'' if count == 1 else 's'})")
        return text


ROWS_PER_CODE = 20
"""The table and markdown views list this many items of one code, then count the rest
(``--json`` lists every item): a fleet of thousands still gets a report one can read."""


def shown(found: list[Fidelity]) -> list[Fidelity | tuple[str, int]]:
    """The items a view lists, in order, with ``(code, n)`` where n more of a code follow."""
    out: list[Fidelity | tuple[str, int]] = []
    by_code: dict[str, list[Fidelity]] = {}
    for one in found:
        by_code.setdefault(one.code, []).append(one)
    for code, items in by_code.items():
        out += items[:ROWS_PER_CODE]
        if len(items) > ROWS_PER_CODE:
            out.append((code, len(items) - ROWS_PER_CODE))
    return out


def _more(code: str, count: int) -> str:
    return f"and {count} more {code} item{'' if count == 1 else 's'} (--json lists them all)"


def render_report(report: ExportReport, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](report, out)


def report_document(report: ExportReport) -> dict[str, Any]:
    export = report.export
    plan = export.plan
    return {
        "format_version": EXPORT_FORMAT_VERSION,
        "target": export.target.name,
        "auto_id": plan.auto_id.text,
        "name": export.name,
        "now": plan.now,
        "now_source": plan.now_source,
        "plan_file": plan.plan_file,
        "map_file": export.map_file,
        "verified_only": export.verified_only,
        "exported": {"pool_entries": len(plan.entries), "entries": export.entries,
                     "units": export.units},
        "fidelity": [fidelity_document(found) for found in export.fidelity],
        "counts": export.counts(),
        "current": None if report.current is None else {
            "file": report.current.file, "equal": report.current.equal,
            "differences": list(report.current.differences),
            "empties": report.current.empties, "first_run": report.current.first_run},
        "out": report.out,
        "document": export.document,
        "warnings": list(plan.warnings),
        "summary": report.verdict(),
    }


def fidelity_document(found: Fidelity) -> dict[str, Any]:
    return {"code": found.code, "level": found.level, "connection_id": found.connection_id,
            "provider": found.provider, "model": found.model, "message": found.message}


def _json(report: ExportReport, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(report_document(report), out)


def _header(report: ExportReport) -> tuple[str, str]:
    export = report.export
    plan = export.plan
    what = export.target.group
    source = f"saved plan {plan.plan_file}" if plan.plan_file else (
        f"planned for {plan.now}"
        + (f" ({timefmt.now_source(plan.now_source)})" if plan.now_source else ""))
    where = f"written to {report.out}" if report.out else "document on standard output"
    return (f"omniladder export {export.target.name} {plan.auto_id.text} → {what} "
            f"{export.name}", f"{source} · {where}")


def _table(report: ExportReport, out: TextIO) -> None:
    from rich import box
    from rich.text import Text

    from omniladder.rendering.table import ID, TEXT, fitted_table, make_console

    console = make_console(out)
    title, line = _header(report)
    console.print(Text(title, style="bold"), soft_wrap=True)
    console.print(Text(line, style="dim"), soft_wrap=True)
    console.print()
    for level in LEVELS:
        found = [f for f in report.export.fidelity if f.level == level]
        if not found:
            continue
        rows = [[Text(f.code, style="yellow" if level != "info" else ""), Text(f.subject),
                 Text(f.message)] if isinstance(f, Fidelity)
                else [Text("…"), Text(""), Text(_more(*f))] for f in shown(found)]
        fitted_table(console, [("code", ID), ("subject", ID), ("detail", TEXT)], rows,
                     title=f"{LEVEL_TITLES[level]} ({len(found)})", box=box.SIMPLE_HEAD,
                     pad_edge=False)
    if report.current is not None and report.current.differences:
        console.print(Text(f"differs from {report.current.file}:", style="bold"),
                      soft_wrap=True)
        for difference in report.current.differences:
            console.print(Text(f"  {difference}"), soft_wrap=True)
        console.print()
    equal = report.current is None or report.current.equal
    console.print(Text(report.verdict(), style="bold green" if equal else "bold red"),
                  soft_wrap=True)


def _markdown(report: ExportReport, out: TextIO) -> None:
    from omniladder.rendering import markdown as md

    title, line = _header(report)
    export = report.export
    lines = [f"### {md.text(title)}", "", *md.warning_lines(export.plan.warnings),
             md.text(line), ""]
    for level in LEVELS:
        found = [f for f in export.fidelity if f.level == level]
        if not found:
            continue
        lines += [f"#### {md.text(LEVEL_TITLES[level])} ({len(found)})", ""]
        lines += md.table(["code", "subject", "detail"],
                          [[md.code(f.code), md.code(f.subject), md.text(f.message)]
                           if isinstance(f, Fidelity) else ["…", "", md.text(_more(*f))]
                           for f in shown(found)])
        lines.append("")
    if report.current is not None and report.current.differences:
        lines += [f"#### differs from {md.code(report.current.file)}", ""]
        lines += [f"* {md.text(difference)}" for difference in report.current.differences]
        lines.append("")
    language = export.target.format
    fence = "```"
    while fence in export.text:
        fence += "`"
    lines += [f"<details><summary>{md.text(export.name)}</summary>", "",
              f"{fence}{language}", export.text.rstrip("\n"), fence, "", "</details>", "",
              f"**{md.text(report.verdict())}**"]
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[ExportReport, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}
