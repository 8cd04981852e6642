"""R8 rung budgets, enforced from a spend ledger over the current UTC calendar period."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.budgets import (
    BudgetPosition,
    BudgetState,
    Disabled,
    NoBudget,
    Spent,
    Unenforced,
    Within,
    period_start,
)
from omniladder.engine.report import rung_state as ladder_state
from omniladder.models import Rung
from tests.builders import at, conn, fleet, plan, reading, reason, rung_state


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(
    ("now", "period", "start"),
    [
        pytest.param("2026-11-29T12:00:00Z", "day", "2026-11-29T00:00:00Z", id="R8-day"),
        pytest.param("2026-11-29T00:00:00Z", "day", "2026-11-29T00:00:00Z",
                     id="R8-day-at-midnight"),
        pytest.param("2026-11-29T12:00:00Z", "week", "2026-11-23T00:00:00Z",
                     id="R8-iso-week-from-monday-on-a-sunday"),
        pytest.param("2026-11-23T00:00:00Z", "week", "2026-11-23T00:00:00Z",
                     id="R8-iso-week-monday-midnight-is-the-start"),
        pytest.param("2026-11-22T23:59:59Z", "week", "2026-11-16T00:00:00Z",
                     id="R8-iso-week-sunday-night-is-the-previous-week"),
        pytest.param("2026-12-02T08:00:00Z", "week", "2026-11-30T00:00:00Z",
                     id="R8-iso-week-across-a-month"),
        pytest.param("2026-11-29T12:00:00Z", "month", "2026-11-01T00:00:00Z", id="R8-month"),
        pytest.param("2026-12-01T01:00:00+02:00", "month", "2026-11-01T00:00:00Z",
                     id="R8-month-in-utc-not-local-time"),
        pytest.param("2026-11-29T23:30:00-05:00", "day", "2026-11-30T00:00:00Z",
                     id="R8-day-in-utc-not-local-time"),
    ],
)
def test_R8_period_start(now: str, period: str, start: str) -> None:
    """``now`` keeps its offset: the period is found in UTC by period_start itself."""
    found = period_start(datetime.fromisoformat(now), period)
    assert found == utc(start)
    assert found.utcoffset() == timedelta(0)


# Three paid connections: cheap (gpt-mini via a provider-wide entry), premium (gpt-big), and a
# keyless backend that budgets must never touch.
FLEET = [
    conn("mini", "openai", "apikey", models=["gpt-mini"]),
    conn("big", "openai", "apikey", models=["gpt-big"]),
    conn("local", "ollama", "none", models=["qwen"]),
    conn("plan", "claude", "oauth", models=["sonnet"]),
]
READINGS = [reading("local", remaining_percent=90), reading("plan", remaining_percent=90)]


def event(cost: float, when: str, **fields: Any) -> dict[str, Any]:
    return {"at": when, "cost_usd": cost, **fields}


def budget_plan(budgets: dict[str, float], spend: list[dict[str, Any]] | None,
                period: str = "month", auto_id: str = "auto/thrifty") -> Any:
    settings = {"budgets": {"period": period, "rung_budget_usd": budgets}}
    return plan(fleet(FLEET, READINGS, settings=settings, spend=spend), auto_id)


CHEAP_EVENT = {"connection": "mini", "model": "gpt-mini"}


@pytest.mark.parametrize(
    ("budgets", "spend", "period", "cheap", "premium"),
    [
        pytest.param({}, None, "month", "serving", "serving", id="R8-no-budget-no-gate"),
        pytest.param({"cheap": 0}, None, "month", "disabled", "serving",
                     id="R8-budget-0-disables-without-a-ledger"),
        pytest.param({"cheap": 0, "premium": -1}, [], "month", "disabled", "disabled",
                     id="R8-budget-below-0-disables"),
        pytest.param({"cheap": 5}, [event(4.99, at(hours=-1), **CHEAP_EVENT)], "month",
                     "serving", "serving", id="R8-below-budget-serves"),
        pytest.param({"cheap": 5}, [event(5, at(hours=-1), **CHEAP_EVENT)], "month",
                     "budget-spent", "serving", id="R8-spent-equal-to-budget-is-spent"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, at(days=-20), **CHEAP_EVENT)], "month",
                     "budget-spent", "serving", id="R8-events-add-up-in-the-period"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, at(days=-30), **CHEAP_EVENT)], "month",
                     "serving", "serving", id="R8-events-before-the-period-ignored"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, at(seconds=1), **CHEAP_EVENT)], "month",
                     "serving", "serving", id="R8-events-after-now-ignored"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, at(), **CHEAP_EVENT)], "month",
                     "budget-spent", "serving", id="R8-event-at-now-counts"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, "2026-11-01T00:00:00Z", **CHEAP_EVENT)], "month",
                     "budget-spent", "serving", id="R8-event-at-period-start-counts"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, "2026-11-22T23:00:00Z", **CHEAP_EVENT)], "week",
                     "serving", "serving", id="R8-week-excludes-last-sunday"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, "2026-11-23T01:00:00Z", **CHEAP_EVENT)], "week",
                     "budget-spent", "serving", id="R8-week-includes-monday"),
        pytest.param({"cheap": 5}, [event(3, at(hours=-1), **CHEAP_EVENT),
                                    event(3, "2026-11-28T23:00:00Z", **CHEAP_EVENT)], "day",
                     "serving", "serving", id="R8-day-excludes-yesterday"),
        pytest.param({"premium": 2}, [event(2, at(hours=-1), rung="premium")], "month",
                     "serving", "budget-spent", id="R8-explicit-rung-event"),
        pytest.param({"premium": 2}, [event(2, at(hours=-1), connection="mini",
                                            model="gpt-big")], "month",
                     "serving", "budget-spent",
                     id="R8-event-counts-toward-the-rung-of-its-pair"),
        pytest.param({"cheap": 2, "premium": 2},
                     [event(9, at(hours=-1), connection="plan", model="sonnet"),
                      event(9, at(hours=-1), connection="local", model="qwen"),
                      event(9, at(hours=-1), rung="subscription")], "month",
                     "serving", "serving", id="R8-spend-on-quota-rungs-counts-nowhere"),
        pytest.param({"cheap": 2}, [event(9, at(hours=-1), connection="gone", model="x")],
                     "month", "serving", "serving",
                     id="R8-event-for-an-unknown-connection-counts-nowhere"),
    ],
)
def test_R8_budget_states(budgets: dict[str, float], spend: list[dict[str, Any]] | None,
                          period: str, cheap: str, premium: str) -> None:
    result = budget_plan(budgets, spend, period)
    assert (rung_state(result, "cheap"), rung_state(result, "premium")) == (cheap, premium)
    # quota rungs are never gated by a budget
    assert rung_state(result, "keyless") == "serving"
    assert rung_state(result, "subscription") == "serving"
    served = {cid for entry in result.pool for cid in entry.allowed_connection_ids}
    assert ("mini" in served) == (cheap == "serving")
    assert ("big" in served) == (premium == "serving")


@pytest.mark.parametrize(
    ("budgets", "spend", "code"),
    [
        pytest.param({"cheap": 0}, None, "budget-disabled", id="R8-disabled-reason"),
        pytest.param({"cheap": 1}, [event(1, at(hours=-1), **CHEAP_EVENT)], "budget-spent",
                     id="R8-spent-reason"),
    ],
)
def test_R8_reason_codes(budgets: dict[str, float], spend: list[dict[str, Any]] | None,
                         code: str) -> None:
    result = budget_plan(budgets, spend)
    assert reason(result, "mini") == code
    assert reason(result, "big") is None


def test_R8_budget_without_a_ledger_gates_nothing_and_warns() -> None:
    result = budget_plan({"cheap": 1, "premium": 1}, None)
    assert rung_state(result, "cheap") == "serving"
    assert rung_state(result, "premium") == "serving"
    unenforced = [w for w in result.warnings if "not enforced" in w]
    assert len(unenforced) == 2, result.warnings
    assert result.budgets["cheap"].spent_usd is None


def test_R8_an_empty_ledger_enforces_without_warning() -> None:
    result = budget_plan({"cheap": 1}, [])
    assert not [w for w in result.warnings if "not enforced" in w]
    assert result.budgets["cheap"].spent_usd == 0


def test_R8_spend_is_reported_per_rung() -> None:
    result = budget_plan({"cheap": 5, "premium": 10},
                         [event(1.25, at(hours=-1), **CHEAP_EVENT),
                          event(2.5, at(hours=-2), rung="premium"),
                          event(0.5, at(hours=-3), connection="big", model="gpt-big")])
    rungs = {r.rung: (r.budget_usd, r.spent_usd) for r in result.rungs}
    assert rungs["cheap"] == (5, 1.25)
    assert rungs["premium"] == (10, 3.0)
    assert rungs["subscription"] == (None, None)


def test_R8_budgets_do_not_touch_auto_subscription() -> None:
    result = budget_plan({"cheap": 0, "premium": 0}, [], auto_id="auto/subscription")
    assert [(e.rung, e.allowed_connection_ids) for e in result.pool] == [
        ("subscription", ("plan",))]
    assert reason(result, "mini") == "billing-not-subscription"


def position_of(rung: str, state: BudgetState) -> BudgetPosition:
    """A position of ``state`` on ``rung``: a budget of 1.0 (0 when disabled), 0.5 spent."""
    since = utc("2026-11-29T00:00:00Z")
    if state == "none":
        return NoBudget(rung=rung, period="day", since=since, spent_usd=0.5)
    if state == "disabled":
        return Disabled(rung=rung, period="day", since=since, budget_usd=0.0, spent_usd=0.5)
    if state == "unenforced":
        return Unenforced(rung=rung, period="day", since=since, budget_usd=1.0)
    kind = Spent if state == "spent" else Within
    return kind(rung=rung, period="day", since=since, budget_usd=1.0, spent_usd=0.5)


def test_each_budget_state_says_itself() -> None:
    """R8: each state holds only its own figures and says itself once (describe): a closed
    rung's words are the exclusion's detail and the rung's note, an open one's end the note."""
    words = {state: position_of("cheap", state).describe()
             for state in ("none", "disabled", "unenforced", "within", "spent")}
    assert words == {
        "none": "no cheap budget set",
        "disabled": "cheap rung disabled (budget $0.00)",
        "unenforced": "budget not enforced (no spend ledger)",
        "within": "$0.50 of $1.00 spent this day",
        "spent": "cheap budget spent: $0.50 of $1.00 this day",
    }
    assert [position_of("cheap", state).gates for state in ("none", "disabled", "unenforced",
                                                             "within", "spent")] == [
        False, True, False, False, True]
    assert position_of("cheap", "within").remaining_usd == 0.5
    assert position_of("cheap", "unenforced").spent_usd is None
    assert position_of("cheap", "none").budget_usd is None
    # a state is its class: two positions of different states never compare equal
    assert position_of("cheap", "within") != Spent(rung="cheap", period="day",
                                                   since=utc("2026-11-29T00:00:00Z"),
                                                   budget_usd=1.0, spent_usd=0.5)


@pytest.mark.parametrize(
    ("auto_id", "rung", "budget", "landed", "serving", "state"),
    [
        ("auto/subscription", "cheap", "disabled", True, True, "not-in-id"),
        ("auto/subscription", "subscription", None, True, True, "serving"),
        ("auto/thrifty", "cheap", "disabled", False, False, "disabled"),
        ("auto/thrifty", "cheap", "spent", False, False, "budget-spent"),
        ("auto/thrifty", "cheap", "spent", True, True, "budget-spent"),
        ("auto/thrifty", "cheap", "within", False, False, "empty"),
        ("auto/thrifty", "cheap", "within", True, True, "serving"),
        ("auto/thrifty", "cheap", "unenforced", True, False, "exhausted"),
        ("auto/thrifty", "free", None, False, False, "empty"),
        ("auto/thrifty", "free", None, True, False, "exhausted"),
    ],
)
def test_rung_state_ladder_order(auto_id: str, rung: Rung, budget: BudgetState | None,
                                 landed: bool, serving: bool, state: str) -> None:
    """R8, R13: the rung-state ladder plan and simulate share, in its order: an id's tier
    leaves the rung out first, then a closed budget (disabled before spent), then whether any
    pair lands on the rung, then whether any pool entry stands on it."""
    position = position_of(rung, budget) if budget is not None else None
    got = ladder_state(parse_auto_id(auto_id), rung, position, landed, serving)
    assert got == state


def _cli_json(tmp_path: Path, command: str, target: str, budget: float,
              costs: list[float]) -> Any:
    """``omniladder COMMAND TARGET --json`` on one metered key and a ledger of cheap spends."""
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "key"\nprovider = "openai"\nauth_type = "apikey"\n'
        'models = ["gpt-5-mini"]\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text('{"readings": []}', encoding="utf-8")
    events = [{"at": at(hours=-1), "connection": "key", "model": "gpt-5-mini", "cost_usd": cost}
              for cost in costs]
    (tmp_path / "spend.json").write_text(json.dumps({"events": events}), encoding="utf-8")
    (tmp_path / "omniladder.toml").write_text(
        '[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
        f'spend = "spend.json"\n[budgets]\nrung_budget_usd = {{ cheap = {budget!r} }}\n',
        encoding="utf-8")
    result = CliRunner().invoke(app, [command, target, "--config",
                                      str(tmp_path / "omniladder.toml"), "--now", at(), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("costs", "budget", "spent", "state"),
    [
        pytest.param([4e-7], 5.0, 4e-7, "serving", id="R8-a-spend-below-a-millionth-is-shown"),
        pytest.param([1e-12, 2e-12], 5.0, 3e-12, "serving", id="R8-tiny-spends-add-up"),
        pytest.param([4e-7], 4e-7, 4e-7, "budget-spent", id="R8-a-tiny-budget-reached"),
        pytest.param([4e-7], 5e-7, 4e-7, "serving", id="R8-a-tiny-budget-not-reached"),
        pytest.param([0.1, 0.7], 0.8, 0.8, "budget-spent",
                     id="R8-cents-add-up-as-written-and-reach-the-budget"),
        pytest.param([0.1, 0.7], 0.81, 0.8, "serving", id="R8-cents-just-below-the-budget"),
        pytest.param([0.1, 0.2], 5.0, 0.3, "serving", id="R8-cents-add-up-without-float-noise"),
    ],
)
def test_R8_plan_json_reports_the_spend_the_ledger_holds(
        tmp_path: Path, costs: list[float], budget: float, spent: float, state: str) -> None:
    """R8 and contract §4.2: ``spent_usd`` is the ledger's sum as the operator adds it by hand,
    with no rounding to a fixed number of places, and that sum is what meets the budget."""
    document = _cli_json(tmp_path, "plan", "auto/thrifty", budget, costs)
    cheap = next(r for r in document["rungs"] if r["rung"] == "cheap")
    assert (cheap["spent_usd"], cheap["state"]) == (spent, state)


def test_R8_why_json_remaining_keeps_a_tiny_spend(tmp_path: Path) -> None:
    """R8: ``why`` subtracts the spend from the budget without rounding it away."""
    document = _cli_json(tmp_path, "why", "key", 1.0, [4e-7])
    budget = document["models"][0]["budget"]
    assert (budget["spent_usd"], budget["remaining_usd"]) == (4e-7, 0.9999996)
