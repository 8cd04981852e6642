"""R8 rung budgets, enforced from a spend ledger over the current UTC calendar period."""

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
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

    @property
    def remaining_usd(self) -> float | None:
        """What the budget leaves in the period (never below 0), worked out in decimals like
        the spend; None without a budget or without a ledger."""
        if self.budget_usd is None or self.spent_usd is None:
            return None
        return float(max(_dollars(self.budget_usd) - _dollars(self.spent_usd), Decimal(0)))


def total_usd(costs: Iterable[float]) -> float:
    """Dollar figures added as the decimals the operator wrote (``_dollars``), as the nearest
    float: the sum R8 compares with a budget, and the one a forecast's estimate starts from."""
    return float(sum((_dollars(cost) for cost in costs), Decimal(0)))


def _dollars(usd: float) -> Decimal:
    """A dollar figure as the decimal the operator wrote: the shortest text that reads back as
    the same float (``repr``), so 0.1 and 0.7 add up to 0.8, not 0.7999999999999999."""
    return Decimal(repr(usd))


def budget_positions(settings: BudgetSettings, events: Sequence[SpendEvent] | None,
                     now: datetime, rung_of_event: Callable[[SpendEvent], str | None]
                     ) -> dict[str, BudgetPosition]:
    """Where each paid rung stands against its budget at now.

    The spends are added as decimals, so the sum is the one the operator gets by hand: it is
    compared with the budget exactly and reported as the nearest float, with no rounding to a
    fixed number of places (a spend of $0.0000004 is reported as such, not as 0)."""
    since = period_start(now, settings.period)
    spent: dict[str, Decimal] = dict.fromkeys(PAID_RUNGS, Decimal(0))
    if events is not None:
        for event in events:
            if not since <= event.at <= now:
                continue
            rung = event.rung or rung_of_event(event)
            if rung in spent:
                spent[rung] += _dollars(event.cost_usd)
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
        elif spent[rung] >= _dollars(budget):
            state = "spent"
        else:
            state = "within"
        positions[rung] = BudgetPosition(
            rung, state, budget, float(spent[rung]) if events is not None else None,
            settings.period, since)
    return positions
