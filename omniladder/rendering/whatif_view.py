"""Views of a what-if answer (SPEC §10.7): the replay's fidelity first, then one row per
scenario, the bound, the consumption model and the assumptions; the same figures as JSON and
markdown, and the paid dollars over the span as an SVG picture.

Each format is one function behind ``RENDERERS``; the picture is ``whatif_svg``. Every figure
the human view prints is a value of the JSON document, rounded there once (``money``,
``figure``) and printed from the rounded value, so the two never disagree in a last digit.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from omniladder import timefmt
from omniladder.analyses.whatif.report import (
    AddedSeat,
    Consumption,
    Expired,
    Scenario,
    WhatifReport,
)
from omniladder.analyses.whatif.scenario import AS_IS
from omniladder.models import RUNGS
from omniladder.rendering import Format
from omniladder.rendering.traffic_view import money

WHATIF_FORMAT_VERSION = "1"


def figure(value: float) -> float:
    """A measured figure (a rate, an error, hours, a percent) as the JSON carries it: six
    significant digits, so that a rate of a millionth of a percent per unit keeps its size."""
    return float(f"{value:.6g}")


def figure_text(value: float) -> str:
    """A measured figure as the human view prints it: three significant digits of the
    JSON's."""
    return f"{figure(value):.3g}"


def dollars(value: float) -> str:
    """Dollars as the human view prints them: the JSON's amount, to the cent (the decimals
    cents would hide shown)."""
    return timefmt.usd_exact(money(value))


def units(value: float) -> float:
    """Token units as the JSON carries them: to the thousandth."""
    return round(value, 3)


def units_text(value: float) -> str:
    """Token units as the human view prints them: whole, with thousands separated."""
    return f"{round(units(value)):,}"


def render_whatif(report: WhatifReport, fmt: Format, out: TextIO) -> None:
    RENDERERS[fmt](report, out)


# --- JSON ------------------------------------------------------------------------------------


def _maybe(value: float | None, rounded: Callable[[float], float]) -> float | None:
    return None if value is None else rounded(value)


def consumption_document(item: Consumption) -> dict[str, Any]:
    return {
        "connection": item.connection,
        "window": item.window,
        "percent_per_unit": figure(item.percent_per_unit),
        "background_percent_per_hour": figure(item.background_percent_per_hour),
        "intervals": item.intervals,
        "error_points": _maybe(item.error_points, figure),
        "assumed": item.assumed,
        "like": item.like,
    }


def expired_document(item: Expired) -> dict[str, Any]:
    return {
        "connection": item.connection,
        "window": item.window,
        "reset_at": timefmt.iso(item.reset_at),
        "percent": figure(item.percent),
        "usd": _maybe(item.usd, money),
    }


def added_document(seat: AddedSeat) -> dict[str, Any]:
    return {
        "connection": seat.connection,
        "like": seat.like,
        "seat_price_usd": _maybe(seat.seat_price_usd, money),
        "seat_period": seat.seat_period,
        "break_even_usd": money(seat.break_even_usd),
    }


def expired_totals(scenario: Scenario) -> tuple[float, float | None]:
    """The share of quota a scenario let lapse, summed over its cycles, and the dollars of
    the cycles whose seat has a price (None when none has)."""
    priced = [item.usd for item in scenario.expired_unused if item.usd is not None]
    return (figure(sum(item.percent for item in scenario.expired_unused)),
            money(sum(priced)) if priced else None)


def scenario_document(scenario: Scenario) -> dict[str, Any]:
    percent, usd = expired_totals(scenario)
    return {
        "name": scenario.name,
        "changes": list(scenario.changes),
        "paid_usd": money(scenario.paid_usd),
        "paid_by_rung": {rung: money(paid) for rung, paid in scenario.paid_by_rung.items()},
        "served_by_rung": dict(scenario.served_by_rung),
        "blocked": scenario.blocked,
        "unpriced": scenario.unpriced,
        "expired_unused": [expired_document(item) for item in scenario.expired_unused],
        "expired_unused_percent": percent,
        "expired_unused_usd": usd,
        "paid_hours": figure(scenario.paid_hours),
        "bound_usd": _maybe(scenario.bound_usd, money),
        "regret_usd": _maybe(scenario.regret_usd, money),
        "added": [added_document(seat) for seat in scenario.added],
    }


