"""Invariants of every plan, over generated fleets (R10, R11, R12 and the reason contract)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omniladder.engine.billing import BillingInfo, classify
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.quota import cooldown, verdict
from omniladder.engine.readings import held_to
from omniladder.engine.records import REASON_CODES, Plan
from omniladder.engine.tiers import economic_tier, rung_of
from omniladder.models import QUOTA_RUNGS, RUNGS, TERMINAL_STATUSES, Reading
from tests.builders import NOW, plan
from tests.strategies import input_sets
from tests.test_autoid import VALID


def candidates_of(inputs: LoadedInputs) -> dict[tuple[str, str], list[str]]:
    """R12, computed independently: (provider, model) -> connection ids in file order."""
    out: dict[tuple[str, str], list[str]] = {}
    for connection in inputs.connections:
        models = (connection.models if connection.models is not None
                  else inputs.catalogs.models_of(connection.provider))
        for model in dict.fromkeys(models):
            out.setdefault((connection.provider, model), []).append(connection.id)
    return out


def check_subscription_pool_holds_only_usable_hard_stop_plans(
    inputs: LoadedInputs, result: Plan,
) -> None:
    """R10: every kept connection is subscription + hard-stop, passes R5, and is usable."""
    if result.auto_id.tier != "subscription":
        return
    records = {r.id: r for r in result.connections}
    facts = {f.connection.id: f for f in result.facts}
    ladder = inputs.settings.ladder
    for entry in result.pool:
        assert entry.rung == "subscription"
        assert entry.unverified_connection_ids == ()
        for cid in entry.allowed_connection_ids:
            assert records[cid].billing == "subscription"
            assert records[cid].overage == "hard-stop"
            assert facts[cid].gate_reason is None
            history = inputs.readings.get(cid, ())
            held = held_to(ladder, facts[cid].connection.reserve_percent)  # R16
            assert verdict(history, entry.model, NOW, held).kind == "usable"


def check_allowlists_are_non_empty_ordered_subsets(
    inputs: LoadedInputs, result: Plan,
) -> None:
    """R12: every allowlist is a non-empty subset of the candidate's connections, file order."""
    served = candidates_of(inputs)
    for entry in result.pool:
        allowed = list(entry.allowed_connection_ids)
        members = served[(entry.provider, entry.model)]
        assert allowed
        assert set(allowed) <= set(members)
        assert allowed == [cid for cid in members if cid in allowed]
        assert set(entry.unverified_connection_ids) <= set(allowed)


def check_pool_is_ordered_by_rung_and_stable_within(
    inputs: LoadedInputs, result: Plan,
) -> None:
    """R11: rungs never decrease along the pool; candidate order is kept within a rung."""
    order = list(candidates_of(inputs))
    keys = [(RUNGS.index(e.rung), order.index((e.provider, e.model))) for e in result.pool]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    assert [e.position for e in result.pool] == list(range(1, len(result.pool) + 1))


def check_no_pool_entry_mixes_rungs(
    inputs: LoadedInputs, result: Plan,
) -> None:
    """R11: every connection of an entry lands on that entry's rung for that model."""
    rung_of = {(d.connection_id, d.model): d.rung for d in result.decisions}
    for entry in result.pool:
        for cid in entry.allowed_connection_ids:
            assert rung_of[(cid, entry.model)] == entry.rung


def check_every_connection_left_out_has_a_reason(
    inputs: LoadedInputs, result: Plan,
) -> None:
    """Every non-eligible connection has an exclusion, and every code is a known one."""
    eligible = set(result.eligible_connection_ids)
    excluded = {x.connection_id for x in result.excluded}
    for connection in inputs.connections:
        if connection.id not in eligible:
            assert connection.id in excluded, connection.id
    assert {x.reason for x in result.excluded} <= set(REASON_CODES)
    for d in result.decisions:
        assert (d.reason is None) == d.admitted
        assert d.reason is None or d.reason in REASON_CODES
    admitted = {(d.connection_id, d.provider, d.model) for d in result.decisions if d.admitted}
    pooled = {(cid, e.provider, e.model) for e in result.pool
              for cid in e.allowed_connection_ids}
    assert admitted == pooled


