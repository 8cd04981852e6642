"""Views of a traffic audit (SPEC §7.6): one verdict line, then tables by finding, by
connection and by hour, the quota that expired unused and the costliest leak events; the
same figures as JSON, markdown and OpenMetrics.

Each format is one function behind ``RENDERERS``; OpenMetrics is ``traffic_metrics``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO

from omniladder import findings, timefmt
from omniladder.analyses.traffic import ExpiredUnused, Judged, TrafficAudit, no_counts
from omniladder.rendering import Format

TRAFFIC_FORMAT_VERSION = "1"
HOURS_SHOWN = 48
"""The human and markdown views list at most this many hours (the JSON lists every one)."""


def money(value: float) -> float:
    """A sum of dollars as the JSON carries it: to the millionth, without float noise."""
    return round(value, 6)


def render_traffic(audit: TrafficAudit, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](audit, out)


def judged_document(judged: Judged) -> dict[str, Any]:
    return {
        "at": timefmt.iso(judged.at),
        "connection": judged.connection,
        "model": judged.model,
        "finding": judged.finding,
        "cost_usd": None if judged.cost_usd is None else money(judged.cost_usd),
        "rung": judged.rung,
        "head_rung": judged.head,
        "reason": judged.reason,
        "detail": judged.detail,
        "failed_attempts": judged.failed_attempts,
        "request_id": judged.request_id,
        "where": judged.where,
        "price_source": judged.price_source,
    }


def expired_document(item: ExpiredUnused) -> dict[str, Any]:
    return {
        "connection": item.connection,
        "window": item.window,
        "models": None if item.models is None else list(item.models),
        "reset_at": timefmt.iso(item.reset_at),
        "percent": item.percent,
        "checked_at": timefmt.iso(item.checked_at),
    }


def _instant(value: datetime | None) -> str | None:
    return None if value is None else timefmt.iso(value)


def traffic_document(audit: TrafficAudit) -> dict[str, Any]:
    return {
        "format_version": TRAFFIC_FORMAT_VERSION,
        "auto_id": audit.auto_id.text,
        "from": _instant(audit.start),
        "to": _instant(audit.end),
        "ledger": audit.ledger,
        "inputs": dict(audit.files),
        "all_requests": audit.all_requests,
        "max_leak_usd": audit.max_leak_usd,
        "passed": audit.passed,
        "events": {
            "read": audit.events_read,
            "duplicates": audit.duplicates,
            "audited": audit.audited,
            "failed": audit.failed,
            "not_audited": dict(audit.not_audited),
        },
        "counts": dict(audit.counts),
        "leak_usd": money(audit.leak_usd),
        "leak_by_finding": {k: money(v) for k, v in audit.leak_split.items()},
        "cost_usd": money(audit.cost_usd),
        "price_database": audit.price_database,
        "unpriced": {
            "count": audit.unpriced,
            "leak": audit.leak_unpriced,
            "events": [judged_document(j) for j in audit.unpriced_events],
        },
        "unattributed": [{"connection": cid, "events": count}
                         for cid, count in sorted(audit.unattributed.items())],
        "expired_unused": [expired_document(e) for e in audit.expired_unused],
        "by_connection": [
            {"connection": cid, "served": t.served, "failed": t.failed,
             "cost_usd": money(t.cost_usd), "leak_usd": money(t.leak_usd),
             "unpriced": t.unpriced, "counts": dict(t.counts)}
            for cid, t in audit.by_connection.items()],
        "by_hour": [
            {"hour": timefmt.iso(hour), "served": t.served, "leak_usd": money(t.leak_usd),
             "counts": dict(t.counts)}
            for hour, t in audit.by_hour.items()],
        "top_leaks": [judged_document(j) for j in audit.top_leaks],
        "plan_steps": audit.plan_steps,
        "warnings": list(audit.warnings),
        "notes": list(audit.notes),
        "summary": audit.verdict,
    }


def _json(audit: TrafficAudit, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(traffic_document(audit), out)


def _span(audit: TrafficAudit) -> str:
    if audit.start is None or audit.end is None:
        return "an empty ledger"
    return f"{timefmt.iso(audit.start)} to {timefmt.iso(audit.end)}"


def _heading(audit: TrafficAudit) -> str:
    events = audit.events_read
    return (f"{audit.auto_id.text} from {_span(audit)} · {events} event"
            f"{'' if events == 1 else 's'} read, {audit.audited} audited, {audit.failed} "
            f"failed attempt{'' if audit.failed == 1 else 's'} · {audit.plan_steps} plan "
            f"step{'' if audit.plan_steps == 1 else 's'}")


def _not_audited(audit: TrafficAudit) -> str | None:
    skipped = audit.not_audited
    parts = []
    if skipped["other-request"]:
        parts.append(f"{skipped['other-request']} requested another auto id")
    if skipped["no-request"]:
        parts.append(f"{skipped['no-request']} name no requested id (--all-requests audits "
                     "them)")
    if skipped["outside-span"]:
        parts.append(f"{skipped['outside-span']} fall outside the span")
    return ("not audited: " + "; ".join(parts)) if parts else None


def _finding_rows(audit: TrafficAudit) -> list[list[str]]:
    rows = []
    for kind, finding in findings.FINDINGS.items():
        leak = audit.leak_split.get(kind)
        rows.append([kind, str(audit.counts[kind]),
                     timefmt.usd_exact(leak) if finding.leaks and leak is not None
                     else "-", finding.meaning])
    return rows


def _off_plan(counts: dict[str, int]) -> str:
    """The findings off plan with their counts, in the table's order ("-" for none)."""
    table = findings.FINDINGS
    return ", ".join(f"{kind} {n}" for kind, n in counts.items()
                     if n and table[kind].off_plan) or "-"


