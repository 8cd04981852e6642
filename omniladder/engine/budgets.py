"""R8 rung budgets, enforced from a spend ledger over the current UTC calendar period."""

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal, NamedTuple

from omniladder.models import PAID_RUNGS, BudgetSettings, SpendEvent

BudgetState = Literal["none", "disabled", "spent", "within", "unenforced"]


def period_start(now: datetime, period: str) -> datetime:
    """The start of the UTC day, ISO week (from Monday) or calendar month containing now."""
    utc = now.astimezone(UTC)
    day = utc.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return day
    if period == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def next_period_start(now: datetime, period: str) -> datetime:
    """The start of the budget period after the one containing now (R8: UTC calendar)."""
    start = period_start(now, period)
    if period == "day":
        return start + timedelta(days=1)
    if period == "week":
        return start + timedelta(days=7)
    year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
    return start.replace(year=year, month=month)


class BudgetPosition(NamedTuple):
    """Where one paid rung stands against its budget at now (R8): the state, the budget and
    what the spend ledger counts in the period that started at ``since``."""

    rung: str
    state: BudgetState
    budget_usd: float | None
    spent_usd: float | None
    period: str
    since: datetime

    @property
    def gates(self) -> bool:
        """The rung is closed by its budget."""
        return self.state in ("disabled", "spent")

    @property
    def reason(self) -> str | None:
        return {"disabled": "budget-disabled", "spent": "budget-spent"}.get(self.state)


def budget_positions(settings: BudgetSettings, events: Sequence[SpendEvent] | None,
                     now: datetime, rung_of_event: Callable[[SpendEvent], str | None]
                     ) -> dict[str, BudgetPosition]:
    """Where each paid rung stands against its budget at now."""
    since = period_start(now, settings.period)
    spent: dict[str, float] = dict.fromkeys(PAID_RUNGS, 0.0)
    if events is not None:
        for event in events:
            if not since <= event.at <= now:
                continue
            rung = event.rung or rung_of_event(event)
            if rung in spent:
                spent[rung] += event.cost_usd
    positions: dict[str, BudgetPosition] = {}
    for rung in PAID_RUNGS:
        budget = settings.rung_budget_usd.for_rung(rung)
        state: BudgetState
        if budget is None:
            state = "none"
        elif budget <= 0:
            state = "disabled"
        elif events is None:
            state = "unenforced"
        elif spent[rung] >= budget:
            state = "spent"
        else:
            state = "within"
        positions[rung] = BudgetPosition(
            rung, state, budget, round(spent[rung], 6) if events is not None else None,
            settings.period, since)
    return positions
