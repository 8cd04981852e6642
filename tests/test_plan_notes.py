"""The planner's words as an operator reads them: warnings (R8 ledger, R12 catalog), rung
notes (§4.2 ``rungs[].note``), the no-models exclusion, the R8 budget details and the
unknown-connection error of ``why``. Asserted on the plan object, not on a rendering."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.plan import unknown_connection
from omniladder.errors import UsageError
from tests.builders import at, conn, exclusions, fleet, plan, reading, window

FRESH = window("5h", 50, at(hours=2))


def _note(result: Any, rung: str) -> tuple[str, str]:
    (status,) = [r for r in result.rungs if r.rung == rung]
    return status.state, status.note


# --- unknown connection ids ----------------------------------------------------------------


@pytest.mark.parametrize(("wanted", "known", "message"), [
    pytest.param("claud-1", ["claude-1", "claude-2", "openai"],
                 "unknown connection id 'claud-1'; did you mean claude-1, claude-2?",
                 id="close-ids-in-order-of-likeness"),
    pytest.param("conn", ["conn1", "conn2", "conn3", "conn4"],
                 "unknown connection id 'conn'; did you mean conn4, conn3, conn2?",
                 id="at-most-three-close-ids"),
    pytest.param("abcd", ["abxy"], "unknown connection id 'abcd'; did you mean abxy?",
                 id="half-alike-is-close-enough"),
    pytest.param("abcd", ["axyz"], "unknown connection id 'abcd'; known ids: axyz",
                 id="a-quarter-alike-is-not"),
    pytest.param("zzz", ["alpha", "beta"], "unknown connection id 'zzz'; known ids: alpha, beta",
                 id="nothing-close-lists-every-id"),
    pytest.param("zzz", [], "unknown connection id 'zzz'; known ids: (none)",
                 id="an-empty-fleet"),
])
def test_an_unknown_connection_id(wanted: str, known: list[str], message: str) -> None:
    error = unknown_connection(wanted, known)
    assert isinstance(error, UsageError)
    assert (error.message, error.field) == (message, "CONNECTION_ID")
    assert str(error) == f"CONNECTION_ID: {message}"


# --- warnings ------------------------------------------------------------------------------


def test_R8_spend_events_naming_an_unknown_connection_warn_once_per_connection() -> None:
    inputs = fleet([conn("c", "openai", "apikey", models=["gpt-mini"])], [],
                   spend=[{"at": at(hours=-3), "cost_usd": 1.0, "connection": "ghost",
                           "model": "gpt-mini"},
                          {"at": at(hours=-1), "cost_usd": 1.0, "connection": "ghost",
                           "model": "gpt-mini"},
                          {"at": at(hours=-2), "cost_usd": 1.0, "connection": "ghost",
                           "model": "gpt-mini"},
                          {"at": at(hours=-5), "cost_usd": 2.0, "connection": "lone",
                           "model": "gpt-mini"}])
    result = plan(inputs)
    assert result.warnings == (
        "3 spend events from 2026-11-29T09:00:00Z to 2026-11-29T11:00:00Z name connection "
        "'ghost', which is not in the connections file; they count toward no rung",
        "spend event at 2026-11-29T07:00:00Z names connection 'lone', which is not in the "
        "connections file; it counts toward no rung",
    )


def test_R12_a_metered_model_missing_from_the_catalog_warns_once() -> None:
    inputs = fleet([conn("a", "openai", "apikey", models=["gpt-new"]),
                    conn("b", "openai", "apikey", models=["gpt-new"])],
                   spend=[{"at": at(hours=-1), "cost_usd": 1.0, "connection": "a",
                           "model": "gpt-new"}])
    result = plan(inputs)
    assert result.warnings == (
        "model 'gpt-new' of provider 'openai' is not in the model catalog; its metered "
        "connections are treated as premium",)
    assert [(e.rung, e.allowed_connection_ids) for e in result.pool] == [
        ("premium", ("a", "b"))]
    assert result.budgets["premium"].spent_usd == 1.0


def test_R12_each_metered_model_missing_from_the_catalog_warns_once_in_candidate_order() -> None:
    """A keyless connection serving the same missing models warns about none of them (it is
    not metered); the API key's two missing models warn once each, in candidate order."""
    inputs = fleet([conn("local", "ollama", "none", models=["gpt-new"]),
                    conn("key", "openai", "apikey", models=["gpt-new", "gpt-next"]),
                    conn("key2", "openai", "apikey", models=["gpt-next", "gpt-new"])])
    assert plan(inputs).warnings == tuple(
        f"model {model!r} of provider 'openai' is not in the model catalog; its metered "
        "connections are treated as premium" for model in ("gpt-new", "gpt-next"))


@pytest.mark.parametrize(("budget", "warning"), [
    (5, "the cheap budget of $5.00 is not enforced: no spend ledger was given"),
    (0.5, "the cheap budget of $0.50 is not enforced: no spend ledger was given"),
])
def test_R8_a_budget_without_a_ledger_warns_and_notes_its_rung(budget: float,
                                                               warning: str) -> None:
    inputs = fleet([conn("c", "openai", "apikey", models=["gpt-mini"])],
                   settings={"budgets": {"rung_budget_usd": {"cheap": budget}}})
    result = plan(inputs)
    assert result.warnings == (warning,)
    assert _note(result, "cheap") == (
        "serving", "1 of 1 connection usable; budget not enforced (no spend ledger)")


# --- rung notes ----------------------------------------------------------------------------


