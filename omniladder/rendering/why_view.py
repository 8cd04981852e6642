"""Views of a `why` trace: a readable tree, in the spirit of ``cargo tree -i``, and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from omniladder import timefmt
from omniladder.analyses.why import (
    R1_STEPS,
    Comeback,
    IdVerdict,
    ModelTrace,
    PoolSeat,
    Route,
    Trace,
    threshold_kind,
)
from omniladder.engine.budgets import Disabled, NoBudget, Unenforced
from omniladder.engine.records import FORMAT_VERSION
from omniladder.models import Connection
from omniladder.rendering.table import make_console

# --- JSON ----------------------------------------------------------------------------------


def _raised(trace: Trace) -> bool:
    """Whether the connection's reserve is its exit cutoff (R16)."""
    return trace.seat is not None and trace.seat.raised


def _iso(value: datetime | None) -> str | None:
    return timefmt.iso(value) if value is not None else None


def _route(route: Route | None) -> dict[str, Any] | None:
    if route is None:
        return None
    return {"at": timefmt.iso(route.at), "just_after": route.exclusive,
            "needs_fresh_reading": route.needs_reading, "unverified": route.unverified,
            "threshold_percent": route.threshold, "threshold_kind": route.threshold_kind,
            "steps": list(route.steps)}


def _comeback(comeback: Comeback) -> dict[str, Any]:
    earliest = comeback.earliest
    return {"model": comeback.model, "reason": comeback.reason,
            "earliest": _route(earliest),
            "without_new_reading": _route(comeback.without_reading),
            "with_fresh_reading": _route(comeback.with_reading)}


def _model(trace: Trace, model: ModelTrace) -> dict[str, Any]:
    verdict = model.verdict
    budget = model.budget
    last: dict[str, Any] | None = None
    if verdict is not None and verdict.reading is not None:
        last = {"checked_at": timefmt.iso(verdict.reading.checked_at),
                "status": verdict.reading.status, "figure": verdict.figure,
                "threshold": verdict.threshold,
                "judged": verdict.kind, "reason": verdict.reason}
    return {
        "model": model.model,
        "tier": {"tier": model.tier.tier, "source": model.tier.source,
                 "input_usd_per_mtok": model.tier.input_usd_per_mtok},
        "rung": model.rung,
        "windows": [
            {"name": m.window.name, "remaining_percent": m.window.remaining_percent,
             "unlimited": m.window.unlimited, "reset_at": _iso(m.window.reset_at),
             "models": list(m.window.models) if m.window.models is not None else None,
             "applicable": m.applies, "current": m.applies and m.current,
             "outdated": m.applies and not m.current, "limiting": m.limiting}
            for m in model.windows
        ],
        "figure": verdict.figure if verdict is not None else None,
        "limiting_window": verdict.window.name if verdict and verdict.window else None,
        "held_past_age": verdict.held_past_age if verdict is not None else False,
        "replay": [
            {"checked_at": timefmt.iso(step.checked_at), "status": step.status,
             "figure": step.figure, "threshold": step.threshold,
             "state_before": "in play" if step.in_play_before else "out",
             "state_after": "in play" if step.in_play_after else "out"}
            for step in model.replay
        ],
        "latest": last,
        "threshold": verdict.threshold if verdict is not None else None,
        "threshold_kind": (None if verdict is None or verdict.threshold is None
                           else threshold_kind(verdict.floor_applied, _raised(trace))),
        "out_since": _iso(verdict.out_since) if verdict is not None else None,
        "quota": ({"kind": verdict.kind, "reason": verdict.reason, "detail": verdict.detail}
                  if verdict is not None else None),
        "budget": ({"rung": budget.rung, "state": budget.state, "budget_usd": budget.budget_usd,
                    "spent_usd": budget.spent_usd,
                    "remaining_usd": budget.remaining_usd,
                    "period": budget.period, "since": timefmt.iso(budget.since)}
                   if budget is not None else None),
    }


def _seat(seat: PoolSeat) -> dict[str, Any]:
    """One seat; ``order_reason`` (R15) only under ``expiring-first``."""
    found: dict[str, Any] = {"model": seat.model, "position": seat.position,
                             "rung": seat.rung, "unverified": seat.unverified}
    if seat.order is not None:
        found["order_reason"] = seat.order
    return found


