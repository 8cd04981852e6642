"""Boundaries and precedences a mutation run found unpinned, each with both of its sides.

Every test names the SPEC rule it holds to; each one fails if the comparison, the condition
or the ordering it pins is changed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from omniladder.analyses.check import Expectation, judge
from omniladder.analyses.diff import diff_plans
from omniladder.analyses.why import explain
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.budgets import period_start
from omniladder.engine.quota import verdict, window_views
from omniladder.errors import UsageError
from omniladder.inputs.plan_document import parse_saved_plan
from omniladder.inputs.validation import validate
from tests.builders import (
    NOW,
    at,
    conn,
    decision,
    exclusions,
    fleet,
    history,
    ladder,
    plan,
    reading,
    rung_state,
    window,
)

FRESH = {"exit_cutoff_percent": 2, "reentry_min_remaining_percent": 5,
         "max_reading_age_seconds": 180}


def _settings() -> dict[str, Any]:
    return {"ladder": dict(FRESH)}


# --- R6: a window is current only while its reset_at is after now -------------------------


@pytest.mark.parametrize(("reset", "mark"), [
    pytest.param(at(), "outdated", id="R6-reset-exactly-now-is-outdated"),
    pytest.param(at(seconds=1), "current", id="R6-reset-one-second-later-is-current"),
])
def test_R6_why_marks_a_window_current_only_while_its_reset_is_after_now(
        reset: str, mark: str) -> None:
    inputs = fleet([conn("c", models=["sonnet"])],
                   [reading("c", window("5h", 50, reset), window("weekly", 80, at(days=2)))],
                   settings=_settings())
    trace = explain(inputs, [plan(inputs)], "c")
    (model,) = trace.models
    assert [(m.window.name, m.mark) for m in model.windows] == [
        ("5h", mark), ("weekly", "current")]
    views = window_views(inputs.readings["c"][-1], "sonnet", NOW)
    assert [(v.current, v.outdated) for v in views] == [
        (mark == "current", mark == "outdated"), (True, False)]


def test_R6_a_window_for_another_model_is_neither_current_nor_outdated() -> None:
    (view,) = window_views(history(reading("c", window("w", 0, at(), models=["opus"])))[-1],
                           "sonnet", NOW)
    assert (view.applies, view.outdated) == (False, False)


@pytest.mark.parametrize(("checked", "reset", "expected"), [
    # A fresh reading: a 0% window that resets exactly at now no longer exists (R6.7).
    pytest.param(at(seconds=-10), at(), ("unknown", "quota-reset-since-reading"),
                 id="R6.7-fresh-0pct-window-reset-exactly-now"),
    pytest.param(at(seconds=-10), at(seconds=1), ("exhausted", "quota-below-cutoff"),
                 id="R6.6-fresh-0pct-window-reset-one-second-later"),
    # A stale reading (SPEC v1.1): R6.4 holds only a *current* low window; one that reset
    # exactly at now is not current, so the reading is just stale (R6.5).
    pytest.param(at(seconds=-181), at(), ("unknown", "quota-stale"),
                 id="R6.5-stale-0pct-window-reset-exactly-now"),
    pytest.param(at(seconds=-181), at(seconds=1), ("exhausted", "quota-below-cutoff"),
                 id="R6.4-stale-0pct-window-reset-one-second-later"),
])
def test_R6_R11_a_0pct_window_that_resets_exactly_at_now_no_longer_counts(
        checked: str, reset: str, expected: tuple[str, str]) -> None:
    """R11: thrifty admits an unknown verdict unverified and excludes an exhausted one."""
    inputs = fleet([conn("c", models=["sonnet"])], [reading("c", checked, window("5h", 0, reset))],
                   settings=_settings())
    result = plan(inputs)
    pair = decision(result, "c", "sonnet")
    assert pair.verdict is not None
    assert (pair.verdict.kind, pair.verdict.reason) == expected
    if expected[0] == "unknown":
        assert (pair.admitted, pair.unverified) == (True, True)
        assert [(e.allowed_connection_ids, e.unverified_connection_ids)
                for e in result.pool] == [(("c",), ("c",))]
    else:
        assert not pair.admitted
        assert result.pool == ()
        assert [x.reason for x in exclusions(result, "c")] == ["quota-below-cutoff"]


# --- R7: the replay ------------------------------------------------------------------------


def _series(*figures: float | str) -> list[dict[str, Any]]:
    """Readings a minute apart, the last ten seconds before now; "x" is status exhausted
    with a 50% window. Each window resets before the next reading (no regain before a
    reset, R6.4)."""
    out = []
    for back, figure in enumerate(reversed(figures)):
        checked = at(seconds=-10 - 60 * back)
        if figure == "x":
            out.append(reading("c", checked, window("5h", 50, at(hours=3)), status="exhausted"))
        else:
            assert isinstance(figure, float | int)
            out.append(reading("c", checked, window("5h", figure, at(seconds=40 - 60 * back))))
    return out


@pytest.mark.parametrize(("figures", "expected"), [
    pytest.param((1, "x", 4), ("exhausted", "quota-below-reentry"),
                 id="R7-exhausted-status-never-brings-back-whatever-its-windows"),
    pytest.param((1, 50, 4), ("usable", None), id="R7-the-same-figure-without-the-status-does"),
    pytest.param((1, 5, 4), ("exhausted", "quota-below-reentry"),
                 id="R7-replay-exactly-the-floor-stays-out"),
    pytest.param((1, 5.5, 4), ("usable", None), id="R7-replay-above-the-floor-comes-back"),
    pytest.param((2, 4), ("exhausted", "quota-below-reentry"),
                 id="R7-replay-exactly-the-cutoff-drops-out"),
    pytest.param((2.5, 4), ("usable", None), id="R7-replay-above-the-cutoff-stays-in"),
    pytest.param((50, "x", 4), ("exhausted", "quota-below-reentry"),
                 id="R7-replay-exhausted-status-drops-out-in-play"),
])
def test_R7_replay(figures: tuple[float | str, ...], expected: tuple[str, str | None]) -> None:
    found = verdict(history(*_series(*figures)), "sonnet", NOW, ladder(**FRESH))
    assert (found.kind, found.reason) == expected
    assert found.threshold == (5 if expected[1] == "quota-below-reentry" else 2)


# --- R6.8 and the exclusions: one per model when the models' reasons differ ----------------


def test_R6_8_two_models_without_a_window_get_one_exclusion_each_naming_its_model() -> None:
    inputs = fleet([conn("c", models=["sonnet", "opus"])],
                   [reading("c", window("w", 80, at(hours=1), models=["other"]))],
                   settings=_settings())
    result = plan(inputs, "auto/subscription")
    assert [(x.model, x.reason, x.detail) for x in exclusions(result, "c")] == [
        ("sonnet", "quota-unknown", "reading at 11:59:50Z has no window for sonnet"),
        ("opus", "quota-unknown", "reading at 11:59:50Z has no window for opus"),
    ]


def test_R6_8_models_a_scoped_window_treats_alike_share_one_exclusion() -> None:
    inputs = fleet([conn("c", models=["sonnet", "opus"])],
                   [reading("c", window("w", 0, at(hours=1), models=["sonnet", "opus"]))],
                   settings=_settings())
    result = plan(inputs, "auto/subscription")
    assert [(x.model, x.reason) for x in exclusions(result, "c")] == [
        (None, "quota-below-cutoff")]


# --- the verdict line ----------------------------------------------------------------------


def test_R13_verdict_line_prefers_a_real_reason_over_not_in_category() -> None:
    """sonnet is not a reasoning model; opus is, and its own window is spent."""
    readings = [reading("c", window("5h", 60, at(hours=3)),
                        window("weekly-opus", 0, at(days=2), models=["opus"]))]
    result = plan(fleet([conn("c", models=["sonnet", "opus"])], readings,
                        settings=_settings()), "auto/reasoning:subscription")
    assert [x.reason for x in exclusions(result, "c")] == [
        "not-in-category", "quota-below-cutoff"]
    assert result.summary == (
        "auto/reasoning:subscription: 0 of 1 connections eligible, pool empty"
        " — 1 quota exhausted")


def test_R13_verdict_line_counts_not_in_category_when_it_is_the_only_reason() -> None:
    readings = [reading("c", window("5h", 60, at(hours=3)))]
    result = plan(fleet([conn("c", models=["sonnet"])], readings, settings=_settings()),
                  "auto/reasoning:subscription")
    assert result.summary == (
        "auto/reasoning:subscription: 0 of 1 connections eligible, pool empty"
        " — 1 not in category")


# --- R8: periods in UTC whatever the offset of now -----------------------------------------


@pytest.mark.parametrize(("now", "period", "start"), [
    pytest.param("2026-12-01T01:00:00+02:00", "month", "2026-11-01T00:00:00+00:00",
                 id="R8-month-of-an-offset-now-is-the-utc-month"),
    pytest.param("2026-12-01T03:00:00+02:00", "month", "2026-12-01T00:00:00+00:00",
                 id="R8-month-just-past-utc-midnight"),
    pytest.param("2026-11-30T01:00:00+02:00", "week", "2026-11-23T00:00:00+00:00",
                 id="R8-week-of-an-offset-now-is-the-utc-week"),
    pytest.param("2026-11-29T20:00:00-05:00", "day", "2026-11-30T00:00:00+00:00",
                 id="R8-day-of-an-offset-now-is-the-utc-day"),
])
def test_R8_period_start_of_an_offset_now_is_in_utc(now: str, period: str, start: str) -> None:
    found = period_start(datetime.fromisoformat(now), period)
    assert found == datetime.fromisoformat(start)
    assert found.utcoffset() == timedelta(0)


@pytest.mark.parametrize(("now", "state"), [
    pytest.param("2026-12-01T01:00:00+02:00", "budget-spent",
                 id="R8-still-november-in-utc-the-november-spend-counts"),
    pytest.param("2026-12-01T02:00:00+02:00", "serving",
                 id="R8-december-in-utc-a-new-period"),
])
def test_R8_budget_period_of_an_offset_now(now: str, state: str) -> None:
    inputs = fleet([conn("mini", "openai", "apikey", models=["gpt-mini"])], [],
                   settings={"budgets": {"rung_budget_usd": {"cheap": 5}}},
                   spend=[{"at": "2026-11-30T20:00:00Z", "connection": "mini",
                           "model": "gpt-mini", "cost_usd": 5}])
    result = plan(inputs, now=datetime.fromisoformat(now))
    assert rung_state(result, "cheap") == state


# --- R13: an id wrong in both parts reports the category first -----------------------------


def test_R13_both_parts_wrong_reports_the_category_first() -> None:
    with pytest.raises(UsageError) as caught:
        parse_auto_id("auto/cooking:paid")
    assert caught.value.message.startswith("unknown category 'cooking' in 'auto/cooking:paid'")
    with pytest.raises(UsageError) as caught:
        parse_auto_id("auto/coding:paid")
    assert caught.value.message.startswith("unknown tier 'paid' in 'auto/coding:paid'")


# --- check: expect_reason and pool bounds --------------------------------------------------


def _expectation(**keys: Any) -> Expectation:
    return validate(Expectation, {"name": "e", "auto_id": "auto/subscription", **keys},
                    "policy")


def test_expect_reason_passes_when_any_exclusion_of_the_connection_has_the_code() -> None:
    readings = [reading("c", window("weekly-opus", 0, at(days=2), models=["opus"]),
                        window("w", 80, at(hours=1), models=["other"]))]
    result = plan(fleet([conn("c", models=["sonnet", "opus"])], readings,
                        settings=_settings()), "auto/subscription")
    assert [x.reason for x in exclusions(result, "c")] == ["quota-unknown",
                                                          "quota-below-cutoff"]
    for code in ("quota-unknown", "quota-below-cutoff"):
        (check,) = judge(_expectation(expect_reason={"c": code}), result)
        assert check.passed, check
        assert check.actual == "1 of 1 excluded as expected"
    (check,) = judge(_expectation(expect_reason={"c": "cooldown"}), result)
    assert not check.passed
    assert check.actual == "0 of 1 excluded as expected"


@pytest.mark.parametrize(("low", "high", "valid"), [
    pytest.param(2, 2, True, id="min_pool-equal-to-max_pool-is-valid"),
    pytest.param(3, 2, False, id="min_pool-above-max_pool-is-an-error"),
])
def test_min_pool_may_equal_max_pool(low: int, high: int, valid: bool) -> None:
    if valid:
        assert (_expectation(min_pool=low, max_pool=high).min_pool) == 2
    else:
        with pytest.raises(Exception, match=r"min_pool \(3\) is above max_pool \(2\)"):
            _expectation(min_pool=low, max_pool=high)


# --- diff: a change of overage alone -------------------------------------------------------


def _saved(overage: str) -> dict[str, Any]:
    return {"format_version": "1", "auto_id": "auto/thrifty", "now": "2026-11-29T12:00:00Z",
            "rungs": [], "pool": [], "excluded": [],
            "connections": [{"id": "c", "provider": "claude", "billing": "subscription",
                             "overage": overage}]}


def test_diff_reports_a_change_of_overage_alone() -> None:
    changed = diff_plans(parse_saved_plan(_saved("hard-stop"), "old.json"),
                         parse_saved_plan(_saved("unknown"), "new.json"),
                         "old.json", "new.json")
    assert [(b.connection_id, b.old_billing, b.new_billing, b.old_overage, b.new_overage)
            for b in changed.billing] == [("c", "subscription", "subscription", "hard-stop",
                                           "unknown")]
    assert changed.summary == "1 difference: 1 billing class changed"
    same = diff_plans(parse_saved_plan(_saved("unknown"), "old.json"),
                      parse_saved_plan(_saved("unknown"), "new.json"),
                      "old.json", "new.json")
    assert same.equal



def test_R8_period_start_ignores_the_machine_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """UTC, not the local zone of whoever runs the planner; midnight to the microsecond."""
    import time

    monkeypatch.setenv("TZ", "Pacific/Auckland")
    time.tzset()
    try:
        found = period_start(datetime.fromisoformat("2026-11-30T23:30:00.250000+00:00"), "day")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert found == datetime.fromisoformat("2026-11-30T00:00:00+00:00")
    assert (found.utcoffset(), found.microsecond) == (timedelta(0), 0)


@pytest.mark.parametrize(("provider", "model", "free", "expected"), [
    pytest.param("openai", "gpt-mini", ["openai"], ("free", "free-provider", 0.25),
                 id="R3-free-provider-keeps-the-price"),
    pytest.param("ollama", "qwen", [], ("free", "price", 0.0), id="R3-price-0-is-free"),
    pytest.param("openai", "gpt-mini", [], ("cheap", "price", 0.25), id="R3-cheap"),
    pytest.param("claude", "opus", [], ("premium", "price", 15.0), id="R3-premium"),
    pytest.param("claude", "nope", [], ("premium", "not-in-catalog", None),
                 id="R3-missing-is-premium-without-a-price"),
])
def test_R3_tier_reports_its_source_and_price(provider: str, model: str, free: list[str],
                                              expected: tuple[str, str, float | None]) -> None:
    from omniladder.engine.tiers import economic_tier
    from omniladder.models import TierSettings
    from tests.builders import catalogs

    settings = TierSettings.model_validate({"free_providers": tuple(free)})
    found = economic_tier(provider, model, catalogs(), settings)
    assert (found.tier, found.source, found.input_usd_per_mtok) == expected


def test_R3_a_catalog_tier_override_keeps_the_price() -> None:
    from omniladder.engine.tiers import economic_tier
    from omniladder.models import TierSettings
    from tests.builders import MODELS, catalogs

    models = [*MODELS, {"provider": "claude", "model": "opus", "input_usd_per_mtok": 15.0,
                        "output_usd_per_mtok": 75.0, "tier": "cheap"}]
    found = economic_tier("claude", "opus", catalogs(models=models),
                          TierSettings.model_validate({}))
    assert (found.tier, found.source, found.input_usd_per_mtok) == ("cheap",
                                                                    "catalog-override", 15.0)