def whatif_document(report: WhatifReport) -> dict[str, Any]:
    """The ``whatif --json`` document (schemas/whatif.schema.json). The paid dollars over
    time that the picture draws are left out: the document is the answer, not the drawing."""
    fidelity = report.fidelity
    bound = report.bound
    return {
        "format_version": WHATIF_FORMAT_VERSION,
        "kind": "whatif",
        "auto_id": report.auto_id,
        "from": timefmt.iso(report.start),
        "to": timefmt.iso(report.end),
        "demand": {"requests": report.requests, "token_units": units(report.token_units)},
        "consumption": [consumption_document(item) for item in report.consumption],
        "fidelity": {
            "paid_usd_recorded": money(fidelity.paid_usd_recorded),
            "paid_usd_replayed": money(fidelity.paid_usd_replayed),
            "served_by_rung_recorded": dict(fidelity.served_by_rung_recorded),
            "served_by_rung_replayed": dict(fidelity.served_by_rung_replayed),
            "readings_mae_points": _maybe(fidelity.readings_mae_points, figure),
            "readings_compared": fidelity.readings_compared,
            "warning": fidelity.warning,
        },
        "bound_usd": _maybe(report.bound_usd, money),
        "bound": None if bound is None else {
            "solver": bound.solver,
            "bucket_seconds": bound.bucket_seconds,
            "variables": bound.variables,
            "constraints": bound.constraints,
            "seconds": figure(bound.seconds),
            "relaxed": list(bound.relaxed),
        },
        "bound_note": report.bound_note,
        "scenarios": [scenario_document(scenario) for scenario in report.scenarios],
        "assumptions": list(report.assumptions),
        "warnings": list(report.warnings),
    }


def _json(report: WhatifReport, out: TextIO) -> None:
    from omniladder.rendering.json_text import write_json

    write_json(whatif_document(report), out)


# --- the lines and tables the human view and markdown share -------------------------------


def _by_rung(counts: dict[str, int]) -> str:
    """``subscription 412, cheap 18`` in ladder order (a rung with nothing left out)."""
    ordered = sorted(counts, key=lambda rung: RUNGS.index(rung) if rung in RUNGS else len(RUNGS))
    return ", ".join(f"{rung} {counts[rung]}" for rung in ordered if counts[rung]) or "none"


def fidelity_lines(report: WhatifReport) -> list[str]:
    """The replay against the record (SPEC §10.4): the warning first when there is one, then
    what the ``as-is`` replay paid and served against what was recorded, and how far its
    readings fell from the recorded ones."""
    fidelity = report.fidelity
    lines = [f"warning: {fidelity.warning}"] if fidelity.warning else []
    lines.append(f"{AS_IS} replayed against the record: {report.auto_id} from "
                 f"{timefmt.iso(report.start)} to {timefmt.iso(report.end)}, "
                 f"{report.requests} requests, {units_text(report.token_units)} token units")
    lines.append(f"paid: recorded {dollars(fidelity.paid_usd_recorded)}, replayed "
                 f"{dollars(fidelity.paid_usd_replayed)}")
    lines.append(f"served by rung: recorded {_by_rung(fidelity.served_by_rung_recorded)}; "
                 f"replayed {_by_rung(fidelity.served_by_rung_replayed)}")
    if fidelity.readings_mae_points is None:
        lines.append("readings: no recorded reading in the span to compare with")
    else:
        lines.append(f"readings: replayed against recorded, mean absolute error "
                     f"{figure_text(fidelity.readings_mae_points)} points over "
                     f"{fidelity.readings_compared} readings")
    return lines


def bound_lines(report: WhatifReport) -> list[str]:
    """The best possible (SPEC §10.6): its value, solver and bucket width, and what the
    program relaxes; or why there is none."""
    if report.bound_usd is None:
        return [f"bound: none ({report.bound_note or 'not computed'})"]
    line = (f"bound: {dollars(report.bound_usd)}, the least any schedule could have paid "
            f"for the {AS_IS} fleet")
    bound = report.bound
    if bound is None:
        return [line]
    return [line + f" ({bound.solver}, {timefmt.duration(bound.bucket_seconds)} buckets)",
            *(f"relaxed: {item}" for item in bound.relaxed)]


def _paid(scenario: Scenario) -> str:
    unpriced = f" + {scenario.unpriced} unpriced" if scenario.unpriced else ""
    return dollars(scenario.paid_usd) + unpriced