def _verdict(verdict: IdVerdict) -> dict[str, Any]:
    return {
        "auto_id": verdict.auto_id,
        "in_pool": verdict.in_pool,
        "pool": [_seat(s) for s in verdict.seats],
        "excluded": [{"model": x.model, "rung": x.rung, "reason": x.reason,
                      "detail": x.detail, "fix": x.fix} for x in verdict.left],
        "comeback": [_comeback(c) for c in verdict.comebacks],
    }


def _connection(connection: Connection, models: Sequence[str]) -> dict[str, Any]:
    """The connection as ``why`` reports it; ``capacity_weight`` only when given."""
    found: dict[str, Any] = {"id": connection.id, "provider": connection.provider,
                             "auth_type": connection.auth_type, "label": connection.label,
                             "models": list(models)}
    if connection.capacity_weight is not None:
        found["capacity_weight"] = connection.capacity_weight
    return found


def why_document(trace: Trace) -> dict[str, Any]:
    facts = trace.facts
    connection = facts.connection
    billing = facts.billing
    matched = billing.matched
    cool = facts.cooldown
    reading = trace.reading
    observed = connection.observed_at(trace.now)
    return {
        "format_version": FORMAT_VERSION,
        "connection_id": trace.connection_id,
        "now": timefmt.iso(trace.now),
        "now_source": trace.now_source,
        "connection": _connection(connection, facts.models),
        "billing": {
            "step": billing.step, "rule": R1_STEPS[billing.step],
            "billing": billing.billing, "overage": billing.overage,
            "billing_source": billing.source,
            "catalog_entry": None if matched is None else {
                "provider": matched.entry.provider, "auth_type": matched.entry.auth_type,
                "billing": matched.entry.billing, "overage": matched.entry.overage,
                "file": matched.file, "reason": matched.entry.reason,
                "source": matched.entry.source,
                "reviewed": (matched.entry.reviewed.isoformat()
                             if matched.entry.reviewed is not None else None)},
            "override": dict(billing.override) if billing.override else None,
            "overage_source": billing.overage_source,
            "observation": None if billing.observation is None else {
                "overage": billing.observation.overage,
                "checked_at": timefmt.iso(billing.observation.checked_at),
                "fresh": billing.observation.fresh, "applied": billing.observation.applied,
                "note": billing.observation.note},
        },
        "gates": {
            "active": connection.active if observed else True,
            "status": connection.status if observed else None,
            "state_as_of": _iso(connection.state_as_of), "state_observed": observed,
            "reason": facts.gate_reason, "detail": facts.gate_detail,
            "cooldown": None if cool is None else {
                "rate_limited_until": timefmt.iso(cool.until),
                "own_reset_at": _iso(cool.reset_at), "clamped": cool.clamped,
                "ends_at": timefmt.iso(cool.end), "cooling": cool.cooling},
        },
        "seat": _connection_seat(trace),
        "reading": None if reading is None else {
            "checked_at": timefmt.iso(reading.checked_at),
            "age_seconds": trace.reading_age_seconds, "stale": trace.reading_stale,
            "max_reading_age_seconds": trace.max_reading_age_seconds,
            "status": reading.status},
        "models": [_model(trace, m) for m in trace.models],
        "verdicts": [_verdict(v) for v in trace.verdicts],
        "pace": _pace(trace),
    }


def _connection_seat(trace: Trace) -> dict[str, Any] | None:
    """The connection's reserve (R16) and seat price; null when it sets neither."""
    seat = trace.seat
    if seat is None:
        return None
    return {"reserve_percent": seat.reserve_percent,
            "exit_cutoff_percent": seat.exit_cutoff_percent,
            "reentry_floor_percent": seat.reentry_floor_percent, "raised": seat.raised,
            "seat_price_usd": seat.price_usd, "seat_period": seat.period}


def _pace(trace: Trace) -> dict[str, Any] | None:
    """The windows' pace as the forecast document words each one (``pace`` items)."""
    if trace.pace is None:
        return None
    from omniladder.rendering.forecast_view import pace_document

    return {"projected": trace.pace.projected, "note": trace.pace.note,
            "windows": [pace_document(p) for p in trace.pace.paces]}


def why_json(trace: Trace) -> str:
    from omniladder.rendering.json_text import dumps

    return dumps(why_document(trace))


# --- the tree ------------------------------------------------------------------------------


