"""Views of a simulated series: a compact terminal chart, an SVG picture, and JSON.

The chart has one row for the rung that heads the pool and one row per rung for its pool
entries. When there are more steps than columns, each column covers several steps and shows
the worst of them: the most expensive head rung, the fewest entries on a rung.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

from rich.text import Text

from omniladder import timefmt
from omniladder.analyses.simulate import Point, Series, Transition
from omniladder.engine.records import FORMAT_VERSION
from omniladder.models import RUNGS
from omniladder.rendering.json_text import dumps

if TYPE_CHECKING:
    from omniladder.analyses.forecast.walk import Band, Forecast

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


def transition_text(transition: Transition, series: Series) -> str:
    """``14:05Z subscription → cheap: claude-max-work 5h window at 1%``."""
    return transition_note(transition, series.start)


def transition_note(transition: Transition, since: datetime) -> str:
    """``transition_text`` with the clock shown against ``since`` (the day it omits)."""
    when = timefmt.short(transition.at, since)
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


@dataclass(frozen=True, kw_only=True)
class Picture:
    """What the SVG timeline draws: ``simulate``'s series or ``forecast``'s projection.

    Points at or after ``projected_from`` are projected (drawn lighter, hatched, with dashed
    outlines, after a labelled "now" line); without it every point is recorded and the
    picture is simulate's.
    """

    title: str
    heading: str
    subtitle: str
    start: datetime
    end: datetime
    points: tuple[Point, ...]
    transitions: tuple[Transition, ...]
    notes: tuple[str, ...]
    """One line per transition, numbered in the picture as in the chart."""
    summary: str
    """The bold line under the transitions."""
    after: tuple[tuple[str, str | None], ...] = ()
    """Lines under the summary, each with its fill colour (None: the text colour)."""
    suppressed: tuple[Transition, ...] = ()
    """Flaps the re-entry floor avoided, marked under the head band."""
    projected_from: datetime | None = None
    markers: tuple[tuple[datetime, str, str], ...] = ()
    """(instant, label, colour): a labelled line across the chart (first paid, pool empty)."""
    spans: tuple[tuple[datetime, datetime, str, str], ...] = ()
    """(from, to, title, colour): a translucent shading across the chart between two
    instants (a forecast answer's p10 to p90)."""


_PROJECTED_OPACITY = "0.4"
_HATCH = "projected-hatch"


def timeline_svg(series: Series, projected_from: datetime | None = None,
                 markers: tuple[tuple[datetime, str, str], ...] = ()) -> str:
    """The chart as a standalone SVG picture (stdlib only), with the transitions listed;
    the steps at or after ``projected_from`` drawn as projected; ``markers`` are labelled
    lines across it (``simulate --traffic``: the leak events)."""
    flaps = series.flaps
    floor = series.settings["reentry_min_remaining_percent"]
    return picture_svg(Picture(
        title=(f"omniladder simulate {series.auto_id.text} {timefmt.iso(series.start)} to "
               f"{timefmt.iso(series.end)}"),
        heading=f"{series.auto_id.text}: the rung that heads the pool, and pool entries per rung",
        subtitle=(f"{timefmt.iso(series.start)} → {timefmt.iso(series.end)}, every "
                  f"{timefmt.duration(series.step.total_seconds())}, "
                  f"{len(series.points)} steps"),
        start=series.start, end=series.end, points=series.points,
        transitions=series.transitions,
        notes=tuple(transition_text(t, series) for t in series.transitions),
        summary=(f"Flaps avoided by the re-entry floor ({timefmt.pct(floor)}): "
                 f"{flaps.avoided} ({flaps.single_threshold} transitions with a single "
                 f"threshold, {flaps.with_floor} with the floor)"),
        after=tuple((f"△ suppressed: {transition_text(t, series)}", "#6a1b9a")
                    for t in flaps.suppressed),
        suppressed=flaps.suppressed, projected_from=projected_from, markers=markers))


def forecast_svg(result: Forecast) -> str:
    """The forecast's timeline: the same picture as ``simulate --svg``, projected from now.

    The forecast holds no recorded history, so "now" is the left edge and every step is
    projected; escalations and comebacks are the numbered transitions, first paid and pool
    empty are labelled lines.
    """
    from omniladder.analyses.forecast.walk import wait_text
    from omniladder.rendering.forecast_view import summary_line

    now = result.now
    markers: list[tuple[datetime, str, str]] = []
    if result.first_paid_at is not None:
        markers.append((result.first_paid_at,
                        f"first paid {timefmt.short(result.first_paid_at, now)}",
                        COLOURS["premium"]))
    if result.pool_empty_at is not None:
        markers.append((result.pool_empty_at,
                        f"pool empty {timefmt.short(result.pool_empty_at, now)}", "#424242"))
    spans = [found for found in (
        _band_span("first paid", result.first_paid_band, result, COLOURS["premium"]),
        _band_span("pool empty", result.pool_empty_band, result, "#424242"))
        if found is not None]
    return picture_svg(Picture(
        title=(f"omniladder forecast {result.auto_id.text} from {timefmt.iso(now)} over "
               f"{timefmt.duration(result.horizon.total_seconds())}"),
        heading=(f"{result.auto_id.text}: the rung that heads the pool, and pool entries per "
                 "rung, projected"),
        subtitle=(f"{timefmt.iso(now)} ({timefmt.now_source(result.now_source)}) → "
                  f"{timefmt.iso(result.end)}, every "
                  f"{timefmt.duration(result.step.total_seconds())}, "
                  f"{len(result.points)} steps, {result.projected_readings} projected "
                  "readings"),
        start=now, end=result.end, points=result.points, transitions=result.transitions,
        notes=tuple(transition_note(t, now) for t in result.transitions),
        summary=summary_line(result),
        after=tuple((wait_text(e, now), None) for e in result.escalations),
        projected_from=now, markers=tuple(markers), spans=tuple(spans)))


def _band_span(answer: str, band: Band | None, result: Forecast, colour: str
               ) -> tuple[datetime, datetime, str, str] | None:
    """The shading of one answer's band: from its p10 to its p90 (the horizon's end when
    a burn never reaches it there); None without a band (unknown answers), when no burn
    reaches the answer within the horizon, or when the three burns agree (no spread)."""
    if band is None or band.p10 is None or band.p10 == band.p90:
        return None
    now = result.now

    def word(at: datetime | None) -> str:
        return timefmt.short(at, now) if at is not None else "past the horizon"

    title = f"{answer}: p10 {word(band.p10)}, p50 {word(band.p50)}, p90 {word(band.p90)}"
    return band.p10, band.p90 if band.p90 is not None else result.end, title, colour


class _Layout:
    """Where a picture's parts go: the chart's box, the rows, the axis and the list below,
    and the x of an instant (one step fills the chart)."""

    left, right, chart_width = 120, 24, 960
    head_h, row_h, gap = 26, 34, 6

    def __init__(self, picture: Picture) -> None:
        self.projected_from = picture.projected_from
        self.head_y = 58 + (18 if self.projected_from is not None else 0)
        self.rows_y = self.head_y + self.head_h + 14
        self.rows_bottom = self.rows_y + len(RUNGS) * (self.row_h + self.gap)
        self.axis_y = self.rows_bottom + 4
        self.list_y = self.axis_y + 40 + 14 * len(picture.markers)
        self.height = self.list_y + 22 * (len(picture.notes) + len(picture.after) + 3) + 10
        self.width = self.left + self.chart_width + self.right
        self.start = picture.start
        self.total = max((picture.end - picture.start).total_seconds(), 1.0)
        self.count = len(picture.points)
        self.step_w = self.chart_width / self.count

    def x_of(self, at: datetime) -> float:
        """The left edge of the step at ``at``; one step fills the chart."""
        if self.count == 1:
            return float(self.left)
        offset = min(max((at - self.start).total_seconds(), 0.0), self.total)
        return self.left + offset / self.total * (self.chart_width - self.step_w)

    def part(self, point: Point) -> str | None:
        if self.projected_from is None:
            return None
        return "projected" if point.at >= self.projected_from else "recorded"

    def band(self, parent: ET.Element, run: list[Point], attributes: dict[str, str]
             ) -> ET.Element:
        """One run of steps as a rectangle; a projected run lighter, outlined in dashes."""
        shown = self.part(run[0])
        attributes = {"x": f"{self.x_of(run[0].at):.2f}", **attributes,
                      "width": f"{self.x_of(run[-1].at) - self.x_of(run[0].at) + self.step_w:.2f}"}
        order = ("x", "y", "width", "height", "fill", "fill-opacity")
        attributes = {key: attributes[key] for key in order if key in attributes}
        if shown is not None:
            attributes["class"] = shown
        if shown == "projected":
            attributes.update({"fill-opacity": _PROJECTED_OPACITY,
                               "stroke": attributes["fill"], "stroke-dasharray": "4,3"})
        return ET.SubElement(parent, "rect", attributes)

    def label(self, svg: ET.Element, y: float, text: str) -> None:
        ET.SubElement(svg, "text", {"x": str(self.left - 8), "y": f"{y:.1f}",
                                    "text-anchor": "end"}).text = text


def picture_svg(picture: Picture) -> str:
    """Draw a picture: the head band, a row per rung, hour ticks, transitions, the list."""
    layout = _Layout(picture)
    width, height = layout.width, layout.height
    svg = ET.Element("svg", {"xmlns": _SVG_NS, "width": str(width), "height": str(height),
                             "viewBox": f"0 0 {width} {height}",
                             "font-family": "Helvetica, Arial, sans-serif",
                             "font-size": "13"})
    ET.SubElement(svg, "title").text = picture.title
    if picture.projected_from is not None:
        _hatch_pattern(svg)
    ET.SubElement(svg, "rect", {"x": "0", "y": "0", "width": str(width),
                                "height": str(height), "fill": "#ffffff"})
    ET.SubElement(svg, "text", {"x": str(layout.left), "y": "24", "font-size": "16",
                                "font-weight": "bold"}).text = picture.heading
    ET.SubElement(svg, "text", {"x": str(layout.left), "y": "44", "fill": "#555555"}).text = (
        picture.subtitle)
    _head_band(svg, picture, layout)
    _rung_rows(svg, picture, layout)
    _axis(svg, picture, layout)
    if picture.projected_from is not None:
        _now_line(svg, picture.points, layout.x_of, picture.projected_from,
                  (layout.left + layout.chart_width, layout.head_y,
                   layout.rows_bottom - layout.gap))
    _transition_marks(svg, picture, layout)
    _answer_spans(svg, picture, layout)
    _markers(svg, picture, layout)
    _transition_list(svg, picture, layout)
    _legend(svg, picture, layout)
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode", xml_declaration=False) + "\n"


def _head_band(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The band of the rung that heads the pool, one rectangle per run of steps."""
    layout.label(svg, layout.head_y + layout.head_h / 2 + 4, "head rung")
    head = ET.SubElement(svg, "g", {"id": "head", "shape-rendering": "crispEdges"})
    for run in _runs(picture.points, lambda p: (p.head, layout.part(p))):
        first, last = run[0], run[-1]
        rect = layout.band(head, run, {"y": str(layout.head_y), "height": str(layout.head_h),
                                       "fill": COLOURS[first.head]})
        ET.SubElement(rect, "title").text = (
            f"{timefmt.iso(first.at)} to {timefmt.iso(last.at)}: "
            f"{first.head or 'empty pool'} heads the pool"
            + (" (projected)" if layout.part(first) == "projected" else ""))


def _rung_rows(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """A row per rung: its pool entries at each step as bars scaled to the row's peak."""
    left, chart_width, row_h = layout.left, layout.chart_width, layout.row_h
    points = picture.points
    for index, rung in enumerate(RUNGS):
        top = layout.rows_y + index * (row_h + layout.gap)
        layout.label(svg, top + row_h / 2 + 4, rung)
        peak = max((p.entries_on(rung) for p in points), default=0)
        group = ET.SubElement(svg, "g", {"id": f"rung-{rung}", "shape-rendering": "crispEdges"})
        ET.SubElement(group, "rect", {"x": str(left), "y": str(top),
                                      "width": str(chart_width), "height": str(row_h),
                                      "fill": "#f5f5f5"})
        for run in _runs(points, partial(_entries_and_part, rung=rung, part=layout.part)):
            entries = run[0].entries_on(rung)
            if not entries or not peak:
                continue
            bar = entries / peak * (row_h - 4)
            rect = layout.band(group, run, {"y": f"{top + row_h - bar:.2f}",
                                            "height": f"{bar:.2f}", "fill": COLOURS[rung],
                                            "fill-opacity": "0.75"})
            ET.SubElement(rect, "title").text = (
                f"{entries} {rung} pool entries"
                + (" (projected)" if layout.part(run[0]) == "projected" else ""))
        ET.SubElement(svg, "text", {"x": str(left + chart_width + 4), "y": str(top + 12),
                                    "font-size": "10", "fill": "#777777"}).text = str(peak)


def _axis(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The hour ticks under the rows, each with its time."""
    for tick in _hour_ticks(picture.start, picture.end):
        x = layout.x_of(tick) + layout.step_w / 2
        ET.SubElement(svg, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                    "y1": str(layout.rows_bottom - layout.gap),
                                    "y2": str(layout.axis_y + 4), "stroke": "#999999"})
        ET.SubElement(svg, "text", {"x": f"{x:.2f}", "y": str(layout.axis_y + 18),
                                    "text-anchor": "middle", "font-size": "11",
                                    "fill": "#555555"}).text = tick.strftime("%H:%M")


def _transition_marks(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """A numbered dashed line at each transition, a triangle under the head band at each
    flap the re-entry floor avoided."""
    head_y, bottom = layout.head_y, layout.rows_bottom - layout.gap
    marks = ET.SubElement(svg, "g", {"id": "transitions"})
    for number, transition in enumerate(picture.transitions, start=1):
        x = layout.x_of(transition.at) + layout.step_w / 2
        ET.SubElement(marks, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                      "y1": str(head_y - 4), "y2": str(bottom),
                                      "stroke": "#212121", "stroke-dasharray": "3,3"})
        ET.SubElement(marks, "text", {"x": f"{x + 3:.2f}", "y": str(head_y - 6),
                                      "font-size": "11", "font-weight": "bold"}).text = str(
            number)
    under = head_y + layout.head_h
    for transition in picture.suppressed:
        x = layout.x_of(transition.at) + layout.step_w / 2
        ET.SubElement(marks, "path", {
            "d": f"M {x - 4:.2f} {under + 9} L {x + 4:.2f} {under + 9} "
                 f"L {x:.2f} {under + 2} Z",
            "fill": "none", "stroke": "#6a1b9a"})


def _answer_spans(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The translucent shading of each answer's band across the chart."""
    if not picture.spans:
        return
    head_y = layout.head_y
    group = ET.SubElement(svg, "g", {"id": "bands"})
    for since, until, title, colour in picture.spans:
        x = layout.x_of(since)
        rect = ET.SubElement(group, "rect", {
            "x": f"{x:.2f}", "y": str(head_y - 4), "width": f"{layout.x_of(until) - x:.2f}",
            "height": str(layout.rows_bottom - layout.gap - head_y + 4), "fill": colour,
            "fill-opacity": "0.15"})
        ET.SubElement(rect, "title").text = title


def _markers(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The labelled lines across the chart (first paid, pool empty, leak events), each
    label a line lower than the one before, under the axis."""
    if not picture.markers:
        return
    group = ET.SubElement(svg, "g", {"id": "markers"})
    for number, (at, text, colour) in enumerate(picture.markers):
        x = layout.x_of(at)
        y = layout.axis_y + 34 + 14 * number
        ET.SubElement(group, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                      "y1": str(layout.head_y - 4), "y2": str(y - 10),
                                      "stroke": colour, "stroke-width": "2"})
        near_end = x > layout.left + layout.chart_width * 0.75
        ET.SubElement(group, "text", {
            "x": f"{x - 3 if near_end else x + 3:.2f}", "y": str(y),
            "text-anchor": "end" if near_end else "start", "font-size": "11",
            "font-weight": "bold", "fill": colour}).text = text


def _transition_list(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The numbered transitions under the chart, the summary, and the lines after it."""
    left, y = layout.left, layout.list_y
    notes = picture.notes
    ET.SubElement(svg, "text", {"x": str(left), "y": str(y), "font-weight": "bold"}).text = (
        "Transitions of the head rung" if notes else "No transition of the head rung")
    for number, note in enumerate(notes, start=1):
        y += 22
        ET.SubElement(svg, "text", {"x": str(left), "y": str(y)}).text = f"{number}. {note}"
    y += 30
    ET.SubElement(svg, "text", {"x": str(left), "y": str(y), "font-weight": "bold"}).text = (
        picture.summary)
    for text, fill in picture.after:
        y += 22
        attributes = {"x": str(left), "y": str(y)}
        if fill is not None:
            attributes["fill"] = fill
        ET.SubElement(svg, "text", attributes).text = text


def _legend(svg: ET.Element, picture: Picture, layout: _Layout) -> None:
    """The colour of each rung and of the empty pool, and the hatching of projected steps."""
    legend_x = layout.left
    legend_y = layout.height - 12
    legend: tuple[str | None, ...] = (*RUNGS, None)
    for shown in legend:
        ET.SubElement(svg, "rect", {"x": str(legend_x), "y": str(legend_y - 10), "width": "12",
                                    "height": "12", "fill": COLOURS[shown]})
        name = shown or "empty pool"
        ET.SubElement(svg, "text", {"x": str(legend_x + 16), "y": str(legend_y),
                                    "font-size": "11"}).text = name
        legend_x += 24 + 7 * len(name)
    if picture.projected_from is not None:
        ET.SubElement(svg, "rect", {"id": "legend-projected", "x": str(legend_x),
                                    "y": str(legend_y - 10), "width": "12", "height": "12",
                                    "fill": f"url(#{_HATCH})", "stroke": "#616161",
                                    "stroke-dasharray": "4,3"})
        ET.SubElement(svg, "text", {"x": str(legend_x + 16), "y": str(legend_y),
                                    "font-size": "11"}).text = "projected (after now)"


def _entries_and_part(point: Point, rung: str, part: Callable[[Point], str | None]
                      ) -> tuple[int, str | None]:
    return point.entries_on(rung), part(point)


def _hatch_pattern(svg: ET.Element) -> None:
    """The diagonal hatching laid over the projected part of the chart."""
    defs = ET.SubElement(svg, "defs")
    pattern = ET.SubElement(defs, "pattern", {
        "id": _HATCH, "patternUnits": "userSpaceOnUse", "width": "6", "height": "6",
        "patternTransform": "rotate(45)"})
    ET.SubElement(pattern, "rect", {"x": "0", "y": "0", "width": "6", "height": "6",
                                    "fill": "#ffffff", "fill-opacity": "0"})
    ET.SubElement(pattern, "line", {"x1": "0", "y1": "0", "x2": "0", "y2": "6",
                                    "stroke": "#424242", "stroke-width": "1.5",
                                    "stroke-opacity": "0.45"})


def _now_line(svg: ET.Element, points: tuple[Point, ...], x_of: Callable[[datetime], float],
              projected_from: datetime, box: tuple[float, float, float]) -> None:
    """The hatching over the projected steps and the labelled "now" line where they start
    (the right edge when no step is projected)."""
    right, top, bottom = box
    first = next((p for p in points if p.at >= projected_from), None)
    x = x_of(first.at) if first is not None else right
    group = ET.SubElement(svg, "g", {"id": "projected"})
    if first is not None:
        ET.SubElement(group, "rect", {"class": "projected", "x": f"{x:.2f}", "y": str(top),
                                      "width": f"{right - x:.2f}", "height": str(bottom - top),
                                      "fill": f"url(#{_HATCH})"})
    ET.SubElement(group, "line", {"id": "now", "x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                  "y1": str(top - 30), "y2": str(bottom),
                                  "stroke": "#000000", "stroke-width": "2"})
    near_end = x > right - 80
    ET.SubElement(group, "text", {
        "x": f"{x - 4 if near_end else x + 4:.2f}", "y": str(top - 20),
        "text-anchor": "end" if near_end else "start", "font-size": "11",
        "font-weight": "bold"}).text = f"now {timefmt.short(projected_from, projected_from)}"
