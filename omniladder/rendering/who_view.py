"""Views of a `who` answer: a tree, like ``cargo tree -i``, and JSON."""

from __future__ import annotations

from typing import Any, TextIO

from rich.text import Text

from omniladder import timefmt
from omniladder.analyses.who import WhoAnswer, WhoForId, WhoRow
from omniladder.engine.records import FORMAT_VERSION
from omniladder.rendering.table import make_console
from omniladder.rendering.why_view import Tree, leaf


def who_document(answer: WhoAnswer) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "target": answer.target,
        "provider": answer.provider,
        "model": answer.model,
        "now": timefmt.iso(answer.now),
        "now_source": answer.now_source,
        "in_model_catalog": answer.in_model_catalog,
        "auto_ids": [_for_id(a) for a in answer.answers],
        "warnings": list(answer.warnings),
    }


def _for_id(answer: WhoForId) -> dict[str, Any]:
    return {
        "auto_id": answer.auto_id,
        "served": answer.served,
        "pool": [{"position": e.position, "rung": e.rung,
                  "allowed_connection_ids": list(e.allowed_connection_ids),
                  "unverified": [{"connection_id": u.connection_id, "reason": u.reason,
                                  "detail": u.detail} for u in e.unverified]}
                 for e in answer.entries],
        "connections": [_row(r) for r in answer.rows],
    }


def _row(row: WhoRow) -> dict[str, Any]:
    return {
        "connection_id": row.connection_id, "rung": row.rung, "state": row.state,
        "position": row.position,
        "unverified": (None if row.unverified is None else
                       {"reason": row.unverified.reason, "detail": row.unverified.detail}),
        "reason": row.reason, "detail": row.detail, "fix": row.fix,
    }


def _id_node(answer: WhoForId) -> tuple[Text | str, list[Any]]:
    label = Text(f"{answer.auto_id}: ", style="bold")
    serving = [r for r in answer.rows if r.state == "in"]
    could = [r for r in answer.rows if r.state != "not-serving"]
    if answer.served:
        where = ", ".join(f"#{e.position} ({e.rung})" for e in answer.entries)
        label.append(f"served at {where}", style="green")
        label.append(f" by {len(serving)} of {len(could)} connection"
                     f"{'s' if len(could) != 1 else ''}")
    else:
        label.append("not served", style="red")
        label.append(f" — 0 of {len(could)} connection{'s' if len(could) != 1 else ''}")
    children: list[Any] = []
    for row in answer.rows:
        line = Text(f"{row.connection_id}", style="bold")
        sub: list[Any] = []
        if row.state == "in":
            line.append(f" ({row.rung}): ")
            line.append(f"in at #{row.position}", style="green")
            if row.unverified is not None:
                line.append(" unverified", style="yellow")
                line.append(f" — {row.unverified.reason}: {row.unverified.detail}")
        elif row.state == "out":
            line.append(f" ({row.rung}): ")
            line.append("out", style="red")
            line.append(" — ")
            line.append(row.reason or "", style="yellow")
            line.append(f": {row.detail}")
        else:
            line.append(": ")
            line.append("does not serve it", style="dim")
            line.append(f" — {row.detail}")
        if row.fix:
            sub.append(("to change this", [leaf(part) for part in row.fix.split("\n")]))
        children.append((line, sub))
    if not children:
        children.append(leaf("no connection of this provider"))
    return (label, children)


def render_who(answer: WhoAnswer, out: TextIO) -> None:
    console = make_console(out)
    header = Text("omniladder who ", style="bold")
    header.append(answer.target, style="bold cyan")
    console.print(header, soft_wrap=True)
    could = {r.connection_id for a in answer.answers for r in a.rows if r.state != "not-serving"}
    catalog = "" if answer.in_model_catalog else " · not in the model catalog (priced premium)"
    console.print(Text(f"now {timefmt.iso(answer.now)} "
                       f"({timefmt.now_source(answer.now_source)}) · {len(could)} "
                       f"connection{'s list' if len(could) != 1 else ' lists'} it{catalog}"))
    tree = Tree()
    tree.add((Text(answer.target, style="bold"), [_id_node(a) for a in answer.answers]),
             root=True)
    tree.print(console)