class Tree:
    """Lines with ``├──`` / ``└──`` guides, built from nested (label, children) nodes.

    Each line keeps its guide apart from its label, so ``print`` wraps a long label under
    its own guides, two columns in, instead of back to the first column.
    """

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, Text]] = []
        """(guide of the first line, guide of the label's further lines, label)."""

    def add(self, node: tuple[Text | str, list[Any]], prefix: str = "", last: bool = True,
            root: bool = False) -> None:
        label, children = node
        inner = prefix if root else prefix + ("    " if last else "│   ")
        self.lines.append((prefix if root else prefix + ("└── " if last else "├── "),
                           inner + ("│ " if children else "  "),
                           label if isinstance(label, Text) else Text(label)))
        for index, child in enumerate(children):
            self.add(child, inner, index == len(children) - 1)

    def print(self, console: Console) -> None:
        for first, rest, label in self.lines:
            room = max(console.width - len(rest), 20)
            for number, line in enumerate(label.wrap(console, room, overflow="fold")):
                line.rstrip()
                console.print(Text(first if number == 0 else rest) + line, soft_wrap=True)


def leaf(label: Text | str) -> tuple[Text | str, list[Any]]:
    return (label, [])


def _when(at: datetime, now: datetime, exclusive: bool) -> str:
    return ("just after " if exclusive else "") + timefmt.short(at, now)


def _billing_node(trace: Trace) -> tuple[Text | str, list[Any]]:
    billing = trace.billing
    children: list[Any] = [leaf(f"{R1_STEPS[billing.step]}")]
    matched = billing.matched
    if matched is not None:
        entry = matched.entry
        scope = f"{entry.provider}/{entry.auth_type}" if entry.auth_type else entry.provider
        details: list[Any] = [leaf(f"file: {matched.file}"),
                              leaf(f"billing {entry.billing}, overage {entry.overage}")]
        if entry.reason:
            details.append(leaf(f"reason: {entry.reason}"))
        if entry.source:
            details.append(leaf(f"source: {entry.source}"))
        if entry.reviewed:
            details.append(leaf(f"reviewed: {entry.reviewed.isoformat()}"))
        children.append((f"catalog entry {scope}", details))
    if billing.override:
        keys = ", ".join(f"{k} = {v!r}" for k, v in billing.override.items())
        children.append(leaf(f"override (R2, narrowing): {keys}"))
    else:
        children.append(leaf("override (R2): none"))
    observation = billing.observation
    children.append(leaf("observed overage (R2a): " + (
        "none reported" if observation is None else observation.note)))
    label = Text("billing (R1, R2, R2a): ")
    label.append(f"{billing.billing}, overage {billing.overage}", style="bold")
    return (label, children)


def _gates_node(trace: Trace) -> tuple[Text | str, list[Any]]:
    facts = trace.facts
    connection = facts.connection
    cool = facts.cooldown
    now = trace.now
    as_of = connection.state_as_of
    if as_of is not None and not connection.observed_at(now):
        children: list[Any] = [leaf(
            f"state observed only from {timefmt.iso(as_of)} (state_as_of): before it the "
            "connection counts as active with no status, and a cooldown only from its "
            "recorded start (rate_limited_since)")]
        children += [leaf("active: yes (not yet observed)"),
                     leaf("status: none (not yet observed)")]
    else:
        children = [
            leaf(f"active: {'yes' if connection.active else 'no (active = false)'}"),
            leaf(f"status: {connection.status or 'none'}"),
        ]
    if cool is None:
        children.append(leaf("cooldown: none"))
    else:
        lines: list[Any] = [leaf(f"rate_limited_until {timefmt.iso(cool.until)}")]
        if cool.clamped:
            lines.append(leaf(f"clamped (R9) to its own reset {timefmt.iso(cool.end)}"))
        elif cool.reset_at is not None:
            lines.append(leaf(f"own reset {timefmt.iso(cool.reset_at)}: no clamp (R9 only "
                               "shortens, and only to a reset after the reading)"))
        else:
            lines.append(leaf("no own reset instant: no clamp (R9)"))
        state = (f"cooling until {timefmt.short(cool.end, now)}" if cool.cooling
                 else f"over since {timefmt.short(cool.end, now)}")
        children.append((f"cooldown: {state}", lines))
    if facts.gate_reason is None:
        label = Text("gates (R5): ")
        label.append("pass", style="green")
        doubt = facts.doubt
        if doubt:
            label.append("; ")
            label.append("connection-status-unknown", style="yellow")
            label.append(f" — {doubt} (out of auto/subscription, unverified under "
                         "auto/thrifty)")
    else:
        label = Text("gates (R5): ")
        label.append(facts.gate_reason, style="yellow")
        label.append(f" — {facts.gate_detail}")
    return (label, children)