def observed_overage(info: BillingInfo, history: Sequence[Reading], max_age: float) -> str:
    """R2a straight from the SPEC: the latest report at or before now narrows to
    meters-to-paid always, and widens a catalog unknown to hard-stop only while fresh."""
    reports = [r for r in history if r.checked_at <= NOW and r.overage is not None]
    if not reports:
        return info.overage
    latest = max(reports, key=lambda r: r.checked_at)
    if latest.overage == "meters-to-paid":
        return "meters-to-paid"
    from_catalog = info.step in (2, 3) and not (info.override and "overage" in info.override)
    fresh = (NOW - latest.checked_at).total_seconds() <= max_age
    if info.overage == "unknown" and from_catalog and fresh:
        return "hard-stop"
    return info.overage


def expected_pairs(inputs: LoadedInputs, result: Plan
                   ) -> dict[tuple[str, str, str], str | None]:
    """R5, R10, R11 and R13 straight from the SPEC: (connection, provider, model) -> the
    reason the pair is left out (None when kept), the first failing check in SPEC order."""
    ladder = inputs.settings.ladder
    category = result.auto_id.category
    out: dict[tuple[str, str, str], str | None] = {}
    for (provider, model), members in candidates_of(inputs).items():
        entry = inputs.catalogs.models.get((provider, model))
        in_category = category is None or (entry is not None
                                           and category in entry.entry.categories)
        for cid in members:
            connection = next(c for c in inputs.connections if c.id == cid)
            info = classify(connection, inputs.catalogs)
            history = inputs.readings.get(cid, ())
            overage = observed_overage(info, history, ladder.max_reading_age_seconds)
            held = held_to(ladder, connection.reserve_percent)  # R16: its own thresholds
            cool = cooldown(connection, history, NOW, held)
            # SPEC §7.2 v1.4: before state_as_of, active with no status
            seen = connection.state_as_of is None or connection.state_as_of <= NOW
            active = connection.active or not seen
            status = connection.status if seen else None
            gate = ("inactive" if not active
                    else "terminal-status" if status in TERMINAL_STATUSES
                    else "cooldown" if cool is not None and cool.cooling
                    else None)
            quota = verdict(history, model, NOW, held, ladder)
            rung = rung_of(info, economic_tier(provider, model, inputs.catalogs,
                                               inputs.settings.tiers))
            reason: str | None
            if not in_category:
                reason = "not-in-category"
            elif result.auto_id.tier == "subscription":
                reason = ("keyless-not-subscription" if info.billing == "keyless"
                          else "billing-uncurated" if info.billing == "unknown"
                          else "billing-not-subscription" if info.billing != "subscription"
                          else "overage-not-hard-stop" if overage != "hard-stop"
                          else gate if gate is not None
                          else "connection-status-unknown"
                          if status in ("error", "unknown")
                          else quota.reason if quota.kind != "usable"
                          else None)
            elif gate is not None:
                reason = gate
            elif rung in QUOTA_RUNGS:
                reason = quota.reason if quota.kind == "exhausted" else None
            else:
                reason = result.budgets[rung].reason
            out[(cid, provider, model)] = reason
    return out


def check_every_decision_follows_the_spec(inputs: LoadedInputs, result: Plan) -> None:
    """Each pair is kept or left out exactly as R5/R10/R11/R13 say, with the first failing
    check as its reason; kept pairs are in the pool, unverified exactly when a quota rung's
    R6 verdict is unknown."""
    expected = expected_pairs(inputs, result)
    actual = {(d.connection_id, d.provider, d.model): d.reason for d in result.decisions}
    assert actual == expected
    pooled = {(cid, e.provider, e.model): (e.rung, cid in e.unverified_connection_ids)
              for e in result.pool for cid in e.allowed_connection_ids}
    assert set(pooled) == {key for key, reason in expected.items() if reason is None}
    ladder = inputs.settings.ladder
    # SPEC §7.2 v1.4: a status observed after now is none yet
    status = {c.id: c.status if c.state_as_of is None or c.state_as_of <= NOW else None
              for c in inputs.connections}
    for (cid, _provider, model), (rung, unverified) in pooled.items():
        quota = verdict(inputs.readings.get(cid, ()), model, NOW, ladder)
        # R11, and its decision (docs/rules.md#r11) on a connection's own error/unknown status
        assert unverified == ((rung in QUOTA_RUNGS and quota.kind == "unknown")
                              or status[cid] in ("error", "unknown"))


