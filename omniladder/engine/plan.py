"""The planner: candidates (R12), gates (R5), the two tiers (R10, R11) and the plan object.

``make_plan`` is the one place a routing decision is made. Every view (table, JSON, why,
check, diff, simulate) reads the immutable ``Plan`` it returns.
"""

import difflib
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Literal, NamedTuple, TypedDict

from omniladder import timefmt
from omniladder.engine.autoid import AutoId, NowSource
from omniladder.engine.billing import BillingInfo, observe
from omniladder.engine.budgets import BudgetPosition, budget_positions
from omniladder.engine.fleet import Fleet, SpendNotes, fleet_for
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.pool import RUNG_INDEX, Seating
from omniladder.engine.pool import position as seat_position
from omniladder.engine.quota import (
    Cooldown,
    DeferredVerdict,
    HistoryVerdicts,
    Verdict,
    cooldown,
    readings_until,
    resolved,
)
from omniladder.engine.remedies import RemedyContext, remedy
from omniladder.engine.tiers import TierInfo
from omniladder.errors import UsageError
from omniladder.models import (
    QUOTA_RUNGS,
    RUNGS,
    TERMINAL_STATUSES,
    Connection,
    LadderSettings,
    Reading,
    Rung,
    SpendEvent,
)

FORMAT_VERSION = "1"

RungState = Literal["serving", "exhausted", "empty", "disabled", "budget-spent", "not-in-id"]

REASON_CODES: tuple[str, ...] = (
    "inactive", "terminal-status", "cooldown", "billing-not-subscription", "billing-uncurated",
    "keyless-not-subscription", "overage-not-hard-stop", "quota-missing", "quota-unknown",
    "quota-stale", "quota-reset-since-reading", "quota-exhausted", "quota-below-cutoff",
    "quota-below-reentry", "budget-disabled", "budget-spent", "not-in-category", "no-models",
    "connection-status-unknown",
)
"""Every reason code, in the SPEC's order; ``no-models`` and ``connection-status-unknown`` are
this project's additions."""

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
}


# Both callers pass the detail and a code of REASON_CODES, all of which are in _PHRASES: the
# default detail and the fallback of the lookup are never used.
def reason_phrase(reason: str, detail: str = "") -> str:  # pragma: no mutate
    """The words the one-line summary uses for a reason code."""
    if reason == "overage-not-hard-stop":
        return "overage meters to paid" if "meters-to-paid" in detail else "overage unknown"
    return _PHRASES.get(reason, reason)  # pragma: no mutate


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


class UnverifiedMark(NamedTuple):
    """Why one connection of a pool entry is unverified: its quota verdict was unknown."""

    connection_id: str
    reason: str
    detail: str


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


# --- the planner ---------------------------------------------------------------------------


def facts_at(fleet: Fleet, index: int, now: datetime) -> ConnectionFacts:
    """The facts of the fleet's connection at ``index`` at now (``connection_facts``)."""
    return connection_facts(fleet.connections[index], fleet.histories[index],
                            fleet.classified[index], fleet.models[index], now, fleet.ladder)


def _budgets(fleet: Fleet, now: datetime, notes: SpendNotes) -> dict[str, BudgetPosition]:
    """R8's budget positions at now, the fleet attributing each event without a rung."""
    inputs = fleet.inputs
    return budget_positions(inputs.settings.budgets, inputs.spend, now,
                            partial(fleet.rung_of_event, notes=notes))