def _seat_node(trace: Trace) -> tuple[Text | str, list[Any]] | None:
    """The connection's own reserve (R16) and seat price (SPEC §9), one line each."""
    seat = trace.seat
    if seat is None:
        return None
    children: list[Any] = []
    if seat.reserve_percent is not None:
        text = f"reserve (R16): {timefmt.pct(seat.reserve_percent)} of each window kept"
        if seat.raised:
            text += (f"; exit cutoff {timefmt.pct(seat.exit_cutoff_percent)} (the ladder's "
                     f"{timefmt.pct(trace.exit_cutoff_percent)}), re-entry floor "
                     f"{timefmt.pct(seat.reentry_floor_percent)}")
        else:
            text += (f"; at or below the exit cutoff {timefmt.pct(trace.exit_cutoff_percent)}"
                     ", so the ladder's thresholds hold")
        children.append(leaf(text))
    if seat.price_usd is not None:
        children.append(leaf(f"price: {timefmt.usd(seat.price_usd)} per {seat.period}"))
    elif seat.period is not None:
        children.append(leaf(f"price: none given (seat_period {seat.period} alone prices "
                              "nothing)"))
    return ("seat", children)


def _reading_node(trace: Trace) -> tuple[Text | str, list[Any]]:
    reading = trace.reading
    if reading is None:
        return leaf(Text("reading: none at or before now (quota-missing)", style="yellow"))
    age = trace.reading_age_seconds or 0.0
    fresh = ("stale" if trace.reading_stale else "fresh")
    text = (f"reading used: checked {timefmt.short(reading.checked_at, trace.now)}, "
            f"{timefmt.age_beside(age, trace.max_reading_age_seconds)} old ({fresh}; max "
            f"{timefmt.duration(trace.max_reading_age_seconds)})")
    if reading.status:
        text += f", status {reading.status}"
    return leaf(text)


def _pace_node(trace: Trace) -> tuple[Text | str, list[Any]] | None:
    outlook = trace.pace
    if outlook is None or (not outlook.paces and not outlook.note):
        return None
    now = trace.now
    children: list[Any] = []
    for pace in outlook.paces:
        text = f"{pace.window} window"
        if pace.remaining_percent is not None:
            text += f" at {timefmt.pct(pace.remaining_percent)}"
        if pace.elapsed_fraction is not None:
            text += f", {pace.elapsed_fraction * 100:.0f}% of it elapsed"
        if pace.ahead_percent is not None and pace.expected_used_percent is not None:
            text += (f" (even pace {pace.expected_used_percent:.1f}% used, actual "
                     f"{pace.used_percent or 0.0:.1f}%: {pace.ahead_percent:+.1f} points)")
        if pace.burn_percent_per_hour is not None:
            text += f"; burning {pace.burn_percent_per_hour:.1f}%/h"
            if pace.cutoff_at is not None:
                seat = trace.seat
                text += (f", at the reserve {timefmt.pct(seat.exit_cutoff_percent)} "
                         if seat is not None and seat.raised else
                         f", at the cutoff {timefmt.pct(trace.exit_cutoff_percent)} ")
                text += f"{timefmt.short(pace.cutoff_at, now)}, before its reset"
            elif pace.lasts_to_reset:
                text += ", lasts to its reset"
        if pace.note:
            text += f"; {pace.note}"
        children.append(leaf(text))
    label = "pace (forecast): "
    label += (f"{len(outlook.paces)} window{'' if len(outlook.paces) == 1 else 's'} of the "
              "latest reading" if outlook.projected or outlook.paces else outlook.note)
    if outlook.paces and not outlook.projected and outlook.note:
        label += f"; {outlook.note}"
    return (label, children)


