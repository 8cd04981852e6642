"""The answer of ``whatif`` (SPEC §10.7): what every view reads, field for field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Consumption:
    """One quota window's consumption model (SPEC §10.2)."""

    connection: str
    window: str
    percent_per_unit: float
    """Percent of the window one token unit takes."""
    background_percent_per_hour: float
    """The drop no request of this gateway explains, per hour."""
    intervals: int
    """How many pairs of consecutive readings of one cycle the fit rests on."""
    error_points: float | None
    """The fit's root-mean-square error in percent points (None: nothing to measure it on)."""
    assumed: bool
    """Taken from a like connection (same provider and auth type), not fitted."""
    like: str | None = None
    """The connection whose fit an assumed one took."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fidelity:
    """The ``as-is`` replay against what happened (SPEC §10.4)."""

    paid_usd_recorded: float
    paid_usd_replayed: float
    served_by_rung_recorded: dict[str, int]
    served_by_rung_replayed: dict[str, int]
    readings_mae_points: float | None
    """Mean absolute error of the replayed against the recorded readings, percent points;
    None when no recorded reading falls in the span."""
    readings_compared: int
    warning: str | None
    """Set when the baseline misses its own history by more than the replay can stand
    behind: the view's first line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Expired:
    """Quota one window's cycle let lapse unused in a replay (in ``audit traffic``'s shape)."""

    connection: str
    window: str
    reset_at: datetime
    percent: float
    usd: float | None
    """The lapsed share of the seat's price for this cycle, when ``seat_price_usd`` is known."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AddedSeat:
    """A seat a scenario added (``--add LIKE[:NEW_ID]``) and what it would have paid back."""

    connection: str
    like: str
    seat_price_usd: float | None
    seat_period: str
    """``day``, ``week`` or ``month`` (a month when the seat gives none)."""
    break_even_usd: float
    """The paid dollars the scenario saved against ``as-is``, scaled from the span to one
    ``seat_period``: the most the seat may cost per period and still pay for itself."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One replayed scenario (SPEC §10.5)."""

    name: str
    changes: tuple[str, ...]
    """What it changes against ``as-is``, one option each (``--order expiring-first``)."""
    paid_usd: float
    paid_by_rung: dict[str, float]
    served_by_rung: dict[str, int]
    blocked: int
    unpriced: int
    """Paid requests whose price is unknown (no tokens, a model no price list has): counted,
    never summed as 0."""
    expired_unused: tuple[Expired, ...]
    paid_hours: float
    """Hours the head rung of the plan in force was a paid rung."""
    bound_usd: float | None
    regret_usd: float | None
    added: tuple[AddedSeat, ...] = ()
    paid_over_time: tuple[tuple[datetime, float], ...] = ()
    """Cumulative paid dollars at instants across the span (what ``--svg`` draws)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bound:
    """How the best possible was computed (SPEC §10.6)."""

    solver: str
    """``HiGHS <version>``."""
    bucket_seconds: float
    variables: int
    constraints: int
    seconds: float
    relaxed: tuple[str, ...]
    """What the program relaxes to stay a lower bound, one line each."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WhatifReport:
    auto_id: str
    start: datetime
    """``from`` in the JSON."""
    end: datetime
    """``to`` in the JSON."""
    requests: int
    token_units: float
    consumption: tuple[Consumption, ...]
    fidelity: Fidelity
    bound_usd: float | None
    """The ``as-is`` fleet's bound; None when it was not computed (``bound_note`` says why)."""
    bound: Bound | None
    bound_note: str | None
    """Why there is no bound and how to get one (``pip install 'omniladder[whatif]'``)."""
    scenarios: tuple[Scenario, ...]
    """``as-is`` first."""
    assumptions: tuple[str, ...]
    """Printed with every answer (docs/whatif.md#s10-7)."""
    warnings: tuple[str, ...] = ()
