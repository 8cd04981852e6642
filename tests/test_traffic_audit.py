"""`audit traffic`: each served event held against the plan in force at its instant (SPEC §7).

Fleets come from the test builders; each ledger is written as JSONL to a temporary file and
read by the same ``Ledger`` the command uses. Every finding of §7.3 has a case that fails
when its rule is removed, the plan in force (§7.2) is held to ``make_plan`` at each event's
instant, and money (§7.4) and expired quota (§7.5) have their own cases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omniladder.analyses.traffic import (
    PlanInForce,
    TrafficAudit,
    audit_traffic,
    walk_instants,
)
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.fleet import Fleet
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.engine.records import REASON_CODES
from omniladder.findings import FINDINGS, billing_reason, leaking
from omniladder.inputs.ledger.read import Ledger
from omniladder.models import PAID_RUNGS, QUOTA_RUNGS, RUNGS
from tests.builders import at, conn, fleet, instant, reading, window


def ledger(tmp_path: Path, events: Sequence[dict[str, Any]], name: str = "t.jsonl") -> Ledger:
    path = tmp_path / name
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return Ledger(path)


def event(cid: str, model: str, when: str | None = None, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"at": when or at(seconds=-5), "connection": cid, "model": model,
                            "requested": "auto/thrifty"}
    data.update(fields)
    return data


def run(inputs: LoadedInputs, tmp_path: Path, events: Sequence[dict[str, Any]],
        auto_id: str = "auto/thrifty", **options: Any) -> TrafficAudit:
    return audit_traffic(inputs, parse_auto_id(auto_id), ledger(tmp_path, events), **options)


FRESH = reading("claude-max", window("5h", 80, at(hours=3)))
"""A healthy subscription reading ten seconds before NOW."""


def mixed() -> LoadedInputs:
    """A subscription, a keyless backend, a metered key and a subscription whose window is
    spent, each with a fresh reading."""
    return fleet(
        [conn("claude-max", models=["sonnet"]),
         conn("claude-spent", models=["sonnet"]),
         conn("local", "ollama", "none", models=["qwen"]),
         conn("openai-key", "openai", "apikey", models=["gpt-mini", "gpt-big"])],
        [FRESH, reading("claude-spent", window("5h", 0, at(hours=3))),
         reading("local", window("local", unlimited=True)),
         reading("openai-key", window("credits", 90))])


# --- the six findings (§7.3), each one failing without its rule ---------------------------


def test_the_findings_are_pinned_in_order() -> None:
    assert tuple(FINDINGS) == ("unknown-connection", "off-plan-billed", "served-excluded",
                               "early-paid", "above-head", "on-plan")
    assert leaking() == ("off-plan-billed", "early-paid")


def test_billing_reasons_are_exactly_the_billing_codes() -> None:
    """§7.3 rule 2 names billing-*, keyless-not-subscription, overage-not-hard-stop and
    budget-*; every other reason code is rule 3's."""
    billing = {code for code in REASON_CODES if billing_reason(code)}
    assert billing == {"billing-not-subscription", "billing-uncurated",
                       "keyless-not-subscription", "overage-not-hard-stop",
                       "budget-disabled", "budget-spent"}


def test_unknown_connection_and_unknown_model(tmp_path: Path) -> None:
    result = run(mixed(), tmp_path, [event("gone", "sonnet", cost_usd=2.0),
                                     event("claude-max", "opus", cost_usd=1.0)])
    assert result.counts["unknown-connection"] == 2
    assert result.unattributed == {"gone": 1, "claude-max": 1}
    assert result.leak_usd == 0


def test_off_plan_billed_under_a_subscription_id(tmp_path: Path) -> None:
    """auto/subscription keeps metered pairs out for billing (R10): serving one billed
    where the plan would not have, and its cost is leak."""
    result = run(mixed(), tmp_path, [event("openai-key", "gpt-mini", cost_usd=0.75,
                                           requested="auto/subscription")],
                 auto_id="auto/subscription")
    assert result.counts["off-plan-billed"] == 1
    assert result.leak_usd == pytest.approx(0.75)
    assert result.top_leaks[0].reason == "billing-not-subscription"
    assert not result.passed


