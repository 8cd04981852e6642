"""R13/R14 as the command line says them: the exact usage error of a bad auto id or --now,
the clock word, the stale-snapshot warning's boundary, and R8's "no budget" position."""

from __future__ import annotations

from datetime import timedelta

import pytest

from omniladder.engine.autoid import (
    is_clock_word,
    parse_auto_id,
    parse_instant,
    stale_snapshot_warning,
)
from omniladder.engine.budgets import budget_positions
from omniladder.errors import UsageError
from omniladder.models import BudgetSettings
from tests.builders import NOW


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("auto/foo:thrifty",
                 "unknown category 'foo' in 'auto/foo:thrifty'; categories: coding, reasoning, "
                 "vision, chat, multimodal", id="R13-unknown-category"),
    pytest.param("auto/coding:paid",
                 "unknown tier 'paid' in 'auto/coding:paid'; tiers: subscription, thrifty "
                 "(neither is a paid tier)", id="R13-unknown-tier"),
    pytest.param("auto/x",
                 "invalid auto id 'auto/x'; expected auto/subscription, auto/thrifty or "
                 "auto/<category>:<tier> with category one of coding, reasoning, vision, chat, "
                 "multimodal and tier subscription or thrifty (run `omniladder ids` for the "
                 "full list)", id="R13-not-the-grammar"),
])
def test_R13_a_bad_auto_id_is_one_exact_usage_error(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_auto_id(text)
    assert (caught.value.field, caught.value.message) == ("AUTO_ID", message)


@pytest.mark.parametrize("what", ["--now", "expect[0].now"])
def test_R14_a_bad_instant_names_where_it_came_from(what: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_instant("yesterday", what)
    assert str(caught.value) == (f"{what}: not an RFC 3339 timestamp: 'yesterday' "
                                 "(expected e.g. 2026-11-29T12:00:00Z)")


@pytest.mark.parametrize(("text", "clock"), [
    ("now", True), ("NOW", True), (" Now ", True), ("nowadays", False), ("", False),
    ("2026-11-29T12:00:00Z", False),
])
def test_R14_the_clock_word(text: str, clock: bool) -> None:
    assert is_clock_word(text) is clock


@pytest.mark.parametrize(("behind", "warns"), [
    (timedelta(seconds=179), False),
    (timedelta(seconds=180), False),     # exactly the max age: still the snapshot's instant
    (timedelta(seconds=181), True),
])
def test_R14_the_stale_snapshot_warning_boundary(behind: timedelta, warns: bool) -> None:
    warning = stale_snapshot_warning(NOW, "snapshot", 180, clock=NOW + behind)
    assert (warning is not None) == warns
    if warning is not None:
        assert warning.startswith("planning at the quota snapshot's taken_at "
                                  "2026-11-29T12:00:00Z, more than max_reading_age_seconds "
                                  "(180s) behind the clock")


def test_R8_a_rung_without_a_budget_stands_at_none() -> None:
    """``why --format json`` shows ``budget.state``; a rung with no budget is ``none``."""
    settings = BudgetSettings.model_validate({"rung_budget_usd": {"premium": 5.0}})
    positions = budget_positions(settings, (), NOW, lambda event: None)
    assert {rung: p.state for rung, p in positions.items()} == {
        "cheap": "none", "premium": "within"}
    assert (positions["cheap"].budget_usd, positions["cheap"].spent_usd) == (None, 0.0)
    assert positions["cheap"].gates is False
    assert positions["cheap"].reason is None
