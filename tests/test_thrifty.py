"""R11 auto/thrifty (escalate one rung at a time, fail open) and R12 candidates."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import (
    at,
    conn,
    decision,
    fleet,
    plan,
    pool_view,
    reading,
    reason,
    rung_state,
    window,
)


def ok(cid: str, figure: float = 60) -> dict[str, Any]:
    return reading(cid, window("5h", figure, at(hours=3)))


# --- R11 -----------------------------------------------------------------------------------


def test_R11_mixed_candidate_is_split_one_entry_per_rung() -> None:
    """claude/sonnet is served by a plan login, an uncurated API key and an overridden login."""
    connections = [
        conn("key", "claude", "apikey", models=["sonnet"]),
        conn("plan", "claude", "oauth", models=["sonnet"]),
        conn("metered-plan", "claude", "oauth", models=["sonnet"], billing="metered"),
        conn("plan2", "claude", "oauth", models=["sonnet"]),
    ]
    result = plan(fleet(connections, [ok("plan"), ok("plan2")]))
    assert pool_view(result) == [
        ("subscription", "claude/sonnet", ("plan", "plan2")),
        ("premium", "claude/sonnet", ("key", "metered-plan")),
    ]


def test_R11_pool_ordered_by_rung_then_candidate_order() -> None:
    connections = [
        conn("big", "openai", "apikey", models=["gpt-big", "gpt-mini"]),
        conn("free", "openrouter", "apikey", models=["free-model"]),
        conn("local", "ollama", "none", models=["qwen"]),
        conn("codex", "codex", "oauth", models=["gpt-codex"]),
        conn("claude", "claude", "oauth", models=["opus", "sonnet"]),
        conn("codex2", "codex", "oauth", models=["gpt-codex"]),
    ]
    readings = [ok(c) for c in ("free", "local", "codex", "claude", "codex2")]
    result = plan(fleet(connections, readings))
    assert pool_view(result) == [
        ("subscription", "codex/gpt-codex", ("codex", "codex2")),
        ("subscription", "claude/opus", ("claude",)),
        ("subscription", "claude/sonnet", ("claude",)),
        ("keyless", "ollama/qwen", ("local",)),
        ("free", "openrouter/free-model", ("free",)),
        ("cheap", "openai/gpt-mini", ("big",)),
        ("premium", "openai/gpt-big", ("big",)),
    ]
    assert [e.position for e in result.pool] == list(range(1, 8))
    assert [rung_state(result, r.rung) for r in result.rungs] == ["serving"] * 5


@pytest.mark.parametrize(
    ("connection", "readings", "admitted", "unverified", "code"),
    [
        pytest.param(conn("c", models=["sonnet"]), [], True, True, None,
                     id="R11-quota-missing-admitted-unverified"),
        pytest.param(conn("c", models=["sonnet"]), [reading("c", status="unknown")], True,
                     True, None, id="R11-quota-unknown-admitted-unverified"),
        pytest.param(conn("c", models=["sonnet"]),
                     [reading("c", at(hours=-1), window("5h", 60, at(hours=3)))], True, True,
                     None, id="R11-quota-stale-admitted-unverified"),
        pytest.param(conn("c", models=["sonnet"]),
                     [reading("c", at(minutes=-2), window("5h", 60, at(minutes=-1)))], True,
                     True, None,
                     id="R11-reset-since-reading-admitted-unverified"),
        pytest.param(conn("c", models=["sonnet"]), [ok("c")], True, False, None,
                     id="R11-usable-is-verified"),
        pytest.param(conn("c", models=["sonnet"]), [reading("c", status="exhausted")], False,
                     False, "quota-exhausted", id="R11-quota-exhausted-excluded"),
        pytest.param(conn("c", models=["sonnet"]), [ok("c", 1)], False, False,
                     "quota-below-cutoff", id="R11-quota-below-cutoff-excluded"),
        pytest.param(conn("c", "ollama", "none", models=["qwen"]), [], True, True, None,
                     id="R11-keyless-without-reading-unverified"),
        pytest.param(conn("c", "ollama", "none", models=["qwen"]), [ok("c", 0)], False, False,
                     "quota-below-cutoff", id="R11-keyless-is-a-quota-rung"),
        pytest.param(conn("c", "openrouter", "apikey", models=["free-model"]),
                     [ok("c", 0)], False, False, "quota-below-cutoff",
                     id="R11-free-is-a-quota-rung"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"]), [], True, False, None,
                     id="R11-paid-rung-needs-no-reading-and-is-not-unverified"),
        pytest.param(conn("c", "openai", "apikey", models=["gpt-mini"]),
                     [reading("c", status="exhausted")], True, False, None,
                     id="R11-paid-rung-is-not-gated-by-quota"),
        pytest.param(conn("c", models=["sonnet"], active=False),
                     [reading("c", status="exhausted")], False, False, "inactive",
                     id="R11-order-gates-before-quota"),
        pytest.param(conn("c", models=["sonnet"], overage="meters-to-paid"), [ok("c")], True,
                     False, None, id="R11-overage-does-not-matter-to-thrifty"),
        pytest.param(conn("c", "copilot-web", "apikey", models=["gpt-4.1"]), [ok("c")], True,
                     False, None, id="R11-unknown-overage-plan-still-on-subscription-rung"),
    ],
)
def test_R11_admission(connection: dict[str, Any], readings: list[dict[str, Any]],
                       admitted: bool, unverified: bool, code: str | None) -> None:
    result = plan(fleet([connection], readings))
    assert [e.allowed_connection_ids for e in result.pool] == ([("c",)] if admitted else [])
    marked = [e.unverified_connection_ids for e in result.pool]
    assert marked == ([("c",) if unverified else ()] if admitted else [])
    assert reason(result, "c") == code
    assert ("c" in result.unverified_connection_ids) == unverified


@pytest.mark.parametrize(
    ("settings", "spend", "connection", "code"),
    [
        pytest.param({"rung_budget_usd": {"cheap": 0}}, None,
                     conn("c", "openai", "apikey", models=["gpt-mini"],
                          rate_limited_until=at(hours=1)),
                     "cooldown", id="R11-order-gates-before-budget"),
        pytest.param({"rung_budget_usd": {"cheap": 0}}, None,
                     conn("c", "openai", "apikey", models=["gpt-mini"]),
                     "budget-disabled", id="R11-paid-rung-passes-R8-disabled"),
        pytest.param({"rung_budget_usd": {"cheap": 1}},
                     [{"at": at(hours=-1), "rung": "cheap", "cost_usd": 1}],
                     conn("c", "openai", "apikey", models=["gpt-mini"]),
                     "budget-spent", id="R11-paid-rung-passes-R8-spent"),
    ],
)
def test_R11_paid_rungs(settings: dict[str, Any], spend: list[dict[str, Any]] | None,
                        connection: dict[str, Any], code: str) -> None:
    result = plan(fleet([connection], [], settings={"budgets": settings}, spend=spend))
    assert reason(result, "c") == code
    assert result.pool == ()


def test_R11_unverified_marks_only_the_unverified_connections_of_an_entry() -> None:
    connections = [conn("a", models=["sonnet"]), conn("b", models=["sonnet"]),
                   conn("c", models=["sonnet"])]
    result = plan(fleet(connections, [ok("a"), reading("c", status="unknown")]))
    [entry] = result.pool
    assert entry.allowed_connection_ids == ("a", "b", "c")
    assert entry.unverified_connection_ids == ("b", "c")
    assert decision(result, "a", "sonnet").unverified is False


@pytest.mark.parametrize(
    ("readings", "state"),
    [
        pytest.param([ok("a"), ok("b", 0)], "serving", id="R11-rung-serving"),
        pytest.param([ok("a", 0), ok("b", 1)], "exhausted", id="R11-rung-exhausted"),
    ],
)
def test_R11_rung_states(readings: list[dict[str, Any]], state: str) -> None:
    result = plan(fleet([conn("a", models=["sonnet"]), conn("b", models=["sonnet"])],
                        readings))
    assert rung_state(result, "subscription") == state
    assert rung_state(result, "keyless") == "empty"


# --- R12 -----------------------------------------------------------------------------------


def test_R12_allowlists_in_file_order() -> None:
    connections = [conn(cid, models=["sonnet"]) for cid in ("zulu", "alpha", "mike")]
    result = plan(fleet(connections, [ok(c) for c in ("mike", "alpha", "zulu")]))
    assert pool_view(result) == [("subscription", "claude/sonnet", ("zulu", "alpha", "mike"))]


def test_R12_allowlist_is_the_verified_subset_in_file_order() -> None:
    connections = [conn(cid, models=["sonnet"]) for cid in ("zulu", "alpha", "mike", "kilo")]
    readings = [ok("zulu"), ok("alpha", 0), ok("mike"), reading("kilo", status="exhausted")]
    result = plan(fleet(connections, readings))
    assert pool_view(result) == [("subscription", "claude/sonnet", ("zulu", "mike"))]


def test_R12_candidates_in_order_of_first_appearance() -> None:
    connections = [
        conn("one", models=["sonnet"]),
        conn("two", models=["opus", "sonnet"]),
        conn("three", "codex", "oauth", models=["gpt-codex"]),
        conn("four", models=["opus"]),
    ]
    result = plan(fleet(connections, [ok(c) for c in ("one", "two", "three", "four")]))
    assert pool_view(result) == [
        ("subscription", "claude/sonnet", ("one", "two")),
        ("subscription", "claude/opus", ("two", "four")),
        ("subscription", "codex/gpt-codex", ("three",)),
    ]


def test_R12_candidate_is_provider_and_model() -> None:
    """The same model name under two providers is two candidates."""
    models = [{"provider": p, "model": "shared", "input_usd_per_mtok": 0.5,
               "output_usd_per_mtok": 1.0} for p in ("openai", "mystery")]
    result = plan(fleet([conn("a", "openai", "apikey", models=["shared"]),
                         conn("b", "mystery", "apikey", models=["shared"])], [],
                        models=models))
    assert pool_view(result) == [("cheap", "openai/shared", ("a",)),
                                 ("cheap", "mystery/shared", ("b",))]


def test_R12_models_default_to_the_catalog_of_the_provider() -> None:
    result = plan(fleet([conn("c")], [ok("c")]))
    assert [e.model for e in result.pool] == ["sonnet", "opus"]


def test_R12_a_connection_serving_no_model_is_excluded_with_a_reason() -> None:
    result = plan(fleet([conn("empty", models=[]), conn("nowhere", "acme", "apikey")], []))
    assert result.pool == ()
    assert reason(result, "empty") == "no-models"
    assert reason(result, "nowhere") == "no-models"


def test_R12_a_model_listed_twice_is_one_candidate() -> None:
    result = plan(fleet([conn("c", models=["sonnet", "sonnet"])], [ok("c")]))
    assert pool_view(result) == [("subscription", "claude/sonnet", ("c",))]
