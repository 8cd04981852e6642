"""One pair decided: a connection's facts at an instant (R2a, R5, R9) and ``decide``, R10
or R11 on one (candidate, connection) pair given the plan's ``Moment``."""

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from omniladder import timefmt
from omniladder.engine.autoid import AutoId
from omniladder.engine.billing import BillingInfo, observe
from omniladder.engine.budgets import BudgetPosition
from omniladder.engine.fleet import Fleet
from omniladder.engine.quota import (
    DeferredVerdict,
    HistoryVerdicts,
    Verdict,
    cooldown,
    readings_until,
)
from omniladder.engine.records import (
    DOUBTFUL_STATUSES,
    ConnectionFacts,
    PairDecision,
    UnverifiedMark,
)
from omniladder.engine.tiers import TierInfo
from omniladder.models import (
    QUOTA_RUNGS,
    TERMINAL_STATUSES,
    Connection,
    LadderSettings,
    Reading,
    Rung,
)


def facts_at(fleet: Fleet, index: int, now: datetime) -> ConnectionFacts:
    """The facts of the fleet's connection at ``index`` at now (``connection_facts``)."""
    return connection_facts(fleet.connections[index], fleet.histories[index],
                            fleet.classified[index], fleet.models[index], now,
                            fleet.ladders[index])



def connection_facts(connection: Connection, history: Sequence[Reading],
                     classified: BillingInfo, models: tuple[str, ...], now: datetime,
                     ladder: LadderSettings) -> ConnectionFacts:
    """A connection's facts at now (R2a observed overage, R5 gates, R9 cooldown), from its
    R1/R2 classification, which does not depend on now; ``ladder`` holds the connection's
    thresholds (``readings.held_to``), which R9's clamp reads."""
    billing = classified
    if history:
        billing = observe(billing, readings_until(history, now), now,
                          ladder.max_reading_age_seconds)
    cool = cooldown(connection, history, now, ladder)
    reason: str | None = None
    detail = ""
    # Before state_as_of (SPEC §7.2 v1.4) nothing of active and status was observed yet: the
    # connection is taken as active with no status; the cooldown answers for itself.
    observed = connection.state_as_of is None or now >= connection.state_as_of
    if observed and not connection.active:
        reason, detail = "inactive", "switched off (active = false)"
    elif (observed and connection.status is not None
          and connection.status in TERMINAL_STATUSES):
        reason, detail = "terminal-status", f"status {connection.status}"
    elif cool is not None and cool.cooling:
        reason = "cooldown"
        detail = f"rate limited until {timefmt.short(cool.end, now)}"
        if cool.clamped:
            detail += (f" (clamped from {timefmt.short(cool.until, now)} "
                       "to its own quota reset)")
    return ConnectionFacts(connection=connection, billing=billing, models=models,
                           gate_reason=reason, gate_detail=detail, cooldown=cool,
                           doubt=status_doubt(connection) if observed else "")



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
    where = " (catalog)" if billing.matched is not None else ""  # pragma: no mutate (never None)
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
    detail = ""  # pragma: no mutate (never read)
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
            if quota.kind != "usable":  # pragma: no mutate (usable: no reason)
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
            detail = position.describe()
        else:
            unverified = bool(doubt)
    ok = reason is None
    # The refusal an admitted pair keeps is never read; a verdict handed over deferred asks
    # the same history, which remembers it.
    kept = quota if quota is not None else verdicts.deferred(model)  # pragma: no mutate (memo)
    return PairDecision(cid, provider, model, rung, tier, ok, unverified, reason,
                        "" if ok else detail,  # pragma: no mutate (never read when ok)
                        kept, doubt if ok else "")


def unverified_mark(decision: PairDecision) -> UnverifiedMark:
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
                          verdict.reason or "quota-unknown",  # pragma: no mutate (always a reason)
                          verdict.detail)

