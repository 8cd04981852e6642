"""The planner: candidates (R12), gates (R5), the two tiers (R10, R11) and the plan object.

``make_plan`` is the one place a routing decision is made. Every view (table, JSON, why,
check, diff, simulate) reads the immutable ``Plan`` it returns; ``connection_plan`` is its
answer about one connection, for ``why``. The records are in ``records``, one pair's
decision in ``decide``, and what a plan says besides its pool in ``report``.
"""

import difflib
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from omniladder.engine.autoid import AutoId, NowSource
from omniladder.engine.budgets import BudgetPosition, budget_positions
from omniladder.engine.decide import Moment, decide, facts_at, unverified_mark
from omniladder.engine.fleet import Fleet, SpendNotes, fleet_for
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.pool import (
    QUOTA_RUNG_INDEXES,
    RUNG_INDEX,
    Entry,
    Seating,
    Urgency,
    expiring_first,
    urgency,
    urgency_reason,
)
from omniladder.engine.pool import position as seat_position
from omniladder.engine.quota import Verdict
from omniladder.engine.records import (
    OrderPlace,
    PairDecision,
    Plan,
    PoolEntry,
    UnverifiedMark,
)
from omniladder.engine.report import (
    clamps_of,
    connection_records,
    exclusions,
    landed_by_rung,
    plan_summary,
    plan_warnings,
    remedy_context,
    rung_statuses,
    settings_view,
)
from omniladder.errors import UsageError
from omniladder.models import (
    QUOTA_RUNGS,
    RUNGS,
    Rung,
    SpendEvent,
)


def _budgets(fleet: Fleet, now: datetime, notes: SpendNotes) -> dict[str, BudgetPosition]:
    """R8's budget positions at now, the fleet attributing each event without a rung."""
    inputs = fleet.inputs
    return budget_positions(inputs.settings.budgets, inputs.spend, now,
                            partial(fleet.rung_of_event, notes=notes))



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
    kept = {connection_id: inputs.readings.get(connection_id, ())}  # pragma: no mutate (unread)
    return inputs._replace(
        connections=tuple(c for c in inputs.connections if c.id == connection_id),
        readings=kept, spend=spend)



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
        members = zip(fleet.members[position], fleet.rungs[position], strict=True)
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
                    seat[1][index] = unverified_mark(decision)
            else:
                refused[index].append(decision)
        for rung, (admitted, marks) in seated.items():
            seating.fill(RUNG_INDEX[rung], position, admitted, marks)

    # R11 and R12: the pool as the seating orders it; R15 may reorder its quota rungs.
    keys = fleet.keys
    seated_pool = seating.pool()
    if fleet.ladder.within_rung_order == "declared":
        pool = [PoolEntry(position=entry.position, rung=entry.rung,
                          provider=keys[entry.candidate][0], model=keys[entry.candidate][1],
                          allowed_connection_ids=tuple(map(ids.__getitem__, entry.members)),
                          unverified_connection_ids=tuple(mark.connection_id
                                                          for mark in entry.marks),
                          unverified=entry.marks)
                for entry in seated_pool]
    else:
        pool = _expiring_first_pool(fleet, seated_pool, decisions, now)

    excluded = exclusions(all_facts, refused,
                           remedy_context(inputs, auto_id, now, budgets))
    rungs = rung_statuses(auto_id, landed, pool, budgets)
    records = connection_records(all_facts, fleet.seated)
    clamps = clamps_of(all_facts)
    warnings = plan_warnings(fleet, notes, budgets)
    echoed = settings_view(inputs, budgets)
    plan_pool = tuple(pool)
    summary = plan_summary(auto_id, all_facts, plan_pool, excluded)
    return Plan(auto_id=auto_id, now=now, now_source=now_source, settings=echoed,
                rungs=rungs, pool=plan_pool, excluded=excluded, connections=records,
                clamps=clamps, warnings=tuple(warnings), summary=summary,
                decisions=tuple(decisions), facts=all_facts, budgets=budgets,
                files=dict(inputs.files))