def connection_facts(connection: Connection, history: Sequence[Reading],
                     classified: BillingInfo, models: tuple[str, ...], now: datetime,
                     ladder: LadderSettings) -> ConnectionFacts:
    """A connection's facts at now (R2a observed overage, R5 gates, R9 cooldown), from its
    R1/R2 classification, which does not depend on now."""
    billing = classified
    if history:
        billing = observe(billing, readings_until(history, now), now,
                          ladder.max_reading_age_seconds)
    cool = cooldown(connection, history, now, ladder)
    reason: str | None = None
    detail = ""
    if not connection.active:
        reason, detail = "inactive", "switched off (active = false)"
    elif connection.status is not None and connection.status in TERMINAL_STATUSES:
        reason, detail = "terminal-status", f"status {connection.status}"
    elif cool is not None and cool.cooling:
        reason = "cooldown"
        detail = f"rate limited until {timefmt.short(cool.end, now)}"
        if cool.clamped:
            detail += (f" (clamped from {timefmt.short(cool.until, now)} "
                       "to its own quota reset)")
    return ConnectionFacts(connection=connection, billing=billing, models=models,
                           gate_reason=reason, gate_detail=detail, cooldown=cool,
                           doubt=status_doubt(connection))


def focus(inputs: LoadedInputs, connection_id: str, now: datetime,
          fleet: Fleet | None = None) -> LoadedInputs:
    """The inputs narrowed to one connection, for planning it again and again cheaply.

    A pair's admission never depends on another connection (R10, R11) except through the
    budgets, so the other connections' spend events are kept with their rung already
    attributed (R8): every decision about this connection is the whole fleet's. ``now``
    names the instant the narrowed inputs are planned from; no attribution depends on it.
    """
    whole = fleet_for(inputs, fleet)
    spend: tuple[SpendEvent, ...] | None = None
    if inputs.spend is not None:
        events: list[SpendEvent] = []
        for event in inputs.spend:
            if event.rung is None and event.connection != connection_id:
                rung = whole.rung_of_event(event)
                if rung is not None:
                    event = event.attributed(rung)
            events.append(event)
        spend = tuple(events)
    # The narrowed plan reads only the history of the connection it keeps: other readings
    # left in would never be read.
    return inputs._replace(
        connections=tuple(c for c in inputs.connections if c.id == connection_id),
        readings={connection_id: inputs.readings.get(connection_id, ())},  # pragma: no mutate
        spend=spend)


def status_doubt(connection: Connection) -> str:
    """Why a connection's own status is neither healthy nor terminal (``error``, ``unknown``),
    as the detail of ``connection-status-unknown``; empty when it is not in doubt."""
    if connection.status not in DOUBTFUL_STATUSES:
        return ""
    return (f"connection status {connection.status}: the gateway does not report it healthy"
            if connection.status == "error"
            else f"connection status {connection.status}: nobody reports it healthy")


def _subscription_check(facts: ConnectionFacts, now: datetime) -> tuple[str, str] | None:
    """R10's billing and overage checks, in order; None when both pass."""
    billing = facts.billing
    connection = facts.connection
    # read only for a metered billing not set by override or for a subscription's overage,
    # both from a catalog entry: ``matched`` is never None there
    where = " (catalog)" if billing.matched is not None else ""  # pragma: no mutate
    if billing.billing == "keyless":
        return ("keyless-not-subscription",
                "keyless backend; auto/subscription serves only plans you pay for")
    if billing.billing == "unknown":
        return ("billing-uncurated",
                f"provider {connection.provider!r} with auth_type {connection.auth_type!r} is "
                "not in the billing catalog; treated as metered"
                + (f" (did you mean {billing.near}?)" if billing.near else ""))
    if billing.billing != "subscription":
        source = " by override" if billing.override and "billing" in billing.override else where
        return "billing-not-subscription", f"billed per token{source}"
    if billing.overage != "hard-stop":
        text = ("past the plan it bills" if billing.overage == "meters-to-paid"
                else "whether it bills past the plan is unknown")
        if billing.overage_source == "observed" and billing.observation is not None:
            source = f" (reported at {timefmt.short(billing.observation.checked_at, now)})"
        elif billing.override and "overage" in billing.override:
            source = " by override"
        else:
            source = where
        return "overage-not-hard-stop", f"overage {billing.overage}{source}: {text}"
    return None


