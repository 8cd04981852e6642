"""Views of a simulated series: a compact terminal chart, an SVG picture, and JSON.

The chart has one row for the rung that heads the pool and one row per rung for its pool
entries. When there are more steps than columns, each column covers several steps and shows
the worst of them: the most expensive head rung, the fewest entries on a rung.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TextIO

from rich.text import Text

from omniladder import timefmt
from omniladder.engine.plan import FORMAT_VERSION
from omniladder.models import RUNGS
from omniladder.rendering.json_text import dumps
from omniladder.simulate import Point, Series, Transition

HEAD_MARK = {"subscription": "S", "keyless": "K", "free": "F", "cheap": "C", "premium": "P"}
EMPTY_MARK = "·"
BLOCKS = " ▁▂▃▄▅▆▇█"
COLOURS = {"subscription": "#2e7d32", "keyless": "#00838f", "free": "#1565c0",
           "cheap": "#ef6c00", "premium": "#c62828", None: "#9e9e9e"}
_STYLE = {"subscription": "green", "keyless": "cyan", "free": "blue", "cheap": "yellow",
          "premium": "red", None: "dim"}
_LABEL = 14


def _rank(rung: str | None) -> int:
    return RUNGS.index(rung) if rung in RUNGS else len(RUNGS)


def _clock(at: datetime, series: Series) -> str:
    return timefmt.short(at, series.start)


def transition_text(transition: Transition, series: Series) -> str:
    """``14:05Z subscription → cheap: claude-max-work 5h window at 1%``."""
    when = _clock(transition.at, series)
    head = transition.head or "empty pool"
    if transition.escalation:
        return f"{when} {transition.previous or 'empty pool'} → {head}: {transition.cause}"
    return f"{when} back to {head}: {transition.cause}"


# --- JSON ----------------------------------------------------------------------------------


def _transition_doc(transition: Transition) -> dict[str, Any]:
    return {"at": timefmt.iso(transition.at), "from": transition.previous,
            "to": transition.head, "escalation": transition.escalation,
            "cause": transition.cause,
            "changes": [{"connection_id": c.connection_id, "model": c.model, "rung": c.rung,
                         "admitted": c.admitted, "cause": c.cause}
                        for c in transition.changes]}


def series_document(series: Series) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "auto_id": series.auto_id.text,
        "from": timefmt.iso(series.start),
        "to": timefmt.iso(series.end),
        "step_seconds": series.step.total_seconds(),
        "settings": series.settings,
        "steps": [
            {"at": timefmt.iso(p.at), "head_rung": p.head, "pool_size": p.pool_size,
             "rungs": [{"rung": r.rung, "state": r.state, "candidates": r.entries,
                        "connections": r.connections} for r in p.rungs],
             "eligible_connection_ids": list(p.eligible),
             "unverified_connection_ids": list(p.unverified)}
            for p in series.points
        ],
        "transitions": [_transition_doc(t) for t in series.transitions],
        "flaps": {"with_reentry_floor": series.flaps.with_floor,
                  "single_threshold": series.flaps.single_threshold,
                  "avoided": series.flaps.avoided,
                  "suppressed": [_transition_doc(t) for t in series.flaps.suppressed]},
        "warnings": list(series.warnings),
    }


def series_json(series: Series) -> str:
    return dumps(series_document(series))  # json.dumps(indent=2), written faster


# --- terminal chart ------------------------------------------------------------------------


def columns_of(points: tuple[Point, ...], width: int) -> list[tuple[Point, ...]]:
    """Group the points into at most ``width`` columns of consecutive steps."""
    per = max(1, math.ceil(len(points) / max(width, 1)))
    return [points[i:i + per] for i in range(0, len(points), per)]


def _worst_head(column: tuple[Point, ...]) -> str | None:
    return max((p.head for p in column), key=_rank)


def chart_lines(series: Series, width: int) -> list[Text]:
    """The chart as lines: a time axis, the head row and one row per rung."""
    columns = columns_of(series.points, max(width - _LABEL, 10))
    axis = [" "] * len(columns)
    last_label = -10
    for index, column in enumerate(columns):
        at = column[0].at.astimezone(UTC)
        hour_start = at.minute == 0 and at.second == 0
        first_of_hour = index == 0 or columns[index - 1][0].at.astimezone(UTC).hour != at.hour
        if (hour_start or (first_of_hour and len(column) > 1)) and index - last_label >= 6:
            label = at.strftime("%H:%M")
            if index + len(label) <= len(columns):
                axis[index:index + len(label)] = list(label)
                last_label = index
    lines = [Text(" " * _LABEL + "".join(axis).rstrip(), style="dim")]
    head = Text("head".ljust(_LABEL))
    for column in columns:
        worst = _worst_head(column)
        head.append(HEAD_MARK.get(worst or "", EMPTY_MARK), style=_STYLE[worst])
    lines.append(head)
    for rung in RUNGS:
        peak = max((p.entries_on(rung) for p in series.points), default=0)
        row = Text(rung.ljust(_LABEL))
        for column in columns:
            low = min(p.entries_on(rung) for p in column)
            level = 0 if peak == 0 or low == 0 else max(1, round(low / peak * 8))
            row.append(BLOCKS[level], style=_STYLE[rung])
        row.append(f"  max {peak}", style="dim")
        lines.append(row)
    return lines


def render_timeline(series: Series, out: TextIO) -> None:
    from omniladder.rendering.table import make_console

    console = make_console(out)
    width = console.width
    header = Text("omniladder simulate ", style="bold")
    header.append(series.auto_id.text, style="bold cyan")
    console.print(header)
    console.print(Text(f"{timefmt.iso(series.start)} → {timefmt.iso(series.end)} every "
                       f"{timefmt.duration(series.step.total_seconds())} · "
                       f"{len(series.points)} steps"))
    console.print()
    for line in chart_lines(series, width):
        console.print(line, no_wrap=True, overflow="crop")
    per = max(1, math.ceil(len(series.points) / max(width - _LABEL, 10)))
    scale = (f"one column per {timefmt.duration(series.step.total_seconds() * per)}"
             + (", worst shown" if per > 1 else ""))
    console.print(Text(f"head: S subscription K keyless F free C cheap P premium "
                       f"{EMPTY_MARK} empty; bars: pool entries; {scale}", style="dim"))
    console.print()
    if series.transitions:
        console.print(Text("Transitions of the head rung", style="bold"))
        for transition in series.transitions:
            console.print(Text("  " + transition_text(transition, series)))
    else:
        head = series.points[0].head or "empty pool"
        console.print(Text(f"No transition: {head} heads the pool throughout.", style="bold"))
    console.print()
    flaps = series.flaps
    floor = series.settings["reentry_min_remaining_percent"]
    cutoff = series.settings["exit_cutoff_percent"]
    summary = (f"Flaps avoided by the re-entry floor ({timefmt.pct(floor)}): "
               f"{flaps.avoided} — {flaps.single_threshold} head-rung transitions with a "
               f"single threshold at {timefmt.pct(cutoff)}, "
               f"{flaps.with_floor} with the floor")
    console.print(Text(summary, style="bold"))
    for transition in flaps.suppressed:
        console.print(Text("  suppressed: " + transition_text(transition, series)))


# --- SVG -----------------------------------------------------------------------------------

_SVG_NS = "http://www.w3.org/2000/svg"


def _hour_ticks(start: datetime, end: datetime) -> list[datetime]:
    span = (end - start).total_seconds()
    hours = max(1, math.ceil(span / 3600 / 12))
    first = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    if first < start:
        first += timedelta(hours=1)
    ticks: list[datetime] = []
    tick = first
    while tick <= end:
        if tick.hour % hours == 0:
            ticks.append(tick)
        tick += timedelta(hours=1)
    return ticks


def _runs(points: tuple[Point, ...], key: Callable[[Point], object]) -> list[list[Point]]:
    """Consecutive points with the same key, one run each."""
    runs: list[list[Point]] = []
    for point in points:
        if runs and key(runs[-1][-1]) == key(point):
            runs[-1].append(point)
        else:
            runs.append([point])
    return runs


def timeline_svg(series: Series) -> str:
    """The chart as a standalone SVG picture (stdlib only), with the transitions listed."""
    left, right, chart_width = 120, 24, 960
    head_y, head_h, row_h, gap = 58, 26, 34, 6
    rows_y = head_y + head_h + 14
    rows_bottom = rows_y + len(RUNGS) * (row_h + gap)
    axis_y = rows_bottom + 4
    notes = [transition_text(t, series) for t in series.transitions]
    suppressed = [transition_text(t, series) for t in series.flaps.suppressed]
    list_y = axis_y + 40
    height = list_y + 22 * (len(notes) + len(suppressed) + 3) + 10
    width = left + chart_width + right

    svg = ET.Element("svg", {"xmlns": _SVG_NS, "width": str(width), "height": str(height),
                             "viewBox": f"0 0 {width} {height}",
                             "font-family": "Helvetica, Arial, sans-serif",
                             "font-size": "13"})
    ET.SubElement(svg, "title").text = (
        f"omniladder simulate {series.auto_id.text} {timefmt.iso(series.start)} to "
        f"{timefmt.iso(series.end)}")
    ET.SubElement(svg, "rect", {"x": "0", "y": "0", "width": str(width),
                                "height": str(height), "fill": "#ffffff"})
    ET.SubElement(svg, "text", {"x": str(left), "y": "24", "font-size": "16",
                                "font-weight": "bold"}).text = (
        f"{series.auto_id.text}: the rung that heads the pool, and pool entries per rung")
    ET.SubElement(svg, "text", {"x": str(left), "y": "44", "fill": "#555555"}).text = (
        f"{timefmt.iso(series.start)} → {timefmt.iso(series.end)}, every "
        f"{timefmt.duration(series.step.total_seconds())}, {len(series.points)} steps")

    total = max((series.end - series.start).total_seconds(), 1.0)
    count = len(series.points)
    step_w = chart_width / count

    def x_of(at: datetime) -> float:
        if count == 1:
            return left + chart_width / 2
        return left + (at - series.start).total_seconds() / total * (chart_width - step_w)

    def label(y: float, text: str) -> None:
        ET.SubElement(svg, "text", {"x": str(left - 8), "y": f"{y:.1f}",
                                    "text-anchor": "end"}).text = text

    label(head_y + head_h / 2 + 4, "head rung")
    band = ET.SubElement(svg, "g", {"id": "head", "shape-rendering": "crispEdges"})
    for run in _runs(series.points, lambda p: p.head):
        first, last = run[0], run[-1]
        rect = ET.SubElement(band, "rect", {
            "x": f"{x_of(first.at):.2f}", "y": str(head_y),
            "width": f"{x_of(last.at) - x_of(first.at) + step_w:.2f}",
            "height": str(head_h), "fill": COLOURS[first.head]})
        ET.SubElement(rect, "title").text = (
            f"{timefmt.iso(first.at)} to {timefmt.iso(last.at)}: "
            f"{first.head or 'empty pool'} heads the pool")

    for index, rung in enumerate(RUNGS):
        top = rows_y + index * (row_h + gap)
        label(top + row_h / 2 + 4, rung)
        peak = max((p.entries_on(rung) for p in series.points), default=0)
        group = ET.SubElement(svg, "g", {"id": f"rung-{rung}", "shape-rendering": "crispEdges"})
        ET.SubElement(group, "rect", {"x": str(left), "y": str(top),
                                      "width": str(chart_width), "height": str(row_h),
                                      "fill": "#f5f5f5"})
        for run in _runs(series.points, partial(Point.entries_on, rung=rung)):
            entries = run[0].entries_on(rung)
            if not entries or not peak:
                continue
            bar = entries / peak * (row_h - 4)
            rect = ET.SubElement(group, "rect", {
                "x": f"{x_of(run[0].at):.2f}", "y": f"{top + row_h - bar:.2f}",
                "width": f"{x_of(run[-1].at) - x_of(run[0].at) + step_w:.2f}",
                "height": f"{bar:.2f}", "fill": COLOURS[rung], "fill-opacity": "0.75"})
            ET.SubElement(rect, "title").text = f"{entries} {rung} pool entries"
        ET.SubElement(svg, "text", {"x": str(left + chart_width + 4), "y": str(top + 12),
                                    "font-size": "10", "fill": "#777777"}).text = str(peak)

    for tick in _hour_ticks(series.start, series.end):
        x = x_of(tick) + step_w / 2
        ET.SubElement(svg, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                    "y1": str(rows_bottom - gap), "y2": str(axis_y + 4),
                                    "stroke": "#999999"})
        ET.SubElement(svg, "text", {"x": f"{x:.2f}", "y": str(axis_y + 18),
                                    "text-anchor": "middle", "font-size": "11",
                                    "fill": "#555555"}).text = tick.strftime("%H:%M")

    marks = ET.SubElement(svg, "g", {"id": "transitions"})
    for number, transition in enumerate(series.transitions, start=1):
        x = x_of(transition.at) + step_w / 2
        ET.SubElement(marks, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                      "y1": str(head_y - 4), "y2": str(rows_bottom - gap),
                                      "stroke": "#212121", "stroke-dasharray": "3,3"})
        ET.SubElement(marks, "text", {"x": f"{x + 3:.2f}", "y": str(head_y - 6),
                                      "font-size": "11", "font-weight": "bold"}).text = str(
            number)
    for transition in series.flaps.suppressed:
        x = x_of(transition.at) + step_w / 2
        ET.SubElement(marks, "path", {
            "d": f"M {x - 4:.2f} {head_y + head_h + 9} L {x + 4:.2f} {head_y + head_h + 9} "
                 f"L {x:.2f} {head_y + head_h + 2} Z",
            "fill": "none", "stroke": "#6a1b9a"})

    y = list_y
    ET.SubElement(svg, "text", {"x": str(left), "y": str(y), "font-weight": "bold"}).text = (
        "Transitions of the head rung" if notes else "No transition of the head rung")
    for number, note in enumerate(notes, start=1):
        y += 22
        ET.SubElement(svg, "text", {"x": str(left), "y": str(y)}).text = f"{number}. {note}"
    flaps = series.flaps
    y += 30
    floor = series.settings["reentry_min_remaining_percent"]
    ET.SubElement(svg, "text", {"x": str(left), "y": str(y), "font-weight": "bold"}).text = (
        f"Flaps avoided by the re-entry floor ({timefmt.pct(floor)}): "
        f"{flaps.avoided} ({flaps.single_threshold} transitions with a single threshold, "
        f"{flaps.with_floor} with the floor)")
    for note in suppressed:
        y += 22
        ET.SubElement(svg, "text", {"x": str(left), "y": str(y), "fill": "#6a1b9a"}).text = (
            f"△ suppressed: {note}")

    legend_x = left
    legend_y = height - 12
    legend: tuple[str | None, ...] = (*RUNGS, None)
    for shown in legend:
        ET.SubElement(svg, "rect", {"x": str(legend_x), "y": str(legend_y - 10), "width": "12",
                                    "height": "12", "fill": COLOURS[shown]})
        name = shown or "empty pool"
        ET.SubElement(svg, "text", {"x": str(legend_x + 16), "y": str(legend_y),
                                    "font-size": "11"}).text = name
        legend_x += 24 + 7 * len(name)
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode", xml_declaration=False) + "\n"