def pair_urgencies(fleet: Fleet, decisions: Sequence[PairDecision],
                   now: datetime) -> list[dict[int, Urgency]]:
    """R15's urgency of every admitted pair on a quota rung: per candidate (its place in
    ``fleet.keys``), by connection index. ``decisions`` are ``make_plan``'s, one per member
    of each candidate (``fleet.members``), candidates in order.

    A reading whose windows all apply to every model gives each model of its connection the
    same urgency: it is computed once per reading (a reading belongs to one connection, so
    to one weight)."""
    found: list[dict[int, Urgency]] = []
    by_reading: dict[int, Urgency | None] = {}  # None: a reading with model-scoped windows
    unknown: dict[float, Urgency] = {}
    connections, keys = fleet.connections, fleet.keys
    quota_rungs = QUOTA_RUNGS
    start = 0
    for position, members in enumerate(fleet.members):
        model = keys[position][1]
        rated: dict[int, Urgency] = {}
        found.append(rated)
        end = start + len(members)
        for index, made in zip(members, decisions[start:end], strict=True):
            if not made.admitted or made.rung not in quota_rungs:
                continue
            verdict = made.quota
            if verdict is not None and not isinstance(verdict, Verdict):
                verdict = verdict.get()
            if verdict is None or verdict.kind != "usable" or verdict.reading is None:
                weight = connections[index].weight
                kept = unknown.get(weight)
                if kept is None:
                    kept = unknown[weight] = urgency(None, model, weight, now)
                rated[index] = kept
                continue
            reading = verdict.reading
            key = id(reading)
            if key in by_reading:
                kept = by_reading[key]
                if kept is not None:
                    rated[index] = kept
                    continue
            rated[index] = kept = urgency(reading, model, connections[index].weight, now)
            if key not in by_reading:
                scoped = False
                for window in reading.all_windows():
                    if window.models is not None:
                        scoped = True
                        break
                by_reading[key] = None if scoped else kept
        start = end
    assert start == len(decisions), "one decision per member of each candidate"
    return found


def _expiring_first_pool(fleet: Fleet, seated: Sequence[Entry[UnverifiedMark]],
                         decisions: Sequence[PairDecision], now: datetime) -> list[PoolEntry]:
    """R15 ``expiring-first``: the seated pool reordered by urgency, each allowed
    connection with its place's reason."""
    ids = [connection.id for connection in fleet.connections]
    keys = fleet.keys
    # Each admitted quota pair's place, per candidate by connection index. A connection's
    # models share one urgency (``pair_urgencies``): its place is made once, for the first
    # of them. Equal urgencies word alike (``urgency_reason`` reads nothing else but now;
    # a figure is never -0.0 and a weight is positive), and connections of a fleet share
    # many (the same window, reset and figure): each is worded once.
    places: list[dict[int, OrderPlace]] = []
    made: dict[int, tuple[Urgency, OrderPlace]] = {}  # pragma: no mutate (a memo)
    reasons: dict[Urgency, str] = {}  # pragma: no mutate (a memo: any start is refilled)
    urgencies = pair_urgencies(fleet, decisions, now)
    for rated in urgencies:
        here: dict[int, OrderPlace] = {}
        places.append(here)
        for member, found in rated.items():
            kept = made.get(member)  # pragma: no mutate (a memo read)
            if kept is not None and kept[0] is found:  # pragma: no mutate (a memo read)
                here[member] = kept[1]
                continue
            reason = reasons.get(found)  # pragma: no mutate (a memo read)
            if reason is None:
                # pragma: no mutate start (a memo write: the same wording either way)
                reason = reasons[found] = urgency_reason(found, now)
                # pragma: no mutate end
            place = here[member] = OrderPlace(ids[member], found.rate, reason, found.reset_at)
            made[member] = (found, place)  # pragma: no mutate (a memo write)

    def rates(entry: Entry[UnverifiedMark]) -> list[float]:
        return [found.rate for found in map(urgencies[entry.candidate].__getitem__,
                                            entry.members)]

    pool: list[PoolEntry] = []
    for entry in expiring_first(seated, rates):
        provider, model = keys[entry.candidate]
        members = entry.members
        if RUNG_INDEX[entry.rung] in QUOTA_RUNG_INDEXES:
            order = tuple(map(places[entry.candidate].__getitem__, members))
        else:
            order = ()  # a paid rung keeps R12's order: nothing to say per place
        pool.append(PoolEntry(position=entry.position, rung=entry.rung, provider=provider,
                              model=model, allowed_connection_ids=tuple(map(ids.__getitem__,
                                                                            members)),
                              unverified_connection_ids=tuple(mark.connection_id
                                                              for mark in entry.marks),
                              unverified=entry.marks, order=order))
    return pool