def make_plan(inputs: LoadedInputs, auto_id: AutoId, now: datetime,
              now_source: NowSource, fleet: Fleet | None = None) -> Plan:
    """Plan one auto id at now: the pool, the rung states and every exclusion with a reason.

    ``fleet``, the fleet model of these very inputs, spares building it again when one run
    plans several ids or instants.
    """
    fleet = fleet_for(inputs, fleet)
    all_facts = tuple(facts_at(fleet, index, now) for index in range(len(fleet.connections)))
    notes = SpendNotes()
    budgets = _budgets(fleet, now, notes)

    # Each connection with what every one of its pairs reads: its verdicts (R6/R7),
    # computed as the decisions ask for them.
    members_of = [(facts, fleet.verdicts(index, now)) for index, facts in enumerate(all_facts)]
    in_category = fleet.in_category(auto_id.category)
    moment = Moment(auto_id, now, budgets)

    decisions: list[PairDecision] = []
    ids = [f.connection.id for f in all_facts]
    seating: Seating[UnverifiedMark] = Seating(ids)
    # Gathered as the pairs are decided, for the passes after: each connection's refused
    # pairs (exclusions) and each rung's pairs in the id's category (rung states).
    refused: list[list[PairDecision]] = [[] for _ in all_facts]
    landed: dict[Rung, list[PairDecision]] = {rung: [] for rung in RUNGS}
    for position, key in enumerate(fleet.keys):
        provider, model = key
        listed = in_category[position]
        tier = fleet.tiers[position]
        # this candidate's admitted members per rung, with the unverified ones' marks
        seated: dict[Rung, tuple[list[int], dict[int, UnverifiedMark]]] = {}
        # members and rungs are built one from the other: strict never fires
        members = zip(fleet.members[position], fleet.rungs[position],
                      strict=True)  # pragma: no mutate
        for index, rung in members:
            facts, verdicts = members_of[index]
            decision = decide(facts, provider, model, tier, rung, verdicts, listed, moment)
            decisions.append(decision)
            if listed:
                landed[rung].append(decision)
            if decision.admitted:
                seat = seated.get(rung)
                if seat is None:
                    seat = seated[rung] = ([], {})
                seat[0].append(index)
                if decision.unverified:
                    seat[1][index] = _unverified_mark(decision)
            else:
                refused[index].append(decision)
        for rung, (admitted, marks) in seated.items():
            seating.fill(RUNG_INDEX[rung], position, admitted, marks)

    # R11 and R12: the pool as the seating orders it.
    keys = fleet.keys
    pool = [PoolEntry(position=entry.position, rung=entry.rung,
                      provider=keys[entry.candidate][0], model=keys[entry.candidate][1],
                      allowed_connection_ids=tuple(map(ids.__getitem__, entry.members)),
                      unverified_connection_ids=tuple(mark.connection_id
                                                      for mark in entry.marks),
                      unverified=entry.marks)
            for entry in seating.pool()]

    excluded = _exclusions(all_facts, refused,
                           _remedy_context(inputs, auto_id, now, budgets))
    rungs = _rung_statuses(auto_id, landed, pool, budgets)
    records = tuple(_record(f) for f in all_facts)
    clamps = tuple(
        Clamp(f.connection.id, f.cooldown.until, f.cooldown.end, f.cooldown.cooling)
        for f in all_facts if f.cooldown is not None and f.cooldown.clamped)
    warnings = _warnings(fleet, notes, budgets)
    settings_view = _settings_view(inputs, budgets)
    plan_pool = tuple(pool)
    summary = _summary(auto_id, all_facts, plan_pool, excluded)
    return Plan(auto_id=auto_id, now=now, now_source=now_source, settings=settings_view,
                rungs=rungs, pool=plan_pool, excluded=excluded, connections=records,
                clamps=clamps, warnings=tuple(warnings), summary=summary,
                decisions=tuple(decisions), facts=all_facts, budgets=budgets,
                files=dict(inputs.files))


def empty_fleet_warning(connections_file: str) -> str:
    """What a plan says about a connections file with no connection in it."""
    return (f"{connections_file} lists no connection (empty, or a truncated export?): the "
            "plan has nothing to route, and `check` fails on it")