def _connection_rows(audit: TrafficAudit) -> list[list[str]]:
    return [[cid, str(t.served), str(t.failed), timefmt.usd_exact(t.cost_usd),
             timefmt.usd_exact(t.leak_usd), str(t.unpriced), _off_plan(t.counts)]
            for cid, t in audit.by_connection.items()]


def _hour_rows(audit: TrafficAudit) -> tuple[list[list[str]], int]:
    """The hours with an event off plan (every one when none is), at most HOURS_SHOWN."""
    table = findings.FINDINGS
    hours = [(hour, t) for hour, t in audit.by_hour.items()
             if any(n and table[kind].off_plan for kind, n in t.counts.items())
             ] or list(audit.by_hour.items())
    rows = [[timefmt.iso(hour), str(t.served), timefmt.usd_exact(t.leak_usd),
             _off_plan(t.counts)] for hour, t in hours[:HOURS_SHOWN]]
    return rows, max(len(hours) - HOURS_SHOWN, 0)


def _leak_rows(audit: TrafficAudit) -> list[list[str]]:
    return [[timefmt.iso(j.at), j.connection, j.model, j.finding,
             timefmt.usd_exact(j.cost_usd or 0.0), j.rung or "-", j.head or "none",
             (f"{j.reason}: {j.detail}" if j.reason else j.detail)
             + (f" ({j.failed_attempts} failed attempt{'s' if j.failed_attempts != 1 else ''}"
                " before)" if j.failed_attempts else "")]
            for j in audit.top_leaks]


def _expired_rows(audit: TrafficAudit) -> list[list[str]]:
    return [[e.connection, e.window, timefmt.iso(e.reset_at), timefmt.pct(e.percent),
             timefmt.iso(e.checked_at)] for e in audit.expired_unused]


def _unpriced_rows(audit: TrafficAudit) -> list[list[str]]:
    return [[timefmt.iso(j.at), j.connection, j.model, j.finding, j.where]
            for j in audit.unpriced_events]


def _outcome(audit: TrafficAudit) -> str:
    leak, allowance = audit.leak_usd, audit.max_leak_usd
    if audit.passed:
        return (f"passed: leak {timefmt.usd_exact(leak, allowance)} within "
                f"{timefmt.usd_exact(allowance, leak)}")
    if audit.leak_unpriced:
        return (f"failed: {audit.leak_unpriced} leak event"
                f"{'s' if audit.leak_unpriced != 1 else ''} unpriced, so the leak's size is "
                "unknown")
    return (f"failed: leak {timefmt.usd_exact(leak, allowance)} is more than "
            f"{timefmt.usd_exact(allowance, leak)}")