def _expired(scenario: Scenario) -> str:
    if not scenario.expired_unused:
        return "-"
    percent, usd = expired_totals(scenario)
    text = f"{figure_text(percent)}%"
    if usd is not None:
        text += f", {dollars(usd)}"
        if any(item.usd is None for item in scenario.expired_unused):
            text += " + unpriced"
    return text


def _break_even(seat: AddedSeat) -> str:
    """``$163.48/month (price $200.00)``: what the seat saved per period, against its
    price."""
    price = ("no price" if seat.seat_price_usd is None
             else f"price {dollars(seat.seat_price_usd)}")
    return f"{dollars(seat.break_even_usd)}/{seat.seat_period} ({price})"


def _scenario_row(scenario: Scenario) -> list[str]:
    return [scenario.name, _paid(scenario),
            "-" if scenario.bound_usd is None else dollars(scenario.bound_usd),
            "unknown" if scenario.regret_usd is None else dollars(scenario.regret_usd),
            str(scenario.blocked), f"{figure_text(scenario.paid_hours)}h", _expired(scenario),
            "; ".join(_break_even(seat) for seat in scenario.added) or "-"]


def change_lines(report: WhatifReport) -> list[str]:
    """What each scenario changes against ``as-is`` (its options), one line per scenario
    that changes something."""
    return [f"{scenario.name}: {' '.join(scenario.changes)}" for scenario in report.scenarios
            if scenario.changes]


def _consumption_row(item: Consumption) -> list[str]:
    fit = "fitted"
    if item.assumed:
        fit = f"assumed like {item.like}" if item.like else "assumed"
    return [item.connection, item.window, figure_text(item.percent_per_unit),
            figure_text(item.background_percent_per_hour), str(item.intervals),
            "-" if item.error_points is None else figure_text(item.error_points), fit]


_SCENARIO_COLUMNS = [("scenario", "id"), ("paid", "num"), ("bound", "num"),
                     ("regret", "num"), ("blocked", "num"), ("paid head", "num"),
                     ("expired unused", "text"), ("break-even of added seats", "text")]
_CONSUMPTION_COLUMNS = [("connection", "id"), ("window", "id"), ("%/unit", "num"),
                        ("background %/h", "num"), ("intervals", "num"),
                        ("error (points)", "num"), ("fit", "text")]

Section = tuple[str, list[tuple[str, str]], list[list[str]]]


def scenario_section(report: WhatifReport) -> Section:
    return ("scenarios", _SCENARIO_COLUMNS,
            [_scenario_row(scenario) for scenario in report.scenarios])


def consumption_section(report: WhatifReport) -> Section:
    return ("consumption per token unit and per hour", _CONSUMPTION_COLUMNS,
            [_consumption_row(item) for item in report.consumption])


def _table(report: WhatifReport, out: TextIO) -> None:
    from rich import box
    from rich.text import Text

    from omniladder.rendering.table import ID, NUM, TEXT, fitted_table, make_console

    kinds = {"id": ID, "num": NUM, "text": TEXT}
    console = make_console(out)
    lines = fidelity_lines(report)
    if report.fidelity.warning is not None:
        console.print(Text(lines.pop(0), style="bold red"), soft_wrap=True)
    console.print(Text(lines[0], style="bold"), soft_wrap=True)
    for line in lines[1:]:
        console.print(Text(f"  {line}"), soft_wrap=True)
    console.print()

    def section(found: Section) -> None:
        title, columns, rows = found
        if rows:
            fitted_table(console, [(name, kinds[kind]) for name, kind in columns],
                         [[Text(cell) for cell in row] for row in rows], title=title,
                         box=box.SIMPLE_HEAD, pad_edge=False)

    section(scenario_section(report))
    for line in change_lines(report):
        console.print(Text(f"  {line}", style="dim"), soft_wrap=True)
    if report.scenarios:
        console.print()
    for index, line in enumerate(bound_lines(report)):
        console.print(Text(line if index == 0 else "  " + line,
                           style="bold" if index == 0 else "dim"), soft_wrap=True)
    console.print()
    section(consumption_section(report))
    if report.assumptions:
        console.print(Text("assumptions:", style="bold"))
        for assumption in report.assumptions:
            console.print(Text(f"  - {assumption}"), soft_wrap=True)