def test_served_excluded_is_not_leak(tmp_path: Path) -> None:
    """A spent subscription (R6.4) that served anyway: dispatched what the plan held out;
    it stops at its limit (hard-stop), so nothing was billed."""
    result = run(mixed(), tmp_path, [event("claude-spent", "sonnet", cost_usd=3.0)])
    assert result.counts["served-excluded"] == 1
    assert result.leak_usd == 0
    assert result.cost_usd == 0
    assert result.passed


def test_early_paid_while_the_subscription_had_quota(tmp_path: Path) -> None:
    result = run(mixed(), tmp_path, [event("openai-key", "gpt-mini", cost_usd=1.5)])
    assert result.counts["early-paid"] == 1
    assert result.leak_usd == pytest.approx(1.5)
    assert result.top_leaks[0].head == "subscription"
    assert "paid on cheap while the subscription rung had quota" in result.verdict


def test_above_head_is_not_paid(tmp_path: Path) -> None:
    result = run(mixed(), tmp_path, [event("local", "qwen", cost_usd=0.2)])
    assert result.counts["above-head"] == 1
    assert result.leak_usd == 0


def test_on_plan_and_the_gateways_list_price_is_not_billing(tmp_path: Path) -> None:
    """§7.4: a subscription pair within quota costs 0 whatever the gateway recorded."""
    result = run(mixed(), tmp_path, [event("claude-max", "sonnet", cost_usd=4.2)])
    assert result.counts["on-plan"] == 1
    assert result.cost_usd == 0
    assert result.passed


def test_within_quota_even_an_account_that_meters_past_its_plan_costs_nothing(
        tmp_path: Path) -> None:
    """§7.4: within quota, a subscription with extra usage on (meters-to-paid) draws on
    its plan; the gateway's figure is replaced by 0. Past quota it would be priced."""
    inputs = fleet([conn("claude-extra", models=["sonnet"], overage="meters-to-paid")],
                   [reading("claude-extra", window("5h", 80, at(hours=3)))])
    result = run(inputs, tmp_path, [event("claude-extra", "sonnet", cost_usd=4.2)])
    assert result.counts["on-plan"] == 1
    assert result.cost_usd == 0


def test_paid_with_nothing_above_is_on_plan(tmp_path: Path) -> None:
    """With every quota rung spent, the metered key heads the pool: on plan, not leak."""
    inputs = fleet([conn("claude-spent", models=["sonnet"]),
                    conn("openai-key", "openai", "apikey", models=["gpt-mini"])],
                   [reading("claude-spent", window("5h", 0, at(hours=3)))])
    result = run(inputs, tmp_path, [event("openai-key", "gpt-mini", cost_usd=1.0)])
    assert result.counts["on-plan"] == 1
    assert result.leak_usd == 0


# --- the plan in force (§7.2) --------------------------------------------------------------


def test_the_plan_changes_at_a_readings_arrival(tmp_path: Path) -> None:
    """A reading that spends the subscription at NOW-30m: a paid event before it is
    early-paid, one after it is on plan."""
    inputs = fleet([conn("claude-max", models=["sonnet"]),
                    conn("openai-key", "openai", "apikey", models=["gpt-mini"])],
                   [reading("claude-max", at(minutes=-60), window("5h", 50, at(hours=3))),
                    reading("claude-max", at(minutes=-30), window("5h", 0, at(hours=3)))],
                   settings={"ladder": {"max_reading_age_seconds": 7200}})
    result = run(inputs, tmp_path, [
        event("openai-key", "gpt-mini", at(minutes=-45), cost_usd=1.0),
        event("openai-key", "gpt-mini", at(minutes=-30), cost_usd=2.0),
        event("openai-key", "gpt-mini", at(minutes=-10), cost_usd=4.0)])
    assert result.counts["early-paid"] == 1
    assert result.counts["on-plan"] == 2
    assert result.leak_usd == pytest.approx(1.0)