def _model_node(trace: Trace, model: ModelTrace) -> tuple[Text | str, list[Any]]:
    now = trace.now
    tier = model.tier
    price = (f", input {timefmt.usd(tier.input_usd_per_mtok)}/Mtok"
             if tier.input_usd_per_mtok is not None else "")
    label = Text(f"model {model.model}: ", style="bold")
    label.append(f"tier {tier.tier} ({tier.source}{price}) → rung ")
    label.append(model.rung, style="bold")
    label.append(" (R3, R4)")
    children: list[Any] = []
    verdict = model.verdict
    if model.windows:
        rows: list[Any] = []
        for mark in model.windows:
            window = mark.window
            figure = "unlimited" if window.unlimited else timefmt.pct(window.figure)
            resets = (f", resets {timefmt.short(window.reset_at, now)}"
                      if window.reset_at is not None else "")
            line = Text(f"{window.name} {figure}{resets} — {mark.mark}")
            if mark.limiting:
                line.append("  ← the figure", style="bold")
            rows.append(leaf(line))
        children.append(("windows (R6)", rows))
    if verdict is not None:
        if verdict.figure is not None:
            children.append(leaf(f"figure: {timefmt.pct(verdict.figure)}"))
        if verdict.reading is not None:
            children.append(_replay_node(trace, model))
        if verdict.held_past_age and verdict.window is not None:
            held = verdict.window
            assert held.reset_at is not None
            children.append(leaf(
                f"R6.4: the reading is stale, but its {held.name} window at "
                f"{timefmt.pct(held.figure)} can only fall until it resets at "
                f"{timefmt.short(held.reset_at, now)}: exhausted until then, whatever its age"))
        style = {"usable": "green", "unknown": "yellow", "exhausted": "red"}[verdict.kind]
        line = Text("quota verdict (R6): ")
        line.append(verdict.kind, style=style)
        if verdict.reason:
            line.append(f" — {verdict.reason}")
        line.append(f": {verdict.detail}" if verdict.detail else "")
        children.append(leaf(line))
    budget = model.budget
    if budget is None:
        children.append(leaf(f"budget (R8): {model.rung} is a quota rung, no budget"))
    elif isinstance(budget, NoBudget | Disabled):
        children.append(leaf(f"budget (R8): {budget.describe()}"))
    elif isinstance(budget, Unenforced):
        children.append(leaf(f"budget (R8): {timefmt.usd(budget.budget_usd)} per "
                              f"{budget.period}, not enforced (no spend ledger)"))
    else:
        children.append(leaf(
            f"budget (R8): {timefmt.usd(budget.spent_usd)} of {timefmt.usd(budget.budget_usd)} "
            f"spent this {budget.period} (since {timefmt.short(budget.since, now)}), "
            f"{timefmt.usd(budget.remaining_usd)} remaining — {budget.state}"))
    return (label, children)