def _markdown(report: WhatifReport, out: TextIO) -> None:
    from omniladder.rendering import markdown as md

    fidelity = fidelity_lines(report)
    lines: list[str] = []
    if report.fidelity.warning is not None:
        lines += [f"**{md.text(fidelity.pop(0))}**", ""]
    lines += [f"### omniladder whatif {md.code(report.auto_id)}", "",
              *md.warning_lines(report.warnings), md.text(fidelity[0]), ""]
    lines += [f"- {md.text(line)}" for line in fidelity[1:]]
    lines.append("")
    for title, columns, rows in (scenario_section(report), consumption_section(report)):
        if not rows:
            continue
        numeric = [index for index, (_, kind) in enumerate(columns) if kind == "num"]
        lines += [f"#### {md.text(title)}", ""]
        lines += md.table([md.text(name) for name, _ in columns],
                          [[md.code(cell) if kind == "id" else md.text(cell)
                            for cell, (_, kind) in zip(row, columns, strict=True)]
                           for row in rows], numeric)
        lines.append("")
        if title == "scenarios":
            lines += [*(f"- {md.text(line)}" for line in change_lines(report)), ""]
            bound = bound_lines(report)
            lines += [f"**{md.text(bound[0])}**" + ("  " if len(bound) > 1 else ""),
                      *(f"{md.text(line)}  " for line in bound[1:]), ""]
    if report.assumptions:
        lines += ["**Assumptions**", "", *(f"- {md.text(a)}" for a in report.assumptions), ""]
    out.write("\n".join(lines).rstrip("\n") + "\n")


RENDERERS: dict[Format, Callable[[WhatifReport, TextIO], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}


# --- SVG -------------------------------------------------------------------------------------

_SVG_NS = "http://www.w3.org/2000/svg"
PALETTE = ("#212121", "#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f",
           "#8d6e63")
"""The scenarios' colours in order (``as-is`` first, in near-black); past the eighth, the
colours come round again with a dashed line."""
BOUND_COLOUR = "#b71c1c"
_TICK_STEPS = tuple(timedelta(hours=h) for h in (1, 2, 3, 6, 12, 24, 48, 168, 336, 672))
"""The spacings the time axis may take, the first that gives at most ``_MAX_TICKS``."""
_MAX_TICKS = 10


class _Frame:
    """Where the picture's parts go: the chart's box, the x of an instant and the y of a
    sum of dollars."""

    left, chart_width, right = 96, 820, 188
    chart_height = 300

    def __init__(self, report: WhatifReport, top: int, peak: float) -> None:
        self.start, self.end = report.start, report.end
        self.total = max((report.end - report.start).total_seconds(), 1.0)
        self.top = top
        self.bottom = top + self.chart_height
        self.step, self.peak = _dollar_scale(peak)
        self.width = self.left + self.chart_width + self.right

    def x_of(self, at: datetime) -> float:
        offset = min(max((at - self.start).total_seconds(), 0.0), self.total)
        return self.left + offset / self.total * self.chart_width

    def y_of(self, usd: float) -> float:
        return self.bottom - max(usd, 0.0) / self.peak * self.chart_height


def _dollar_scale(peak: float) -> tuple[float, float]:
    """A round step for the dollar axis (1, 2 or 5 times a power of ten) giving at most
    five steps, and the top of the axis, a whole number of steps at or above ``peak``."""
    if peak <= 0:
        return 1.0, 1.0
    rough = peak / 5
    power = 10.0 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough)
    return step, step * math.ceil(peak / step - 1e-9)


