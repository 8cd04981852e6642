"""The plan's records: what a decision, a pool entry, an exclusion, a rung and the plan
itself hold, the reason codes and their phrases. Every view reads these; none is built
outside the engine."""

from datetime import datetime
from typing import Literal, NamedTuple, NotRequired, TypedDict

from omniladder.engine.autoid import AutoId, NowSource
from omniladder.engine.billing import BillingInfo
from omniladder.engine.budgets import BudgetPosition
from omniladder.engine.quota import (
    Cooldown,
    DeferredVerdict,
    Verdict,
    resolved,
)
from omniladder.engine.tiers import TierInfo
from omniladder.models import (
    Connection,
    Rung,
)

FORMAT_VERSION = "1"

RungState = Literal["serving", "exhausted", "empty", "disabled", "budget-spent", "not-in-id"]

REASON_CODES: tuple[str, ...] = (
    "inactive", "terminal-status", "cooldown", "billing-not-subscription", "billing-uncurated",
    "keyless-not-subscription", "overage-not-hard-stop", "quota-missing", "quota-unknown",
    "quota-stale", "quota-reset-since-reading", "quota-exhausted", "quota-below-cutoff",
    "quota-below-reentry", "budget-disabled", "budget-spent", "not-in-category", "no-models",
    "connection-status-unknown", "quota-below-reserve",
)
"""Every reason code, in the SPEC's order; ``no-models`` and ``connection-status-unknown`` are
this project's additions, then ``quota-below-reserve``, SPEC v1.4's (R16): codes are added at
the end, in the order they came."""

DOUBTFUL_STATUSES: frozenset[str] = frozenset({"error", "unknown"})
"""A connection's own ``status`` that is neither healthy nor terminal: R10 excludes it under
``auto/subscription`` (fail closed), R11 admits it unverified under ``auto/thrifty``
(``connection-status-unknown``)."""

_PHRASES: dict[str, str] = {
    "inactive": "inactive",
    "terminal-status": "terminal status",
    "cooldown": "cooling down",
    "billing-not-subscription": "metered billing",
    "billing-uncurated": "uncurated provider",
    "keyless-not-subscription": "keyless",
    "overage-not-hard-stop": "overage not hard-stop",
    "quota-missing": "no reading",
    "quota-unknown": "quota unknown",
    "quota-stale": "reading stale",
    "quota-reset-since-reading": "reset since reading",
    "quota-exhausted": "quota exhausted",
    "quota-below-cutoff": "quota exhausted",
    "quota-below-reentry": "below re-entry floor",
    "budget-disabled": "rung disabled",
    "budget-spent": "budget spent",
    "not-in-category": "not in category",
    "no-models": "no models",
    "connection-status-unknown": "status in doubt",
    "quota-below-reserve": "below reserve",
}


def reason_phrase(reason: str, detail: str) -> str:
    """The words the one-line summary uses for a reason code (one of ``REASON_CODES``, each
    of which has its phrase)."""
    if reason == "overage-not-hard-stop":
        return "overage meters to paid" if "meters-to-paid" in detail else "overage unknown"
    return _PHRASES[reason]


# --- the plan object -----------------------------------------------------------------------


class PlanSettings(TypedDict):
    """The effective settings a plan was made with, echoed in its JSON document."""

    exit_cutoff_percent: float
    reentry_min_remaining_percent: float
    max_reading_age_seconds: float
    rung_budget_usd: dict[str, float]
    budget_period: str
    clamp_cooldown_to_reset: bool
    cheap_max_input_usd_per_mtok: float
    within_rung_order: NotRequired[str]
    """R15's order, echoed only when it is not the default ``declared`` (so a plan made
    with the default reads as it always has)."""


class UnverifiedMark(NamedTuple):
    """Why one connection of a pool entry is unverified: its quota verdict was unknown."""

    connection_id: str
    reason: str
    detail: str


class OrderPlace(NamedTuple):
    """R15: why one allowed connection of a pool entry stands where it does."""

    connection_id: str
    urgency: float | None
    """Percent of a weight-1 seat per hour (``pool.urgency``); None on a paid rung, which
    keeps R12's order."""
    reason: str
    reset_at: datetime | None = None
    """The reset of the window whose expiry counts: when this place's reason lapses."""


class PoolEntry(NamedTuple):
    """One entry of the pool (R11, R12): a candidate (provider, model) on one rung, with the
    connections allowed to serve it there, in connection-file order. A candidate admitted on
    two rungs has one entry per rung."""

    position: int
    """1-based rank in the pool: rung first, then R12's candidate order."""
    rung: Rung
    provider: str
    model: str
    allowed_connection_ids: tuple[str, ...]
    unverified_connection_ids: tuple[str, ...]
    """The allowed connections admitted without a verified quota (R11), a subset of the
    allowed ones in the same order."""
    unverified: tuple[UnverifiedMark, ...] = ()
    """One mark per unverified connection, in allowlist order (SPEC §4.2)."""
    order: tuple[OrderPlace, ...] = ()
    """Under R15's ``expiring-first``, on a quota rung, one place per allowed connection,
    in allowlist order; empty under ``declared`` and on a paid rung (R12's order). ``why``
    keeps the whole entry's places beside its narrowed allowlist."""


