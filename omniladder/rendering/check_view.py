"""Views of a policy check: the pass/fail table with evidence, the JSON document, JUnit XML."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TextIO
from xml.etree import ElementTree as ET

from omniladder import timefmt
from omniladder.analyses.check import ExpectationResult, PolicyResult
from omniladder.rendering import Format

CHECK_FORMAT_VERSION = "1"


def render_check(result: PolicyResult, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](result, out)


_NOW_SOURCE = {"policy": "the policy", "flag": "--now", "snapshot": "the quota snapshot",
               "clock": "the clock"}


def _where(result: ExpectationResult) -> str:
    return (f"{result.auto_id} at {timefmt.iso(result.now)} "
            f"(now from {_NOW_SOURCE.get(result.now_source, result.now_source)})")


def failure_text(result: ExpectationResult) -> str:
    """Every failed check of one expectation with its evidence, as plain lines."""
    lines: list[str] = []
    for check in result.failed_checks:
        lines.append(f"{check.check}: expected {check.expected}; found {check.actual}")
        lines += [f"  - {line}" for line in check.evidence]
    return "\n".join(lines)


def _table(result: PolicyResult, out: TextIO) -> None:
    from rich.text import Text

    from omniladder.rendering.table import ID, TEXT, fitted_table, make_console

    console = make_console(out)
    header = Text()
    header.append("omniladder check ", style="bold")
    header.append(result.policy_file, style="bold cyan")
    console.print(header)
    if result.files:
        console.print(Text("inputs: " + ", ".join(f"{k} {v}" for k, v in result.files.items()),
                           style="dim"))
    console.print()

    for expectation in result.expectations:
        heading = Text()
        if expectation.passed:
            heading.append("✓ pass ", style="bold green")
        else:
            heading.append("✗ FAIL ", style="bold red")
        heading.append(expectation.name, style="bold")
        heading.append(f" — {_where(expectation)}", style="dim")
        console.print(heading, soft_wrap=True)
        fitted_table(
            console, [("", ID), ("result", ID), ("check", ID), ("expected", TEXT),
                      ("found", TEXT)],
            [[Text("    "), Text("pass", style="green") if check.passed
              else Text("FAIL", style="bold red"), Text(check.check), Text(check.expected),
              Text(check.actual)] for check in expectation.checks],
            box=None, pad_edge=False, padding=(0, 3, 0, 0), show_header=False)
    console.print()

    failed = result.failed
    if failed:
        console.print(Text("Failures", style="bold"))
        for expectation in failed:
            console.print(Text(f"✗ {expectation.name} — {_where(expectation)}",
                               style="bold red"), soft_wrap=True)
            for line in failure_text(expectation).splitlines():
                console.print(Text("  " + line), soft_wrap=True)
            console.print(Text(f"  plan: {expectation.plan_summary}", style="dim"),
                          soft_wrap=True)
        console.print()
    console.print(Text(result.summary, style="bold green" if result.passed else "bold red"),
                  soft_wrap=True)


def check_document(result: PolicyResult) -> dict[str, Any]:
    return {
        "format_version": CHECK_FORMAT_VERSION,
        "policy": result.policy_file,
        "passed": result.passed,
        "inputs": dict(result.files),
        "expectations": [
            {"name": e.name, "auto_id": e.auto_id, "now": timefmt.iso(e.now),
             "now_source": e.now_source, "passed": e.passed,
             "checks": [
                 {"check": c.check, "expected": c.expected, "passed": c.passed,
                  "actual": c.actual, "evidence": list(c.evidence)}
                 for c in e.checks],
             "plan_summary": e.plan_summary}
            for e in result.expectations
        ],
        "warnings": list(result.warnings),
        "summary": result.summary,
    }


def _json(result: PolicyResult, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(check_document(result), out)


def _markdown(result: PolicyResult, out: TextIO) -> None:
    from omniladder.rendering.markdown import code, table, text, warning_lines

    lines = [f"### omniladder check {code(result.policy_file)}", ""]
    if result.files:
        lines += ["inputs: " + ", ".join(f"{text(role)} {code(path)}"
                                         for role, path in result.files.items()), ""]
    lines += warning_lines(result.warnings)
    rows = []
    for expectation in result.expectations:
        for check in expectation.checks:
            rows.append(["✅ pass" if check.passed else "❌ **FAIL**", text(expectation.name),
                         code(expectation.auto_id), code(check.check), text(check.expected),
                         text(check.actual)])
    lines += table(["result", "expectation", "auto id", "check", "expected", "found"], rows)
    lines.append("")
    failed = result.failed
    if failed:
        lines += ["**Failures**", ""]
        for expectation in failed:
            lines.append(f"- ❌ **{text(expectation.name)}** — {text(_where(expectation))}")
            for check in expectation.failed_checks:
                lines.append(f"  - {code(check.check)}: expected {text(check.expected)}; "
                             f"found {text(check.actual)}")
                lines += [f"    - {text(line)}" for line in check.evidence]
            lines.append(f"  - plan: {text(expectation.plan_summary)}")
        lines.append("")
    lines.append(f"**{text(result.summary)}**")
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[PolicyResult, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """XML 1.0 cannot carry control characters even escaped; show them as U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(result: PolicyResult) -> str:
    """JUnit XML as CI systems display it: one testcase per expectation.

    A failed expectation carries a ``failure`` whose message names the failed checks and
    whose text is the evidence; every testcase's ``system-out`` lists all of its checks.
    """
    failures = len(result.failed)
    total = len(result.expectations)
    seconds = f"{sum(e.seconds for e in result.expectations):.3f}"
    suites = ET.Element("testsuites", {
        "name": "omniladder check", "tests": str(total), "failures": str(failures),
        "errors": "0", "time": seconds})
    suite = ET.SubElement(suites, "testsuite", {
        "name": _xml(f"omniladder check {result.policy_file}"), "tests": str(total),
        "failures": str(failures), "errors": "0", "skipped": "0", "time": seconds})
    for expectation in result.expectations:
        case = ET.SubElement(suite, "testcase", {
            "classname": expectation.auto_id, "name": _xml(expectation.name),
            "time": f"{expectation.seconds:.3f}"})
        if not expectation.passed:
            failed = expectation.failed_checks
            failure = ET.SubElement(case, "failure", {
                "type": "omniladder.check",
                "message": f"{len(failed)} of {len(expectation.checks)} checks failed: "
                + ", ".join(c.check for c in failed)})
            failure.text = _xml(failure_text(expectation))
        out = ET.SubElement(case, "system-out")
        lines = [f"{_where(expectation)}", f"plan: {expectation.plan_summary}"]
        lines += [f"{'pass' if c.passed else 'FAIL'} {c.check}: expected {c.expected}; "
                  f"found {c.actual}" for c in expectation.checks]
        out.text = _xml("\n".join(lines))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