def test_a_reading_turns_stale_one_microsecond_after_its_max_age(tmp_path: Path) -> None:
    """R6.5: exactly max age is fresh, one microsecond later is stale. Under
    auto/subscription a stale reading is out (quota-stale)."""
    inputs = fleet([conn("claude-max", models=["sonnet"])],
                   [reading("claude-max", at(minutes=-10), window("5h", 50, at(hours=3)))])
    edge = instant(minutes=-10) + timedelta(seconds=180)
    events = [event("claude-max", "sonnet", edge.isoformat(), requested="auto/subscription"),
              event("claude-max", "sonnet", (edge + timedelta(microseconds=1)).isoformat(),
                    requested="auto/subscription")]
    result = run(inputs, tmp_path, events, auto_id="auto/subscription",
                 start=instant(minutes=-20))
    assert result.counts["on-plan"] == 1
    assert result.counts["served-excluded"] == 1


def test_the_walk_steps_only_at_change_instants() -> None:
    """§7.2: one plan per interval between change instants, never per event or per grid
    point: a two-hour span with two readings has a handful of steps."""
    inputs = fleet([conn("claude-max", models=["sonnet"])],
                   [reading("claude-max", at(minutes=-60), window("5h", 50, at(hours=3))),
                    reading("claude-max", at(minutes=-30), window("5h", 40, at(hours=3)))])
    steps = walk_instants(Fleet(inputs), instant(hours=-2), instant())
    # the start, two arrivals, two instants turning stale
    assert len(steps) == 5
    assert steps[0] == instant(hours=-2)
    assert instant(minutes=-60) in steps
    assert instant(minutes=-30) in steps


def oracle(inputs: LoadedInputs, auto_id: str, item: dict[str, Any]) -> str:
    """The finding from the whole plan at the event's instant (``plan --now AT``)."""
    made = make_plan(inputs, parse_auto_id(auto_id),
                     datetime.fromisoformat(item["at"].replace("Z", "+00:00")), "flag")
    found = [d for d in made.decisions
             if d.connection_id == item["connection"] and d.model == item["model"]]
    if not found:
        return "unknown-connection"
    decision = found[0]
    head = made.pool[0].rung if made.pool else None
    if not decision.admitted:
        return "off-plan-billed" if billing_reason(decision.reason) else "served-excluded"
    if decision.rung in PAID_RUNGS and head in QUOTA_RUNGS:
        return "early-paid"
    if head is not None and RUNGS.index(decision.rung) > RUNGS.index(head):
        return "above-head"
    return "on-plan"


def changing_plan_fleet() -> LoadedInputs:
    """A plan that changes over the span: arrivals, a reset, staleness, a cooldown's end
    and a premium budget that a spend event fills."""
    return fleet(
        [conn("claude-max", models=["sonnet", "opus"]),
         conn("codex", "codex", models=["gpt-codex"], rate_limited_until=at(minutes=-50)),
         conn("local", "ollama", "none", models=["qwen"]),
         conn("openai-key", "openai", "apikey", models=["gpt-mini", "gpt-big"])],
        [reading("claude-max", at(minutes=-90), window("5h", 40, at(minutes=-70)),
                 window("weekly-opus", 1, at(hours=5), models=["opus"])),
         reading("claude-max", at(minutes=-40), window("5h", 1, at(minutes=-20))),
         reading("codex", at(minutes=-85), window("5h", 60, at(hours=2))),
         reading("local", at(minutes=-60), window("local", unlimited=True))],
        settings={"ladder": {"max_reading_age_seconds": 1800},
                  "budgets": {"rung_budget_usd": {"premium": 1.0}}},
        spend=[{"at": at(minutes=-35), "connection": "openai-key", "model": "gpt-big",
                "cost_usd": 1.5}])


@pytest.mark.parametrize("auto_id", ["auto/thrifty", "auto/subscription", "auto/coding:thrifty"])
def test_every_event_is_judged_as_the_plan_at_its_instant_judges_it(tmp_path: Path,
                                                                     auto_id: str) -> None:
    """The stepped plan in force equals ``make_plan`` at each event's instant, across
    arrivals, resets, staleness, a cooldown's end and a budget that fills."""
    inputs = changing_plan_fleet()
    pairs = [("claude-max", "sonnet"), ("claude-max", "opus"), ("codex", "gpt-codex"),
             ("local", "qwen"), ("openai-key", "gpt-mini"), ("openai-key", "gpt-big"),
             ("stranger", "sonnet")]
    events = [event(cid, model, at(minutes=-100 + 3 * step), requested=auto_id, cost_usd=0.1)
              for step in range(34) for cid, model in [pairs[step % len(pairs)]]]
    result = run(inputs, tmp_path, events, auto_id=auto_id)
    expected = dict.fromkeys(FINDINGS, 0)
    for item in events:
        expected[oracle(inputs, auto_id, item)] += 1
    assert result.counts == expected
    assert sum(1 for n in expected.values() if n) >= 3  # the case spans several findings


