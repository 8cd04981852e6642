"""The views of a forecast backtest: table, JSON document, markdown."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from omniladder import timefmt
from omniladder.rendering import Format
from omniladder.rendering.escape import printable
from omniladder.rendering.json_text import write_json

if TYPE_CHECKING:
    from omniladder.analyses.backtest import Backtest, LeadRow

FORMAT_VERSION = "1"
WINDOW_ROWS = 10
"""The table lists at most this many windows (the JSON and markdown list every one)."""
EXCLUSION_WORDS = {
    "reset-early": "the cycle reset before its time",
    "new-cycle": "a cycle began where the forecast's reading showed none running",
    "reading-jump": "a reading jump (a regain with no reset, or a gap before the outcome)",
    "no-later-reading": "no later reading to judge by",
}


def share(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def minutes(seconds: float | None, *, signed: bool = False) -> str:
    """``12m``, ``1h05m`` (``+12m`` / ``-3m`` signed); ``-`` for none."""
    if seconds is None:
        return "-"
    whole = round(abs(seconds) / 60)
    text = f"{whole // 60}h{whole % 60:02d}m" if whole >= 60 else f"{whole}m"
    if not signed:
        return text
    return ("+" if seconds > 0 else "-" if seconds < 0 and whole else "±") + text


def summary_line(result: Backtest) -> str:
    overall = result.overall()
    if not result.samples:
        return (f"{result.auto_id.text} backtest: no crossing to judge among "
                f"{result.forecasts} forecast{'' if result.forecasts == 1 else 's'}")
    return (f"{result.auto_id.text} backtest: the p10–p90 band held {result.covered} of "
            f"{len(result.samples)} crossings ({share(result.coverage)}); p50 median "
            f"error {minutes(overall.mae_seconds)}, bias "
            f"{minutes(overall.bias_seconds, signed=True)}")


def _row_document(row: LeadRow) -> dict[str, Any]:
    return {"samples": row.samples, "inside": row.inside,
            "coverage": None if row.coverage is None else round(row.coverage, 4),
            "mae_seconds": None if row.mae_seconds is None else round(row.mae_seconds, 1),
            "bias_seconds": None if row.bias_seconds is None else round(row.bias_seconds, 1)}


def backtest_document(result: Backtest) -> dict[str, Any]:
    from omniladder.analyses.backtest import LEADS

    overall = result.overall()
    return {
        "format_version": FORMAT_VERSION,
        "kind": "forecast-backtest",
        "auto_id": result.auto_id.text,
        "from": timefmt.iso(result.start), "to": timefmt.iso(result.end),
        "exit_cutoff_percent": result.cutoff_percent,
        "max_reading_age_seconds": result.max_reading_age_seconds,
        "instants": result.instants,
        "forecasts": result.forecasts,
        "no_burn_rate": result.no_rate,
        "samples": len(result.samples),
        "inside": result.covered,
        "coverage": None if result.coverage is None else round(result.coverage, 4),
        "mae_seconds": _row_document(overall)["mae_seconds"],
        "bias_seconds": _row_document(overall)["bias_seconds"],
        "by_lead": [{"lead": row.label, "from_seconds": low, "to_seconds": high,
                     **_row_document(row)}
                    for row, (_, low, high) in zip(result.by_lead(), LEADS, strict=True)],
        "by_window": [{"connection": row.connection_id, "window": row.window,
                       **_row_document(row)} for row in result.by_window()],
        "lasted": {"forecasts": result.lasted, "p50_lasts": result.lasted_p50,
                   "p90_lasts": result.lasted_p90},
        "excluded": dict(result.excluded),
        "warnings": list(result.warnings),
        "summary": summary_line(result),
    }


def _span_line(result: Backtest) -> str:
    return (f"from {timefmt.iso(result.start)} to {timefmt.iso(result.end)}: "
            f"{result.forecasts} window forecast{'' if result.forecasts == 1 else 's'} "
            f"with a burn rate at {result.instants} reading instant"
            f"{'' if result.instants == 1 else 's'} (exit cutoff "
            f"{timefmt.pct(result.cutoff_percent)}{_reserved(result)})")


def _reserved(result: Backtest) -> str:
    """R16: how many connections were judged at their reserve instead of the cutoff."""
    count = result.reserved
    if not count:
        return ""
    return (f"; {count} connection{'' if count == 1 else 's'} at "
            f"{'its' if count == 1 else 'their'} reserve")


def _lasted_line(result: Backtest) -> str:
    return (f"Lasted to their reset: {result.lasted}; the p50 said so for "
            f"{result.lasted_p50}, the band (p90) for {result.lasted_p90}")


def _excluded_line(result: Backtest) -> str:
    total = sum(result.excluded.values())
    parts = [f"{count} {EXCLUSION_WORDS[code]}" for code, count in result.excluded.items()
             if count]
    return f"Excluded: {total}" + (f" ({'; '.join(parts)})" if parts else "")


def _no_rate_line(result: Backtest) -> str:
    return (f"No burn rate (a guardrail: one reading in the cycle, under 5% elapsed): "
            f"{result.no_rate}")


def _wrap(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(printable(text), width=80, subsequent_indent="  ",
                         break_on_hyphens=False, break_long_words=False) or [""]


def backtest_lines(result: Backtest) -> list[str]:
    """The table view's lines (80 columns; an identifier is never cut)."""
    lines = [printable(f"omniladder forecast {result.auto_id.text} --backtest"),
             *_wrap(_span_line(result)), ""]
    head = f"  {'lead':<6} {'samples':>7} {'in band':>8} {'p50 median error':>17} {'bias':>7}"
    lines.append("Crossings judged, by lead time (forecast to the true crossing)")
    lines.append(head)
    for row in (*result.by_lead(), result.overall()):
        lines.append(f"  {row.label:<6} {row.samples:>7} {share(row.coverage):>8} "
                     f"{minutes(row.mae_seconds):>17} "
                     f"{minutes(row.bias_seconds, signed=True):>7}")
    windows = result.by_window()
    if windows:
        title = "By window (samples, in band, p50 median error)"
        if len(windows) > WINDOW_ROWS:
            title = (f"By window: the {WINDOW_ROWS} of {len(windows)} with the most samples "
                     "(--json lists every one)")
            windows = tuple(sorted(windows, key=lambda w: -w.samples)[:WINDOW_ROWS])
        lines += ["", *_wrap(title)]
        width = max(len(printable(f"{w.connection_id} {w.window}")) for w in windows)
        for row in windows:
            name = printable(f"{row.connection_id} {row.window}")
            lines.append(f"  {name:<{width}} {row.samples:>6} {share(row.coverage):>7} "
                         f"{minutes(row.mae_seconds):>7}")
    lines.append("")
    for line in (_lasted_line(result), _excluded_line(result), _no_rate_line(result)):
        lines += _wrap(line)
    return [*lines, "", *_wrap(summary_line(result))]


