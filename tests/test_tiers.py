"""R3 economic tier of a model and R4 rung of a (connection, model) pair."""

from __future__ import annotations

from typing import Any

import pytest

from omniladder.engine.billing import classify
from omniladder.engine.tiers import economic_tier, rung_of
from omniladder.models import Connection, TierSettings, validate_record
from tests.builders import catalogs, conn, fleet, freeze, plan


def model(name: str, price: float, **fields: Any) -> dict[str, Any]:
    return {"provider": "acme", "model": name, "input_usd_per_mtok": price,
            "output_usd_per_mtok": price * 4, **fields}


ACME = (
    model("zero", 0.0),
    model("penny", 0.01),
    model("at-max", 1.0),
    model("above-max", 1.01),
    model("dear", 10.0),
    model("dear-but-cheap", 10.0, tier="cheap"),
    model("free-but-premium", 0.0, tier="premium"),
    model("dear-but-free", 10.0, tier="free"),
)


@pytest.mark.parametrize(
    ("name", "settings", "tier", "source"),
    [
        pytest.param("zero", {}, "free", "price", id="R3-price-0-is-free"),
        pytest.param("penny", {}, "cheap", "price", id="R3-tiny-price-is-cheap"),
        pytest.param("at-max", {}, "cheap", "price", id="R3-price-equal-to-cheap-max-is-cheap"),
        pytest.param("above-max", {}, "premium", "price", id="R3-price-above-cheap-max-premium"),
        pytest.param("dear", {}, "premium", "price", id="R3-dear-is-premium"),
        pytest.param("above-max", {"cheap_max_input_usd_per_mtok": 2.0}, "cheap", "price",
                     id="R3-cheap-max-is-a-setting"),
        pytest.param("penny", {"cheap_max_input_usd_per_mtok": 0.0}, "premium", "price",
                     id="R3-cheap-max-0-makes-every-priced-model-premium"),
        pytest.param("dear-but-cheap", {}, "cheap", "catalog-override",
                     id="R3-entry-tier-overrides-price"),
        pytest.param("free-but-premium", {}, "premium", "catalog-override",
                     id="R3-entry-tier-overrides-price-0"),
        pytest.param("dear-but-free", {}, "free", "catalog-override",
                     id="R3-entry-tier-free"),
        pytest.param("dear", {"free_providers": ["acme"]}, "free", "free-provider",
                     id="R3-free-provider-beats-price"),
        pytest.param("free-but-premium", {"free_providers": ["acme"]}, "free", "free-provider",
                     id="R3-free-provider-beats-entry-tier"),
        pytest.param("not-listed", {"free_providers": ["acme"]}, "free", "free-provider",
                     id="R3-free-provider-covers-models-missing-from-catalog"),
        pytest.param("not-listed", {}, "premium", "not-in-catalog",
                     id="R3-missing-model-is-premium"),
        pytest.param("dear", {"free_providers": ["Acme"]}, "premium", "price",
                     id="R3-free-providers-are-case-sensitive"),
    ],
)
def test_R3_economic_tier(name: str, settings: dict[str, Any], tier: str, source: str) -> None:
    info = economic_tier("acme", name, catalogs(models=ACME),
                         TierSettings.model_validate(freeze(settings)))
    assert (info.tier, info.source) == (tier, source)


def test_R3_missing_model_warns_once_for_metered_connections() -> None:
    result = plan(fleet([conn("k1", "openai", "apikey", models=["gpt-unlisted"]),
                         conn("k2", "openai", "apikey", models=["gpt-unlisted"])]))
    assert [e.rung for e in result.pool] == ["premium"]
    warned = [w for w in result.warnings if "gpt-unlisted" in w]
    assert len(warned) == 1, result.warnings
    assert "premium" in warned[0]


def test_R3_missing_model_of_a_plan_connection_does_not_warn() -> None:
    """The price of a subscription connection's model never decides its rung (R4)."""
    result = plan(fleet([conn("sub", models=["claude-unlisted"])],
                        [{"connection": "sub", "remaining_percent": 50,
                          "checked_at": "2026-11-29T11:59:00Z"}]))
    assert [e.rung for e in result.pool] == ["subscription"]
    assert not [w for w in result.warnings if "claude-unlisted" in w]


@pytest.mark.parametrize(
    ("connection", "name", "rung"),
    [
        pytest.param(conn("c", "claude", "oauth"), "opus", "subscription",
                     id="R4-subscription-billing-ignores-a-premium-price"),
        pytest.param(conn("c", "ollama", "none"), "qwen", "keyless",
                     id="R4-keyless-is-its-own-rung-despite-price-0"),
        pytest.param(conn("c", "openai", "apikey"), "gpt-mini", "cheap",
                     id="R4-metered-by-tier-cheap"),
        pytest.param(conn("c", "openai", "apikey"), "gpt-big", "premium",
                     id="R4-metered-by-tier-premium"),
        pytest.param(conn("c", "openrouter", "apikey"), "free-model", "free",
                     id="R4-uncurated-by-tier-free"),
        pytest.param(conn("c", "mystery", "apikey"), "m1", "cheap",
                     id="R4-uncurated-by-tier-cheap"),
        pytest.param(conn("c", "claude", "oauth", billing="metered"), "opus", "premium",
                     id="R4-subscription-overridden-to-metered-goes-by-tier"),
        pytest.param(conn("c", "ollama", "none", billing="metered"), "qwen", "free",
                     id="R4-keyless-overridden-to-metered-goes-by-tier"),
    ],
)
def test_R4_rung(connection: dict[str, Any], name: str, rung: str) -> None:
    parsed = validate_record(Connection, freeze(connection))
    loaded = catalogs()
    info = classify(parsed, loaded)
    tier = economic_tier(parsed.provider, name, loaded, TierSettings())
    assert rung_of(info, tier) == rung
