"""Small in-memory fleets for engine tests: plain dicts in, validated models out, no files.

Everything goes through the same pydantic models the loaders use, so a builder cannot make
an input the loaders would reject. Times are written relative to ``NOW``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from omniladder.engine.autoid import NowSource, parse_auto_id
from omniladder.engine.inputs import Catalogs, LoadedInputs, SourcedBillingEntry, SourcedModelEntry
from omniladder.engine.plan import make_plan
from omniladder.engine.records import Exclusion, PairDecision, Plan
from omniladder.inputs.normalise import settled
from omniladder.models import (
    BillingEntry,
    ConnectionsFile,
    LadderSettings,
    ModelEntry,
    QuotaFile,
    Reading,
    Settings,
    SpendFile,
    validate_record,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
"""A Sunday, like the examples' snapshot."""

BILLING_FILE = "test-billing.toml"
MODELS_FILE = "test-models.toml"

BILLING: tuple[dict[str, Any], ...] = (
    {"provider": "claude", "auth_type": "oauth", "billing": "subscription",
     "overage": "hard-stop"},
    {"provider": "codex", "auth_type": "oauth", "billing": "subscription",
     "overage": "hard-stop"},
    {"provider": "cursor", "auth_type": "oauth", "billing": "subscription",
     "overage": "unknown"},
    {"provider": "copilot-web", "auth_type": "apikey", "billing": "subscription",
     "overage": "unknown"},
    {"provider": "devin-desktop", "auth_type": "oauth", "billing": "subscription",
     "overage": "meters-to-paid"},
    {"provider": "openai", "billing": "metered", "overage": "meters-to-paid"},
)
"""The shipped facts that matter here, plus a provider-wide metered entry."""

MODELS: tuple[dict[str, Any], ...] = (
    {"provider": "claude", "model": "sonnet", "input_usd_per_mtok": 3.0,
     "output_usd_per_mtok": 15.0, "categories": ["coding", "chat", "vision"]},
    {"provider": "claude", "model": "opus", "input_usd_per_mtok": 15.0,
     "output_usd_per_mtok": 75.0, "categories": ["coding", "reasoning"]},
    {"provider": "codex", "model": "gpt-codex", "input_usd_per_mtok": 1.25,
     "output_usd_per_mtok": 10.0, "categories": ["coding"]},
    {"provider": "copilot-web", "model": "gpt-4.1", "input_usd_per_mtok": 2.0,
     "output_usd_per_mtok": 8.0, "categories": ["chat"]},
    {"provider": "devin-desktop", "model": "devin", "input_usd_per_mtok": 2.0,
     "output_usd_per_mtok": 8.0, "categories": ["coding"]},
    {"provider": "openai", "model": "gpt-mini", "input_usd_per_mtok": 0.25,
     "output_usd_per_mtok": 2.0, "categories": ["chat", "coding"]},
    {"provider": "openai", "model": "gpt-big", "input_usd_per_mtok": 1.25,
     "output_usd_per_mtok": 10.0, "categories": ["reasoning"]},
    {"provider": "ollama", "model": "qwen", "input_usd_per_mtok": 0.0,
     "output_usd_per_mtok": 0.0, "categories": ["coding"]},
    {"provider": "openrouter", "model": "free-model", "input_usd_per_mtok": 0.0,
     "output_usd_per_mtok": 0.0, "categories": ["chat"]},
    {"provider": "mystery", "model": "m1", "input_usd_per_mtok": 0.5,
     "output_usd_per_mtok": 1.0, "categories": ["chat"]},
)


def at(**delta: float) -> str:
    """An RFC 3339 instant relative to NOW, e.g. ``at(minutes=-1)``."""
    return (NOW + timedelta(**delta)).isoformat().replace("+00:00", "Z")


def instant(**delta: float) -> datetime:
    return NOW + timedelta(**delta)


