"""The views of a forecast: table (80 columns), JSON document, markdown, OpenMetrics."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from omniladder import timefmt
from omniladder.engine.budgets import period_start
from omniladder.rendering import Format
from omniladder.rendering.json_text import write_json

if TYPE_CHECKING:
    from omniladder.forecast import Forecast, Pace

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
        "cutoff_at": _at(pace.cutoff_at), "lasts_to_reset": pace.lasts_to_reset,
        "note": pace.note,
    }


def summary_line(result: Forecast) -> str:
    now = result.now
    span = timefmt.duration(result.horizon.total_seconds())
    parts = [f"{result.auto_id.text} over {span}:"]
    if result.first_paid_at is None:
        parts.append("no paid rung")
    else:
        wait = timefmt.duration((result.first_paid_at - now).total_seconds())
        parts.append(f"first paid at {timefmt.short(result.first_paid_at, now)} (in {wait})")
    if result.pool_empty_at is not None:
        parts.append(f"; pool empty at {timefmt.short(result.pool_empty_at, now)}")
    escalations = len(result.escalations)
    parts.append(f"; {escalations} escalation{'' if escalations == 1 else 's'}")
    return " ".join(parts).replace(" ;", ";")


def forecast_document(result: Forecast) -> dict[str, Any]:
    from omniladder.forecast import wait_text

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
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    burn = ("-" if pace.burn_percent_per_hour is None
            else f"{pace.burn_percent_per_hour:.1f}%/h")
    runs = "-"
    if pace.cutoff_at is not None:
        runs = _clock(pace.cutoff_at, now)
    elif pace.lasts_to_reset:
        runs = "lasts"
    left = "unlim." if pace.remaining_percent is None else pct(pace.remaining_percent)
    ahead = ("-" if pace.ahead_percent is None else f"{pace.ahead_percent:+.1f}")
    return [pace.connection_id[:18], pace.window[:8], left,
            pct(None if pace.elapsed_fraction is None else pace.elapsed_fraction * 100),
            pct(pace.expected_used_percent), pct(pace.used_percent), ahead, burn, runs]


_PACE_HEAD = ["connection", "window", "left", "elap.", "even", "used", "ahead", "burn",
              "cutoff"]
_PACE_WIDTHS = [18, 8, 6, 6, 6, 6, 6, 8, 6]
"""Two columns of indent, eight spaces between: 80 columns."""


def _clock(at: datetime, now: datetime) -> str:
    """``14:01Z`` on now's UTC day, else ``+2d`` (the table's cutoff column)."""
    at = at.astimezone(UTC)
    days = (at.date() - now.astimezone(UTC).date()).days
    return f"{at.hour:02d}:{at.minute:02d}Z" if days == 0 else f"+{days}d"


def _row(cells: list[str]) -> str:
    parts = [cell.ljust(width) if index < 2 else cell.rjust(width)
             for index, (cell, width) in enumerate(zip(cells, _PACE_WIDTHS, strict=True))]
    return " ".join(parts).rstrip()


def _wrap(text: str, indent: str, width: int = 80) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, initial_indent=indent,
                         subsequent_indent=" " * len(indent) + "  ",
                         break_on_hyphens=False) or [indent]


def forecast_lines(result: Forecast) -> list[str]:
    from omniladder.forecast import wait_text

    now = result.now
    lines = [f"omniladder forecast {result.auto_id.text}",
             *_wrap(f"from {timefmt.iso(now)} ({timefmt.now_source(result.now_source)}) over "
                    f"{timefmt.duration(result.horizon.total_seconds())} every "
                    f"{timefmt.duration(result.step.total_seconds())}; "
                    f"{result.projected_readings} projected reading"
                    f"{'' if result.projected_readings == 1 else 's'}", ""), ""]
    lines.append("Pace per window (use at an even pace vs. actual; cutoff at that burn)")
    lines.append("  " + _row(_PACE_HEAD))
    notes: list[str] = []
    for item in result.outlooks:
        for pace in item.paces:
            lines.append("  " + _row(_pace_cells(pace, now)))
            if pace.note:
                notes.append(f"{pace.connection_id} {pace.window}: {pace.note}")
        if not item.paces and item.note:
            notes.append(f"{item.connection_id}: {item.note}")
    if not any(item.paces for item in result.outlooks):
        lines.append("  (no reading at or before now has a window)")
    for note in notes:
        lines += _wrap(note, "  - ")
    lines.append("")
    if result.transitions:
        lines.append("Head rung (projected)")
        first = result.points[0]
        lines.append(f"  {timefmt.short(first.at, now):<8} {first.head or 'empty pool'}")
        for transition in result.transitions:
            lines += _wrap(f"{timefmt.short(transition.at, now):<8} "
                           f"{transition.head or 'empty pool'}: {transition.cause}", "  ")
    else:
        head = result.points[0].head or "the empty pool"
        lines.append(f"Head rung (projected): {head} throughout, no transition")
    if result.escalations:
        lines.append("")
        lines.append("Escalations")
        for escalation in result.escalations:
            lines += _wrap(wait_text(escalation, now), "  ")
    lines.append("")
    hours = ", ".join(f"{rung} {value:.1f}h" for rung, value in result.hours_by_head.items())
    lines.append(f"Hours heading the pool: {hours}")
    if result.paid is None:
        lines.append("Paid estimate: no spend ledger, hours only")
    else:
        for estimate in result.paid:
            usd = "-" if estimate.usd is None else timefmt.usd(estimate.usd)
            lines += _wrap(f"Paid estimate {estimate.rung}: {estimate.hours:.1f}h, {usd} "
                           f"({estimate.basis})", "")
        for line in budget_lines(result):
            lines += _wrap(line, "")
    lines.append("")
    lines += _wrap(summary_line(result), "")
    return lines


def render_table(result: Forecast, out: TextIO) -> None:
    out.write("\n".join(forecast_lines(result)) + "\n")


def render_json(result: Forecast, out: TextIO) -> None:
    write_json(forecast_document(result), out)


def render_markdown(result: Forecast, out: TextIO) -> None:
    from omniladder.forecast import wait_text

    now = result.now
    lines = [f"### omniladder forecast `{result.auto_id.text}`", "",
             f"From {timefmt.iso(now)} over {timefmt.duration(result.horizon.total_seconds())}"
             f" every {timefmt.duration(result.step.total_seconds())}.", "",
             f"**{summary_line(result)}**", "",
             "| connection | window | left | elapsed | burn | cutoff at | note |",
             "|---|---|---:|---:|---:|---|---|"]
    for item in result.outlooks:
        for pace in item.paces:
            cells = _pace_cells(pace, now)
            note = pace.note.replace("|", "\\|")
            lines.append(f"| {pace.connection_id} | {pace.window} | {cells[2]} | {cells[3]} "
                         f"| {cells[7]} | {cells[8]} | {note} |")
        if not item.paces:
            lines.append(f"| {item.connection_id} | | | | | | {item.note} |")
    lines += ["", "| at | head | cause |", "|---|---|---|"]
    for transition in result.transitions:
        lines.append(f"| {timefmt.short(transition.at, now)} | "
                     f"{transition.head or 'empty pool'} | {transition.cause} |")
    if result.escalations:
        lines.append("")
        lines += [f"- {wait_text(e, now)}" for e in result.escalations]
    budgets = budget_lines(result)
    if budgets:
        lines.append("")
        lines += [f"- {line}" for line in budgets]
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[Forecast, TextIO], None]] = {
    Format.TABLE: render_table,
    Format.JSON: render_json,
    Format.MARKDOWN: render_markdown,
}
