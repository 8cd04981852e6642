"""R8 rung budgets, enforced from a spend ledger over the current UTC calendar period."""

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Literal, NamedTuple

from omniladder import timefmt
from omniladder.models import PAID_RUNGS, BudgetSettings, SpendEvent


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


class NoBudget(NamedTuple):
    """No budget is set for the rung: R8 gates nothing. ``spent_usd`` is what the spend
    ledger counts in the period (None without a ledger)."""

    rung: str
    period: str
    since: datetime
    spent_usd: float | None
    state: Literal["none"] = "none"

    @property
    def budget_usd(self) -> None:
        return None

    @property
    def gates(self) -> bool:
        """The rung is closed by its budget."""
        return False

    @property
    def reason(self) -> str | None:
        """The reason code of a pair the budget refuses."""
        return None

    @property
    def remaining_usd(self) -> float | None:
        return None

    def describe(self) -> str:
        return f"no {self.rung} budget set"


class Disabled(NamedTuple):
    """A budget of 0 or less: the rung is closed whatever the spend."""

    rung: str
    period: str
    since: datetime
    budget_usd: float
    spent_usd: float | None
    state: Literal["disabled"] = "disabled"

    @property
    def gates(self) -> bool:
        return True

    @property
    def reason(self) -> str | None:
        return "budget-disabled"

    @property
    def remaining_usd(self) -> float | None:
        return None if self.spent_usd is None else _left(self.budget_usd, self.spent_usd)

    def describe(self) -> str:
        return f"{self.rung} rung disabled (budget {timefmt.usd(self.budget_usd)})"


class Unenforced(NamedTuple):
    """A budget above 0 and no spend ledger to hold it against: the rung stays open."""

    rung: str
    period: str
    since: datetime
    budget_usd: float
    state: Literal["unenforced"] = "unenforced"

    @property
    def spent_usd(self) -> None:
        return None

    @property
    def gates(self) -> bool:
        return False

    @property
    def reason(self) -> str | None:
        return None

    @property
    def remaining_usd(self) -> float | None:
        return None

    def describe(self) -> str:
        return "budget not enforced (no spend ledger)"


class Within(NamedTuple):
    """A budget above 0 and less than it spent in the period: the rung is open."""

    rung: str
    period: str
    since: datetime
    budget_usd: float
    spent_usd: float
    state: Literal["within"] = "within"

    @property
    def gates(self) -> bool:
        return False

    @property
    def reason(self) -> str | None:
        return None

    @property
    def remaining_usd(self) -> float:
        return _left(self.budget_usd, self.spent_usd)

    def describe(self) -> str:
        return (f"{timefmt.usd(self.spent_usd)} of {timefmt.usd(self.budget_usd)} spent "
                f"this {self.period}")


class Spent(NamedTuple):
    """A budget above 0 and at least it spent in the period: the rung is closed."""

    rung: str
    period: str
    since: datetime
    budget_usd: float
    spent_usd: float
    state: Literal["spent"] = "spent"

    @property
    def gates(self) -> bool:
        return True

    @property
    def reason(self) -> str | None:
        return "budget-spent"

    @property
    def remaining_usd(self) -> float:
        return _left(self.budget_usd, self.spent_usd)

    def describe(self) -> str:
        return (f"{self.rung} budget spent: {timefmt.usd(self.spent_usd)} of "
                f"{timefmt.usd(self.budget_usd)} this {self.period}")


BudgetPosition = NoBudget | Disabled | Unenforced | Within | Spent
"""Where one paid rung stands against its budget at now (R8): one record per state, each
holding only the figures its state has (its ``state`` is a field too, so two states never
compare equal), and ``describe()``, what a plan says of it. The period started at ``since``;
``spent_usd`` is what the spend ledger counts in it."""

BudgetState = Literal["none", "disabled", "spent", "within", "unenforced"]


def _left(budget: float, spent: float) -> float:
    """What the budget leaves in the period (never below 0), worked out in decimals like
    the spend."""
    return float(max(_dollars(budget) - _dollars(spent), Decimal(0)))


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
        counted = float(spent[rung]) if events is not None else None
        position: BudgetPosition
        if budget is None:
            position = NoBudget(rung=rung, period=settings.period, since=since,
                                spent_usd=counted)
        elif budget <= 0:
            position = Disabled(rung=rung, period=settings.period, since=since,
                                budget_usd=budget, spent_usd=counted)
        elif counted is None:
            position = Unenforced(rung=rung, period=settings.period, since=since,
                                  budget_usd=budget)
        elif spent[rung] >= _dollars(budget):
            position = Spent(rung=rung, period=settings.period, since=since,
                             budget_usd=budget, spent_usd=counted)
        else:
            position = Within(rung=rung, period=settings.period, since=since,
                              budget_usd=budget, spent_usd=counted)
        positions[rung] = position
    return positions