_SECTIONS: tuple[tuple[str, list[tuple[str, str]]], ...] = (
    ("by finding", [("finding", "id"), ("events", "num"), ("leak", "num"),
                    ("meaning", "text")]),
    ("by connection", [("connection", "id"), ("served", "num"), ("failed", "num"),
                       ("cost", "num"), ("leak", "num"), ("unpriced", "num"),
                       ("off plan", "text")]),
    ("by hour (UTC)", [("hour", "id"), ("served", "num"), ("leak", "num"),
                       ("off plan", "text")]),
    ("quota that expired unused", [("connection", "id"), ("window", "id"),
                                   ("reset", "id"), ("left", "num"),
                                   ("last read", "id")]),
    ("costliest leak events", [("at", "id"), ("connection", "id"), ("model", "id"),
                               ("finding", "id"), ("cost", "num"), ("rung", "id"),
                               ("head", "id"), ("what the plan had", "text")]),
    ("unpriced events (no recorded cost, no price for the tokens)",
     [("at", "id"), ("connection", "id"), ("model", "id"), ("finding", "id"),
      ("where", "id")]),
)


def _sections(audit: TrafficAudit) -> list[tuple[str, list[tuple[str, str]], list[list[str]]]]:
    hours, more = _hour_rows(audit)
    hour_title = _SECTIONS[2][0] + (f", first {HOURS_SHOWN} of {HOURS_SHOWN + more}"
                                    if more else "")
    found = [
        (_SECTIONS[0][0], _SECTIONS[0][1], _finding_rows(audit)),
        (_SECTIONS[1][0], _SECTIONS[1][1], _connection_rows(audit)),
        (hour_title, _SECTIONS[2][1], hours),
        (_SECTIONS[3][0], _SECTIONS[3][1], _expired_rows(audit)),
        (_SECTIONS[4][0], _SECTIONS[4][1], _leak_rows(audit)),
        (_SECTIONS[5][0] + (f", first {len(audit.unpriced_events)} of {audit.unpriced}"
                            if audit.unpriced > len(audit.unpriced_events) else ""),
         _SECTIONS[5][1], _unpriced_rows(audit)),
    ]
    return [(title, columns, rows) for title, columns, rows in found if rows]


def _table(audit: TrafficAudit, out: TextIO) -> None:
    from rich import box
    from rich.text import Text

    from omniladder.rendering.table import ID, NUM, TEXT, fitted_table, make_console

    kinds = {"id": ID, "num": NUM, "text": TEXT}
    console = make_console(out)
    console.print(Text(audit.verdict, style="bold green" if audit.passed else "bold red"),
                  soft_wrap=True)
    header = Text()
    header.append("omniladder audit traffic ", style="bold")
    header.append(audit.ledger, style="bold cyan")
    console.print(header, soft_wrap=True)
    console.print(Text(_heading(audit)), soft_wrap=True)
    skipped = _not_audited(audit)
    if skipped:
        console.print(Text(skipped, style="dim"), soft_wrap=True)
    if audit.files:
        console.print(Text("inputs: " + ", ".join(f"{k} {v}" for k, v in audit.files.items()),
                           style="dim"), soft_wrap=True)
    console.print()
    for title, columns, rows in _sections(audit):
        fitted_table(console, [(name, kinds[kind]) for name, kind in columns],
                     [[Text(cell) for cell in row] for row in rows], title=title,
                     box=box.SIMPLE_HEAD, pad_edge=False)
    for note in audit.notes:
        console.print(Text(f"note: {note}", style="dim"), soft_wrap=True)
    console.print(Text(_outcome(audit), style="bold green" if audit.passed else "bold red"),
                  soft_wrap=True)