def _time_ticks(start: datetime, end: datetime) -> tuple[timedelta, list[datetime]]:
    """The instants the time axis marks: whole hours or days in UTC, evenly spaced (the
    span's start alone when it holds no whole hour)."""
    span = end - start
    step = next((s for s in _TICK_STEPS if span / s <= _MAX_TICKS), _TICK_STEPS[-1])
    while span / step > _MAX_TICKS:
        step *= 2
    utc = start.astimezone(UTC)
    if step >= timedelta(days=1):
        first = utc.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        first = utc.replace(minute=0, second=0, microsecond=0)
        hours = int(step.total_seconds() // 3600)
        first -= timedelta(hours=first.hour % hours)
    while first < start:
        first += step
    ticks = []
    while first <= end:
        ticks.append(first)
        first += step
    return step, ticks or [utc]


def _tick_label(tick: datetime, step: timedelta, first: bool) -> str:
    if step >= timedelta(days=1):
        return tick.strftime("%Y-%m-%d")
    if first or (tick.hour == 0 and tick.minute == 0):
        return tick.strftime("%m-%d %H:%M")
    return tick.strftime("%H:%M")


def _path(scenario: Scenario, frame: _Frame) -> str:
    """The scenario's cumulative paid dollars as a step line: flat from the span's start
    at $0, up at each instant, and on to the span's end at what the scenario paid."""
    parts = [f"M {frame.x_of(frame.start):.2f} {frame.y_of(0.0):.2f}"]
    for at, paid in scenario.paid_over_time:
        parts.append(f"H {frame.x_of(at):.2f} V {frame.y_of(paid):.2f}")
    parts.append(f"H {frame.x_of(frame.end):.2f} V {frame.y_of(scenario.paid_usd):.2f}")
    return " ".join(parts)


def _peak(report: WhatifReport) -> float:
    sums = [report.bound_usd or 0.0]
    for scenario in report.scenarios:
        sums += [scenario.paid_usd, scenario.bound_usd or 0.0]
        sums += [paid for _, paid in scenario.paid_over_time]
    return max(sums)


def whatif_svg(report: WhatifReport) -> str:
    """The paid dollars over the span, one line per scenario, and the bound: a dashed line
    at the ``as-is`` fleet's bound, and a mark at the span's end at each other scenario's
    own (a standalone SVG, stdlib only, the same bytes for the same report)."""
    warning = report.fidelity.warning
    top = 76 + (20 if warning else 0)
    frame = _Frame(report, top, _peak(report))
    legend_y = frame.bottom + 56
    height = legend_y + 22 * (len(report.scenarios) + 2) + 10
    svg = ET.Element("svg", {"xmlns": _SVG_NS, "width": str(frame.width),
                             "height": str(height), "viewBox": f"0 0 {frame.width} {height}",
                             "font-family": "Helvetica, Arial, sans-serif",
                             "font-size": "13"})
    span = f"{timefmt.iso(report.start)} to {timefmt.iso(report.end)}"
    ET.SubElement(svg, "title").text = f"omniladder whatif {report.auto_id} {span}"
    ET.SubElement(svg, "rect", {"x": "0", "y": "0", "width": str(frame.width),
                                "height": str(height), "fill": "#ffffff"})
    ET.SubElement(svg, "text", {"x": str(frame.left), "y": "24", "font-size": "16",
                                "font-weight": "bold"}).text = (
        f"{report.auto_id}: paid dollars over the span, per scenario, and the best possible")
    ET.SubElement(svg, "text", {"x": str(frame.left), "y": "44", "fill": "#555555"}).text = (
        f"{timefmt.iso(report.start)} → {timefmt.iso(report.end)}, {report.requests} "
        f"requests, {units_text(report.token_units)} token units")
    if warning:
        ET.SubElement(svg, "text", {"x": str(frame.left), "y": "64", "fill": BOUND_COLOUR,
                                    "font-weight": "bold"}).text = f"warning: {warning}"
    _grid(svg, frame)
    _time_axis(svg, frame)
    _bound_marks(svg, report, frame)
    lines = ET.SubElement(svg, "g", {"id": "scenarios", "fill": "none", "stroke-width": "2"})
    for index, scenario in enumerate(report.scenarios):
        path = ET.SubElement(lines, "path", {"d": _path(scenario, frame),
                                             "stroke": _colour(index), **_dashes(index)})
        ET.SubElement(path, "title").text = f"{scenario.name}: paid {dollars(scenario.paid_usd)}"
    _legend(svg, report, frame, legend_y)
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode", xml_declaration=False) + "\n"


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _dashes(index: int) -> dict[str, str]:
    return {"stroke-dasharray": "8,4"} if index >= len(PALETTE) else {}


def _grid(svg: ET.Element, frame: _Frame) -> None:
    """The chart's box and a labelled line at each step of the dollar axis."""
    group = ET.SubElement(svg, "g", {"id": "dollars", "shape-rendering": "crispEdges"})
    ET.SubElement(group, "rect", {"x": str(frame.left), "y": str(frame.top),
                                  "width": str(frame.chart_width),
                                  "height": str(frame.chart_height), "fill": "#f5f5f5"})
    steps = round(frame.peak / frame.step)
    for number in range(steps + 1):
        usd = number * frame.step
        y = frame.y_of(usd)
        ET.SubElement(group, "line", {"x1": str(frame.left),
                                      "x2": str(frame.left + frame.chart_width),
                                      "y1": f"{y:.2f}", "y2": f"{y:.2f}", "stroke": "#dddddd"})
        ET.SubElement(group, "text", {"x": str(frame.left - 6), "y": f"{y + 4:.2f}",
                                      "text-anchor": "end", "font-size": "11",
                                      "fill": "#555555"}).text = timefmt.usd(usd)


def _time_axis(svg: ET.Element, frame: _Frame) -> None:
    """A tick and a date (or a time of day, for a short span) at each whole hour or day."""
    group = ET.SubElement(svg, "g", {"id": "time"})
    step, ticks = _time_ticks(frame.start, frame.end)
    for number, tick in enumerate(ticks):
        x = frame.x_of(tick)
        ET.SubElement(group, "line", {"x1": f"{x:.2f}", "x2": f"{x:.2f}",
                                      "y1": str(frame.bottom), "y2": str(frame.bottom + 5),
                                      "stroke": "#999999"})
        ET.SubElement(group, "text", {"x": f"{x:.2f}", "y": str(frame.bottom + 19),
                                      "text-anchor": "middle", "font-size": "11",
                                      "fill": "#555555"}).text = _tick_label(
            tick, step, number == 0)
    ET.SubElement(group, "text", {"x": str(frame.left), "y": str(frame.bottom + 36),
                                  "font-size": "11", "fill": "#777777"}).text = "UTC"


def _bound_marks(svg: ET.Element, report: WhatifReport, frame: _Frame) -> None:
    """The ``as-is`` bound as a dashed line across the chart, labelled at the span's end;
    each other scenario's own bound, where it differs, as a short mark there in its
    colour."""
    group = ET.SubElement(svg, "g", {"id": "bound"})
    right = frame.left + frame.chart_width
    if report.bound_usd is not None:
        y = frame.y_of(report.bound_usd)
        line = ET.SubElement(group, "line", {
            "x1": str(frame.left), "x2": str(right), "y1": f"{y:.2f}", "y2": f"{y:.2f}",
            "stroke": BOUND_COLOUR, "stroke-width": "1.5", "stroke-dasharray": "6,4"})
        ET.SubElement(line, "title").text = (
            f"bound {dollars(report.bound_usd)}: the least any schedule could have paid "
            f"for the {AS_IS} fleet")
        ET.SubElement(group, "text", {"x": str(right + 8), "y": f"{y + 4:.2f}",
                                      "font-size": "11", "fill": BOUND_COLOUR,
                                      "font-weight": "bold"}).text = (
            f"bound {dollars(report.bound_usd)}")
    for index, scenario in enumerate(report.scenarios):
        own = scenario.bound_usd
        if own is None or (report.bound_usd is not None
                           and money(own) == money(report.bound_usd)):
            continue
        y = frame.y_of(own)
        mark = ET.SubElement(group, "line", {
            "x1": f"{right - 10}", "x2": f"{right + 4}", "y1": f"{y:.2f}", "y2": f"{y:.2f}",
            "stroke": _colour(index), "stroke-width": "3"})
        ET.SubElement(mark, "title").text = f"{scenario.name}: bound {dollars(own)}"


def _legend(svg: ET.Element, report: WhatifReport, frame: _Frame, top: int) -> None:
    """One line per scenario (its colour, name, paid and regret), then the bound's."""
    group = ET.SubElement(svg, "g", {"id": "legend"})
    y = top
    for index, scenario in enumerate(report.scenarios):
        ET.SubElement(group, "line", {"x1": str(frame.left), "x2": str(frame.left + 24),
                                      "y1": str(y - 4), "y2": str(y - 4),
                                      "stroke": _colour(index), "stroke-width": "2",
                                      **_dashes(index)})
        regret = ("regret unknown" if scenario.regret_usd is None
                  else f"regret {dollars(scenario.regret_usd)}")
        ET.SubElement(group, "text", {"x": str(frame.left + 32), "y": str(y)}).text = (
            f"{scenario.name}: paid {dollars(scenario.paid_usd)}, {regret}")
        y += 22
    if report.bound_usd is not None:
        ET.SubElement(group, "line", {"x1": str(frame.left), "x2": str(frame.left + 24),
                                      "y1": str(y - 4), "y2": str(y - 4),
                                      "stroke": BOUND_COLOUR, "stroke-width": "1.5",
                                      "stroke-dasharray": "6,4"})
        text = (f"bound: {dollars(report.bound_usd)}, the least any schedule could have "
                f"paid for the {AS_IS} fleet")
    else:
        text = f"bound: none ({report.bound_note or 'not computed'})"
    ET.SubElement(group, "text", {"x": str(frame.left + 32), "y": str(y)}).text = text
