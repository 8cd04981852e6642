"""OmniRoute's custom OpenAI-compatible providers, priced as the model catalog's entry for
the model they serve (docs/traffic.md#custom-providers).

OmniRoute stores a provider node an operator adds as ``openai-compatible-<api type>-<id>``
(``openai-compatible-chat-abc123``: the node's id) and logs its attempts with the plain
upstream model name (OmniRoute's unit tests of ``getModelInfo``: a node
``openai-compatible-chat-test`` of type ``openai-compatible`` resolves ``oct/gpt-image-1``
to that provider and the model ``gpt-image-1``). No catalog lists such a provider, so every
event it served was unpriced. An OpenAI-compatible node serves a model under the name its
maker gave it, so the model catalog's entry for that name prices it: the entry every
provider listing the model agrees on (the same prices), else OpenAI's own (the API the node
speaks). Models whose entries disagree with no OpenAI entry, or that no entry lists, stay
unpriced and are named in a note.

The mapping is written as a model catalog overlay beside the other files (``CATALOG_NAME``,
named in ``omniladder.toml``), one entry per (custom provider, model) whose ``source`` says
which entry it copies, so the plan tiers the pair and ``audit traffic`` prices it from the
catalog, both from the same entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omniladder.engine.inputs import Catalogs, SourcedModelEntry

CATALOG_NAME = "custom-models.toml"
PREFIX = "openai-compatible-"
"""How OmniRoute names a custom OpenAI-compatible provider node (``openai-compatible-chat-``
and ``openai-compatible-responses-`` followed by the node's id)."""
PREFERRED = "openai"


def is_openai_compatible(provider: str) -> bool:
    return provider.startswith(PREFIX)


@dataclass
class CustomPricing:
    """The catalog entries given to custom providers' models, and the models left unpriced."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    mapped: list[tuple[str, str, str]] = field(default_factory=list)
    """(provider, model, the catalog's provider whose entry was copied)."""
    unmapped: list[tuple[str, str, str]] = field(default_factory=list)
    """(provider, model, why)."""

    def notes(self) -> list[str]:
        notes: list[str] = []
        if self.mapped:
            listed = ", ".join(f"{provider}/{model} → {source}/{model}"
                               for provider, model, source in self.mapped)
            notes.append(f"custom OpenAI-compatible providers priced as the model catalog's "
                         f"entry for their model (written to {CATALOG_NAME}, named in "
                         f"omniladder.toml): {listed}")
        if self.unmapped:
            listed = ", ".join(f"{provider}/{model} ({why})"
                               for provider, model, why in self.unmapped)
            notes.append("custom OpenAI-compatible providers' models the model catalog "
                         f"cannot price, left unpriced: {listed}")
        return notes


def _entry_for(model: str, catalogs: Catalogs) -> tuple[SourcedModelEntry | None, str]:
    """The catalog's entry for a model name, whatever its provider, and why none."""
    found = sorted((provider, sourced) for (provider, name), sourced in catalogs.models.items()
                   if name == model and not is_openai_compatible(provider))
    if not found:
        return None, "no catalog entry lists the model"
    by_provider = dict(found)
    prices = {(s.entry.input_usd_per_mtok, s.entry.output_usd_per_mtok) for _, s in found}
    if PREFERRED in by_provider:
        return by_provider[PREFERRED], ""
    if len(prices) == 1:
        return found[0][1], ""
    return None, "providers listing it disagree on its price"


def price_custom_models(served: Mapping[str, Iterable[str]],
                        providers: Mapping[str, str], catalogs: Catalogs) -> CustomPricing:
    """Catalog entries for the models each custom OpenAI-compatible connection served
    (``served``: connection id → models of its events; ``providers``: connection id → its
    provider), for the pairs the catalogs lack."""
    pricing = CustomPricing()
    pairs = sorted({(providers[cid], model) for cid, models in served.items()
                    if cid in providers and is_openai_compatible(providers[cid])
                    for model in models})
    for provider, model in pairs:
        if (provider, model) in catalogs.models:
            continue
        sourced, why = _entry_for(model, catalogs)
        if sourced is None:
            pricing.unmapped.append((provider, model, why))
            continue
        entry = sourced.entry
        table: dict[str, Any] = {
            "provider": provider, "model": model,
            "input_usd_per_mtok": entry.input_usd_per_mtok,
            "output_usd_per_mtok": entry.output_usd_per_mtok}
        if entry.categories:
            table["categories"] = list(entry.categories)
        if entry.tier is not None:
            table["tier"] = entry.tier
        if entry.as_of is not None:
            table["as_of"] = entry.as_of
        table["source"] = (f"import omniroute: OmniRoute custom OpenAI-compatible provider, "
                           f"priced as {entry.provider}/{entry.model} of {sourced.file}")
        pricing.entries.append(table)
        pricing.mapped.append((provider, model, entry.provider))
    return pricing