def _replay_node(trace: Trace, model: ModelTrace) -> tuple[Text | str, list[Any]]:
    now = trace.now
    verdict = model.verdict
    assert verdict is not None
    assert verdict.reading is not None
    rows: list[tuple[str, str, str, str]] = [("reading", "figure", "threshold", "state")]
    for step in model.replay:
        figure = step.status if step.status == "exhausted" else (
            timefmt.pct(step.figure) if step.figure is not None else "-")
        before = "in play" if step.in_play_before else "out"
        after = "in play" if step.in_play_after else "out"
        rows.append((timefmt.short(step.checked_at, now), figure, timefmt.pct(step.threshold),
                     f"{before} → {after}"))
    latest = verdict.reading
    latest_figure = (latest.status if latest.status in ("exhausted", "unknown") else
                     timefmt.pct(verdict.figure) if verdict.figure is not None else "-")
    judged = verdict.kind + (f" ({verdict.reason})" if verdict.reason else "")
    rows.append((timefmt.short(latest.checked_at, now) + " (latest)", latest_figure,
                 timefmt.pct(verdict.threshold) if verdict.threshold is not None else "-",
                 f"judged at now: {judged}"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines: list[Any] = [
        leaf("  ".join(cell.ljust(widths[i]) if i < 3 else cell
                        for i, cell in enumerate(row)).rstrip())
        for row in rows
    ]
    if verdict.threshold is not None:
        kind = threshold_kind(verdict.floor_applied, _raised(trace))
        since = (f", out since {timefmt.short(verdict.out_since, now)}"
                 if verdict.out_since is not None else "")
        lines.append(leaf(Text(f"threshold that applied: {kind} "
                                f"{timefmt.pct(verdict.threshold)}{since}", style="bold")))
    return ("hysteresis replay (R7)", lines)


def _verdict_node(trace: Trace, verdict: IdVerdict) -> tuple[Text | str, list[Any]]:
    now = trace.now
    label = Text(f"{verdict.auto_id}: ", style="bold")
    total = len(verdict.seats) + len(verdict.left)
    if verdict.seats and not verdict.left:
        label.append("in the pool", style="green")
    elif verdict.seats:
        label.append(f"in the pool for {len(verdict.seats)} of {total} models", style="green")
    else:
        label.append("out", style="red")
    children: list[Any] = []
    for seat in verdict.seats:
        mark = " (unverified)" if seat.unverified else ""
        order = f" — {seat.order}" if seat.order is not None else ""
        children.append(leaf(f"#{seat.position} {seat.rung} {seat.model}{mark}{order}"))
    comebacks = {c.model: c for c in verdict.comebacks}
    groups: dict[tuple[str, str, Comeback | None, str | None], list[str]] = {}
    for left in verdict.left:
        comeback = comebacks.get(left.model)
        key = (left.reason, left.detail,
               replace(comeback, model="") if comeback is not None else None, left.fix)
        groups.setdefault(key, []).append(left.model)
    for (reason, detail, _, fix), models in groups.items():
        every = len(models) == total and len(models) > 1
        line = Text(f"{'all models' if every else ', '.join(models)}: ")
        line.append(reason, style="yellow")
        line.append(f" — {detail}")
        sub: list[Any] = []
        comeback = comebacks.get(models[0])
        if comeback is not None:
            sub.append(_comeback_node(comeback, now))
        if fix:
            sub.append(("to change this", [leaf(part) for part in fix.split("\n")]))
        children.append((line, sub))
    if not children:
        children.append(leaf("serves no model"))
    return (label, children)


def _comeback_node(comeback: Comeback, now: datetime) -> tuple[Text | str, list[Any]]:
    earliest = comeback.earliest
    if earliest is None:
        return leaf("earliest comeback: none found")
    label = Text("earliest comeback: ")
    label.append(_when(earliest.at, now, earliest.exclusive), style="bold")
    label.append(" with a fresh reading" if earliest.needs_reading else " with no new reading")
    if earliest.unverified:
        label.append(", unverified")
    children: list[Any] = [leaf(f"{n}. {step}") for n, step in enumerate(earliest.steps, 1)]
    other = (comeback.with_reading if earliest is comeback.without_reading
             else comeback.without_reading)
    if other is not None:
        how = "with a fresh reading" if other.needs_reading else "with no new reading"
        tail = ", unverified" if other.unverified else ""
        children.append((f"else {how}: {_when(other.at, now, other.exclusive)}{tail}",
                         [leaf(f"{n}. {step}") for n, step in enumerate(other.steps, 1)]))
    elif earliest.needs_reading:
        children.append(leaf("with no new reading: never (the reading alone keeps it out)"))
    return (label, children)


def render_why(trace: Trace, out: TextIO) -> None:
    console = make_console(out)
    connection = trace.facts.connection
    header = Text("omniladder why ", style="bold")
    header.append(trace.connection_id, style="bold cyan")
    console.print(header)
    console.print(Text(f"now {timefmt.iso(trace.now)} ({timefmt.now_source(trace.now_source)})"
                       f" · settings: exit cutoff {timefmt.pct(trace.exit_cutoff_percent)}, "
                       f"re-entry floor {timefmt.pct(trace.reentry_floor_percent)}, max "
                       f"reading age {timefmt.duration(trace.max_reading_age_seconds)}"))
    title = Text(f"{connection.id} — provider {connection.provider}, auth_type "
                 f"{connection.auth_type}", style="bold")
    if connection.capacity_weight is not None:
        title.append(f", capacity_weight {connection.capacity_weight:g}")
    if connection.label:
        title.append(f' "{connection.label}"', style="dim")
    children: list[Any] = [_billing_node(trace), _gates_node(trace)]
    seat = _seat_node(trace)
    if seat is not None:
        children.append(seat)
    children.append(_reading_node(trace))
    pace = _pace_node(trace)
    if pace is not None:
        children.append(pace)
    children += [_model_node(trace, m) for m in trace.models]
    if not trace.models:
        children.append(leaf("models: none (its models list is empty)"
                              if connection.models is not None
                              else "models: none (no models listed and none in the model "
                                   "catalog)"))
    children.append(("verdicts", [_verdict_node(trace, v) for v in trace.verdicts]))
    tree = Tree()
    tree.add((title, children), root=True)
    tree.print(console)
