"""What a plan says besides its pool: the exclusions with their fixes, each rung's state and
note, the connection records, the clamps, the warnings, the settings echoed and the one-line
summary."""

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from omniladder import timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.budgets import BudgetPosition, Disabled, Spent, Unenforced, Within
from omniladder.engine.fleet import Fleet, SpendNotes
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.records import (
    Clamp,
    ConnectionFacts,
    ConnectionRecord,
    Exclusion,
    PairDecision,
    PlanSettings,
    PoolEntry,
    RungState,
    RungStatus,
    reason_phrase,
)
from omniladder.engine.remedies import RemedyContext, remedy
from omniladder.models import (
    DEFAULT_SEAT_PERIOD,
    RUNGS,
    Connection,
    Rung,
)


def empty_fleet_warning(connections_file: str) -> str:
    """What a plan says about a connections file with no connection in it."""
    return (f"{connections_file} lists no connection (empty, or a truncated export?): the "
            "plan has nothing to route, and `check` fails on it")


def plan_warnings(fleet: Fleet, notes: SpendNotes, budgets: dict[str, BudgetPosition]
              ) -> list[str]:
    warnings = fleet.warnings(notes)
    if not fleet.connections:
        # A zero-byte file, a byte-order mark alone or `{}` all validate to no connection:
        # a truncated export must not look like a fleet that happens to route nothing.
        warnings.insert(0, empty_fleet_warning(
            fleet.inputs.files.get("connections", "the connections file")))
    warnings += _near_misses(fleet)
    for position in budgets.values():
        if isinstance(position, Unenforced):
            warnings.append(f"the {position.rung} budget of {timefmt.usd(position.budget_usd)}"
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


def settings_view(inputs: LoadedInputs, budgets: dict[str, BudgetPosition]) -> PlanSettings:
    settings = inputs.settings
    ladder = settings.ladder
    echoed: PlanSettings = {
        "exit_cutoff_percent": ladder.exit_cutoff_percent,
        "reentry_min_remaining_percent": ladder.reentry_floor,
        "max_reading_age_seconds": ladder.max_reading_age_seconds,
        "rung_budget_usd": {rung: budget for rung, position in budgets.items()
                            if (budget := position.budget_usd) is not None},
        "budget_period": settings.budgets.period,
        "clamp_cooldown_to_reset": ladder.clamp_cooldown_to_reset,
        "cheap_max_input_usd_per_mtok": settings.tiers.cheap_max_input_usd_per_mtok,
    }
    if ladder.within_rung_order != "declared":
        echoed["within_rung_order"] = ladder.within_rung_order
    return echoed


def remedy_context(inputs: LoadedInputs, auto_id: AutoId, now: datetime,
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


def exclusions(facts: Sequence[ConnectionFacts], refused: Sequence[list[PairDecision]],
               ctx: RemedyContext) -> tuple[Exclusion, ...]:
    """The exclusions of the connections of ``facts``; ``refused`` holds, for each of them, its
    refused decisions in decision order (every model of a connection has one decision)."""
    out: list[Exclusion] = []
    for f, failed in zip(facts, refused, strict=True):
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
                # pragma: no mutate start (the no-models remedy reads neither the auto id,
                # the ladder nor the budgets)
                fix=_fix(ctx, f, "no-models", None, None, None)))
            # pragma: no mutate end
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
    if isinstance(position, Disabled):
        return "disabled"
    if isinstance(position, Spent):
        return "budget-spent"
    if not landed:
        return "empty"
    return "serving" if serving else "exhausted"


def landed_by_rung(decisions: Sequence[PairDecision]) -> dict[Rung, list[PairDecision]]:
    """The decisions of each rung, in order, leaving out the pairs outside the id's category
    (they land on no rung of the id)."""
    by_rung: dict[Rung, list[PairDecision]] = {rung: [] for rung in RUNGS}
    for d in decisions:
        if d.reason != "not-in-category":
            by_rung[d.rung].append(d)
    return by_rung


def rung_statuses(auto_id: AutoId, by_rung: dict[Rung, list[PairDecision]],
                  pool: Sequence[PoolEntry],
                  budgets: dict[str, BudgetPosition]) -> tuple[RungStatus, ...]:
    """Each rung's state and note, from its decisions (``landed_by_rung``) and the pool."""
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
            note = position.describe()
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
                    assert d.reason is not None  # a refused decision always has a reason
                    primary[d.connection_id] = reason_phrase(d.reason, d.detail)
            counts = Counter(primary.values())
            note = f"{len(all_ids)} connection{'s' if len(all_ids) != 1 else ''}, none usable: "
            note += ", ".join(f"{n} {phrase}" for phrase, n in counts.most_common())
        if state == "serving" and isinstance(position, Within | Unenforced):
            note += "; " + position.describe()
        statuses.append(RungStatus(rung=rung, state=state, candidates=len(entries),
                                   connections=len(serving_ids), budget_usd=budget,
                                   spent_usd=spent, note=note))
    return tuple(statuses)


def connection_record(facts: ConnectionFacts) -> ConnectionRecord:
    billing = facts.billing
    connection = facts.connection
    return ConnectionRecord(
        id=connection.id, provider=connection.provider, auth_type=connection.auth_type,
        billing=billing.billing, overage=billing.overage, billing_source=billing.source,
        catalog_file=billing.matched.file if billing.matched is not None else None,
        override=dict(billing.override) if billing.override else None,
        overage_source=billing.overage_source, capacity_weight=connection.capacity_weight)


def connection_records(facts: Sequence[ConnectionFacts], seated: bool
                       ) -> tuple[ConnectionRecord, ...]:
    """Each connection's record; with its reserve and seat price (SPEC §9) when ``seated``
    (some connection of the fleet sets one: ``Fleet.seated``)."""
    records = tuple(connection_record(f) for f in facts)
    if not seated:
        return records
    return tuple(with_seat(record, f.connection)
                 for record, f in zip(records, facts, strict=True))


def with_seat(record: ConnectionRecord, connection: Connection) -> ConnectionRecord:
    """The record with the connection's reserve (R16) and seat price; a price without a
    period is a month's (SPEC §9)."""
    period = connection.seat_period
    if period is None and connection.seat_price_usd is not None:
        period = DEFAULT_SEAT_PERIOD
    return record._replace(reserve_percent=connection.reserve_percent,
                           seat_price_usd=connection.seat_price_usd, seat_period=period)


def plan_summary(auto_id: AutoId, facts: Sequence[ConnectionFacts], pool: Sequence[PoolEntry],
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


def clamps_of(facts: Sequence[ConnectionFacts]) -> tuple[Clamp, ...]:
    """The cooldowns R9 clamped to a quota reset, of the connections of ``facts``."""
    return tuple(
        Clamp(f.connection.id, f.cooldown.until, f.cooldown.end, f.cooldown.cooling)
        for f in facts if f.cooldown is not None and f.cooldown.clamped)