def render_table(result: Backtest, out: TextIO) -> None:
    out.write("\n".join(backtest_lines(result)) + "\n")


def render_json(result: Backtest, out: TextIO) -> None:
    write_json(backtest_document(result), out)


def render_markdown(result: Backtest, out: TextIO) -> None:
    from omniladder.rendering import markdown as md

    lines = [f"### omniladder forecast {md.code(result.auto_id.text)} --backtest", "",
             md.text(_span_line(result)[0].upper() + _span_line(result)[1:]) + ".", "",
             f"**{md.text(summary_line(result))}**", ""]
    lines += md.table(["lead", "samples", "in band", "p50 median error", "bias"], [
        [md.text(row.label), str(row.samples), share(row.coverage),
         minutes(row.mae_seconds), md.text(minutes(row.bias_seconds, signed=True))]
        for row in (*result.by_lead(), result.overall())], numeric=(1, 2, 3, 4))
    windows = result.by_window()
    if windows:
        lines.append("")
        lines += md.table(["connection", "window", "samples", "in band", "p50 median error"], [
            [md.code(row.connection_id), md.code(row.window), str(row.samples),
             share(row.coverage), minutes(row.mae_seconds)] for row in windows],
            numeric=(2, 3, 4))
    lines.append("")
    lines += [f"- {md.text(line)}" for line in (_lasted_line(result), _excluded_line(result),
                                                  _no_rate_line(result))]
    out.write("\n".join(lines) + "\n")


RENDERERS: dict[Format, Callable[[Backtest, TextIO], None]] = {
    Format.TABLE: render_table,
    Format.JSON: render_json,
    Format.MARKDOWN: render_markdown,
}