def _placed_as_in(whole: Plan, pool: list[PoolEntry]) -> list[PoolEntry]:
    """R15 for ``why``: a connection's entries placed as the whole fleet's plan places
    them, each with the whole entry's order (a place depends on the other connections'
    urgencies on the rung)."""
    entries = {(entry.rung, entry.provider, entry.model): entry for entry in whole.pool}
    placed: list[PoolEntry] = []
    for entry in pool:
        full = entries[(entry.rung, entry.provider, entry.model)]
        placed.append(entry._replace(position=full.position, order=full.order))
    return placed


def unknown_connection(connection_id: str, known: Sequence[str]) -> UsageError:
    """The error for a connection id the fleet does not have, with the closest known ids."""
    # pragma: no mutate start (n=3 is get_close_matches' default)
    close = difflib.get_close_matches(connection_id, known, n=3, cutoff=0.5)
    # pragma: no mutate end
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
    known = {target: (facts, fleet.verdicts(target, now))}  # pragma: no mutate (a memo)
    decided: dict[tuple[int, int], PairDecision] = {}

    def decision(index: int, position: int, rung: Rung) -> PairDecision:
        found = decided.get((index, position))
        if found is None:
            seen = known.get(index)  # pragma: no mutate (a memo: a miss decides again)
            if seen is None:
                seen = known[index] = (  # pragma: no mutate (a memo: a miss decides again)
                    facts_at(fleet, index, now), fleet.verdicts(index, now))
            provider, model = keys[position]
            found = decide(seen[0], provider, model, fleet.tiers[position], rung, seen[1],
                           in_category[position], moment)
            decided[(index, position)] = found
        return found

    entries: dict[tuple[int, Rung], bool] = {}

    def entry_exists(rung: Rung, position: int) -> bool:
        found = entries.get((position, rung))
        if found is None:
            members = zip(fleet.members[position], fleet.rungs[position], strict=True)
            found = in_category[position] and any(
                decision(m, position, on).admitted for m, on in members if on == rung)
            entries[(position, rung)] = found
        return found

    mine = fleet.pairs_of(target)
    decisions = tuple(decision(target, pair.candidate, pair.rung) for pair in mine)
    pool: list[PoolEntry] = []
    for pair, made in zip(mine, decisions, strict=True):
        if not made.admitted:
            continue
        mark = unverified_mark(made) if made.unverified else None
        pool.append(PoolEntry(
            position=seat_position(RUNG_INDEX[made.rung], pair.candidate, len(keys),
                                   entry_exists),
            rung=made.rung, provider=keys[pair.candidate][0],
            model=pair.model, allowed_connection_ids=(connection_id,),
            unverified_connection_ids=(connection_id,) if mark is not None else (),
            unverified=(mark,) if mark is not None else ()))
    if fleet.ladder.within_rung_order != "declared" and pool:
        pool = _placed_as_in(make_plan(inputs, auto_id, now, now_source, fleet), pool)
    # positions are distinct and come first in an entry: a plain sort gives the same order
    pool.sort(key=lambda entry: entry.position)  # pragma: no mutate (distinct positions first)
    plan_pool = tuple(pool)
    excluded = exclusions((facts,), ([d for d in decisions if not d.admitted],),
                           remedy_context(inputs, auto_id, now, budgets))
    clamps = clamps_of((facts,))
    return Plan(auto_id=auto_id, now=now, now_source=now_source,
                settings=settings_view(inputs, budgets),
                rungs=rung_statuses(auto_id, landed_by_rung(decisions), plan_pool, budgets),
                pool=plan_pool,
                excluded=excluded, connections=connection_records((facts,), fleet.seated),
                clamps=clamps,
                warnings=tuple(plan_warnings(fleet, notes, budgets)),
                summary=plan_summary(auto_id, (facts,), plan_pool, excluded),
                decisions=decisions, facts=(facts,), budgets=budgets,
                files=dict(inputs.files))