def test_the_walk_keeps_a_plan_per_change_not_per_event(tmp_path: Path) -> None:
    inputs = mixed()
    plan = PlanInForce(inputs, parse_auto_id("auto/thrifty"), instant(hours=-1), instant())
    assert len(plan.heads) == len(plan.instants) < 10


# --- requests, failures --------------------------------------------------------------------


def test_which_events_are_audited(tmp_path: Path) -> None:
    events = [event("openai-key", "gpt-mini", requested="auto/subscription", cost_usd=1.0),
              event("openai-key", "gpt-mini", requested=None, cost_usd=2.0),
              event("openai-key", "gpt-mini", requested="omniladder-thrifty", cost_usd=4.0),
              event("openai-key", "gpt-mini", requested="my-alias", cost_usd=8.0)]
    for item in events:
        if item["requested"] is None:
            del item["requested"]
    result = run(mixed(), tmp_path, events)
    # a name no importer mapped (a gateway's own group) is another id (SPEC §7.1 v1.4)
    assert result.not_audited == {"other-request": 2, "no-request": 1, "outside-span": 0}
    assert result.leak_usd == pytest.approx(4.0)  # the id's export name
    everything = run(mixed(), tmp_path, events, all_requests=True)
    assert everything.leak_usd == pytest.approx(6.0)


def test_failed_attempts_are_counted_and_attached(tmp_path: Path) -> None:
    events = [event("claude-spent", "sonnet", status="failed", request_id="r1"),
              event("claude-max", "sonnet", status="failed", request_id="r1"),
              event("openai-key", "gpt-mini", request_id="r1", cost_usd=1.0)]
    result = run(mixed(), tmp_path, events)
    assert result.failed == 2
    assert result.by_connection["claude-spent"].failed == 1
    assert result.audited == 1
    assert result.top_leaks[0].failed_attempts == 2


def test_the_span_defaults_to_the_ledger_and_can_be_narrowed(tmp_path: Path) -> None:
    events = [event("openai-key", "gpt-mini", at(minutes=-50), cost_usd=1.0),
              event("openai-key", "gpt-mini", at(minutes=-5), cost_usd=2.0)]
    result = run(mixed(), tmp_path, events)
    assert (result.start, result.end) == (instant(minutes=-50), instant(minutes=-5))
    narrowed = run(mixed(), tmp_path, events, start=instant(minutes=-10))
    assert narrowed.not_audited["outside-span"] == 1
    assert narrowed.audited == 1


# --- money (§7.4) --------------------------------------------------------------------------


def test_tokens_are_priced_at_the_catalogs_prices(tmp_path: Path) -> None:
    """gpt-mini: $0.25 in, $2 out per million; cache tokens at the input price."""
    result = run(mixed(), tmp_path, [event("openai-key", "gpt-mini", tokens_in=1_000_000,
                                           tokens_out=500_000, tokens_cache_read=1_000_000)])
    assert result.leak_usd == pytest.approx(0.25 + 1.0 + 0.25)


def test_an_unpriceable_leak_event_is_counted_never_summed_as_zero(tmp_path: Path) -> None:
    inputs = mixed()
    events = [event("openai-key", "gpt-mini", tokens_in=10),  # no output tokens
              event("openai-key", "gpt-big")]
    result = run(inputs, tmp_path, events, max_leak_usd=100.0)
    assert result.unpriced == 2
    assert result.leak_unpriced == 2
    assert [j.where for j in result.unpriced_events] == ["line 1", "line 2"]
    assert result.leak_usd == 0
    assert not result.passed  # its size is unknown: the allowance cannot be shown to hold
    assert "2 leak events could not be priced" in result.verdict


