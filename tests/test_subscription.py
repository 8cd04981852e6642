"""R10 auto/subscription: fail closed, with the first failing check as the reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import at, conn, fleet, plan, pool_view, reading, reason, rung_state, window

GOOD = reading("c", window("5h", 60, at(hours=3)))


@pytest.mark.parametrize(
    ("connection", "readings", "expected"),
    [
        pytest.param(conn("c", models=["sonnet"]), [GOOD], None,
                     id="R10-subscription-hard-stop-usable-is-kept"),
        # billing class first
        pytest.param(conn("c", "ollama", "none", models=["qwen"]), [GOOD],
                     "keyless-not-subscription", id="R10-billing-keyless-does-not-count"),
        pytest.param(conn("c", "mystery", "apikey", models=["m1"]), [GOOD],
                     "billing-uncurated", id="R10-billing-uncurated"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"]), [GOOD],
                     "billing-not-subscription", id="R10-billing-metered"),
        pytest.param(conn("c", models=["sonnet"], billing="metered"), [GOOD],
                     "billing-not-subscription", id="R10-billing-metered-by-override"),
        pytest.param(conn("c", "ollama", "none", models=["qwen"], active=False), [],
                     "keyless-not-subscription", id="R10-order-billing-before-gates"),
        pytest.param(conn("c", "mystery", "apikey", models=["m1"], status="banned"),
                     [reading("c", status="exhausted")], "billing-uncurated",
                     id="R10-order-billing-before-gates-and-quota"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"],
                          overage="unknown"), [], "billing-not-subscription",
                     id="R10-order-billing-before-overage"),
        # then overage
        pytest.param(conn("c", "copilot-web", "apikey", models=["gpt-4.1"]), [GOOD],
                     "overage-not-hard-stop", id="R10-overage-unknown"),
        pytest.param(conn("c", "devin-desktop", "oauth", models=["devin"]), [GOOD],
                     "overage-not-hard-stop", id="R10-overage-meters-to-paid"),
        pytest.param(conn("c", models=["sonnet"], overage="meters-to-paid"), [GOOD],
                     "overage-not-hard-stop", id="R10-overage-narrowed-by-override"),
        pytest.param(conn("c", "devin-desktop", "oauth", models=["devin"], active=False), [],
                     "overage-not-hard-stop", id="R10-order-overage-before-gates"),
        # then R5 gates
        pytest.param(conn("c", models=["sonnet"], active=False), [], "inactive",
                     id="R10-order-gates-before-quota-inactive"),
        pytest.param(conn("c", models=["sonnet"], status="expired"),
                     [reading("c", status="unknown")], "terminal-status",
                     id="R10-order-gates-before-quota-terminal"),
        pytest.param(conn("c", models=["sonnet"], rate_limited_until=at(hours=1)),
                     [reading("c", window("5h", 50, at(hours=3)))], "cooldown",
                     id="R10-cooldown"),
        # then R6 quota: only usable is kept
        pytest.param(conn("c", models=["sonnet"]), [], "quota-missing",
                     id="R10-quota-missing-excludes"),
        pytest.param(conn("c", models=["sonnet"]), [reading("c", status="unknown")],
                     "quota-unknown", id="R10-quota-unknown-excludes"),
        pytest.param(conn("c", models=["sonnet"]),
                     [reading("c", at(minutes=-10), window("5h", 60, at(hours=3)))],
                     "quota-stale", id="R10-quota-stale-excludes"),
        pytest.param(conn("c", models=["sonnet"]),
                     [reading("c", at(minutes=-2), window("5h", 60, at(minutes=-1)))],
                     "quota-reset-since-reading", id="R10-quota-reset-outdated-excludes"),
        pytest.param(conn("c", models=["sonnet"]), [reading("c", status="exhausted")],
                     "quota-exhausted", id="R10-quota-exhausted-excludes"),
        pytest.param(conn("c", models=["sonnet"]),
                     [reading("c", window("5h", 1, at(hours=3)))],
                     "quota-below-cutoff", id="R10-quota-below-cutoff-excludes"),
    ],
)
def test_R10_check_order(connection: dict[str, Any], readings: list[dict[str, Any]],
                         expected: str | None) -> None:
    result = plan(fleet([connection], readings), "auto/subscription")
    assert reason(result, "c") == expected
    assert bool(result.pool) == (expected is None)


def test_R10_allowlist_is_the_kept_subset_and_empty_candidates_are_dropped() -> None:
    connections = [
        conn("a", models=["sonnet", "opus"]),
        conn("b", models=["sonnet"]),
        conn("meter", "openai", "apikey", models=["gpt-mini"]),
        conn("seat", "copilot-web", "apikey", models=["gpt-4.1"]),
    ]
    readings = [
        reading("a", window("5h", 60, at(hours=3)),
                window("weekly-opus", 0, at(days=2), models=["opus"])),
        reading("b", status="unknown"),
        reading("seat", window("5h", 60, at(hours=3))),
    ]
    result = plan(fleet(connections, readings), "auto/subscription")
    assert pool_view(result) == [("subscription", "claude/sonnet", ("a",))]
    assert all(entry.allowed_connection_ids for entry in result.pool)
    assert not result.pool[0].unverified_connection_ids


def test_R10_empty_pool_is_an_answer() -> None:
    result = plan(fleet([conn("c", models=["sonnet"]), conn("k", "openai", "apikey")], []),
                  "auto/subscription")
    assert result.pool == ()
    assert rung_state(result, "subscription") == "exhausted"
    assert [rung_state(result, r) for r in ("keyless", "free", "cheap", "premium")] == [
        "not-in-id"] * 4
    assert "pool empty" in result.summary
    assert {x.connection_id for x in result.excluded} == {"c", "k"}


def test_R10_subscription_rung_empty_without_plan_connections() -> None:
    result = plan(fleet([conn("k", "openai", "apikey")], []), "auto/subscription")
    assert rung_state(result, "subscription") == "empty"
    assert reason(result, "k") == "billing-not-subscription"