def _warnings(fleet: Fleet, notes: SpendNotes, budgets: dict[str, BudgetPosition]
              ) -> list[str]:
    warnings = fleet.warnings(notes)
    if not fleet.connections:
        # A zero-byte file, a byte-order mark alone or `{}` all validate to no connection:
        # a truncated export must not look like a fleet that happens to route nothing.
        warnings.insert(0, empty_fleet_warning(
            fleet.inputs.files.get("connections", "the connections file")))
    warnings += _near_misses(fleet)
    for position in budgets.values():
        if position.state == "unenforced":
            # state unenforced implies a budget above 0
            warnings.append(f"the {position.rung} budget of "
                            f"{timefmt.usd(position.budget_usd or 0)}"  # pragma: no mutate
                            " is not enforced: no spend ledger was given")
    return warnings


def _near_misses(fleet: Fleet) -> list[str]:
    """R1.4, said in every plan: an uncurated provider or auth type close to a curated one
    (``Claude``, ``claud``) is most likely a typo, and it is treated as metered under any id
    (under ``auto/thrifty`` its rung comes from the price, and no exclusion would say so)."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for connection, info in zip(fleet.connections, fleet.classified, strict=True):
        if info.near:
            found.setdefault((connection.provider, connection.auth_type, info.near),
                             []).append(connection.id)
    return [f"provider {provider!r} with auth_type {auth_type!r} is not in the billing "
            f"catalog (did you mean {near}?): {', '.join(ids)} "
            f"{'is' if len(ids) == 1 else 'are'} treated as metered (R1)"
            for (provider, auth_type, near), ids in found.items()]


def _settings_view(inputs: LoadedInputs, budgets: dict[str, BudgetPosition]) -> PlanSettings:
    settings = inputs.settings
    ladder = settings.ladder
    return {
        "exit_cutoff_percent": ladder.exit_cutoff_percent,
        "reentry_min_remaining_percent": ladder.reentry_floor,
        "max_reading_age_seconds": ladder.max_reading_age_seconds,
        "rung_budget_usd": {rung: budget for rung, position in budgets.items()
                            if (budget := position.budget_usd) is not None},
        "budget_period": settings.budgets.period,
        "clamp_cooldown_to_reset": ladder.clamp_cooldown_to_reset,
        "cheap_max_input_usd_per_mtok": settings.tiers.cheap_max_input_usd_per_mtok,
    }


def unknown_connection(connection_id: str, known: Sequence[str]) -> UsageError:
    """The error for a connection id the fleet does not have, with the closest known ids."""
    # n=3 is get_close_matches' default
    close = difflib.get_close_matches(connection_id, known, n=3, cutoff=0.5)  # pragma: no mutate
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    listed = "" if close else f"; known ids: {', '.join(known) or '(none)'}"
    return UsageError(f"unknown connection id {connection_id!r}{hint}{listed}",
                      field="CONNECTION_ID")


def connection_plan(inputs: LoadedInputs, auto_id: AutoId, now: datetime,
                    now_source: NowSource, connection_id: str,
                    fleet: Fleet | None = None) -> Plan:
    """``make_plan``'s answer about one connection, for ``why``.

    The other connections are decided only as far as the positions of the pool entries that
    seat this one need (an entry exists once one member is admitted). As ``make_plan`` has
    them, for the whole fleet: ``warnings``, ``budgets``, ``settings`` and the ``position``
    of each pool entry listed. Narrowed to the connection: ``pool`` lists only the entries
    that seat it, each allowlist (and unverified list) cut to it; ``decisions``,
    ``excluded``, ``connections``, ``clamps`` and ``facts`` are its own; ``rungs`` and
    ``summary`` count only its decisions. An unknown id is a UsageError.
    """
    fleet = fleet_for(inputs, fleet)
    target = fleet.index.get(connection_id)
    if target is None:
        raise unknown_connection(connection_id, [c.id for c in fleet.connections])
    notes = SpendNotes()
    budgets = _budgets(fleet, now, notes)
    in_category = fleet.in_category(auto_id.category)
    moment = Moment(auto_id, now, budgets)
    keys = fleet.keys

    # Memos of pure computations (facts, verdicts, decisions, whether an entry exists): a
    # miss computes the same answer again, so their lookups and stores are not mutated.
    facts = facts_at(fleet, target, now)
    known = {target: (facts, fleet.verdicts(target, now))}  # pragma: no mutate
    decided: dict[tuple[int, int], PairDecision] = {}

    def decision(index: int, position: int, rung: Rung) -> PairDecision:
        found = decided.get((index, position))  # pragma: no mutate
        if found is None:
            seen = known.get(index)  # pragma: no mutate
            if seen is None:
                seen = known[index] = (  # pragma: no mutate
                    facts_at(fleet, index, now), fleet.verdicts(index, now))
            provider, model = keys[position]
            found = decide(seen[0], provider, model, fleet.tiers[position], rung, seen[1],
                           in_category[position], moment)
            decided[(index, position)] = found  # pragma: no mutate
        return found

    entries: dict[tuple[int, Rung], bool] = {}

    def entry_exists(rung: Rung, position: int) -> bool:
        found = entries.get((position, rung))  # pragma: no mutate
        if found is None:
            # members and rungs are built one from the other: strict never fires
            members = zip(fleet.members[position], fleet.rungs[position],
                          strict=True)  # pragma: no mutate
            found = in_category[position] and any(
                decision(m, position, on).admitted for m, on in members if on == rung)
            entries[(position, rung)] = found  # pragma: no mutate
        return found

    mine = fleet.pairs_of(target)
    decisions = tuple(decision(target, pair.candidate, pair.rung) for pair in mine)
    pool: list[PoolEntry] = []
    # one decision per pair: strict never fires
    for pair, made in zip(mine, decisions, strict=True):  # pragma: no mutate
        if not made.admitted:
            continue
        mark = _unverified_mark(made) if made.unverified else None
        pool.append(PoolEntry(
            position=seat_position(RUNG_INDEX[made.rung], pair.candidate, len(keys),
                                   entry_exists),
            rung=made.rung, provider=keys[pair.candidate][0],
            model=pair.model, allowed_connection_ids=(connection_id,),
            unverified_connection_ids=(connection_id,) if mark is not None else (),
            unverified=(mark,) if mark is not None else ()))
    # positions are distinct and come first in an entry: a plain sort gives the same order
    pool.sort(key=lambda entry: entry.position)  # pragma: no mutate
    plan_pool = tuple(pool)
    excluded = _exclusions((facts,), ([d for d in decisions if not d.admitted],),
                           _remedy_context(inputs, auto_id, now, budgets))
    clamps = tuple(
        Clamp(f.connection.id, f.cooldown.until, f.cooldown.end, f.cooldown.cooling)
        for f in (facts,) if f.cooldown is not None and f.cooldown.clamped)
    return Plan(auto_id=auto_id, now=now, now_source=now_source,
                settings=_settings_view(inputs, budgets),
                rungs=_rung_statuses(auto_id, _landed(decisions), plan_pool, budgets),
                pool=plan_pool,
                excluded=excluded, connections=(_record(facts),), clamps=clamps,
                warnings=tuple(_warnings(fleet, notes, budgets)),
                summary=_summary(auto_id, (facts,), plan_pool, excluded),
                decisions=decisions, facts=(facts,), budgets=budgets,
                files=dict(inputs.files))


class Moment(NamedTuple):
    """What every decision of one plan shares: the auto id, the instant and the budget
    positions there (R8)."""

    auto_id: AutoId
    now: datetime
    budgets: dict[str, BudgetPosition]


def decide(facts: ConnectionFacts, provider: str, model: str, tier: TierInfo, rung: Rung,
           verdicts: HistoryVerdicts, in_category: bool, moment: Moment) -> PairDecision:
    """R10 or R11 on one (candidate, connection) pair: admitted or not, and the reason.

    ``verdicts`` gives the connection's quota verdicts; the model's is computed here only
    when the rule reads it (R10 past its billing checks and the gates, R11 on a quota rung
    past the gates), else the decision carries it deferred.
    """
    auto_id = moment.auto_id
    cid = facts.connection.id
    reason: str | None = None
    # an admitted pair's detail is its verdict's: this initial value is never read
    detail = ""  # pragma: no mutate
    unverified = False
    quota: Verdict | DeferredVerdict | None = None
    # A status of error or unknown is no R5 gate (the SPEC's terminal set closes it), but it
    # is uncertainty about the connection itself: R10 excludes it after the gates, R11 admits
    # it marked unverified, on every rung.
    doubt = facts.doubt
    if not in_category:
        reason = "not-in-category"
        detail = f"{model} does not carry category {auto_id.category!r}"
    elif auto_id.tier == "subscription":
        failed = _subscription_check(facts, moment.now)
        if failed is not None:
            reason, detail = failed
        elif facts.gate_reason is not None:
            reason, detail = facts.gate_reason, facts.gate_detail
        elif doubt:
            reason, detail = "connection-status-unknown", doubt
        else:
            quota = verdicts(model)
            # a usable verdict has no reason: handing over its (None, detail) admits alike
            if quota.kind != "usable":  # pragma: no mutate
                reason, detail = quota.reason, quota.detail
    elif facts.gate_reason is not None:
        reason, detail = facts.gate_reason, facts.gate_detail
    elif rung in QUOTA_RUNGS:
        quota = verdicts(model)
        if quota.kind == "exhausted":
            reason, detail = quota.reason, quota.detail
        else:
            unverified = quota.kind == "unknown" or bool(doubt)
    else:
        position = moment.budgets[rung]
        if position.gates:
            reason = position.reason
            detail = _budget_detail(position)
        else:
            unverified = bool(doubt)
    ok = reason is None
    # The refusal an admitted pair keeps is never read; a verdict handed over deferred asks
    # the same history, which remembers it.
    kept = quota if quota is not None else verdicts.deferred(model)  # pragma: no mutate
    return PairDecision(cid, provider, model, rung, tier, ok, unverified, reason,
                        "" if ok else detail,  # pragma: no mutate
                        kept, doubt if ok else "")


def _budget_detail(position: BudgetPosition) -> str:
    if position.state == "disabled":
        return f"{position.rung} rung disabled (budget {timefmt.usd(position.budget_usd or 0)})"
    # state spent: a budget above 0 and a spend at least the budget, so no `or` falls back
    spent = timefmt.usd(position.spent_usd or 0)  # pragma: no mutate
    budget = timefmt.usd(position.budget_usd or 0)  # pragma: no mutate
    return f"{position.rung} budget spent: {spent} of {budget} this {position.period}"


def _unverified_mark(decision: PairDecision) -> UnverifiedMark:
    """Why an admitted, unverified pair is unverified: its connection's status or its quota
    verdict."""
    if decision.doubt:
        # the connection's own status first; an unknown quota on a quota rung is added
        detail = decision.doubt
        if decision.rung in QUOTA_RUNGS:
            verdict = decision.verdict
            if verdict is not None and verdict.kind == "unknown":
                detail += f"; also {verdict.reason or 'quota-unknown'}: {verdict.detail}"
        return UnverifiedMark(decision.connection_id, "connection-status-unknown", detail)
    # Without doubt, only an unknown verdict on a quota rung leaves a pair unverified: the
    # decision holds that verdict, whose detail is the admitted pair's.
    verdict = decision.verdict
    assert verdict is not None
    # an unknown verdict always has a reason code
    return UnverifiedMark(decision.connection_id,
                          verdict.reason or "quota-unknown",  # pragma: no mutate
                          verdict.detail)


def _remedy_context(inputs: LoadedInputs, auto_id: AutoId, now: datetime,
                    budgets: dict[str, BudgetPosition]) -> RemedyContext:
    models = inputs.catalogs.models

    def categories_of(provider: str, model: str) -> tuple[str, ...] | None:
        sourced = models.get((provider, model))
        return tuple(sourced.entry.categories) if sourced is not None else None

    return RemedyContext(auto_id, now, inputs.settings.ladder, budgets, categories_of)


def _fix(ctx: RemedyContext, facts: ConnectionFacts, reason: str,
         decision: PairDecision | None, model: str | None, rung: Rung | None) -> str | None:
    return remedy(reason, facts.connection, facts.billing, facts.cooldown, model, rung,
                  decision.quota if decision is not None else None, ctx)


def _exclusions(facts: Sequence[ConnectionFacts], refused: Sequence[list[PairDecision]],
                ctx: RemedyContext) -> tuple[Exclusion, ...]:
    """The exclusions of the connections of ``facts``; ``refused`` holds, for each of them, its
    refused decisions in decision order (every model of a connection has one decision)."""
    out: list[Exclusion] = []
    # one list per connection: strict never fires
    for f, failed in zip(facts, refused, strict=True):  # pragma: no mutate
        connection = f.connection
        if not f.models:
            out.append(Exclusion(
                connection_id=connection.id, provider=connection.provider, model=None,
                rung=None, reason="no-models",
                # An explicit empty list wins over the catalog (SPEC §2.1): say which it was.
                detail="serves no model: its models list is empty"
                if connection.models is not None
                else "serves no model: no models listed and none in the model catalog for "
                     f"provider {connection.provider!r}",
                # the no-models remedy reads neither the auto id, the ladder nor the budgets
                fix=_fix(ctx, f, "no-models", None, None, None)))  # pragma: no mutate
            continue
        if not failed:
            continue
        # One exclusion for the connection when every model is refused alike (a refused
        # decision's detail is its refusal); the set is made only then.
        if len(failed) == len(f.models) and len({(d.reason, d.refusal) for d in failed}) == 1:
            rungs = {d.rung for d in failed}
            rung = next(iter(rungs)) if len(rungs) == 1 else None
            assert failed[0].reason is not None
            out.append(Exclusion(
                connection_id=connection.id, provider=connection.provider, model=None,
                rung=rung, reason=failed[0].reason, detail=failed[0].detail,
                fix=_fix(ctx, f, failed[0].reason, failed[0],
                         failed[0].model if len(failed) == 1 else None, rung)))
            continue
        for d in failed:
            assert d.reason is not None
            out.append(Exclusion(
                connection_id=connection.id, provider=connection.provider, model=d.model,
                rung=d.rung, reason=d.reason, detail=d.detail,
                fix=_fix(ctx, f, d.reason, d, d.model, d.rung)))
    return tuple(out)


def rung_state(auto_id: AutoId, rung: Rung, position: BudgetPosition | None, landed: bool,
               serving: bool) -> RungState:
    """The state of one rung in a plan: the one ladder ``make_plan`` and ``simulate`` read.

    ``landed``: some pair in the id's category lands on the rung; ``serving``: some pool entry
    stands on it. An id of the subscription tier holds no other rung (R13); a disabled or
    spent budget closes the rung before anything lands on it (R8).
    """
    if auto_id.tier == "subscription" and rung != "subscription":
        return "not-in-id"
    if position is not None and position.state == "disabled":
        return "disabled"
    if position is not None and position.state == "spent":
        return "budget-spent"
    if not landed:
        return "empty"
    return "serving" if serving else "exhausted"


def _landed(decisions: Sequence[PairDecision]) -> dict[Rung, list[PairDecision]]:
    """The decisions of each rung, in order, leaving out the pairs outside the id's category
    (they land on no rung of the id)."""
    by_rung: dict[Rung, list[PairDecision]] = {rung: [] for rung in RUNGS}
    for d in decisions:
        if d.reason != "not-in-category":
            by_rung[d.rung].append(d)
    return by_rung


def _rung_statuses(auto_id: AutoId, by_rung: dict[Rung, list[PairDecision]],
                   pool: Sequence[PoolEntry],
                   budgets: dict[str, BudgetPosition]) -> tuple[RungStatus, ...]:
    """Each rung's state and note, from its decisions (``_landed``) and the pool."""
    statuses: list[RungStatus] = []
    for rung in RUNGS:
        position = budgets.get(rung)
        budget = position.budget_usd if position is not None else None
        spent = position.spent_usd if position is not None else None
        on_rung = by_rung[rung]
        entries = [e for e in pool if e.rung == rung]
        state = rung_state(auto_id, rung, position, bool(on_rung), bool(entries))
        if state == "not-in-id":
            statuses.append(RungStatus(
                rung=rung, state=state, candidates=0, connections=0, budget_usd=budget,
                spent_usd=spent, note=f"{auto_id.text} serves only the subscription rung"))
            continue
        serving_ids = {cid for e in entries for cid in e.allowed_connection_ids}
        unverified = {cid for e in entries for cid in e.unverified_connection_ids}
        all_ids = {d.connection_id for d in on_rung}
        if state == "disabled" or state == "budget-spent":
            assert position is not None
            note = _budget_detail(position)
        elif state == "empty":
            note = "no connection lands on this rung"
        elif state == "serving":
            note = (f"{len(serving_ids)} of {len(all_ids)} "
                    f"connection{'s' if len(all_ids) != 1 else ''} usable")
            if unverified:
                note += f", {len(unverified)} unverified"
        else:
            primary: dict[str, str] = {}  # one reason per connection, as the verdict counts
            for d in on_rung:
                if not d.admitted and d.connection_id not in primary:
                    # a refused decision always has a reason
                    primary[d.connection_id] = reason_phrase(
                        d.reason or "", d.detail)  # pragma: no mutate
            counts = Counter(primary.values())
            note = f"{len(all_ids)} connection{'s' if len(all_ids) != 1 else ''}, none usable: "
            note += ", ".join(f"{n} {phrase}" for phrase, n in counts.most_common())
        if position is not None and state == "serving":
            if position.state == "within":
                # state within implies a budget above 0
                note += (f"; {timefmt.usd(position.spent_usd or 0)} of "
                         f"{timefmt.usd(position.budget_usd or 0)} spent "  # pragma: no mutate
                         f"this {position.period}")
            elif position.state == "unenforced":
                note += "; budget not enforced (no spend ledger)"
        statuses.append(RungStatus(rung=rung, state=state, candidates=len(entries),
                                   connections=len(serving_ids), budget_usd=budget,
                                   spent_usd=spent, note=note))
    return tuple(statuses)