def test_R8_a_rung_within_its_budget_notes_what_is_spent_even_nothing() -> None:
    settings = {"budgets": {"rung_budget_usd": {"cheap": 5, "premium": 20}}}
    inputs = fleet([conn("c", "openai", "apikey", models=["gpt-mini", "gpt-big"])],
                   settings=settings, spend=[{"at": at(hours=-1), "cost_usd": 1.5,
                                              "rung": "cheap"}])
    result = plan(inputs)
    assert _note(result, "cheap") == ("serving",
                                      "1 of 1 connection usable; $1.50 of $5.00 spent this month")
    assert _note(result, "premium") == ("serving",
                                        "1 of 1 connection usable; $0.00 of $20.00 spent this "
                                        "month")
    assert result.warnings == ()


def test_a_rung_nobody_lands_on_is_empty() -> None:
    result = plan(fleet([conn("c", "openai", "apikey", models=["gpt-mini"])]))
    assert _note(result, "premium") == ("empty", "no connection lands on this rung")
    assert _note(result, "free") == ("empty", "no connection lands on this rung")


def test_an_exhausted_rung_counts_each_connection_once_by_its_first_reason() -> None:
    inputs = fleet([conn("dev", "devin-desktop", "oauth", models=["devin"]),
                    conn("cur", "cursor", "oauth", models=["sonnet"]),
                    conn("old", "claude", "oauth", models=["sonnet", "opus"]),
                    conn("cl2", "claude", "oauth", models=["sonnet"])],
                   [reading("dev", FRESH), reading("cur", FRESH),
                    reading("old", at(hours=-1), window("5h", 50)),
                    reading("cl2", at(hours=-2), window("5h", 50))])
    result = plan(inputs, "auto/subscription")
    assert _note(result, "subscription") == (
        "exhausted", "4 connections, none usable: 2 reading stale, 1 overage meters to paid, "
        "1 overage unknown")


def test_an_exhausted_rung_counts_a_connection_by_the_reason_of_its_first_model() -> None:
    inputs = fleet([conn("d", models=["sonnet", "opus"])],
                   [reading("d", at(minutes=-1), window("5h", 1, at(hours=2), models=["sonnet"]),
                            window("weekly-opus", 50, at(seconds=-10), models=["opus"]))])
    result = plan(inputs, "auto/subscription")
    assert [(x.model, x.reason) for x in result.excluded] == [
        ("sonnet", "quota-below-cutoff"), ("opus", "quota-reset-since-reading")]
    assert _note(result, "subscription") == (
        "exhausted", "1 connection, none usable: 1 quota exhausted")


def test_an_exhausted_rung_of_one_connection_is_singular() -> None:
    inputs = fleet([conn("dev", "devin-desktop", "oauth", models=["devin"])],
                   [reading("dev", FRESH)])
    result = plan(inputs, "auto/subscription")
    assert _note(result, "subscription") == (
        "exhausted", "1 connection, none usable: 1 overage meters to paid")


# --- the R8 budget details -----------------------------------------------------------------


@pytest.mark.parametrize(("budget", "detail"), [
    (0, "cheap rung disabled (budget $0.00)"),
    (-1, "cheap rung disabled (budget -$1.00)"),
])
def test_R8_a_disabled_rung_detail(budget: float, detail: str) -> None:
    inputs = fleet([conn("c", "openai", "apikey", models=["gpt-mini"])],
                   settings={"budgets": {"rung_budget_usd": {"cheap": budget}}}, spend=[])
    result = plan(inputs)
    assert [(x.reason, x.detail) for x in exclusions(result, "c")] == [
        ("budget-disabled", detail)]
    assert _note(result, "cheap") == ("disabled", detail)


def test_R8_a_spent_rung_detail() -> None:
    inputs = fleet([conn("c", "openai", "apikey", models=["gpt-mini"])],
                   settings={"budgets": {"rung_budget_usd": {"cheap": 2}, "period": "day"}},
                   spend=[{"at": at(hours=-1), "cost_usd": 2.25, "rung": "cheap"}])
    result = plan(inputs)
    detail = "cheap budget spent: $2.25 of $2.00 this day"
    assert [(x.reason, x.detail) for x in exclusions(result, "c")] == [("budget-spent", detail)]
    assert _note(result, "cheap") == ("budget-spent", detail)


# --- the no-models exclusion, and what an ungated connection carries -----------------------


def test_a_connection_with_no_models_is_excluded_naming_its_provider() -> None:
    result = plan(fleet([conn("c", "nomodels", "apikey")]))
    assert [(x.connection_id, x.provider, x.model, x.rung, x.reason, x.detail)
            for x in result.excluded] == [
        ("c", "nomodels", None, None, "no-models",
         "serves no model: no models listed and none in the model catalog for provider "
         "'nomodels'")]


def test_an_empty_models_list_is_named_as_such_not_blamed_on_the_catalog() -> None:
    """R5 (no-models), SPEC §2.1: ``models = []`` on a connection whose provider the model
    catalog does list serves nothing because the list is empty; the detail and the remedy
    must say so, not send the operator to a model-catalog overlay that changes nothing."""
    result = plan(fleet([conn("c", models=[])]))
    (exclusion,) = result.excluded
    assert exclusion.reason == "no-models"
    assert exclusion.detail == "serves no model: its models list is empty"
    assert exclusion.fix is not None
    assert 'models = ["…"]' in exclusion.fix
    assert "--models-catalog" not in exclusion.fix


def test_an_ungated_connection_has_an_empty_gate_detail_and_verified_seats() -> None:
    """``why --format json`` shows the gate's detail and each seat's unverified flag."""
    result = plan(fleet([conn("c", "openai", "apikey", models=["gpt-big"])]))
    (facts,) = result.facts
    assert (facts.gate_reason, facts.gate_detail) == (None, "")
    (made,) = result.decisions
    assert made.admitted is True
    assert made.unverified is False