def _markdown(audit: TrafficAudit, out: TextIO) -> None:
    from omniladder.rendering import markdown as md

    lines = [f"**{md.text(audit.verdict)}**", "",
             f"### omniladder audit traffic {md.code(audit.ledger)}", "",
             *md.warning_lines(audit.warnings), md.text(_heading(audit)), ""]
    skipped = _not_audited(audit)
    if skipped:
        lines += [md.text(skipped), ""]
    for title, columns, rows in _sections(audit):
        numeric = [index for index, (_, kind) in enumerate(columns) if kind == "num"]
        lines += [f"#### {md.text(title)}", ""]
        lines += md.table([name for name, _ in columns],
                          [[md.code(cell) if kind == "id" else md.text(cell)
                            for cell, (_, kind) in zip(row, columns, strict=True)]
                           for row in rows], numeric)
        lines.append("")
    lines += [f"note: {md.text(note)}  " for note in audit.notes]
    if audit.notes:
        lines.append("")
    lines.append(f"**{md.text(_outcome(audit))}**")
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[TrafficAudit, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}


# --- OpenMetrics ---------------------------------------------------------------------------


def traffic_metrics(audit: TrafficAudit) -> str:
    """The audit's figures as OpenMetrics gauges, each series labelled with the auto id."""
    from omniladder.rendering.openmetrics import escape_label, number

    auto = escape_label(audit.auto_id.text)
    lines: list[str] = []

    def family(name: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        full = f"omniladder_traffic_{name}"
        lines.append(f"# HELP {full} {help_text}\n")
        lines.append(f"# TYPE {full} gauge\n")
        for labels, value in samples:
            extra = f",{labels}" if labels else ""
            lines.append(f'{full}{{auto_id="{auto}"{extra}}} {number(float(value))}\n')

    family("events", "Audited served events of the auto id by finding (SPEC 7.3).",
           [(f'finding="{f}"', audit.counts[f]) for f in findings.FINDINGS])
    family("leak_usd", "US dollars paid off plan or early (SPEC 7.3), by finding.",
           [(f'finding="{f}"', money(audit.leak_split[f])) for f in findings.leaking()])
    family("unpriced_events", "Events that must be priced and could not be (SPEC 7.4).",
           [("", audit.unpriced)])
    family("unpriced_leak_events", "Leak events that could not be priced.",
           [("", audit.leak_unpriced)])
    family("failed_attempts", "Failed attempts by connection.",
           [(f'connection="{escape_label(cid)}"', t.failed)
            for cid, t in audit.by_connection.items()])
    family("connection_leak_usd", "US dollars of leak by the connection that served it.",
           [(f'connection="{escape_label(cid)}"', money(t.leak_usd))
            for cid, t in audit.by_connection.items()])
    family("expired_unused_percent", "Share of a quota window left when it reset inside the "
           "span (SPEC 7.5).",
           [(f'connection="{escape_label(e.connection)}",window="{escape_label(e.window)}",'
             f'reset_at="{timefmt.iso(e.reset_at)}"', e.percent)
            for e in audit.expired_unused])
    family("span_end_seconds", "End of the audited span, Unix seconds.",
           [("", audit.end.timestamp() if audit.end is not None else float("nan"))])
    family("passed", "1 when the leak is within --max-leak-usd and every leak event is "
           "priced, else 0.", [("", 1 if audit.passed else 0)])
    lines.append("# EOF\n")
    return "".join(lines)


# --- one connection, for `why --traffic` ------------------------------------------------------


def connection_document(audit: TrafficAudit, connection: str) -> dict[str, Any]:
    """What one connection served of the audited id, and what the plan held at those
    instants (``why CONNECTION --traffic FILE``)."""
    tally = audit.by_connection.get(connection)
    return {
        "auto_id": audit.auto_id.text,
        "ledger": audit.ledger,
        "served": tally.served if tally else 0,
        "failed": tally.failed if tally else 0,
        "first": _instant(tally.first) if tally else None,
        "last": _instant(tally.last) if tally else None,
        "counts": dict(tally.counts) if tally else no_counts(),
        "held": dict(sorted(tally.held.items(), key=lambda kv: -kv[1])) if tally else {},
        "cost_usd": money(tally.cost_usd) if tally else 0.0,
        "leak_usd": money(tally.leak_usd) if tally else 0.0,
        "unpriced": tally.unpriced if tally else 0,
    }


def connection_lines(audit: TrafficAudit, connection: str) -> list[str]:
    """The same, as the lines the human view of ``why`` ends with."""
    found = connection_document(audit, connection)
    head = f"traffic under {found['auto_id']} ({found['ledger']}): "
    if not found["served"]:
        return [head + f"{connection} served no audited request"
                + (f"; {found['failed']} failed attempt(s)" if found["failed"] else "")]
    findings = ", ".join(f"{name} {n}" for name, n in found["counts"].items() if n)
    held = ", ".join(f"{name} {n}" for name, n in found["held"].items())
    return [head + f"{connection} served {found['served']} request(s) from "
             f"{found['first']} to {found['last']}: {findings}",
             f"  the plan in force held it: {held}",
             f"  cost {timefmt.usd_exact(found['cost_usd'])}, "
             f"leak {timefmt.usd_exact(found['leak_usd'])}"
             + (f", {found['unpriced']} unpriced" if found["unpriced"] else "")
             + (f"; {found['failed']} failed attempt(s)" if found["failed"] else "")]


# --- leak events on a timeline, for `simulate --traffic` ------------------------------------

LEAK_COLOUR = "#b71c1c"


def leak_events(audit: TrafficAudit) -> list[Judged]:
    """The costliest leak events, then the unpriced ones: what a timeline marks."""
    leaking = findings.leaking()
    unpriced = [j for j in audit.unpriced_events if j.finding in leaking]
    return [*audit.top_leaks, *unpriced]


def leak_markers(audit: TrafficAudit) -> tuple[tuple[datetime, str, str], ...]:
    """(instant, label, colour) of each leak event, in time order, for the SVG."""
    return tuple(
        (j.at, f"{'unpriced' if j.cost_usd is None else timefmt.usd_exact(j.cost_usd)} "
               f"{j.finding} {j.connection}", LEAK_COLOUR)
        for j in sorted(leak_events(audit), key=lambda j: j.at))


def audit_command(audit: TrafficAudit) -> str:
    """The ``audit traffic`` command line that gives the same figures as an audit made for
    another command (``simulate --traffic``: its own span, every event naming no id)."""
    import shlex

    words = ["omniladder", "audit", "traffic", audit.auto_id.text, "--traffic", audit.ledger]
    if audit.all_requests:
        words.append("--all-requests")
    if audit.start is not None and audit.end is not None:
        words += ["--from", timefmt.iso(audit.start), "--to", timefmt.iso(audit.end)]
    return shlex.join(words)


def leak_lines(audit: TrafficAudit) -> list[str]:
    """The lines the text timeline ends with: the leak, what was audited to find it (the
    audit traffic command that prints the same figures), then the leak events, each
    worded on its own, so the listed figures need not add up to the total."""
    events = sorted(leak_events(audit), key=lambda j: j.at)
    included = (", the events that name no requested id included" if audit.all_requests
                else "")
    lines = [f"Leak events ({audit.ledger}): {timefmt.usd_exact(audit.leak_usd)} in "
             f"{sum(audit.counts[kind] for kind in findings.leaking())} event(s)"
             + (f", {audit.leak_unpriced} unpriced" if audit.leak_unpriced else "")
             + f" from {_span(audit)}{included}: the figures of `{audit_command(audit)}`"]
    if events:
        lines.append("The costliest, each rounded on its own (they need not add up to the "
                     "total):")
    lines += [f"  {timefmt.iso(j.at)} {j.connection} {j.model} {j.finding} "
              f"{'unpriced' if j.cost_usd is None else timefmt.usd_exact(j.cost_usd)}: "
              f"{j.detail}" for j in events]
    return lines


def leaks_document(audit: TrafficAudit) -> dict[str, Any]:
    return {"ledger": audit.ledger, "from": _instant(audit.start), "to": _instant(audit.end),
            "all_requests": audit.all_requests, "counts": dict(audit.counts),
            "leak_usd": money(audit.leak_usd), "leak_unpriced": audit.leak_unpriced,
            "events": [judged_document(j) for j in
                       sorted(leak_events(audit), key=lambda j: j.at)]}
