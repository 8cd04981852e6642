"""`audit traffic`: each served event held against the plan in force at its instant (SPEC §7).

The plan in force (§7.2) is walked with the engine's ``Stepper`` over the instants where a
decision can change — every connection's change instants (``engine.changes``), and, when a
rung has a budget, the budget periods' starts and the spend events — never over a sampling
grid and never one plan per event: the events between two such instants share one plan.
The walk keeps, per (connection, model) pair, the steps at which its admission or reason
changed, and per step the head rung; an event reads both by bisection, so the ledger may come
in any order and is streamed (``inputs.ledger.read.Ledger``).

Each audited served event gets the first matching finding of §7.3; its money follows §7.4;
quota windows that reset inside the span with quota left are §7.5.
"""

from __future__ import annotations

import bisect
import heapq
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from omniladder import findings, timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import next_period_start
from omniladder.engine.changes import change_instants
from omniladder.engine.decide import facts_at
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import in_force
from omniladder.engine.readings import figure
from omniladder.engine.records import PairDecision
from omniladder.engine.stepping import Stepper
from omniladder.findings import UNKNOWN, Seen, finding_of
from omniladder.inputs.ledger.events import LedgerEvent, LedgerRecord, ledger_event
from omniladder.inputs.ledger.one_read import Unsettled
from omniladder.inputs.ledger.read import Ledger
from omniladder.inputs.prices import PriceDatabase, missing_note, price_database
from omniladder.inputs.prices import installed as installed_database
from omniladder.models import (
    PAID_RUNGS,
    QUOTA_RUNGS,
    RUNGS,
    Connection,
    ModelEntry,
    Reading,
    Rung,
    Window,
)

