"""The human view (SPEC §4.1): header, ladder, pool, exclusions and the one-line verdict.

Colour only on a terminal and never with NO_COLOR; plain, stable text at a fixed width when
piped. Every user-supplied string goes in as ``Text`` so markup in ids is never interpreted,
and every console escapes control characters (omniladder.rendering.escape).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from omniladder.rendering.escape import printable_text
from omniladder.rendering.plan_view import ExclusionLine, PlanView, remedy_groups, view_of_plan

if TYPE_CHECKING:
    from omniladder.engine.records import Plan

PIPED_WIDTH = 120

_STATE_STYLE = {
    "serving": "green",
    "exhausted": "red",
    "empty": "dim",
    "disabled": "yellow",
    "budget-spent": "yellow",
    "not-in-id": "dim",
}

class _PrintableConsole(Console):
    """A console that escapes control characters in every text it renders (the views' one
    escaping helper), so no string from an input ever reaches a terminal as a command."""

    def render(self, renderable: RenderableType,
               options: ConsoleOptions | None = None) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = printable_text(renderable)
        return super().render(renderable, options)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return printable_text(super().render_str(text, **kwargs))


def make_console(out: TextIO) -> Console:
    """A console for ``out``: its terminal width on a tty, COLUMNS if set, else fixed.

    What a console prints is a human view: standard output is told so, to spell it in the
    stream's declared encoding (omniladder.cli, docs/contract.md#encodings)."""
    human = getattr(out, "human_view", None)
    if callable(human):
        human()
    columns = os.environ.get("COLUMNS", "")
    width: int | None = int(columns) if columns.isdigit() and int(columns) > 0 else None
    is_tty = hasattr(out, "isatty") and out.isatty()
    if width is None and not is_tty:
        width = PIPED_WIDTH
    elif width is None and columns.isdigit():
        # COLUMNS=0: rich would take it as a width of 0 and print nothing at all, exit 0.
        # It is no width, so the terminal's own stands in, as when COLUMNS is unset.
        width = _terminal_width(out)
    console = _PrintableConsole(file=out, width=width, highlight=False, emoji=False,
                                no_color=bool(os.environ.get("NO_COLOR")) or None,
                                force_terminal=None if out in (sys.stdout, sys.stderr) else is_tty)
    if width is not None and not console.is_dumb_terminal and not console.legacy_windows:
        # Unless it knows both dimensions, rich asks the terminal for its size at every print
        # and measurement (60 times in the example's table view): the height is fixed at
        # what it finds now. (To rich a dumb terminal is 80 columns whatever the width, so
        # it is left to ask.)
        console.height = console.height
    return console


def _terminal_width(out: TextIO) -> int:
    """The width of the terminal ``out`` writes to; 80 when it reports none (a
    pseudo-terminal nobody sized says 0)."""
    try:
        return os.get_terminal_size(out.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):  # no descriptor, or not a terminal
        return 80


MIN_TEXT = 16
"""The narrowest a wrapping text column may get before the stacked layout is used."""

ID, NUM, TEXT = "id", "num", "text"
"""Column kinds: identifiers and figures are never cut; text wraps (and folds a long word)."""


