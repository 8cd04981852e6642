"""The views of a forecast: table (80 columns), JSON document, markdown, OpenMetrics."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from omniladder import timefmt
from omniladder.engine.budgets import period_start
from omniladder.rendering import Format
from omniladder.rendering.escape import printable
from omniladder.rendering.json_text import write_json

if TYPE_CHECKING:
    from omniladder.analyses.forecast.pace import Pace
    from omniladder.analyses.forecast.walk import Band, Forecast

FORMAT_VERSION = "1"


def _at(value: Any) -> str | None:
    return None if value is None else timefmt.iso(value)


def _num(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def pace_document(pace: Pace) -> dict[str, Any]:
    return {
        "connection_id": pace.connection_id, "window": pace.window,
        "models": None if pace.models is None else list(pace.models),
        "checked_at": timefmt.iso(pace.checked_at),
        "remaining_percent": pace.remaining_percent, "reset_at": _at(pace.reset_at),
        "window_seconds": pace.window_seconds, "length_source": pace.length_source,
        "readings_in_cycle": pace.readings,
        "elapsed_fraction": _num(pace.elapsed_fraction, 4),
        "expected_used_percent": _num(pace.expected_used_percent),
        "used_percent": _num(pace.used_percent),
        "ahead_percent": _num(pace.ahead_percent),
        "burn_percent_per_hour": _num(pace.burn_percent_per_hour),
        "burn_band_percent_per_hour": None if pace.burn_band is None
        else [_num(pace.burn_band[0]), _num(pace.burn_band[1])],
        "cutoff_at": _at(pace.cutoff_at), "lasts_to_reset": pace.lasts_to_reset,
        "note": pace.note,
        "burn_profile": _profile_document(pace),
    }


def _profile_document(pace: Pace) -> dict[str, Any] | None:
    """The time-of-day profile the projection follows: the days of readings it was
    learned from and the middle burn in each UTC hour (docs/forecast.md#profile)."""
    profile = pace.profile
    if profile is None or pace.burn_percent_per_hour is None:
        return None
    return {"learned_days": _num(profile.days, 2),
            "percent_per_hour_by_utc_hour": [
                _num(pace.burn_percent_per_hour * profile.scale * weight)
                for weight in profile.weights]}


def unknown_text(result: Forecast) -> str:
    """``claude-max-work 5h has no burn rate (…), and 2 more windows``: why the answers
    are unknown (the first unprojected window, and how many more)."""
    first = result.unprojected[0]
    what = (first.connection_id if first.window is None
            else f"{first.connection_id} {first.window}")
    more = len(result.unprojected) - 1
    tail = f", and {more} more window{'' if more == 1 else 's'}" if more else ""
    return f"{what} has no burn rate ({first.reason}){tail}"


def _band_text(band: Band | None, now: datetime, suffix: str = "") -> str:
    """`` (13:41Z–14:38Z)``: the p10–p90 of an answer beside its p50, when they differ; a
    p10 with no p50 (``no paid rung at p50``) is said as the earliest it may come."""
    if band is None or band.p10 == band.p90:
        return ""
    if band.p50 is None:
        return f"{suffix} (at p10 {timefmt.short(band.p10, now)})" if band.p10 else ""
    early = timefmt.short(band.p10, now) if band.p10 is not None else "?"
    late = timefmt.short(band.p90, now) if band.p90 is not None else "past the horizon"
    return f" ({early}–{late})"


def _band_document(band: Band | None) -> dict[str, str | None] | None:
    if band is None:
        return None
    return {"p10": _at(band.p10), "p50": _at(band.p50), "p90": _at(band.p90)}


def summary_line(result: Forecast) -> str:
    now = result.now
    span = timefmt.duration(result.horizon.total_seconds())
    if not result.answers_known:
        return (f"{result.auto_id.text} over {span}: first paid: unknown — "
                f"{unknown_text(result)}; pool empty: unknown")
    parts = [f"{result.auto_id.text} over {span}:"]
    if result.first_paid_at is None:
        parts.append("no paid rung" + _band_text(result.first_paid_band, now, " at p50"))
    else:
        wait = timefmt.duration((result.first_paid_at - now).total_seconds())
        parts.append(f"first paid at {timefmt.short(result.first_paid_at, now)}"
                     f"{_band_text(result.first_paid_band, now)} (in {wait})")
    if result.pool_empty_at is not None:
        parts.append(f"; pool empty at {timefmt.short(result.pool_empty_at, now)}"
                     f"{_band_text(result.pool_empty_band, now)}")
    elif result.pool_empty_band is not None and result.pool_empty_band.p10 is not None:
        parts.append(f"; pool empty at p10 {timefmt.short(result.pool_empty_band.p10, now)}")
    escalations = len(result.escalations)
    parts.append(f"; {escalations} escalation{'' if escalations == 1 else 's'}")
    return " ".join(parts).replace(" ;", ";")


def forecast_document(result: Forecast) -> dict[str, Any]:
    from omniladder.analyses.forecast.walk import wait_text

    now = result.now
    paid = None if result.paid is None else [
        {"rung": p.rung, "hours": round(p.hours, 4), "usd_per_hour": _num(p.usd_per_hour, 4),
         "usd": _num(p.usd, 4), "basis": p.basis,
         "budget_usd": None if p.budget is None else p.budget.budget_usd,
         "budget_period": None if p.budget is None else p.budget.period,
         "budget_left_usd": None if p.budget is None else p.budget.left_usd,
         "budget_reached_at": None if p.budget is None else _at(p.budget.reached_at)}
        for p in result.paid]
    return {
        "format_version": FORMAT_VERSION,
        "kind": "forecast",
        "auto_id": result.auto_id.text,
        "now": timefmt.iso(now), "now_source": result.now_source,
        "end": timefmt.iso(result.end),
        "horizon_seconds": result.horizon.total_seconds(),
        "step_seconds": result.step.total_seconds(),
        "connections": [
            {"connection_id": o.connection_id, "projected": o.projected, "note": o.note}
            for o in result.outlooks],
        "pace": [pace_document(p) for o in result.outlooks for p in o.paces],
        "transitions": [
            {"at": timefmt.iso(t.at), "from": t.previous, "to": t.head,
             "escalation": t.escalation, "cause": t.cause} for t in result.transitions],
        "escalations": [
            {"at": timefmt.iso(e.at), "from": e.previous, "to": e.head, "cause": e.cause,
             "back_at": _at(e.back_at), "back_cause": e.back_cause,
             "wait_seconds": None if e.back_at is None
             else (e.back_at - e.at).total_seconds(),
             "text": wait_text(e, now)} for e in result.escalations],
        "first_paid_at": _at(result.first_paid_at),
        "pool_empty_at": _at(result.pool_empty_at),
        "first_paid_at_band": _band_document(result.first_paid_band),
        "pool_empty_at_band": _band_document(result.pool_empty_band),
        "answers_known": result.answers_known,
        "unprojected_windows": [
            # connection_id as the pace rows name it; connection kept for compatibility
            {"connection_id": u.connection_id, "connection": u.connection_id,
             "window": u.window, "reason": u.reason}
            for u in result.unprojected],
        "hours_by_head": {k: round(v, 4) for k, v in result.hours_by_head.items()},
        "paid_estimate": paid,
        "projected_readings": result.projected_readings,
        "warnings": list(result.warnings),
        "summary": summary_line(result),
    }


_THIS_PERIOD = {"day": "today", "week": "this week", "month": "this month"}


def budget_lines(result: Forecast) -> list[str]:
    """``Budget cheap: $0.25 of $12.25 left today; the estimate reaches it at 14:35Z; …``
    for each paid rung whose budget the estimate reaches within the horizon. An instant in
    a later budget period is that period's budget being reached (each starts from nothing
    spent), and is worded so."""
    lines: list[str] = []
    for estimate in result.paid or ():
        budget = estimate.budget
        if budget is None or budget.reached_at is None:
            continue
        reached = budget.reached_at
        later = period_start(reached, budget.period) != period_start(result.now, budget.period)
        what = f"a later {budget.period}'s budget" if later else "it"
        lines.append(f"Budget {estimate.rung}: {timefmt.usd(budget.left_usd)} of "
                     f"{timefmt.usd(budget.budget_usd)} left "
                     f"{_THIS_PERIOD.get(budget.period, 'this period')}; the estimate "
                     f"reaches {what} at {timefmt.short(reached, result.now)}; spend is not"
                     " projected, so the rung stays open after it")
    return lines


def _pace_cells(pace: Pace, now: datetime) -> list[str]:
    """The pace row's cells, whole: identifiers are never cut (``_pace_table`` lays them
    out at the width there is)."""
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    burn = ("-" if pace.burn_percent_per_hour is None
            else f"{pace.burn_percent_per_hour:.1f}%/h")
    runs = "-"
    if pace.past_reset:
        runs = "reset"
    elif pace.cutoff_at is not None:
        runs = _clock(pace.cutoff_at, now)
    elif pace.lasts_to_reset:
        runs = "lasts"
    left = "unlim." if pace.remaining_percent is None else pct(pace.remaining_percent)
    ahead = ("-" if pace.ahead_percent is None else f"{pace.ahead_percent:+.1f}")
    return [pace.connection_id, pace.window, left,
            pct(None if pace.elapsed_fraction is None else pace.elapsed_fraction * 100),
            pct(pace.expected_used_percent), pct(pace.used_percent), ahead, burn, runs]


_PACE_HEAD = ["connection", "window", "left", "elap.", "even", "used", "ahead", "burn",
              "cutoff"]
_PACE_WIDTHS = [18, 8, 6, 6, 6, 6, 6, 8, 6]
"""The narrowest each column gets (two columns of indent and these fill 80 columns); a
longer cell widens its column."""


def _clock(at: datetime, now: datetime) -> str:
    """``14:01Z`` on now's UTC day, else ``+2d`` (the table's cutoff column)."""
    at = at.astimezone(UTC)
    days = (at.date() - now.astimezone(UTC).date()).days
    return f"{at.hour:02d}:{at.minute:02d}Z" if days == 0 else f"+{days}d"


def _row(cells: list[str], widths: list[int]) -> str:
    parts = [_pad(cell, width, left=index < 2)
             for index, (cell, width) in enumerate(zip(cells, widths, strict=True))]
    return " ".join(parts).rstrip()


def cell_len(text: str) -> int:
    """The terminal cells ``text`` takes (rich's measure, imported when a table is laid
    out: the module stays importable without rich)."""
    from rich.cells import cell_len as measured

    return measured(text)


def _pad(cell: str, width: int, *, left: bool) -> str:
    room = " " * max(width - cell_len(cell), 0)
    return cell + room if left else room + cell


def _pace_table(rows: list[list[str]], width: int) -> list[str]:
    """The pace rows under their header when they fit ``width`` columns (every column as
    wide as its widest cell), else stacked: each row's connection and window on a line of
    their own and its figures below, as the other views stack a table that does not fit.
    Cells are escaped first, so widths are those printed."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(least, *(cell_len(row[index]) for row in rows))
              for index, least in enumerate(_PACE_WIDTHS)]
    if 2 + sum(widths) + len(widths) - 1 <= width:
        return ["  " + _row(_PACE_HEAD, widths), *("  " + _row(row, widths) for row in rows)]
    lines: list[str] = []
    for row in rows:
        lines += _wrap(f"{row[0]} {row[1]}", "  ", width)
        line = "     "
        for name, cell in zip(_PACE_HEAD[2:], row[2:], strict=True):
            item = f" {name} {cell}"
            if line.strip() and cell_len(line) + len(item) > width:
                lines.append(line)
                line = "     "
            line += item
        lines.append(line)
    return lines


def _wrap(text: str, indent: str, width: int = 80) -> list[str]:
    import textwrap

    return textwrap.wrap(printable(text), width=max(width, len(indent) + 8),
                         initial_indent=indent, subsequent_indent=" " * len(indent) + "  ",
                         break_on_hyphens=False, break_long_words=False) or [indent]


def hours_line(result: Forecast) -> str:
    from omniladder.analyses.forecast.walk import hours_text

    return "Hours heading the pool: " + ", ".join(
        f"{rung} {hours_text(value)}" for rung, value in result.hours_by_head.items())


def paid_lines(result: Forecast) -> list[str]:
    """``Paid estimate cheap: 2.92h, $0.12 (…)`` per paid rung, then the budget lines."""
    from omniladder.analyses.forecast.walk import hours_text

    if result.paid is None:
        return ["Paid estimate: no spend ledger, hours only"]
    lines = []
    for estimate in result.paid:
        usd = "-" if estimate.usd is None else timefmt.usd(estimate.usd)
        lines.append(f"Paid estimate {estimate.rung}: {hours_text(estimate.hours)}, {usd} "
                     f"({estimate.basis})")
    return lines + budget_lines(result)


def forecast_lines(result: Forecast, width: int = 80) -> list[str]:
    """The table view's lines, ``width`` columns wide (an identifier longer than that is
    printed whole on a line of its own)."""
    from omniladder.analyses.forecast.walk import wait_text

    now = result.now
    lines = [printable(f"omniladder forecast {result.auto_id.text}"),
             *_wrap(f"from {timefmt.iso(now)} ({timefmt.now_source(result.now_source)}) over "
                    f"{timefmt.duration(result.horizon.total_seconds())} every "
                    f"{timefmt.duration(result.step.total_seconds())}; "
                    f"{result.projected_readings} projected reading"
                    f"{'' if result.projected_readings == 1 else 's'}", "", width), ""]
    if not result.answers_known:
        lines += [*_wrap(summary_line(result), "", width), ""]
    lines += _wrap("Pace per window (use at an even pace vs. actual; cutoff at that burn)", "",
                   width)
    notes: list[str] = []
    rows: list[list[str]] = []
    for item in result.outlooks:
        for pace in item.paces:
            rows.append(_pace_cells(pace, now))
            if pace.note:
                notes.append(f"{pace.connection_id} {pace.window}: {pace.note}")
        if not item.paces and item.note:
            notes.append(f"{item.connection_id}: {item.note}")
    if rows:
        lines += _pace_table(rows, width)
    else:
        lines += ["  " + _row(_PACE_HEAD, _PACE_WIDTHS),
                  "  (no reading at or before now has a window)"]
    for note in notes:
        lines += _wrap(note, "  - ", width)
    lines.append("")
    if not result.answers_known:
        count = len(result.unprojected)
        lines += _wrap(f"Head rung: unknown from now: {count} window"
                       f"{'' if count == 1 else 's'} cannot be projected (docs/forecast.md"
                       "#unknown); what follows holds "
                       f"{'it' if count == 1 else 'them'} at the figure read", "", width)
    if result.transitions:
        lines.append("Head rung (projected)")
        first = result.points[0]
        lines.append(f"  {timefmt.short(first.at, now):<8} {first.head or 'empty pool'}")
        for transition in result.transitions:
            lines += _wrap(f"{timefmt.short(transition.at, now):<8} "
                           f"{transition.head or 'empty pool'}: {transition.cause}", "  ",
                           width)
    elif result.answers_known:
        head = result.points[0].head or "the empty pool"
        lines += _wrap(f"Head rung (projected): {head} throughout, no transition", "", width)
    else:
        head = result.points[0].head or "the empty pool"
        lines += _wrap(f"  {timefmt.short(result.now, now):<8} {head}, no projected "
                       "transition", "", width)
    if result.escalations:
        lines.append("")
        lines.append("Escalations")
        for escalation in result.escalations:
            lines += _wrap(wait_text(escalation, now), "  ", width)
    lines.append("")
    lines += _wrap(hours_line(result), "", width)
    for line in paid_lines(result):
        lines += _wrap(line, "", width)
    lines.append("")
    lines += _wrap(summary_line(result), "", width)
    return lines


def render_table(result: Forecast, out: TextIO) -> None:
    """The table view at the width the other views print at (the terminal's, ``COLUMNS``,
    or a fixed width when piped)."""
    from omniladder.rendering.table import make_console

    width = make_console(out).width
    out.write("\n".join(forecast_lines(result, width)) + "\n")


def render_json(result: Forecast, out: TextIO) -> None:
    write_json(forecast_document(result), out)


def render_markdown(result: Forecast, out: TextIO) -> None:
    from omniladder.analyses.forecast.walk import wait_text
    from omniladder.rendering import markdown as md

    now = result.now
    lines = [f"### omniladder forecast {md.code(result.auto_id.text)}", "",
             f"From {timefmt.iso(now)} over {timefmt.duration(result.horizon.total_seconds())}"
             f" every {timefmt.duration(result.step.total_seconds())}.", "",
             f"**{md.text(summary_line(result))}**", ""]
    rows: list[list[str]] = []
    for item in result.outlooks:
        for pace in item.paces:
            cells = _pace_cells(pace, now)
            rows.append([md.code(pace.connection_id), md.code(pace.window),
                         *(md.text(cells[i]) for i in (2, 3, 7, 8)), md.text(pace.note)])
        if not item.paces:
            rows.append([md.code(item.connection_id), "", "", "", "", "",
                         md.text(item.note)])
    lines += md.table(["connection", "window", "left", "elapsed", "burn", "cutoff at",
                       "note"], rows, numeric=(2, 3, 4))
    lines += ["", *md.table(["at", "head", "cause"], [
        [md.text(timefmt.short(t.at, now)), md.text(t.head or "empty pool"), md.text(t.cause)]
        for t in result.transitions])]
    if result.escalations:
        lines.append("")
        lines += [f"- {md.text(wait_text(e, now))}" for e in result.escalations]
    lines.append("")
    lines += [f"- {md.text(line)}" for line in (hours_line(result), *paid_lines(result))]
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[Forecast, TextIO], None]] = {
    Format.TABLE: render_table,
    Format.JSON: render_json,
    Format.MARKDOWN: render_markdown,
}