EARLY_PAID = "early-paid"
"""The leak the verdict words first, from its events' rungs and heads."""
RECORDED = "recorded"
INCLUDED = "included"
CATALOG = "catalog"
"""Where a cost came from (``Judged.price_source``), besides the price database."""
TOP_LEAKS = 10
LISTED = 20
"""How many unpriced events and unattributed connections are listed (all are counted)."""
_MICROSECOND = timedelta(microseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NOT_LISTED = "not in the connections file"
_RANK: dict[str, int] = {rung: index for index, rung in enumerate(RUNGS)}
_HOUR = timedelta(hours=1)
_END_OF_TIME = datetime.max.replace(tzinfo=UTC)
_DAWN = datetime.min.replace(tzinfo=UTC)
_NO_STEP = 1 << 62
"""Past every step of a walk."""
_NO_RANK = -2
"""No head rung's rank (-1 is the rank of no head)."""
_LAST_HOUR = (_END_OF_TIME - _EPOCH) // _HOUR
_MEMO_MAX = 1 << 12
_IN_POOL: dict[str, str] = {rung: f"in the pool on {rung}" for rung in RUNGS}


# --- the plan in force ---------------------------------------------------------------------


def walk_instants(fleet: Fleet, start: datetime, end: datetime) -> list[datetime]:
    """``start`` and every instant in (start, end] at which some decision of the auto id can
    change (SPEC §7.2), sorted. An exclusive change (a reading turning stale once *older*
    than the max age) is placed one microsecond after its instant, the first at which it
    holds."""
    found: set[datetime] = {start}
    for index, connection in enumerate(fleet.connections):
        for instant, exclusive in change_instants(fleet.histories[index],
                                                  connection, fleet.ladders[index],
                                                  start, end):
            found.add(instant + _MICROSECOND if exclusive else instant)
    inputs = fleet.inputs
    budgets = inputs.settings.budgets
    if any((budgets.rung_budget_usd.for_rung(rung) or 0) > 0 for rung in PAID_RUNGS):
        # R8: a positive budget moves with the spend counted and the period
        period = budgets.period
        at = _next_period(start, period)
        while at is not None and at <= end:
            found.add(at)
            at = _next_period(at, period)
        for event in inputs.spend or ():
            if start < event.at <= end:
                found.add(event.at)
    return sorted(found)


def _next_period(instant: datetime, period: str) -> datetime | None:
    """The start of the budget period after the one holding ``instant``; None in the
    calendar's last period (December 9999 has no next month)."""
    try:
        return next_period_start(instant, period)
    except (ValueError, OverflowError):
        return None


class PlanInForce:
    """The plan of one auto id over [start, end], as ``Stepper`` walks it: per pair the
    steps where its decision changed, per step the head rung."""

    def __init__(self, inputs: LoadedInputs, auto_id: AutoId, start: datetime,
                 end: datetime, fleet: Fleet | None = None) -> None:
        fleet = fleet if fleet is not None else Fleet(inputs)
        self.fleet = fleet
        self.instants = walk_instants(fleet, start, end)
        # the pool's full order is not needed, only its leader at each step
        stepper = Stepper(inputs, auto_id, self.instants, fleet=fleet, seated_at=())
        self.pair_index: dict[tuple[int, str], int] = {}
        """(connection index, model) → the pair's position in ``steps`` / ``decisions``."""
        self.steps: list[list[int]] = []
        self.decisions: list[list[PairDecision]] = []
        self.heads: list[Rung | None] = []
        self.leaders: list[str | None] = []
        """Per step, the connection seated first in the pool (the head entry's first)."""
        index_of = fleet.index
        for step, state in enumerate(stepper.steps()):
            self.heads.append(state.head)
            self.leaders.append(state.leader)
            if step == 0:  # every pair as the first step decided it
                for index, (pairs, decided) in enumerate(zip(fleet.pairs, stepper.decided,
                                                             strict=True)):
                    for pair, decision in zip(pairs, decided, strict=True):
                        self.pair_index[(index, pair.model)] = len(self.steps)
                        self.steps.append([0])
                        self.decisions.append([decision])
                continue
            for old, new in state.changed:  # the decision at the step before is the last
                # kept as to admission, reason and doubt: a pair changed only if it differs
                if (old.admitted, old.reason, old.unverified) != (
                        new.admitted, new.reason, new.unverified):
                    position = self.pair_index[(index_of[new.connection_id], new.model)]
                    self.steps[position].append(step)
                    self.decisions[position].append(new)

    def decision(self, position: int, step: int) -> PairDecision:
        steps = self.steps[position]
        return self.decisions[position][bisect.bisect_right(steps, step) - 1]


def _had(decision: PairDecision | None, head: Rung | None, leader: str | None) -> str:
    """What the plan had at the event's instant, in words: why it held the pair out, or,
    for a pair it admitted, which rung and connection led its pool."""
    if decision is None:
        return "the connections file has no such connection and model"
    if not decision.admitted:
        return decision.refusal
    if head is None:
        return "the pool was empty"
    led = f", led by {leader}" if leader is not None else ""
    return f"the pool's head rung was {head}{led}; this pair was on {decision.rung}"


# --- money (§7.4) --------------------------------------------------------------------------


def token_cost(entry: ModelEntry, tokens_in: int | None, tokens_out: int | None,
                cache_read: int | None, cache_write: int | None) -> float | None:
    """The tokens at the catalog entry's prices, cache reads and writes at the input price;
    None without both token counts."""
    if tokens_in is None or tokens_out is None:
        return None
    tokens_in += (cache_read or 0) + (cache_write or 0)
    priced: float = (tokens_in * entry.input_usd_per_mtok
                     + tokens_out * entry.output_usd_per_mtok) / 1_000_000
    return priced


# --- the result ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Judged:
    """One audited served event with its finding and what the plan had at its instant."""

    at: datetime
    connection: str
    model: str
    finding: str
    cost_usd: float | None
    rung: Rung | None
    head: Rung | None
    reason: str | None
    detail: str
    failed_attempts: int
    request_id: str | None
    where: str
    price_source: str | None = None
    """Where its cost came from (SPEC §7.4): ``recorded`` (the gateway's own figure),
    ``included`` (0: a quota rung within quota, or past it on a connection that stops at
    its limit), ``catalog`` (the tokens at the model catalog's prices), or the price
    database and its version (``genai-prices 0.2.5``); None when it has no cost."""


def no_counts() -> dict[str, int]:
    """Every finding of the table, counted 0, in its order."""
    return dict.fromkeys(findings.FINDINGS, 0)


@dataclass(slots=True)
class ConnectionTally:
    served: int = 0
    failed: int = 0
    cost_usd: float = 0.0
    leak_usd: float = 0.0
    unpriced: int = 0
    counts: dict[str, int] = field(default_factory=lambda: no_counts())
    held: dict[str, int] = field(default_factory=dict)
    """What the plan in force held for the served pair, by served events: its reason code,
    or ``in the pool on RUNG``; ``not in the connections file`` for an unknown one."""
    first: datetime | None = None
    last: datetime | None = None


@dataclass(slots=True)
class HourTally:
    served: int = 0
    leak_usd: float = 0.0
    counts: dict[str, int] = field(default_factory=lambda: no_counts())


@dataclass(frozen=True, kw_only=True)
class ExpiredUnused:
    """§7.5: a window that reset inside the span with this share left."""

    connection: str
    window: str
    models: tuple[str, ...] | None
    reset_at: datetime
    percent: float
    checked_at: datetime


@dataclass(frozen=True, kw_only=True)
class TrafficAudit:
    auto_id: AutoId
    start: datetime | None
    end: datetime | None
    ledger: str
    files: dict[str, str]
    all_requests: bool
    max_leak_usd: float
    events_read: int
    duplicates: int
    counts: dict[str, int]
    not_audited: dict[str, int]
    leak_usd: float
    leak_split: dict[str, float]
    """The leak of each finding that leaks (``findings.leaking``), in the table's order."""
    cost_usd: float
    leak_unpriced: int
    unpriced: int
    unpriced_events: tuple[Judged, ...]
    unattributed: dict[str, int]
    failed: int
    expired_unused: tuple[ExpiredUnused, ...]
    by_connection: dict[str, ConnectionTally]
    by_hour: dict[datetime, HourTally]
    top_leaks: tuple[Judged, ...]
    plan_steps: int
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    price_database: str | None = None
    """The price database installed (``genai-prices 0.2.5``), None without one."""

    @property
    def audited(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> bool:
        """§7.6: the leak is within the allowance and no leak event is unpriced; the leak
        is compared to the millionth the JSON and the views carry, so a sum's float noise
        never fails an allowance the printed leak meets."""
        return (round(self.leak_usd, timefmt.MONEY_PLACES) <= self.max_leak_usd
                and self.leak_unpriced == 0)

    @property
    def verdict(self) -> str:
        return verdict_line(self)


def verdict_line(audit: TrafficAudit) -> str:
    """The one line the human view leads with."""
    parts: list[str] = []
    leak_paid = audit.leak_split
    if leak_paid.get(EARLY_PAID, 0.0) > 0 or audit.counts.get(EARLY_PAID):
        early = [j for j in audit.top_leaks if j.finding == EARLY_PAID]
        rungs: list[str] = sorted({j.rung for j in early if j.rung},
                                  key=_RANK.__getitem__) or ["paid rungs"]
        heads = sorted({j.head for j in early if j.head}, key=_RANK.__getitem__)
        had = f"the {heads[0]} rung" if heads else "a quota rung"
        parts.append(f"{timefmt.usd_exact(leak_paid[EARLY_PAID])} paid on {'/'.join(rungs)} "
                     f"while {had} had quota")
    for kind in findings.leaking():  # the others, each in the table's words
        worded = findings.FINDINGS[kind].verdict
        if worded is not None and audit.counts[kind]:
            parts.append(f"{timefmt.usd_exact(leak_paid[kind])} {worded}")
    if audit.leak_unpriced:
        parts.append(f"{audit.leak_unpriced} leak event"
                     f"{'s' if audit.leak_unpriced != 1 else ''} could not be priced")
    if not parts:
        parts.append(f"no leak: {audit.audited} served event"
                     f"{'s' if audit.audited != 1 else ''} of {audit.auto_id.text} audited, "
                     "none paid while quota was left")
    if audit.expired_unused:
        top = max(audit.expired_unused, key=lambda e: e.percent)
        parts.append(f"{timefmt.pct(top.percent)} of {top.connection}'s {top.window} window "
                     "expired unused")
    return "; ".join(parts)


# --- the audit -----------------------------------------------------------------------------


def requested_ids(auto_id: AutoId) -> frozenset[str]:
    """The ``requested`` values that name the audited id: the id, and the name an export
    gives it on a gateway."""
    from omniladder.analyses.export.source import managed_name

    return frozenset({auto_id.text, managed_name(auto_id)})


def audit_traffic(inputs: LoadedInputs, auto_id: AutoId, ledger: Ledger, *,
                  start: datetime | None = None, end: datetime | None = None,
                  all_requests: bool = False, max_leak_usd: float = 0.0,
                  fleet: Fleet | None = None) -> TrafficAudit:
    """SPEC §7: every served event of ``auto_id`` in [start, end] (default: the ledger's
    span) classified against the plan in force at its instant, priced, and summed.

    A JSONL ledger not read yet is audited in one read (``Ledger.one_pass``): the span's
    missing ends are taken from the file's first and last lines (``Ledger.ends``), the plan
    is walked over them, and each event is audited as it is validated. When that read cannot
    give the two reads' answer (an unordered ledger, a hash two keys share) it is given up
    and the ledger is read twice: ``scan`` (validation, span, keys that may repeat), then
    ``records``, with the same audit of each event."""
    fleet = fleet if fleet is not None else Fleet(inputs)
    plans: dict[tuple[datetime, datetime], PlanInForce] = {}
    """The plans walked, by span: the two reads reuse the one read's when the span is the
    same."""
    if ledger.unread:
        ends = ledger.ends() if start is None or end is None else None
        if ends is not None or (start is not None and end is not None):
            first = ends[0] if ends is not None and start is None else None
            last = ends[1] if ends is not None and end is None else None
            try:
                return _audit(inputs, auto_id, ledger, ledger.one_pass(first, last),
                              start if first is None else first,
                              end if last is None else last, all_requests, max_leak_usd,
                              fleet, plans, (start is None, end is None))
            except Unsettled:
                ledger.forget()
    scan = ledger.scan()
    return _audit(inputs, auto_id, ledger, ledger.records(),
                  start if start is not None else scan.first,
                  end if end is not None else scan.last, all_requests, max_leak_usd, fleet,
                  plans, (start is None, end is None))


def _audit(inputs: LoadedInputs, auto_id: AutoId, ledger: Ledger,
           records: Iterator[LedgerRecord], start: datetime | None,
           end: datetime | None, all_requests: bool, max_leak_usd: float, fleet: Fleet,
           plans: dict[tuple[datetime, datetime], PlanInForce],
           ledger_ends: tuple[bool, bool]) -> TrafficAudit:
    """``audit_traffic`` of the events ``records`` gives, over [start, end]; ``ledger_ends``
    says which of the two are the ledger's own (its first and last events, as the read
    finds them once it is over: an instant the read took from the file's ends may have
    been written with another offset).

    The loop runs once per event of a ledger of millions: what an event's pair, its
    plan interval and its hour decide is found once (``_Pair``, ``_Cell``, the current
    interval and hour) and the event only adds itself to the counts; the costs are added
    in the ledger's order, as one event at a time would add them. What an event rarely
    meets is a function of its own: a new plan interval (``_interval``) or hour
    (``_hour``), a ``requested`` text met for the first time (``_left_out``), a new pair
    (``_pair``) and its finding under a head (``_Cells.finding``), an unknown one
    (``_unknown``), and the events listed (``_Listing``: the costliest leaks, the first
    unpriced), made records once the ledger is read (``_result``), with the failed
    attempts it holds for their requests."""
    not_audited = {"other-request": 0, "no-request": 0, "outside-span": 0}
    by_connection: dict[str, ConnectionTally] = {}
    by_hour: dict[int, HourTally] = {}
    """Per hour since the epoch (UTC hours are whole hours of Unix time)."""
    unattributed: dict[str, int] = {}
    listing = _Listing()
    leak_total = cost_total = 0.0
    leak_split = dict.fromkeys(findings.leaking(), 0.0)
    """Per finding that leaks, its cost, added in the ledger's order."""
    unknown_finding = finding_of(UNKNOWN)
    failed_count = leak_unpriced = wanting = listed = 0
    least = 0.0
    """The least cost a leak event needs to be listed among the costliest."""
    plan = _plan_in_force(inputs, auto_id, start, end, fleet, plans)
    ours = requested_ids(auto_id)
    not_audited_as: dict[str | None, str] = {None: "" if all_requests else "no-request"}
    """Per ``requested`` text met (None: none), why its events are not audited, or "" when
    they are (bounded: a ledger names a few ids and gateway names)."""
    connections = fleet.connections
    index_of = fleet.index
    overage = _Overage(fleet).at
    pairs: dict[str, dict[str, _Way]] = {}
    """Per model, per connection, of the fleet's pairs met in the ledger, what decides its
    events (bounded by the fleet's pairs), keyed by the fleet's own texts: a few dozen
    models' entries stay at hand, and the lookup reads one text a connection, not one made
    per event."""
    cells = _Cells()
    heads = plan.heads if plan is not None else []
    # the plan interval (inside the span: the last one ends with it) and the hour of the
    # event before: a ledger in time order stays in each for hundreds of events
    low = high = hour_low = hour_high = _EPOCH
    step = 0
    head_rank = -1
    hour = HourTally()
    hour_counts = hour.counts

    for line, at, connection, status, data in records:
        if not low <= at < high:
            if plan is None or not start <= at <= end:  # type: ignore[operator]
                not_audited["outside-span"] += 1
                continue
            step, low, high, head_rank = _interval(plan, at, end)
        if status != "served":
            tally = by_connection.get(connection)
            if tally is None:
                tally = by_connection[connection] = ConnectionTally()
            tally.failed += 1
            failed_count += 1
            continue
        requested = data.get("requested")
        left_out = not_audited_as.get(requested)
        if left_out is None:  # a text met for the first time (None is known from the start)
            left_out = _left_out(requested, ours, not_audited_as)
        if left_out:
            not_audited[left_out] += 1
            continue
        if not hour_low <= at < hour_high:
            hour, hour_low, hour_high = _hour(by_hour, at)
            hour_counts = hour.counts
        model = data["model"]
        of_model = pairs.get(model)
        way = None if of_model is None else of_model.get(connection)
        if way is None:
            assert plan is not None  # an event inside the span has one
            way = _pair(plan, index_of, connections, fleet, connection, model, by_connection)
            if way is not None:
                pairs.setdefault(way.model, {})[connections[way.index].id] = way
        cost: float | None
        source: str | None
        if way is None:
            hour_counts[unknown_finding] += 1
            # never in the leak, so never listed: its cost's source is not kept
            cost = _unknown(by_connection, unattributed, connection, at, data,
                            unknown_finding)
            if cost is not None:
                cost_total += cost
            continue
        if way.later is not None:  # the pair's decision changed over the span: most
            # often its next event is under the way of the one before
            way = way.now if way.low <= step < way.high else way.at_step(step)
        # most often under the head of the pair's event before
        cell = way.last_cell if way.rank == head_rank else way.cell(head_rank, cells)
        if cell.count:
            cell.count += 1
        else:  # what the plan held is listed in the order the events first met it
            cell.count = 1
            if way.held not in way.tally.held:
                way.tally.held[way.held] = 0
        if at < cell.first:
            cell.first = at
        if at > cell.last:
            cell.last = at
        finding = cell.finding
        hour_counts[finding] += 1  # each event counts under one finding: its served
        # §7.4: within quota on a quota rung 0 whatever the gateway recorded; past quota
        # on a quota rung 0 when the connection stops at its limit (every sum starts at
        # 0.0, which adding 0.0 leaves as it is, and a cost of 0 is never listed: such
        # an event adds nothing more); otherwise the recorded cost unless it is 0, else
        # the tokens at the catalog's prices, else at the price database's, else None
        # (unpriced)
        if way.free or (way.quota and overage(way.index, step, at) == "hard-stop"):
            continue
        tally = way.tally
        leak = cell.leak
        cost = data.get("cost_usd")
        if cost:  # a recorded 0 is not recorded here (§7.4 v1.4): a gateway writes 0
            # when its own price map lacks the model (LiteLLM does)
            cost = float(cost)
            source = RECORDED
        elif way.entry is not None:
            cost = token_cost(way.entry, data.get("tokens_in"),
                               data.get("tokens_out"), data.get("tokens_cache_read"),
                               data.get("tokens_cache_write"))
            source = CATALOG
        else:
            database = way.priced_by()
            source = cost = None
            if database is not None:
                cost = way.database_price(database, at, data)
                source = database.source
            elif way.lacks:
                wanting += 1
        if cost is None:  # must be priced, and cannot be
            tally.unpriced += 1
            if leak:
                leak_unpriced += 1
            if listed < LISTED:
                listed = listing.unpriced((line, at, data, (finding, way.decision,
                                                            heads[step], way.held, None),
                                           cost, step))
            continue
        tally.cost_usd += cost
        cost_total += cost
        if leak:
            tally.leak_usd += cost
            hour.leak_usd += cost
            leak_total += cost
            leak_split[finding] += cost
            if cost > least:  # a later event ties with none it would replace
                least = listing.leak(cost, (line, at, data, (finding, way.decision,
                                                            heads[step], way.held,
                                                            source), cost, step))
    return _result(inputs, auto_id, ledger, start, end, ledger_ends, plan, fleet, _Sums(
        all_requests=all_requests, max_leak_usd=max_leak_usd, not_audited=not_audited,
        counts=_counts(cells.made, by_hour, unknown_finding, unattributed),
        by_connection=by_connection, by_hour=by_hour, unattributed=unattributed,
        leak_usd=leak_total, leak_split=leak_split, cost_usd=cost_total,
        failed=failed_count, leak_unpriced=leak_unpriced, wanting=wanting), listing)


def _plan_in_force(inputs: LoadedInputs, auto_id: AutoId, start: datetime | None,
                   end: datetime | None, fleet: Fleet,
                   plans: dict[tuple[datetime, datetime], PlanInForce]) -> PlanInForce | None:
    """The plan in force over [start, end], walked once per span; None for no span."""
    if start is None or end is None or start > end:
        return None
    plan = plans.get((start, end))
    if plan is None:
        plan = plans[(start, end)] = PlanInForce(inputs, auto_id, start, end, fleet)
    return plan


def _interval(plan: PlanInForce, at: datetime, end: datetime | None
              ) -> tuple[int, datetime, datetime, int]:
    """The plan interval holding ``at`` (inside the span): its step, its first instant, the
    next step's (past the span's end for the last), and its head rung's rank (-1: none)."""
    instants = plan.instants
    step = bisect_right(instants, at) - 1
    if step < len(instants) - 1:
        high = instants[step + 1]
    else:
        high = _END_OF_TIME
        if end is not None:
            high = timefmt.shifted(end, _MICROSECOND) or _END_OF_TIME
    head = plan.heads[step]
    return step, instants[step], high, -1 if head is None else _RANK[head]


def _left_out(requested: str | None, ours: frozenset[str],
              not_audited_as: dict[str | None, str]) -> str:
    """Why the events naming ``requested`` (a text met for the first time) are not audited,
    or "" when they are; kept in ``not_audited_as`` while it is small.

    SPEC §7.1 v1.4: any other text is another id, whether an auto id, another export's name
    or a gateway name no importer could map (a group or combo added by hand): never an alias
    of the audited one."""
    left_out = "" if requested in ours else "other-request"
    if len(not_audited_as) < _MEMO_MAX:
        not_audited_as[requested] = left_out
    return left_out


def _hour(by_hour: dict[int, HourTally], at: datetime) -> tuple[HourTally, datetime, datetime]:
    """The tally of the UTC hour holding ``at``, and the hour's bounds to keep it for (an
    empty interval for an hour no interval is kept for)."""
    hour_key = int(at.timestamp()) // 3600
    found = by_hour.get(hour_key)
    if found is None:
        found = by_hour[hour_key] = HourTally()
    # int() rounds an instant before 1970 up, not down: no interval is kept for it, nor for
    # the calendar's last hour (which has no next)
    if 0 <= hour_key < _LAST_HOUR:
        low = _EPOCH + timedelta(hours=hour_key)
        return found, low, low + _HOUR
    return found, _EPOCH, _EPOCH


def _unknown(by_connection: dict[str, ConnectionTally], unattributed: dict[str, int],
             connection: str, at: datetime, data: Mapping[str, Any],
             finding: str) -> float | None:
    """A served event of a pair the connections file lacks, counted under its connection
    and as unattributed; its recorded cost, if any."""
    tally = by_connection.get(connection)
    if tally is None:
        tally = by_connection[connection] = ConnectionTally()
    tally.served += 1
    tally.counts[finding] += 1
    tally.held[_NOT_LISTED] = tally.held.get(_NOT_LISTED, 0) + 1
    unattributed[connection] = unattributed.get(connection, 0) + 1
    if tally.first is None or at < tally.first:
        tally.first = at
    if tally.last is None or at > tally.last:
        tally.last = at
    cost = data.get("cost_usd")
    if cost is None:
        return None
    tally.cost_usd += float(cost)
    return float(cost)


class _Overage:
    """What happens past the plan on a connection at a plan step (R2a), asked once per
    connection and step."""

    __slots__ = ("fleet", "memo")

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.memo: dict[tuple[int, int], str] = {}

    def at(self, index: int, step: int, at: datetime) -> str:
        key = (index, step)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = facts_at(self.fleet, index, at).billing.overage
        return found


class _Listing:
    """The events an audit lists, kept while the ledger is read: the costliest leaks (a
    heap of TOP_LEAKS) and the first LISTED unpriced ones."""

    __slots__ = ("order", "top", "unpriced_events")

    def __init__(self) -> None:
        self.unpriced_events: list[_Listed] = []
        self.top: list[tuple[float, int, _Listed]] = []
        self.order = 0

    def unpriced(self, listed: _Listed) -> int:
        """One of the first LISTED unpriced events: listed; how many are now."""
        self.unpriced_events.append(listed)
        return len(self.unpriced_events)

    def leak(self, cost: float, listed: _Listed) -> float:
        """A leak event costlier than the least listed: listed, the least it replaces
        dropped; the least cost one must now pass to be listed (0 while there is room)."""
        self.order += 1
        item = (cost, -self.order, listed)
        top = self.top
        if len(top) < TOP_LEAKS:
            heapq.heappush(top, item)
        else:
            heapq.heapreplace(top, item)
        return top[0][0] if len(top) == TOP_LEAKS else 0.0


@dataclass(frozen=True, kw_only=True)
class _Sums:
    """What the read of the ledger summed, for ``_result``."""

    all_requests: bool
    max_leak_usd: float
    not_audited: dict[str, int]
    counts: dict[str, int]
    by_connection: dict[str, ConnectionTally]
    by_hour: dict[int, HourTally]
    unattributed: dict[str, int]
    leak_usd: float
    leak_split: dict[str, float]
    cost_usd: float
    failed: int
    leak_unpriced: int
    wanting: int
    """Events of a model the catalog lacks, unpriced for want of a price database."""


def _counts(cells: list[_Cell], by_hour: Mapping[int, HourTally], unknown_finding: str,
            unattributed: Mapping[str, int]) -> dict[str, int]:
    """The audit's counts by finding, once the ledger is read: each cell's events added to
    its connection's counts and span, the unknown pairs' events, and each hour's served."""
    counts = no_counts()
    for cell in cells:
        if cell.count:
            tally = cell.tally
            counts[cell.finding] += cell.count
            tally.served += cell.count
            tally.counts[cell.finding] += cell.count
            tally.held[cell.held] += cell.count
            if tally.first is None or cell.first < tally.first:
                tally.first = cell.first
            if tally.last is None or cell.last > tally.last:
                tally.last = cell.last
    counts[unknown_finding] += sum(unattributed.values())
    for hour_tally in by_hour.values():
        hour_tally.served = sum(hour_tally.counts.values())
    return counts


def _result(inputs: LoadedInputs, auto_id: AutoId, ledger: Ledger, start: datetime | None,
            end: datetime | None, ledger_ends: tuple[bool, bool], plan: PlanInForce | None,
            fleet: Fleet, sums: _Sums, listing: _Listing) -> TrafficAudit:
    """The audit once the ledger is read: its span's own ends taken from the read, the
    listed events made records, the quota that expired unused found."""
    scan = ledger.scan()  # the read is over: its span, count and failed attempts are known
    if ledger_ends[0]:
        start = scan.first
    if ledger_ends[1]:
        end = scan.last
    failed_by_request = ledger.failed_by_request

    def judged(listed: _Listed) -> Judged:
        assert plan is not None
        line, at, data, judgement, cost, step = listed
        return _judged(ledger_event(at, data, line), judgement, cost, plan, step,
                       failed_by_request)

    leaks = tuple(judged(j) for _, _, j in sorted(listing.top, key=lambda item: (-item[0],
                                                                                  -item[1])))
    expired = (expired_unused(fleet, start, end)
               if start is not None and end is not None else ())
    wanting = sums.wanting
    return TrafficAudit(
        auto_id=auto_id, start=start, end=end, ledger=ledger.shown, files=dict(inputs.files),
        all_requests=sums.all_requests, max_leak_usd=sums.max_leak_usd,
        events_read=scan.events, duplicates=ledger.duplicates, counts=sums.counts,
        not_audited=sums.not_audited, leak_usd=sums.leak_usd, leak_split=sums.leak_split,
        cost_usd=sums.cost_usd, leak_unpriced=sums.leak_unpriced,
        unpriced=sum(tally.unpriced for tally in sums.by_connection.values()),
        unpriced_events=tuple(judged(listed) for listed in listing.unpriced_events),
        unattributed=sums.unattributed,
        failed=sums.failed, expired_unused=expired,
        by_connection=dict(sorted(sums.by_connection.items())),
        by_hour={_EPOCH + timedelta(hours=hour): tally
                 for hour, tally in sorted(sums.by_hour.items())}, top_leaks=leaks,
        plan_steps=len(plan.instants) if plan is not None else 0,
        warnings=tuple(inputs.warnings),
        notes=(*ledger.notes, *([missing_note(wanting)] if wanting else ())),
        price_database=installed_database())


_Judgement = tuple[str, PairDecision | None, Rung | None, str, str | None]
"""(finding, the pair's decision, the head rung, what the plan held, where its cost came
from)."""
_Listed = tuple[int, datetime, dict[str, Any], _Judgement, float | None, int]
"""A listed event until the ledger is read: (line, at, fields, judgement, cost, step)."""


class _Cell:
    """The served events of one way of a pair under one finding: counted here, and added
    to the connection's counts once the ledger is read."""

    __slots__ = ("count", "finding", "first", "held", "last", "leak", "tally")

    def __init__(self, finding: str, held: str, tally: ConnectionTally) -> None:
        self.count = 0
        self.first = _END_OF_TIME
        self.last = _DAWN
        """The instants of its first and last events (its connection's span, at the end)."""
        self.finding = finding
        self.leak = findings.FINDINGS[finding].leaks
        self.held = held
        self.tally = tally


_NO_CELL = _Cell(next(iter(findings.FINDINGS)), "", ConnectionTally())
"""A way's ``last_cell`` before it is asked for one (under ``_NO_RANK``, never read)."""


class _Way:
    """One decision the plan took on a served pair, and what it makes of an event: the
    finding by head rung (``by_head``, filled as the heads are met), what it held, and
    whether its events cost 0 (``free``: admitted on a quota rung) or may (``quota``: held
    out on a quota rung, 0 when the connection stops at its limit). The pair's first way
    also holds the steps at which its decision changed and the ways from each (``later``;
    None when it never changed over the span): one object to reach per event."""

    __slots__ = ("by_head", "database", "decision", "entry", "free", "held", "high", "index",
                 "lacks", "last_cell", "later", "low", "model", "now", "provider", "quota",
                 "rank", "steps", "tally")

    def __init__(self, decision: PairDecision, tally: ConnectionTally, index: int,
                 entry: ModelEntry | None, provider: str) -> None:
        self.decision = decision
        self.tally = tally
        self.index = index
        self.entry = entry
        self.provider = provider
        self.model = decision.model
        self.database: PriceDatabase | None = None
        """The price database, for a model the catalog lacks and the database has."""
        self.lacks: bool | None = None
        """Whether the catalog lacks the model and no price database is installed; None
        until an event asks (``priced_by``)."""
        rung = decision.rung
        self.held = decision.reason or _IN_POOL[rung]
        self.free = rung in QUOTA_RUNGS and decision.admitted
        self.quota = rung in QUOTA_RUNGS and not decision.admitted
        self.by_head: list[_Cell | None] = [None] * (len(RUNGS) + 1)
        """Per head rung's rank (the last: no head), the cell of its finding."""
        self.rank = _NO_RANK
        self.last_cell = _NO_CELL
        """The cell of the rank ``cell`` was last asked for."""
        self.steps: list[int] = []
        self.later: list[_Way] | None = None
        self.now = self
        self.low = self.high = 0
        """The pair's way at the steps in [low, high), the last ``at_step`` found."""

    def at_step(self, step: int) -> _Way:
        """The pair's way in force at ``step`` (this the first way of the pair), kept with
        the steps it holds for: a pair's next event is most often under the same."""
        assert self.later is not None
        steps = self.steps
        found = bisect_right(steps, step)
        self.low = steps[found - 1]
        self.high = steps[found] if found < len(steps) else _NO_STEP
        self.now = self.later[found - 1]
        return self.now

    def priced_by(self) -> PriceDatabase | None:
        """The price database that prices this pair's model, which the catalog lacks: found
        (and the database loaded) when the first event needs it."""
        if self.lacks is None:
            database = price_database()
            self.lacks = database is None
            if database is not None and database.knows(self.provider, self.model):
                self.database = database
        return self.database

    def database_price(self, database: PriceDatabase, at: datetime,
                       data: Mapping[str, Any]) -> float | None:
        """The event's tokens at the price database's price (input and output tokens
        given), else None."""
        tokens_in = data.get("tokens_in")
        tokens_out = data.get("tokens_out")
        if tokens_in is None or tokens_out is None:
            return None
        return database.price(self.provider, self.model, at, tokens_in, tokens_out,
                                   data.get("tokens_cache_read") or 0,
                                   data.get("tokens_cache_write") or 0)

    def cell(self, head_rank: int, cells: _Cells) -> _Cell:
        """The cell of this way's events under the head of ``head_rank`` (-1: none), kept
        as ``last_cell`` with its ``rank``."""
        found = self.by_head[head_rank]
        if found is None:
            found = self._cell(head_rank, cells)
        self.rank = head_rank
        self.last_cell = found
        return found

    def _cell(self, head_rank: int, cells: _Cells) -> _Cell:
        """``cell`` met for the first time under this head."""
        finding = cells.finding(self.decision, head_rank)
        for found in self.by_head:
            if found is not None and found.finding == finding:
                self.by_head[head_rank] = found
                return found
        made = self.by_head[head_rank] = _Cell(finding, self.held, self.tally)
        cells.made.append(made)
        return made


class _Cells:
    """Every cell made, in the order they were, and the finding of each decision under each
    head rank, asked of the findings' table once: the pairs of a fleet share a few."""

    __slots__ = ("findings", "made")

    def __init__(self) -> None:
        self.made: list[_Cell] = []
        self.findings: dict[tuple[bool, str | None, Rung, int], str] = {}

    def finding(self, decision: PairDecision, head_rank: int) -> str:
        key = (decision.admitted, decision.reason, decision.rung, head_rank)
        found = self.findings.get(key)
        if found is None:
            found = self.findings[key] = finding_of(Seen(
                known=True, admitted=decision.admitted, reason=decision.reason,
                rung=decision.rung, head=RUNGS[head_rank] if head_rank >= 0 else None))
        return found


def _pair(plan: PlanInForce, index_of: Mapping[str, int], connections: Sequence[Connection],
          fleet: Fleet, connection: str, model: str,
          by_connection: dict[str, ConnectionTally]) -> _Way | None:
    """A served pair's first ``_Way`` (its connection's tally made if there is none yet);
    None when the connections file has no such pair (unknown-connection)."""
    index = index_of.get(connection)
    position = None if index is None else plan.pair_index.get((index, model))
    if position is None or index is None:
        return None
    provider = connections[index].provider
    sourced = fleet.inputs.catalogs.models.get((provider, model))
    entry = None if sourced is None else sourced.entry
    tally = by_connection.get(connection)
    if tally is None:
        tally = by_connection[connection] = ConnectionTally()
    ways = [_Way(decision, tally, index, entry, provider)
            for decision in plan.decisions[position]]
    first = ways[0]
    if len(ways) > 1:
        first.steps = plan.steps[position]
        first.later = ways
    return first


def _judged(event: LedgerEvent, judgement: _Judgement, cost: float | None,
            plan: PlanInForce, step: int, failed_by_request: Mapping[int, int]) -> Judged:
    """The record of one listed event (a top leak or an unpriced one)."""
    finding, decision, head, _, source = judgement
    request = event.request_id
    failed = failed_by_request.get(hash(request), 0) if request is not None else 0
    return Judged(
        at=event.at, connection=event.connection, model=event.model, finding=finding,
        cost_usd=cost, rung=decision.rung if decision else None, head=head,
        reason=decision.reason if decision else None,
        detail=_had(decision, head, plan.leaders[step]), failed_attempts=failed,
        request_id=event.request_id, where=event.where, price_source=source)


# --- quota that expired unused (§7.5) ------------------------------------------------------


def expired_unused(fleet: Fleet, start: datetime, end: datetime) -> tuple[ExpiredUnused, ...]:
    """Each (connection, window) whose reset falls in (start, end]: the figure the plan
    used for the window just before that reset (``readings.figure`` on the readings in
    force, R6.4's held windows included: a low window an early regain did not lift expired
    at its held figure; low is at or below the connection's own exit cutoff, its reserve
    when above the ladder's, R16), read from the last reading before the reset that shows
    the window, when that reading shows this very reset (it is the latest of its cycle).
    Windows with nothing left, and unlimited ones, are not listed."""
    found: list[ExpiredUnused] = []
    for connection, history, ladder in zip(fleet.connections, fleet.histories, fleet.ladders,
                                           strict=True):
        cutoff = ladder.exit_cutoff_percent
        resets: dict[tuple[str, tuple[str, ...] | None], set[datetime]] = {}
        for reading in history:
            for window in reading.all_windows():
                if window.reset_at is not None and start < window.reset_at <= end:
                    resets.setdefault((window.name, window.models), set()).add(window.reset_at)
        for (name, models), instants in resets.items():
            for reset in sorted(instants):
                # the readings as the plan in force the microsecond before the reset reads them
                held = in_force(history, reset - timedelta(microseconds=1), cutoff)
                last = _last_showing(held, name, models)
                if last is None:
                    continue
                reading, window = last
                if window.reset_at != reset or window.unlimited or figure(window) <= 0:
                    continue
                found.append(ExpiredUnused(connection=connection.id, window=name, models=models,
                                           reset_at=reset, percent=figure(window),
                                           checked_at=reading.checked_at))
    found.sort(key=lambda e: (e.reset_at, e.connection, e.window))
    return tuple(found)


def _last_showing(history: Sequence[Reading], name: str, models: tuple[str, ...] | None
                  ) -> tuple[Reading, Window] | None:
    for reading in reversed(history):
        for window in reading.all_windows():
            if window.name == name and window.models == models:
                return reading, window
    return None