def freeze(value: Any) -> Any:
    """Lists become tuples, as the loaders hand them to the strict models."""
    if isinstance(value, Mapping):
        return {key: freeze(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def catalogs(billing: Iterable[Mapping[str, Any]] = BILLING,
             models: Iterable[Mapping[str, Any]] = MODELS) -> Catalogs:
    """Catalogs straight from dicts; later entries override earlier ones with the same key."""
    bill: dict[tuple[str, str | None], SourcedBillingEntry] = {}
    for raw in billing:
        entry = BillingEntry.model_validate(freeze(raw))
        bill[(entry.provider, entry.auth_type)] = SourcedBillingEntry(entry, BILLING_FILE)
    mods: dict[tuple[str, str], SourcedModelEntry] = {}
    for raw in models:
        model = ModelEntry.model_validate(freeze(raw))
        mods[(model.provider, model.model)] = SourcedModelEntry(model, MODELS_FILE)
    return Catalogs(bill, mods, (BILLING_FILE,), (MODELS_FILE,))


def conn(cid: str, provider: str = "claude", auth_type: str = "oauth",
         **fields: Any) -> dict[str, Any]:
    """A connection dict; ``models`` defaults to the catalog's models of the provider."""
    return {"id": cid, "provider": provider, "auth_type": auth_type, **fields}


def window(name: str, remaining: float | None = None, reset: str | None = None, *,
           models: Sequence[str] | None = None, unlimited: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name}
    if unlimited:
        data["unlimited"] = True
    else:
        data["remaining_percent"] = remaining
    if reset is not None:
        data["reset_at"] = reset
    if models is not None:
        data["models"] = list(models)
    return data


def reading(cid: str, *parts: str | dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A reading dict: an optional ``checked_at`` text first, then windows.

    ``checked_at`` defaults to ten seconds before NOW (fresh under any usual max age).
    """
    checked_at = at(seconds=-10)
    windows: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            checked_at = part
        else:
            windows.append(part)
    data: dict[str, Any] = {"connection": cid, "checked_at": checked_at, **fields}
    if windows:
        data["windows"] = windows
    return data


def history(*readings: dict[str, Any]) -> tuple[Reading, ...]:
    """Readings as the planner sees a connection's history: validated, sorted by time."""
    parsed = [validate_record(Reading, freeze(r)) for r in readings]
    return tuple(sorted(parsed, key=lambda r: r.checked_at))


def ladder(**fields: Any) -> LadderSettings:
    return LadderSettings.model_validate(freeze(fields))


def fleet(connections: Sequence[Mapping[str, Any]],
          readings: Sequence[Mapping[str, Any]] | None = (), *,
          settings: Mapping[str, Any] | None = None,
          spend: Sequence[Mapping[str, Any]] | None = None,
          taken_at: str | None = None,
          billing: Iterable[Mapping[str, Any]] = BILLING,
          models: Iterable[Mapping[str, Any]] = MODELS,
          catalog: Catalogs | None = None) -> LoadedInputs:
    """A whole input set, as ``load_inputs`` would return it. ``readings=None``: no quota file;
    ``catalog``, when given, instead of catalogs made from ``billing`` and ``models``."""
    validated = ConnectionsFile.model_validate(freeze({"connections": list(connections)}))
    known = {c.id for c in validated.connections}
    quota: QuotaFile | None = None
    histories: dict[str, list[Reading]] = {}
    if readings is not None:
        quota_data: dict[str, Any] = {"readings": list(readings)}
        if taken_at is not None:
            quota_data["taken_at"] = taken_at
        quota = QuotaFile.model_validate(freeze(quota_data))
        for item in quota.readings:
            if item.connection in known:
                # as the loader holds it: a reset at or before its own reading is absent (§2.2)
                histories.setdefault(item.connection, []).append(settled(item))
    events = None
    if spend is not None:
        events = SpendFile.model_validate(freeze({"events": list(spend)})).events
    return LoadedInputs(
        settings=Settings.model_validate(freeze(settings or {})),
        connections=validated.connections,
        readings={cid: tuple(sorted(items, key=lambda r: r.checked_at))
                  for cid, items in histories.items()},
        quota=quota,
        spend=events,
        catalogs=catalog if catalog is not None else catalogs(billing, models),
        files={"connections": "connections.toml"},
    )


def plan(inputs: LoadedInputs, auto_id: str = "auto/thrifty", now: datetime = NOW,
         now_source: NowSource = "flag") -> Plan:
    return make_plan(inputs, parse_auto_id(auto_id), now, now_source)


# --- reading a plan ------------------------------------------------------------------------


def pool_view(result: Plan) -> list[tuple[str, str, tuple[str, ...]]]:
    """The pool as (rung, provider/model, allowlist) triples, in dispatch order."""
    return [(e.rung, f"{e.provider}/{e.model}", e.allowed_connection_ids) for e in result.pool]


def decision(result: Plan, cid: str, model: str) -> PairDecision:
    found = [d for d in result.decisions if d.connection_id == cid and d.model == model]
    assert len(found) == 1, (cid, model, result.decisions)
    return found[0]


def exclusions(result: Plan, cid: str) -> list[Exclusion]:
    return [x for x in result.excluded if x.connection_id == cid]


def reason(result: Plan, cid: str, model: str | None = None) -> str | None:
    """The reason a pair (or, without a model, the whole connection) is left out; None if in."""
    if model is not None:
        return decision(result, cid, model).reason
    found = exclusions(result, cid)
    if not found:
        return None
    assert len(found) == 1, found
    return found[0].reason


def rung_state(result: Plan, rung: str) -> str:
    return next(r.state for r in result.rungs if r.rung == rung)
