"""R3 economic tier of a model and R4 rung of a (connection, model) pair."""

from typing import Literal, NamedTuple

from omniladder.engine.billing import BillingInfo
from omniladder.engine.inputs import Catalogs
from omniladder.models import Rung, Tier, TierSettings

TierSource = Literal["free-provider", "catalog-override", "price", "not-in-catalog"]


class TierInfo(NamedTuple):
    """R3: a candidate's economic tier and what decided it (the provider, the catalog entry's
    own tier, its input price, or no entry at all)."""

    tier: Tier
    source: TierSource
    input_usd_per_mtok: float | None


def economic_tier(provider: str, model: str, catalogs: Catalogs,
                  settings: TierSettings) -> TierInfo:
    """R3: free provider, then the entry's own tier, then its input price; missing is premium."""
    sourced = catalogs.models.get((provider, model))
    price = sourced.entry.input_usd_per_mtok if sourced is not None else None
    if provider in settings.free_providers:
        return TierInfo("free", "free-provider", price)
    if sourced is None:
        return TierInfo("premium", "not-in-catalog", None)
    if sourced.entry.tier is not None:
        return TierInfo(sourced.entry.tier, "catalog-override", price)
    assert price is not None
    if price == 0:
        return TierInfo("free", "price", price)
    if price <= settings.cheap_max_input_usd_per_mtok:
        return TierInfo("cheap", "price", price)
    return TierInfo("premium", "price", price)


def rung_of(billing: BillingInfo, tier: TierInfo) -> Rung:
    """R4: plan billing is the subscription rung, keyless its own, metered/unknown by tier."""
    if billing.billing == "subscription":
        return "subscription"
    if billing.billing == "keyless":
        return "keyless"
    return tier.tier