def test_a_model_outside_the_catalog_cannot_be_priced(tmp_path: Path) -> None:
    inputs = fleet([conn("claude-max", models=["sonnet"]),
                    conn("openai-key", "openai", "apikey", models=["gpt-new"])], [FRESH])
    result = run(inputs, tmp_path, [event("openai-key", "gpt-new", tokens_in=5,
                                          tokens_out=5)])
    assert result.leak_unpriced == 1


def _database() -> str:
    from importlib.metadata import version

    pytest.importorskip("genai_prices")  # the optional extra omniladder[prices]
    return f"genai-prices {version('genai-prices')}"


def test_a_model_the_catalog_lacks_is_priced_by_the_price_database(tmp_path: Path) -> None:
    """gpt-4o is not in the model catalog; genai-prices' bundled data prices it at $2.50
    an input MTok, $10 an output MTok and $1.25 a cache-read MTok (genai-prices 0.2.5,
    genai_prices/data.py, provider openai, model gpt-4o). The ledger's tokens_in leaves the
    cached tokens out; genai-prices counts them among its input tokens."""
    source = _database()
    inputs = fleet([conn("claude-max", models=["sonnet"]),
                    conn("openai-key", "openai", "apikey", models=["gpt-4o"])], [FRESH])
    result = run(inputs, tmp_path, [
        event("openai-key", "gpt-4o", tokens_in=1_000_000, tokens_out=100_000,
              request_id="a"),
        event("openai-key", "gpt-4o", tokens_in=0, tokens_out=0,
              tokens_cache_read=1_000_000, request_id="b"),
        event("openai-key", "gpt-4o", cost_usd=0.5, request_id="c")])
    assert result.counts["early-paid"] == 3
    assert result.unpriced == 0
    assert result.leak_usd == pytest.approx(2.5 + 1.0 + 1.25 + 0.5)
    assert [(j.request_id, j.cost_usd, j.price_source) for j in result.top_leaks] == [
        ("a", pytest.approx(3.5), source), ("b", pytest.approx(1.25), source),
        ("c", 0.5, "recorded")]
    assert result.price_database == source
    assert not any("omniladder[prices]" in note for note in result.notes)


def test_without_the_price_database_the_event_stays_unpriced_with_a_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without genai-prices installed, a model the catalog lacks stays unpriced (counted,
    listed, never summed as 0) and a note says what to install."""
    from omniladder.inputs import prices

    monkeypatch.setattr(prices, "_LOADED", [None])
    inputs = fleet([conn("claude-max", models=["sonnet"]),
                    conn("openai-key", "openai", "apikey", models=["gpt-4o"])], [FRESH])
    result = run(inputs, tmp_path, [event("openai-key", "gpt-4o", tokens_in=10,
                                          tokens_out=10)])
    assert (result.unpriced, result.leak_unpriced, result.leak_usd) == (1, 1, 0)
    assert result.unpriced_events[0].price_source is None
    assert result.price_database is None
    assert any(note.startswith("1 event of models the model catalog lacks could not be "
                               "priced: install omniladder[prices]") for note in result.notes)


def test_the_catalog_is_asked_before_the_price_database(tmp_path: Path) -> None:
    """gpt-mini is in the catalog: its price is the catalog's, whatever a database says."""
    result = run(mixed(), tmp_path, [event("openai-key", "gpt-mini", tokens_in=1_000_000,
                                           tokens_out=0)])
    [listed] = result.top_leaks
    assert listed.cost_usd == pytest.approx(0.25)
    assert listed.price_source == "catalog"


def test_past_quota_a_meters_to_paid_subscription_is_priced(tmp_path: Path) -> None:
    """devin-desktop keeps billing past its plan (meters-to-paid): served past quota it is
    priced; a hard-stop one past quota costs nothing."""
    inputs = fleet([conn("devin", "devin-desktop", models=["devin"]),
                    conn("claude-spent", models=["sonnet"])],
                   [reading("devin", window("acu", 0, at(hours=3))),
                    reading("claude-spent", window("5h", 0, at(hours=3)))])
    result = run(inputs, tmp_path, [
        event("devin", "devin", tokens_in=1_000_000, tokens_out=0),
        event("claude-spent", "sonnet", tokens_in=1_000_000, tokens_out=0)])
    assert result.counts["served-excluded"] == 2
    assert result.by_connection["devin"].cost_usd == pytest.approx(2.0)
    assert result.by_connection["claude-spent"].cost_usd == 0
    assert result.unpriced == 0


