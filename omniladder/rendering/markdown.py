"""GitHub-flavoured markdown views, for a pull request comment or ``$GITHUB_STEP_SUMMARY``.

Plain text, never through rich. Identifiers go in code spans and are never shortened; other
text is escaped so a ``|`` never splits a table cell, a newline never ends a row and ``*``,
``_``, ``<`` or ``[`` in a user's string never turn into formatting or HTML. Escaping
follows the GFM spec: any ASCII punctuation may be backslash-escaped, and inside a table
``\\|`` is a literal pipe even within a code span (https://github.github.com/gfm/#tables-extension-).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omniladder.rendering.escape import printable
from omniladder.rendering.plan_view import ExclusionLine, PlanView, remedy_groups

_ACTIVE = re.compile(r"([\\`*_\[\]<>|~&])")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_TICKS = re.compile(r"`+")

def text(value: str) -> str:
    """Prose for a cell or a line: markdown-active characters escaped, newlines as <br>,
    control characters as their escapes."""
    if "\n" in value or "\r" in value:
        return "<br>".join(text(line) for line in _NEWLINE.split(value))
    return _ACTIVE.sub(r"\\\1", printable(value))


def code(value: str) -> str:
    """An identifier as a code span, whole; a value spanning lines falls back to ``text``."""
    if not value:
        return ""
    if _NEWLINE.search(value):
        return text(value)
    value = printable(value)
    longest = max((len(run) for run in _TICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value.replace('|', chr(92) + '|')}{pad}{fence}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]],
          numeric: Sequence[int] = ()) -> list[str]:
    """A GFM table; cells are already escaped; columns in ``numeric`` align right."""
    rule = ["---:" if index in numeric else "---" for index in range(len(header))]
    return ["| " + " | ".join(cells) + " |" for cells in (header, rule, *rows)]


def warning_lines(warnings: Sequence[str]) -> list[str]:
    """Warnings as a quoted block (with the blank line after it), or nothing."""
    if not warnings:
        return []
    return ["> " + "  \n> ".join(f"**warning:** {text(w)}" for w in warnings), ""]


def plan_markdown(plan: PlanView, *, detail: bool = False) -> str:
    lines = [f"### omniladder plan {code(plan.auto_id)}", ""]
    if plan.saved is not None:
        lines += [f"saved plan {code(plan.saved.file)}{text(plan.made_by() or '')}  "]
    lines.append(" · ".join(text(part) for part in plan.header_counts())
                 + ("  " if plan.files else ""))
    if plan.files:
        lines.append("inputs: " + ", ".join(f"{text(role)} {code(path)}"
                                            for role, path in plan.files.items()))
    lines.append("")
    lines += warning_lines(plan.warnings)
    lines += ["**Ladder**", ""]
    lines += table(["rung", "state", "candidates", "connections", "why"],
                   [[code(r.rung), text(r.state), str(r.candidates), str(r.connections),
                     text(r.note)] for r in plan.rungs], numeric=(2, 3))
    lines.append("")
    if plan.pool:
        lines += ["**Pool, in dispatch order**", ""]
        rows = []
        for entry in plan.pool:
            allow = ", ".join(
                code(cid) + (" (unverified)" if cid in entry.unverified_connection_ids else "")
                for cid in entry.allowed_connection_ids)
            rows.append([str(entry.position), code(entry.rung),
                         code(f"{entry.provider}/{entry.model}"), allow])
        lines += table(["#", "rung", "candidate", "allowlist"], rows, numeric=(0,))
        lines += _order(plan, detail)
        lines += _unverified(plan)
    else:
        lines.append(f"**Pool: empty** — no candidate has a usable connection under "
                     f"{code(plan.auto_id)}.")
    lines.append("")
    shown = [x for x in plan.excluded if detail or x.reason != "not-in-category"]
    hidden = len(plan.excluded) - len(shown)
    if not plan.pool:
        # An empty pool is where an operator most needs what to do: say it first.
        lines += _to_change(shown)
    if shown:
        lines += ["**Excluded**", ""]
        lines += table(["connection", "model", "rung", "reason", "detail"],
                       [[code(x.connection_id),
                         code(x.model) if x.model is not None else "all models",
                         code(x.rung) if x.rung else "-", code(x.reason), text(x.detail)]
                        for x in shown])
        lines.append("")
    if hidden:
        lines += [f"_{hidden} not-in-category exclusion{'s' if hidden != 1 else ''} not "
                  "listed (`--detail` or `--json` lists them)_", ""]
    if plan.pool:
        lines += _to_change(shown)
    if plan.clamps:
        lines += ["**Cooldown clamps (R9)**", ""]
        for clamp in plan.clamps:
            state = "still cooling" if clamp.cooling else "cooldown over"
            lines.append(f"- {code(clamp.connection_id)}: rate limited until "
                         f"{text(clamp.rate_limited_until)}, clamped to its reset "
                         f"{text(clamp.clamped_to)} ({state})")
        lines.append("")
    lines.append(f"**{text(plan.summary)}**")
    return "\n".join(lines) + "\n"


def _order(plan: PlanView, detail: bool) -> list[str]:
    """R15: the order in force and each place's reason, as the table view lists them."""
    title = plan.order_title()
    if title is None:
        return []
    lines = ["", f"_{text(title)}_"]
    places = plan.order_lines(detail)
    if places:
        lines += ["", *table(["#", "connection", "why here"],
                             [[f"#{line.position}", code(line.connection_id),
                               text(line.reason)] for line in places])]
    return lines


def _unverified(plan: PlanView) -> list[str]:
    """Why each unverified connection is, once per (connection, reason, detail)."""
    groups = plan.unverified_groups()
    if not groups:
        return []
    return ["", "**Unverified** (admitted, quota unknown)", "", *table(
        ["connection", "reason", "at", "detail"],
        [[code(cid), code(reason), ", ".join(f"#{p}" for p in positions), text(detail)]
         for (cid, reason, detail), positions in groups.items()])]


def _to_change(shown: Sequence[ExclusionLine]) -> list[str]:
    """Each listed exclusion's remedy, a shared one once; an overlay stub as a TOML block."""
    groups = remedy_groups(shown)
    if not groups:
        return []
    lines = ["**To change this**", ""]
    for (reason, fix), members in groups.items():
        labels = [f"{code(x.connection_id)} ({code(x.model) if x.model else 'all models'})"
                  for x in members]
        prose, _, stub = fix.partition("\n[[entries]]")
        lines.append(f"- {', '.join(labels)} {code(reason)}: "
                     + "<br>".join(text(p) for p in prose.split("\n")))
        if stub:
            fence = "`" * max(3, 1 + max((len(r) for r in _TICKS.findall(stub)), default=0))
            lines += ["", f"  {fence}toml",
                      *(f"  {line}" for line in ("[[entries]]" + stub).split("\n")),
                      f"  {fence}"]
    lines.append("")
    return lines