class Exclusion(NamedTuple):
    """One refusal as the plan reports it (SPEC §4.2 ``excluded``): a connection, or one of
    its models, left out, with the reason code, the detail and the remedy. A connection whose
    every model is refused for the same reason and detail gets one exclusion with ``model``
    None. Built by keyword: six of its fields are strings a swap would not show to mypy."""

    connection_id: str
    provider: str
    model: str | None
    """None when the reason applies to every model of the connection."""
    rung: Rung | None
    reason: str
    detail: str
    fix: str | None = None
    """What would change the answer (omniladder.engine.remedies); None only for an unknown code."""


class RungStatus(NamedTuple):
    """One rung of the ladder in a plan: its state (``rung_state``), how many pool entries and
    connections stand on it, its budget position (R8) and a note for the table."""

    rung: Rung
    state: RungState
    candidates: int
    """Pool entries on the rung."""
    connections: int
    """Connections allowed in at least one of those entries."""
    budget_usd: float | None
    spent_usd: float | None
    note: str


class ConnectionRecord(NamedTuple):
    """How one connection bills, as the plan reports it (R1, R2, R2a): the class, the
    overage behaviour and where each came from (catalog file, override, observation)."""

    id: str
    provider: str
    auth_type: str
    billing: str
    overage: str
    billing_source: str
    catalog_file: str | None
    override: dict[str, str] | None
    overage_source: str
    capacity_weight: float | None = None
    """The connection's ``capacity_weight`` as given (SPEC §9); None when not given."""
    reserve_percent: float | None = None
    """R16: the connection's reserve, as configured (None when it sets none)."""
    seat_price_usd: float | None = None
    seat_period: str | None = None
    """The period of the seat price: the one given, a month for a price without one."""


class Clamp(NamedTuple):
    """A cooldown that R9 shortened to the connection's own reset."""

    connection_id: str
    rate_limited_until: datetime
    clamped_to: datetime
    cooling: bool


class _PairFields(NamedTuple):
    connection_id: str
    provider: str
    model: str
    rung: Rung
    tier: TierInfo
    admitted: bool
    unverified: bool
    reason: str | None
    refusal: str
    """The detail of a refusal; empty when admitted (the detail is then the verdict's)."""
    quota: Verdict | DeferredVerdict | None
    """The quota verdict, computed when read if the decision did not need it."""
    doubt: str = ""
    """Why the connection's own status puts it in doubt (``status_doubt``); empty if not."""


class PairDecision(_PairFields):
    """The verdict on one (candidate, connection) pair, with everything that decided it."""

    __slots__ = ()

    @property
    def verdict(self) -> Verdict | None:
        return resolved(self.quota)

    @property
    def detail(self) -> str:
        """Why it was refused; when admitted, what its quota verdict says."""
        if not self.admitted:
            return self.refusal
        verdict = self.verdict
        return verdict.detail if verdict is not None else ""


class ConnectionFacts(NamedTuple):
    """What is true of a connection whatever the auto id: billing, models, R5 gates and
    whether its own status is in doubt."""

    connection: Connection
    billing: BillingInfo
    models: tuple[str, ...]
    gate_reason: str | None
    gate_detail: str
    cooldown: Cooldown | None
    doubt: str
    """``status_doubt`` of the connection, read by every one of its pairs."""


class Plan(NamedTuple):
    """The answer for one auto id at one instant; every view and analysis reads it.

    ``auto_id`` through ``summary`` are what the JSON document carries (SPEC §4.2);
    ``decisions`` (every pair, admitted or not), ``facts`` (every connection's gates and
    billing), ``budgets`` and ``files`` are what ``why``, ``who``, ``check`` and the views
    read without deciding again.
    Immutable, and built by keyword: fifteen fields, several of the same type.
    """

    auto_id: AutoId
    now: datetime
    now_source: NowSource
    settings: PlanSettings
    rungs: tuple[RungStatus, ...]
    pool: tuple[PoolEntry, ...]
    excluded: tuple[Exclusion, ...]
    connections: tuple[ConnectionRecord, ...]
    clamps: tuple[Clamp, ...]
    warnings: tuple[str, ...]
    summary: str
    """The one line the table view ends with and the JSON carries."""
    decisions: tuple[PairDecision, ...]
    """One decision per (connection, model) pair the connection serves."""
    facts: tuple[ConnectionFacts, ...]
    budgets: dict[str, BudgetPosition]
    files: dict[str, str]

    @property
    def eligible_connection_ids(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for entry in self.pool:
            for cid in entry.allowed_connection_ids:
                seen[cid] = None
        return tuple(seen)

    @property
    def unverified_connection_ids(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for entry in self.pool:
            for cid in entry.unverified_connection_ids:
                seen[cid] = None
        return tuple(seen)

