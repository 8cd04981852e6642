"""Views of a plan diff: terraform-style lines (+ added, - removed, ~ changed) and JSON."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TextIO

from omniladder.analyses.diff import ExclusionRef, PlanDiff, PlanHeader
from omniladder.rendering import Format

DIFF_FORMAT_VERSION = "1"


def render_diff(diff: PlanDiff, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](diff, out)


def _ids(ids: tuple[str, ...], unverified: tuple[str, ...] = ()) -> str:
    """An allowlist as the plan view shows it: an unverified connection is marked."""
    return "[" + ", ".join(_marked(cid, unverified) for cid in ids) + "]"


def _marked(cid: str, unverified: tuple[str, ...]) -> str:
    return f"{cid} (unverified)" if cid in unverified else cid


def _models(x: ExclusionRef | Any) -> str:
    model: str | None = x.model
    return model if model is not None else "all models"


def diff_lines(diff: PlanDiff) -> list[tuple[str, str]]:
    """The human view as (marker, text) pairs; a marker of "" is a heading or a note."""
    lines: list[tuple[str, str]] = []
    pool: list[tuple[str, str]] = []
    for marker, entries in (("+", diff.pool_added), ("-", diff.pool_removed)):
        pool += [(marker, f"#{e.position} {e.rung} {e.provider}/{e.model} "
                          f"{_ids(e.allowed_connection_ids, e.unverified_connection_ids)}")
                 for e in entries]
    for m in diff.pool_moved:
        pool.append(("~", f"{m.rung} {m.provider}/{m.model} moved #{m.old_position} → "
                          f"#{m.new_position}"))
    for a in diff.allowlists:
        parts = [f"+{_marked(cid, a.added_unverified)}" for cid in a.added]
        parts += [f"-{cid}" for cid in a.removed]
        parts += [f"{cid} now unverified" for cid in a.now_unverified]
        parts += [f"{cid} now verified" for cid in a.now_verified]
        pool.append(("~", f"#{a.new_position} {a.rung} {a.provider}/{a.model} allowlist: "
                          + ", ".join(parts)))
    if pool:
        lines += [("", "Pool"), *pool]
    if diff.orders:
        lines.append(("", "Order within rungs"))
        for o in diff.orders:
            text = f"#{o.new_position} {o.rung} {o.provider}/{o.model}"
            if o.moved:
                text += f" moved #{o.old_position} → #{o.new_position} within its rung"
            if o.old_order != o.new_order:
                text += (", allowlist" if o.moved else " allowlist") + (
                    f" {_ids(o.old_order)} → {_ids(o.new_order)}")
            lines.append(("~", text))
    if diff.rungs:
        lines.append(("", "Rungs"))
        lines += [("~", f"{r.rung}: {r.old_state} → {r.new_state}"
                        + (f" — {r.note}" if r.note else "")) for r in diff.rungs]
    excluded: list[tuple[str, str]] = []
    for x in diff.exclusions_added:
        excluded.append(("+", f"{x.connection_id} ({_models(x)}): {x.reason} — {x.detail}"))
    for x in diff.exclusions_removed:
        excluded.append(("-", f"{x.connection_id} ({_models(x)}): no longer excluded "
                              f"(was {x.reason})"))
    for r in diff.reasons:
        excluded.append(("~", f"{r.connection_id} ({_models(r)}): {r.old_reason} → "
                              f"{r.new_reason} — {r.detail}"))
    if excluded:
        lines += [("", "Exclusions"), *excluded]
    if diff.billing:
        lines.append(("", "Billing"))
        for b in diff.billing:
            parts = []
            if b.old_billing != b.new_billing:
                parts.append(f"billing {b.old_billing} → {b.new_billing}")
            if b.old_overage != b.new_overage:
                parts.append(f"overage {b.old_overage} → {b.new_overage}")
            lines.append(("~", f"{b.connection_id}: {', '.join(parts)}"))
    return lines


def notes(diff: PlanDiff) -> list[str]:
    """What the reader should know before the differences: other auto ids, another
    omniladder version, other inputs (from the ``plan --out`` stamps)."""
    found = []
    if diff.old.auto_id != diff.new.auto_id:
        found.append(f"the plans are for different auto ids ({diff.old.auto_id}, "
                     f"{diff.new.auto_id})")
    made = diff.provenance
    if made.versions_differ:
        found.append(f"the plans were made by different omniladder versions "
                     f"({made.old_version}, {made.new_version})")
    if made.inputs_differ:
        parts = []
        for change in made.inputs:
            if change.old_sha256 is None:
                parts.append(f"{change.role} {change.new_path} (read only for "
                             f"{diff.new.label})")
            elif change.new_sha256 is None:
                parts.append(f"{change.role} {change.old_path} (read only for "
                             f"{diff.old.label})")
            elif change.old_path == change.new_path:
                parts.append(f"{change.role} {change.new_path} (sha256 changed)")
            else:
                parts.append(f"{change.role} {change.old_path} → {change.new_path} "
                             "(sha256 changed)")
        found.append("the inputs differ: " + "; ".join(parts))
    return found


def _header(h: PlanHeader) -> str:
    return f"{h.label}: {h.auto_id} at {h.now}"


def _table(diff: PlanDiff, out: TextIO) -> None:
    from rich.text import Text

    from omniladder.rendering.table import make_console

    console = make_console(out)
    title = Text()
    title.append("omniladder diff ", style="bold")
    title.append(f"{diff.old.label} → {diff.new.label}", style="bold cyan")
    console.print(title, soft_wrap=True)
    for header in (diff.old, diff.new):
        console.print(Text(f"  {_header(header)}", style="dim"), soft_wrap=True)
    for note in notes(diff):
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True)
    console.print()
    styles = {"+": "green", "-": "red", "~": "yellow"}
    for marker, text in diff_lines(diff):
        if marker:
            console.print(Text(f"  {marker} {text}", style=styles[marker]), soft_wrap=True)
        else:
            console.print(Text(text, style="bold"), soft_wrap=True)
    if not diff.equal:
        console.print()
    console.print(Text(diff.summary, style="bold"), soft_wrap=True)


def diff_document(diff: PlanDiff) -> dict[str, Any]:
    return {
        "format_version": DIFF_FORMAT_VERSION,
        "equal": diff.equal,
        "old": asdict(diff.old),
        "new": asdict(diff.new),
        "pool": {
            "added": [asdict(e) for e in diff.pool_added],
            "removed": [asdict(e) for e in diff.pool_removed],
            "moved": [asdict(m) for m in diff.pool_moved],
            "allowlist_changed": [asdict(a) for a in diff.allowlists],
            "order_changed": [asdict(o) for o in diff.orders],
        },
        "rungs": [asdict(r) for r in diff.rungs],
        "excluded": {
            "added": [asdict(x) for x in diff.exclusions_added],
            "removed": [asdict(x) for x in diff.exclusions_removed],
            "reason_changed": [asdict(r) for r in diff.reasons],
        },
        "billing": [asdict(b) for b in diff.billing],
        "provenance": asdict(diff.provenance),
        "counts": diff.counts(),
        "summary": diff.summary,
    }


def _json(diff: PlanDiff, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(diff_document(diff), out)


_CHANGE = {"+": "added", "-": "removed", "~": "changed"}


def _markdown(diff: PlanDiff, out: TextIO) -> None:
    from omniladder.rendering.markdown import code, table, text

    lines = [f"### omniladder diff {code(diff.old.label)} → {code(diff.new.label)}", ""]
    lines += [f"- {text(_header(header))}" for header in (diff.old, diff.new)]
    lines.append("")
    for note in notes(diff):
        lines += [f"> **note:** {text(note)}", ""]
    rows = []
    section = ""
    for marker, line in diff_lines(diff):
        if not marker:
            section = line
            continue
        rows.append([_CHANGE[marker], text(section), text(line)])
    if rows:
        lines += table(["change", "section", "what"], rows)
        lines.append("")
    lines.append(f"**{text(diff.summary)}**")
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[PlanDiff, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}