def test_the_allowance(tmp_path: Path) -> None:
    events = [event("openai-key", "gpt-mini", cost_usd=1.5)]
    assert run(mixed(), tmp_path, events, max_leak_usd=1.5).passed
    assert not run(mixed(), tmp_path, events, max_leak_usd=1.49).passed


def test_top_leaks_are_the_costliest(tmp_path: Path) -> None:
    events = [event("openai-key", "gpt-mini", at(seconds=-20 + i), cost_usd=float(i))
              for i in range(1, 15)]
    result = run(mixed(), tmp_path, events)
    assert [j.cost_usd for j in result.top_leaks] == [float(i) for i in range(14, 4, -1)]


# --- quota that expired unused (§7.5) ------------------------------------------------------


def test_a_window_that_reset_with_quota_left(tmp_path: Path) -> None:
    """The last reading before the reset shows 38% with that very reset: 38% expired."""
    inputs = fleet([conn("claude-max", models=["sonnet"])],
                   [reading("claude-max", at(hours=-3), window("weekly", 60, at(hours=-1))),
                    reading("claude-max", at(hours=-2), window("weekly", 38, at(hours=-1))),
                    reading("claude-max", at(minutes=-30), window("weekly", 100, at(days=7)))])
    result = run(inputs, tmp_path, [event("claude-max", "sonnet", at(hours=-4)),
                                    event("claude-max", "sonnet", at(seconds=-1))])
    assert [(e.connection, e.window, e.reset_at, e.percent) for e in result.expired_unused] \
        == [("claude-max", "weekly", instant(hours=-1), 38)]
    assert "38% of claude-max's weekly window expired unused" in result.verdict


def test_a_window_held_at_a_reserve_expired_at_its_held_figure(tmp_path: Path) -> None:
    """R16 with R6.4: the weekly window fell to 15%, under the 20% reserve, then read 40%
    before the same reset. The plan held it at 15% until that reset, so 15% expired unused,
    not 40%; without the reserve (the ladder's 2% cutoff) nothing held it: 40%."""
    readings = [reading("claude-max", at(hours=-3), window("weekly", 15, at(hours=-1))),
                reading("claude-max", at(hours=-2), window("weekly", 40, at(hours=-1))),
                reading("claude-max", at(minutes=-30), window("weekly", 100, at(days=7)))]
    events = [event("claude-max", "sonnet", at(hours=-4)),
              event("claude-max", "sonnet", at(seconds=-1))]
    for reserve, expired in ((20, 15), (None, 40)):
        seated = conn("claude-max", models=["sonnet"])
        if reserve is not None:
            seated["reserve_percent"] = reserve
        result = run(fleet([seated], readings), tmp_path, events)
        assert [(e.window, e.reset_at, e.percent) for e in result.expired_unused] == [
            ("weekly", instant(hours=-1), expired)]


def test_expired_quota_needs_the_latest_reading_of_its_cycle(tmp_path: Path) -> None:
    """A later reading before the reset that shows another reset (the window moved): the
    figure of the old cycle is not the latest, so nothing is claimed; nor is a spent one, a
    reset outside the span, or an unlimited window."""
    inputs = fleet([conn("claude-max", models=["sonnet"])],
                   [reading("claude-max", at(hours=-3), window("weekly", 60, at(hours=-1)),
                            window("5h", 0, at(hours=-1)), window("m", unlimited=True)),
                    reading("claude-max", at(hours=-2), window("weekly", 50, at(hours=1))),
                    reading("claude-max", at(minutes=-30), window("daily", 70, at(hours=9)))])
    result = run(inputs, tmp_path, [event("claude-max", "sonnet", at(hours=-4)),
                                    event("claude-max", "sonnet", at(seconds=-1))])
    assert result.expired_unused == ()


def test_an_empty_ledger_answers(tmp_path: Path) -> None:
    result = run(mixed(), tmp_path, [])
    assert result.audited == 0
    assert result.passed
    assert result.start is None