def _words(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def fitted_table(console: Console, columns: Sequence[tuple[str, str]],
                 rows: Sequence[Sequence[Text]], *, title: str | None = None,
                 stack_title: str | None = None, **table: Any) -> None:
    """Print rows as a table when it fits the console, else as a stacked list.

    Identifier and figure columns (``ID``, ``NUM``) keep their whole width; ``TEXT`` columns
    wrap. When the identifiers plus the narrowest readable text columns do not fit, each row
    is printed as its identifiers on one line and each text below, indented: an identifier
    is never cut at any width. Cells are escaped first, so widths are those printed.
    """
    rows = [[printable_text(cell) for cell in row] for row in rows]
    widths: list[int] = []
    one_cell_each = True
    for index, (name, kind) in enumerate(columns):
        cells = [name] + [row[index].plain for row in rows]
        if kind == TEXT:
            widths.append(max(min(MIN_TEXT, max(len(c) for c in cells)),
                              max(_words(c) for c in cells)))
        else:
            widths.append(max(len(c) for c in cells))
            one_cell_each = one_cell_each and all(c.isascii() and c.isprintable() for c in cells)
    padding = table.get("padding", (0, 1))
    gap = padding[1] * 2 if isinstance(padding, tuple) and len(padding) == 2 else 3
    needed = sum(widths) + (gap + 1) * len(columns)
    if needed <= console.width:
        grid = Table(title=title, title_justify="left", **table)
        for (name, kind), width in zip(columns, widths, strict=True):
            if kind == TEXT:
                grid.add_column(name, overflow="fold")
            elif one_cell_each:
                # Printable ASCII takes one terminal cell a character, so ``width`` is what
                # rich would find by measuring every cell of the column, and the check above
                # left room for these columns: rich measures only the text columns (a sixth
                # of the table view's rendering, docs/performance.md#start-up).
                grid.add_column(name, no_wrap=True, width=width,
                                justify="right" if kind == NUM else "left")
            else:
                grid.add_column(name, no_wrap=True, min_width=width,
                                justify="right" if kind == NUM else "left")
        for row in rows:
            grid.add_row(*row)
        console.print(grid)
        return
    heading = stack_title if stack_title is not None else title
    if heading:
        console.print(Text(heading, style="italic"))
        console.print()
    for row in rows:
        head = Text()
        for (_, kind), cell in zip(columns, row, strict=True):
            if kind != TEXT and cell.plain:
                if head.plain:
                    head.append("  ")
                head.append_text(cell)
        hanging(console, head, 1, 3)
        for (name, kind), cell in zip(columns, row, strict=True):
            if kind == TEXT and cell.plain:
                line = Text(f"{name}: ", style="dim")
                line.append_text(cell)
                hanging(console, line, 4, 6)
    console.print()


def hanging(console: Console, text: Text, first: int, rest: int) -> None:
    """Print text wrapped to the console, the first line indented ``first`` columns and the
    others ``rest``; a word longer than a line is folded, never cut."""
    lines = text.wrap(console, max(console.width - rest, 8), overflow="fold")
    for number, line in enumerate(lines):
        line.rstrip()
        console.print(Text(" " * (first if number == 0 else rest)) + line, soft_wrap=True)


def render_table(given: PlanView | Plan, out: TextIO, *, detail: bool = False) -> None:
    """The human view of a plan, fresh (``plan``) or saved (``show``)."""
    plan = given if isinstance(given, PlanView) else view_of_plan(given)
    console = make_console(out)
    files = plan.files
    header = Text()
    header.append("omniladder plan ", style="bold")
    header.append(plan.auto_id, style="bold cyan")
    console.print(header)
    if plan.saved is not None:
        console.print(Text(f"saved plan {plan.saved.file}{plan.made_by() or ''}", style="dim"),
                      soft_wrap=True)
    console.print(Text(" · ".join(plan.header_counts())), soft_wrap=True)
    if files:
        console.print(Text("inputs: " + ", ".join(f"{k} {v}" for k, v in files.items()),
                           style="dim"), soft_wrap=True)
    console.print()

    fitted_table(
        console, [("rung", ID), ("state", ID), ("candidates", NUM), ("connections", NUM),
                  ("why", TEXT)],
        [[Text(rung.rung), Text(rung.state, style=_STATE_STYLE.get(rung.state, "")),
          Text(str(rung.candidates)), Text(str(rung.connections)), Text(rung.note)]
         for rung in plan.rungs],
        title="Ladder", box=box.SIMPLE_HEAD, pad_edge=False)

    if plan.pool:
        rows = []
        for entry in plan.pool:
            allow = Text()
            for index, cid in enumerate(entry.allowed_connection_ids):
                if index:
                    allow.append(", ")
                allow.append(cid)
                if cid in entry.unverified_connection_ids:
                    allow.append(" (unverified)", style="yellow")
            rows.append([Text(str(entry.position)), Text(entry.rung),
                         Text(f"{entry.provider}/{entry.model}"), allow])
        fitted_table(console, [("#", NUM), ("rung", ID), ("candidate", ID),
                               ("allowlist", TEXT)], rows,
                     title="Pool, in dispatch order", box=box.SIMPLE_HEAD, pad_edge=False)
        _order(console, plan, detail)
        _unverified(console, plan)

    shown = [x for x in plan.excluded if detail or x.reason != "not-in-category"]
    hidden = len(plan.excluded) - len(shown)
    if not plan.pool:
        console.print(Text("Pool: empty — no candidate has a usable connection under "
                           f"{plan.auto_id}.", style="bold"))
        console.print()
        # An empty pool is where an operator most needs what to do: say it first.
        _to_change(console, shown)
    if shown:
        fitted_table(
            console, [("connection", ID), ("model", ID), ("rung", ID), ("reason", ID),
                      ("detail", TEXT)],
            [[Text(x.connection_id), Text(x.model or "all models"), Text(x.rung or "-"),
              Text(x.reason, style="yellow"), Text(x.detail)] for x in shown],
            title="Excluded", box=box.SIMPLE_HEAD, pad_edge=False)
    if hidden:
        console.print(Text(f"{hidden} not-in-category exclusion{'s' if hidden != 1 else ''} "
                           "not listed (--detail or --json lists them)", style="dim"))
        console.print()
    if plan.pool:
        _to_change(console, shown)

    if plan.clamps:
        console.print(Text("Cooldown clamps (R9)", style="italic"))
        for clamp in plan.clamps:
            state = "still cooling" if clamp.cooling else "cooldown over"
            console.print(Text(
                f"  {clamp.connection_id}: rate limited until "
                f"{clamp.rate_limited_until}, clamped to its reset "
                f"{clamp.clamped_to} ({state})"))
        console.print()

    console.print(Text(plan.summary, style="bold"), soft_wrap=True)


def _order(console: Console, plan: PlanView, detail: bool) -> None:
    """R15: the order in force, under the pool, and each place's reason (the quota rungs';
    with ``detail`` the paid rungs' too)."""
    title = plan.order_title()
    if title is None:
        return
    console.print(Text(title, style="italic"), soft_wrap=True)
    lines = plan.order_lines(detail)
    if lines:
        fitted_table(console, [("#", NUM), ("connection", ID), ("why here", TEXT)],
                     [[Text(f"#{line.position}"), Text(line.connection_id), Text(line.reason)]
                      for line in lines], box=box.SIMPLE_HEAD, pad_edge=False)
    else:
        console.print()


def _unverified(console: Console, plan: PlanView) -> None:
    """Why each unverified connection is unverified, once per (connection, reason, detail),
    with the pool positions it is unverified at."""
    groups = plan.unverified_groups()
    if not groups:
        return
    fitted_table(
        console, [("connection", ID), ("reason", ID), ("at", TEXT), ("detail", TEXT)],
        [[Text(cid), Text(reason, style="yellow"),
          Text(", ".join(f"#{p}" for p in positions)), Text(detail)]
         for (cid, reason, detail), positions in groups.items()],
        title="Unverified (admitted, quota unknown)", box=box.SIMPLE_HEAD, pad_edge=False)


def _to_change(console: Console, shown: Sequence[ExclusionLine]) -> None:
    """Each listed exclusion's remedy, below the tables rather than in a column: a remedy is
    a sentence or a TOML stub to paste, which a column would squeeze at 80 columns. The
    same remedy for several exclusions (one overlay entry for every connection of an
    uncurated provider) is printed once, under all of them."""
    groups = remedy_groups(shown)
    if not groups:
        return
    console.print(Text("To change this", style="italic"))
    for (reason, fix), members in groups.items():
        labels = [f"{x.connection_id} ({x.model or 'all models'})" for x in members]
        head = Text(", ".join(labels), style="bold")
        head.append(" ")
        head.append(reason, style="yellow")
        hanging(console, head, 2, 4)
        prose, _, stub = fix.partition("\n[[entries]]")
        for paragraph in prose.split("\n"):
            hanging(console, Text(paragraph), 4, 4)
        if stub:
            # TOML to paste: printed line for line, never wrapped.
            for line in ("[[entries]]" + stub).split("\n"):
                console.print(Text("      " + line), soft_wrap=True)
    console.print()
