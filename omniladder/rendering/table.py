"""The human view (SPEC §4.1): header, ladder, pool, exclusions and the one-line verdict.

Colour only on a terminal and never with NO_COLOR; plain, stable text at a fixed width when
piped. Every user-supplied string goes in as ``Text`` so markup in ids is never interpreted.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from omniladder import timefmt
from omniladder.plan import Plan

PIPED_WIDTH = 120

_STATE_STYLE = {
    "serving": "green",
    "exhausted": "red",
    "empty": "dim",
    "disabled": "yellow",
    "budget-spent": "yellow",
    "not-in-id": "dim",
}

_NOW_SOURCE = {"flag": "from --now", "snapshot": "from the quota snapshot",
               "clock": "from the clock"}


def make_console(out: TextIO) -> Console:
    """A console for ``out``: its terminal width on a tty, COLUMNS if set, else fixed."""
    columns = os.environ.get("COLUMNS", "")
    width: int | None = int(columns) if columns.isdigit() and int(columns) > 0 else None
    is_tty = hasattr(out, "isatty") and out.isatty()
    if width is None and not is_tty:
        width = PIPED_WIDTH
    return Console(file=out, width=width, highlight=False, emoji=False,
                   no_color=bool(os.environ.get("NO_COLOR")) or None,
                   force_terminal=None if out in (sys.stdout, sys.stderr) else is_tty)


def render_table(plan: Plan, out: TextIO, *, detail: bool = False) -> None:
    console = make_console(out)
    files = plan.files
    header = Text()
    header.append("omniladder plan ", style="bold")
    header.append(plan.auto_id.text, style="bold cyan")
    console.print(header)
    console.print(Text(f"now {timefmt.iso(plan.now)} ({_NOW_SOURCE[plan.now_source]}) · "
                       f"{len(plan.connections)} connections · "
                       f"{len({(d.provider, d.model) for d in plan.decisions})} candidates"),
                  soft_wrap=True)
    if files:
        console.print(Text("inputs: " + ", ".join(f"{k} {v}" for k, v in files.items()),
                           style="dim"), soft_wrap=True)
    console.print()

    ladder = Table(title="Ladder", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("rung", "state"):
        ladder.add_column(name, no_wrap=True)
    ladder.add_column("candidates", justify="right", no_wrap=True)
    ladder.add_column("connections", justify="right", no_wrap=True)
    ladder.add_column("why")
    for rung in plan.rungs:
        ladder.add_row(rung.rung, Text(rung.state, style=_STATE_STYLE.get(rung.state, "")),
                       str(rung.candidates), str(rung.connections), Text(rung.note))
    console.print(ladder)

    if plan.pool:
        pool = Table(title="Pool, in dispatch order", title_justify="left",
                     box=box.SIMPLE_HEAD, pad_edge=False)
        pool.add_column("#", justify="right", no_wrap=True)
        pool.add_column("rung", no_wrap=True)
        pool.add_column("candidate")
        pool.add_column("allowlist")
        for entry in plan.pool:
            allow = Text()
            for index, cid in enumerate(entry.allowed_connection_ids):
                if index:
                    allow.append(", ")
                allow.append(cid)
                if cid in entry.unverified_connection_ids:
                    allow.append(" (unverified)", style="yellow")
            pool.add_row(str(entry.position), entry.rung,
                         Text(f"{entry.provider}/{entry.model}"), allow)
        console.print(pool)
    else:
        console.print(Text("Pool: empty — no candidate has a usable connection under "
                           f"{plan.auto_id.text}.", style="bold"))
        console.print()

    shown = [x for x in plan.excluded if detail or x.reason != "not-in-category"]
    hidden = len(plan.excluded) - len(shown)
    if shown:
        table = Table(title="Excluded", title_justify="left", box=box.SIMPLE_HEAD,
                      pad_edge=False)
        table.add_column("connection", no_wrap=True)
        table.add_column("model")
        table.add_column("rung", no_wrap=True)
        table.add_column("reason", no_wrap=True)
        table.add_column("detail")
        for x in shown:
            table.add_row(Text(x.connection_id), Text(x.model or "all models"),
                          x.rung or "-", Text(x.reason, style="yellow"), Text(x.detail))
        console.print(table)
    if hidden:
        console.print(Text(f"{hidden} not-in-category exclusion{'s' if hidden != 1 else ''} "
                           "not listed (--detail or --json lists them)", style="dim"))
        console.print()

    if plan.clamps:
        console.print(Text("Cooldown clamps (R9)", style="italic"))
        for clamp in plan.clamps:
            state = "still cooling" if clamp.cooling else "cooldown over"
            console.print(Text(
                f"  {clamp.connection_id}: rate limited until "
                f"{timefmt.iso(clamp.rate_limited_until)}, clamped to its reset "
                f"{timefmt.iso(clamp.clamped_to)} ({state})"))
        console.print()

    console.print(Text(plan.summary, style="bold"), soft_wrap=True)