def check_rung_states(inputs: LoadedInputs, result: Plan) -> None:
    """SPEC §4.2: all five rungs in order; serving exactly when the pool uses the rung."""
    assert [r.rung for r in result.rungs] == list(RUNGS)
    for status in result.rungs:
        on_rung = [d for d in result.decisions
                   if d.rung == status.rung and d.reason != "not-in-category"]
        entries = [e for e in result.pool if e.rung == status.rung]
        budget = result.budgets.get(status.rung)
        if result.auto_id.tier == "subscription" and status.rung != "subscription":
            expected = "not-in-id"
        elif budget is not None and budget.state == "disabled":
            expected = "disabled"
        elif budget is not None and budget.state == "spent":
            expected = "budget-spent"
        elif not on_rung:
            expected = "empty"
        else:
            expected = "serving" if entries else "exhausted"
        assert status.state == expected, status
        assert status.candidates == len(entries)


def check_exclusions_match_the_decisions(inputs: LoadedInputs, result: Plan) -> None:
    """An exclusion names a failed pair, or (model null) a reason true of every model."""
    by_connection: dict[str, list[Any]] = {}
    for d in result.decisions:
        by_connection.setdefault(d.connection_id, []).append(d)
    for x in result.excluded:
        mine = by_connection.get(x.connection_id, [])
        if x.model is None:
            if x.reason == "no-models":
                assert mine == []
            else:
                assert mine
                assert all(d.reason == x.reason for d in mine)
        else:
            assert [d.reason for d in mine if d.model == x.model] == [x.reason]


def check_every_no_has_a_remedy_and_every_unverified_a_reason(inputs: LoadedInputs,
                                                              result: Plan) -> None:
    """Every exclusion carries a remedy; every unverified connection of a pool
    entry has exactly one mark, in allowlist order, with the quota verdict's reason (or
    ``connection-status-unknown`` when its own status is error or unknown)."""
    for x in result.excluded:
        assert x.fix, x
        if "[[entries]]" in x.fix or "removing that key" in x.fix:
            assert "grants" in x.fix.lower(), x.fix  # never a silent widening
    decided = {(d.connection_id, d.model): d for d in result.decisions}
    for entry in result.pool:
        assert tuple(m.connection_id for m in entry.unverified) == \
            entry.unverified_connection_ids
        for mark in entry.unverified:
            decision = decided[(mark.connection_id, entry.model)]
            if decision.doubt:
                assert mark.reason == "connection-status-unknown"
                assert mark.detail.startswith(decision.doubt)
                continue
            verdict = decision.verdict
            assert verdict is not None
            assert verdict.kind == "unknown"
            assert mark.reason == verdict.reason


def check_every_decision_carries_its_own_verdict(inputs: LoadedInputs, result: Plan) -> None:
    """R6/R7: whether the rule read it or it was left to be computed when asked (a paid
    pair, a pair a gate or R10's billing refuses), each decision's verdict is the pair's
    own, and its detail is the refusal's or, when admitted, the verdict's."""
    ladder = inputs.settings.ladder
    reserves = {c.id: c.reserve_percent for c in inputs.connections}
    for d in result.decisions:
        held = held_to(ladder, reserves[d.connection_id])  # R16
        own = verdict(inputs.readings.get(d.connection_id, ()), d.model, NOW, held, ladder)
        assert d.verdict == own
        assert d == d._replace(quota=own)  # a deferred verdict compares as the verdict
        if d.admitted:
            assert d.detail == own.detail
        else:
            assert d.detail == d.refusal
            assert d.reason is not None


CHECKS = (
    check_every_decision_carries_its_own_verdict,
    check_every_no_has_a_remedy_and_every_unverified_a_reason,
    check_subscription_pool_holds_only_usable_hard_stop_plans,
    check_allowlists_are_non_empty_ordered_subsets,
    check_pool_is_ordered_by_rung_and_stable_within,
    check_no_pool_entry_mixes_rungs,
    check_every_connection_left_out_has_a_reason,
    check_every_decision_follows_the_spec,
    check_rung_states,
    check_exclusions_match_the_decisions,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(inputs=input_sets(), auto_id=st.sampled_from(VALID))
def test_every_plan_keeps_its_invariants(inputs: LoadedInputs, auto_id: str) -> None:
    """Every invariant, on the drawn id and on the two flat ids of the same fleet."""
    for text in dict.fromkeys((auto_id, "auto/subscription", "auto/thrifty")):
        result = plan(inputs, text)
        for check in CHECKS:
            check(inputs, result)