def test_the_calendars_last_budget_period_has_no_next(tmp_path: Path) -> None:
    """A ledger in December 9999 with a positive budget: the walk's period starts stop at
    the calendar's end instead of failing."""
    inputs = fleet([conn("openai-key", "openai", "apikey", models=["gpt-mini"])], [],
                   settings={"budgets": {"rung_budget_usd": {"cheap": 5.0}}})
    result = run(inputs, tmp_path, [
        event("openai-key", "gpt-mini", "9999-12-01T00:00:00Z", cost_usd=1.0),
        event("openai-key", "gpt-mini", "9999-12-31T23:59:59Z", cost_usd=1.0)])
    assert result.counts["on-plan"] == 2


@pytest.mark.parametrize(("provider", "model"), [
    ("openai", "gpt-4o"), ("claude", "claude-sonnet-4-5"), ("gemini", "gemini-2.5-pro"),
    ("deepseek", "deepseek-chat")])
def test_the_price_database_prices_as_genai_prices_calculates(provider: str,
                                                              model: str) -> None:
    """A model with one price at all times and no tier is priced from its four per-token
    rates, one without (gemini-2.5-pro's prompts past 200k tokens cost more) by genai-prices
    for each event: both equal genai_prices.calc_price on the same tokens."""
    _database()
    import genai_prices

    from omniladder.inputs.prices import PROVIDERS, price_database

    database = price_database()
    assert database is not None
    when = datetime(2026, 11, 29, 12, tzinfo=UTC)
    for tokens_in, tokens_out, read, write in [(1_000, 200, 0, 0), (250_000, 3_000, 40_000, 0),
                                                (0, 0, 5_000, 7_000), (17, 1, 3, 2)]:
        expected = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=tokens_in + read + write, output_tokens=tokens_out,
                               cache_read_tokens=read, cache_write_tokens=write),
            model, provider_id=PROVIDERS.get(provider, provider),
            genai_request_timestamp=when).total_price
        found = database.price(provider, model, when, tokens_in, tokens_out, read, write)
        assert found == pytest.approx(float(expected), rel=1e-12), (tokens_in, read, write)



_EDGES = ["2026-03-12T23:59:59.999999Z", "2026-03-13T00:00:00Z", "2026-03-13T01:00:00+02:00",
          "2026-08-16T23:59:59.999999Z", "2026-08-17T00:29:59.999999Z",
          "2026-08-17T00:30:00Z", "2026-08-17T00:59:59.999999Z", "2026-08-17T01:00:00Z",
          "2026-08-17T03:59:59.999999Z", "2026-08-17T04:00:00Z", "2026-08-17T05:30:00+05:30",
          "2026-08-17T16:29:59.999999Z", "2026-08-17T16:30:00Z", "2026-08-17T22:00:00-03:00",
          "2026-09-10T06:00:00Z", "2026-09-09T22:00:00-08:00", "2026-11-29T12:00:00Z",
          "2026-08-17T00:30:00Z"]
"""Instants at and beside the start dates and daily times of the prices below, some
written with an offset that crosses the UTC date, some asked twice."""


@pytest.mark.parametrize(("provider", "model"), [
    ("claude", "claude-sonnet-4-6"), ("deepseek", "deepseek-chat"),
    ("deepseek", "deepseek-v4-flash"), ("deepseek", "deepseek-flash")])
def test_a_price_with_conditions_is_the_one_in_force_at_each_instant(provider: str,
                                                                     model: str) -> None:
    """Models whose price changes on a date (claude-sonnet-4-6 from 2026-03-13), at times of
    day (deepseek-chat from 00:30 to 16:30 UTC) or both (deepseek-v4-flash), in the bundled
    data of the installed genai-prices: asked once per UTC date and part of the day between
    those times, each instant gets genai_prices.calc_price's figure."""
    _database()
    import genai_prices

    from omniladder.inputs.prices import PROVIDERS, price_database

    database = price_database()
    assert database is not None
    figures = set()
    for text in _EDGES:
        when = datetime.fromisoformat(text)
        expected = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=300_000, output_tokens=2_000),
            model, provider_id=PROVIDERS.get(provider, provider),
            genai_request_timestamp=when).total_price
        priced = database.price(provider, model, when, 300_000, 2_000, 0, 0)
        assert priced == pytest.approx(float(expected), rel=1e-12), text
        figures.add(priced)
    assert len(figures) > 1  # the instants meet more than one price