def _record(facts: ConnectionFacts) -> ConnectionRecord:
    billing = facts.billing
    connection = facts.connection
    return ConnectionRecord(
        id=connection.id, provider=connection.provider, auth_type=connection.auth_type,
        billing=billing.billing, overage=billing.overage, billing_source=billing.source,
        catalog_file=billing.matched.file if billing.matched is not None else None,
        override=dict(billing.override) if billing.override else None,
        overage_source=billing.overage_source)


def _summary(auto_id: AutoId, facts: Sequence[ConnectionFacts], pool: Sequence[PoolEntry],
             excluded: Sequence[Exclusion]) -> str:
    eligible: set[str] = set()
    unverified: set[str] = set()
    for entry in pool:
        eligible.update(entry.allowed_connection_ids)
        unverified.update(entry.unverified_connection_ids)
    primary: dict[str, str] = {}
    for exclusion in sorted(excluded, key=lambda x: x.reason == "not-in-category"):
        if exclusion.connection_id not in eligible and exclusion.connection_id not in primary:
            primary[exclusion.connection_id] = reason_phrase(exclusion.reason, exclusion.detail)
    text = f"{auto_id.text}: {len(eligible)} of {len(facts)} connections eligible"
    if unverified:
        text += f" ({len(unverified)} unverified)"
    if not pool:
        text += ", pool empty"
    counts = Counter(primary.values())
    if counts:
        text += " — " + ", ".join(f"{n} {phrase}" for phrase, n in counts.most_common())
    return text
