"""JSON Schemas of every input kind, generated from the models the loaders validate with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from omniladder import findings
from omniladder.errors import InputError, UsageError, close_match
from omniladder.inputs.ledger.schema import TrafficFile
from omniladder.inputs.plan_document import PlanDocument
from omniladder.inputs.scenarios import ScenarioFile
from omniladder.models import (
    BillingCatalog,
    ConnectionsFile,
    ModelCatalog,
    QuotaFile,
    Settings,
    SpendFile,
)
from omniladder.scope_models import WindowScopeCatalog

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

KINDS: dict[str, type[BaseModel]] = {
    "connections": ConnectionsFile,
    "quota": QuotaFile,
    "settings": Settings,
    "spend": SpendFile,
    "traffic": TrafficFile,
    "billing-catalog": BillingCatalog,
    "model-catalog": ModelCatalog,
    "window-catalog": WindowScopeCatalog,
    "plan": PlanDocument,
    "whatif-scenarios": ScenarioFile,
}
"""Input kind → the model its loader validates against (SPEC §2); ``plan`` is the plan
document (SPEC §4.2), which ``plan --json`` writes and ``show``, ``diff`` and ``export`` read."""

OUTPUT_KINDS: tuple[str, ...] = (
    "audit-traffic", "forecast", "forecast-backtest", "export", "export-litellm",
    "export-omniroute", "whatif")
"""The documents the commands write (``audit traffic --json``, ``forecast --json``,
``forecast --backtest --json``, ``export --json``, ``whatif --json``) and the gateway
documents ``export`` writes: their schemas are written by hand under schemas/ and shipped as
they are, since no model reads them; the parts of ``audit-traffic`` that name the findings
are written from ``findings.FINDINGS`` over the shipped file (``_with_findings``)."""

ALL_KINDS: tuple[str, ...] = (*KINDS, *OUTPUT_KINDS)
"""Every kind ``omniladder schema KIND`` prints, in the order its help lists them."""

IGNORES_UNKNOWN_KEYS = frozenset({"plan"})
"""Kinds whose reader ignores keys it does not know rather than refusing them: a plan
document is this program's own output, and a later release may add keys to format 1."""

_TITLES = {
    "connections": "omniladder connections file",
    "quota": "omniladder quota snapshot",
    "settings": "omniladder settings (omniladder.toml)",
    "spend": "omniladder spend ledger",
    "traffic": "omniladder traffic ledger (a JSONL ledger holds one of its events per line)",
    "billing-catalog": "omniladder billing catalog",
    "model-catalog": "omniladder model catalog",
    "window-catalog": "omniladder quota-window scope catalog",
    "plan": "omniladder plan document (plan --json, plan --out)",
    "whatif-scenarios": "omniladder what-if scenarios (whatif --scenario)",
}


DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Connection": {
        "id": "Unique id of the connection, as the gateway names it.",
        "provider": (
            "Provider of the connection (claude, codex, github, openrouter, ...); with auth_type "
            "it selects the billing catalog entry."
        ),
        "auth_type": (
            "How the connection authenticates (oauth, apikey, ...); \"none\" marks a keyless "
            "backend."
        ),
        "models": (
            "Models this connection serves; default: every model the model catalog lists for the "
            "provider."
        ),
        "active": "false takes the connection out of every plan (reason inactive).",
        "status": (
            "Health reported by the gateway: ok, unknown, error, or a terminal status (banned, "
            "expired, credits_exhausted, deactivated, unavailable)."
        ),
        "rate_limited_until": (
            "End of a cooldown the gateway imposed (RFC 3339 with offset); the connection is out "
            "until then, or until its exhausted window resets when clamping is on."
        ),
        "label": "Free-form label shown in the views.",
        "overage": (
            "Narrowing override of what happens past the plan: hard-stop, meters-to-paid or "
            "unknown; it may only narrow the catalog's value."
        ),
        "billing": (
            "Narrowing override of the billing class (subscription, metered, unknown, keyless); it"
            " may only narrow the catalog's value."
        ),
        "state_as_of": (
            "The instant active, status and rate_limited_until were observed (RFC 3339 with "
            "offset; an importer writes its snapshot instant). Before it the connection counts "
            "as active with no status, cooling only from rate_limited_since; absent: they hold "
            "at every instant."
        ),
        "rate_limited_since": (
            "When the cooldown began, where the source records it (RFC 3339 with offset; "
            "needs rate_limited_until and is before it): before state_as_of the cooldown is "
            "in force only from here on."
        ),
        "capacity_weight": (
            "Seat size: how much quota one percent of this connection's windows is, in units of "
            "a weight-1 seat (positive; absent means 1). R15's expiring-first reads it."
        ),
        "reserve_percent": (
            "R16: share of each window (0-100) kept for use outside the gateway; above "
            "exit_cutoff_percent it is this connection's exit cutoff, and its re-entry floor "
            "keeps the ladder's gap above it."
        ),
        "seat_price_usd": (
            "What the seat costs per seat_period, in USD (0 or more); a month when no period "
            "is given."
        ),
        "seat_period": "The period seat_price_usd is paid for: day, week or month.",
    },
    "ScenarioFile": {
        "scenarios": "The scenarios whatif replays after as-is, in this order.",
    },
    "ScenarioEntry": {
        "name": "The scenario's name in every view (not 'as-is', which is the fleet as given).",
        "order": (
            "R15's within_rung_order in this scenario (declared or expiring-first); default: "
            "the settings file's."
        ),
        "remove": "Connections this scenario leaves out.",
        "add": (
            "Seats this scenario adds: LIKE copies connection LIKE (named LIKE+1), LIKE:NEW_ID "
            "names the copy; full at the span's start."
        ),
        "reserve": "Per connection, its reserve_percent (R16) in this scenario.",
        "weight": (
            "Per connection (an added one too), its capacity_weight in this scenario; its "
            "consumption scales by the old weight over the new."
        ),
    },
    "ConnectionsFile": {
        "connections": "Every connection of the gateway, each with a unique id.",
    },
    "Window": {
        "name": "Name of the quota window (5h, weekly, weekly-opus, monthly, ...).",
        "remaining_percent": "Quota left in this window, 0-100; give this or unlimited = true.",
        "unlimited": (
            "true when the window has no limit (counts as 100%); give this or remaining_percent."
        ),
        "reset_at": "When the window resets (RFC 3339 with offset).",
        "models": (
            "Models this window limits; without it the window limits every model of the "
            "connection."
        ),
        "window_seconds": (
            "Length of the window in seconds when the source says it (Codex window_minutes x "
            "60); forecast reads the elapsed part of the window from it."
        ),
    },
    "Reading": {
        "connection": "Id of the connection this reading is of.",
        "checked_at": (
            "When the reading was taken (RFC 3339 with offset); older than max_reading_age_seconds"
            " is stale."
        ),
        "status": "ok, exhausted or unknown.",
        "remaining_percent": (
            "Quota left, 0-100, as one window for every model; give this or windows, not both."
        ),
        "reset_at": (
            "When the quota resets (RFC 3339 with offset); with windows, the reset of an exhausted"
            " reading."
        ),
        "windows": "The quota windows of this reading, each with its own figure and reset.",
        "overage": (
            "What the provider itself reported about usage past the plan at checked_at: hard-stop "
            "or meters-to-paid (R2a)."
        ),
    },
    "QuotaFile": {
        "taken_at": (
            "When the snapshot was taken (RFC 3339 with offset); plans default to this instant."
        ),
        "readings": "Quota readings, several per connection forming its history, in any order.",
    },
    "SpendEvent": {
        "at": "When the spend happened (RFC 3339 with offset).",
        "cost_usd": "Cost of the event in US dollars, 0 or more.",
        "connection": (
            "Connection that spent; with model, it decides the rung the spend counts against."
        ),
        "model": (
            "Model that was used; with connection, it decides the rung the spend counts against."
        ),
        "rung": (
            "Rung the spend counts against (cheap or premium); needed when connection and model "
            "are not both given."
        ),
    },
    "SpendFile": {
        "events": "Paid spend events; those in the current budget period count.",
    },
    "TrafficEvent": {
        "at": "When the request was served, or the attempt ended (RFC 3339 with offset).",
        "connection": "Connection that served it, an id of the connections file.",
        "model": "Model that served it, as the plan names it.",
        "requested": (
            "What the client asked for: an auto id, or the gateway name an export gave one "
            "(omniladder-thrifty)."
        ),
        "status": "served (the default) or failed (an attempt that did not answer).",
        "tokens_in": "Input tokens, not counting cache reads and writes.",
        "tokens_out": "Output tokens.",
        "tokens_cache_read": "Input tokens read from the provider's prompt cache.",
        "tokens_cache_write": "Input tokens written to the provider's prompt cache.",
        "cost_usd": (
            "What the gateway recorded as billed, in US dollars; absent or null: priced from "
            "the tokens (SPEC 7.4)."
        ),
        "request_id": (
            "The request this event belongs to; its failed attempts share it. Events with the "
            "same request_id, connection and status are one."
        ),
        "attempts_before": "Failed attempts on other connections before this one served it.",
    },
    "TrafficFile": {
        "events": "What served each request, one event per request and per failed attempt.",
    },
    "InputsSettings": {
        "connections": (
            "Connections file, relative to the settings file; --connections overrides it."
        ),
        "quota": (
            "Quota snapshot, relative to the settings file; --quota overrides it. Without one "
            "every connection is quota-missing."
        ),
        "spend": (
            "Spend ledger, relative to the settings file; --spend overrides it. Without one "
            "budgets are not enforced."
        ),
        "traffic": (
            "Traffic ledger, relative to the settings file, for audit traffic (--traffic "
            "overrides it); without a spend ledger it is the spend ledger too."
        ),
    },
    "LadderSettings": {
        "exit_cutoff_percent": (
            "A connection in play stays while its remaining quota is above this percent."
        ),
        "reentry_min_remaining_percent": (
            "A connection that dropped out comes back only above this percent (never below the "
            "exit cutoff)."
        ),
        "max_reading_age_seconds": "Readings older than this many seconds are stale.",
        "clamp_cooldown_to_reset": (
            "Shorten a cooldown to the reset of the connection's exhausted window when that comes "
            "first."
        ),
        "within_rung_order": (
            "R15: the order within a quota rung: declared (the connections file's, R12) or "
            "expiring-first (the quota that expires soonest, by urgency, first)."
        ),
    },
    "RungBudgets": {
        "cheap": (
            "Budget of the cheap rung per period, in US dollars; 0 disables the rung; absent means"
            " no budget."
        ),
        "premium": (
            "Budget of the premium rung per period, in US dollars; 0 disables the rung; absent "
            "means no budget."
        ),
    },
    "BudgetSettings": {
        "period": "Budget period, UTC calendar: day, week (ISO, from Monday) or month.",
        "rung_budget_usd": "Budget per paid rung (cheap, premium) in US dollars per period.",
    },
    "TierSettings": {
        "cheap_max_input_usd_per_mtok": (
            "Metered models priced up to this many US dollars per million input tokens are cheap; "
            "above it premium; 0 is free."
        ),
        "free_providers": "Providers whose metered models are all on the free rung.",
    },
    "CatalogSettings": {
        "billing": (
            "Billing catalog overlays, relative to the settings file, applied over the shipped "
            "catalog in order."
        ),
        "models": "Model catalog overlays, relative to the settings file, applied in order.",
        "windows": (
            "Quota-window scope catalog overlays for omniladder import, tried before the shipped "
            "one."
        ),
        "include_shipped": "Use the catalogs shipped with omniladder under the overlays.",
    },
    "Settings": {
        "inputs": "Where the input files are.",
        "ladder": "Quota cutoffs, re-entry floor, reading age and cooldown clamping.",
        "budgets": "Budgets of the paid rungs.",
        "tiers": "How metered models are put on the free, cheap and premium rungs.",
        "catalogs": "Catalog overlays and whether the shipped catalogs are used.",
    },
    "BillingEntry": {
        "provider": "Provider this entry describes.",
        "auth_type": (
            "Auth type this entry describes; absent: every auth type of the provider without an "
            "entry of its own."
        ),
        "billing": "Billing class: subscription, metered, unknown or keyless.",
        "overage": "What happens past the plan: hard-stop, meters-to-paid or unknown.",
        "reason": "Why the fact holds.",
        "source": "Where the fact comes from (a URL or document).",
        "reviewed": "When the fact was last checked (YYYY-MM-DD).",
    },
    "BillingCatalog": {
        "entries": "Billing facts, one per provider and auth type.",
    },
    "ModelEntry": {
        "provider": "Provider of the model.",
        "model": "Model id, as connections name it.",
        "input_usd_per_mtok": (
            "Price in US dollars per million input tokens; decides the rung of a metered "
            "connection."
        ),
        "output_usd_per_mtok": "Price in US dollars per million output tokens.",
        "categories": (
            "Categories for auto/<category>:<tier>: coding, reasoning, vision, chat, multimodal."
        ),
        "tier": "Explicit rung (free, cheap or premium) instead of the one the price gives.",
        "as_of": "When the price was last checked (YYYY-MM-DD).",
        "source": "Where the price comes from (a URL or document).",
    },
    "ModelCatalog": {
        "models": "Model prices and categories, one per provider and model.",
    },
    "WindowScopeEntry": {
        "provider": "Provider whose quota windows this entry scopes.",
        "window": (
            "Window name or glob pattern (* any run of characters, ? one), matched case-"
            "insensitively."
        ),
        "models": "Model name patterns the window limits; {window} stands for the window's name.",
        "exclude_models": (
            "Model name patterns the window does not limit, among those models matches."
        ),
        "ignore": "true when the window limits no model (importers drop it); give this or models.",
        "zero_is_sentinel": (
            "A stored 0 that the source did not flag exhausted means unlimited or unreported: "
            "importers drop it instead of reading exhaustion."
        ),
        "duration": (
            "Length of the window (5h, 7d, 1d, or month: the calendar month up to its reset); "
            "forecast reads it when a reading gives no window_seconds."
        ),
        "anchor": (
            "When the window's cycle starts: first-use (at the first request after its reset, "
            "as Claude's and Codex's five-hour windows do) or fixed (on the schedule of its "
            "recorded resets). Absent: read as fixed, and whatif says so."
        ),
        "reason": "Why the scope holds.",
        "source": "Where the scope comes from (a URL or document).",
        "reviewed": "When the scope was last checked (YYYY-MM-DD).",
    },
    "WindowAliasEntry": {
        "provider": "Provider whose window (quota bucket) id this alias reads.",
        "window": (
            "The id the source writes (a bucket's modelId), exact and case-insensitive, without"
            " a qualifier or pattern."
        ),
        "models": (
            "The model ids that window limits; it is scoped under each of them as well as "
            "under its own name."
        ),
        "reason": "Why the alias holds.",
        "source": "Where the alias comes from (the client's own mapping, a URL or document).",
        "reviewed": "When the alias was last checked (YYYY-MM-DD).",
    },
    "WindowScopeCatalog": {
        "windows": "Window scopes, tried in order; the first that matches a window wins.",
        "sources": (
            "Which providers each import source serves; importing onto a connection of "
            "another provider is refused unless --force."
        ),
        "aliases": (
            "Window ids that name another model than the one they limit (gemini-cli's quota "
            "bucket gemini-3-flash limits gemini-3-flash-preview)."
        ),
    },
    "SourceProvidersEntry": {
        "importer": "The omniladder import source (claude-usage, codex-sessions, ...).",
        "providers": (
            "Provider ids (exactly as in the connections file) whose connections this source's "
            "telemetry describes."
        ),
        "auth_types": (
            "Auth types (exactly as in the connections file) whose connections carry this "
            "source's telemetry; absent: any. Importing onto another is refused unless --force."
        ),
        "reason": "Why the source serves these providers.",
        "source": "Where the fact comes from (a URL or document).",
        "reviewed": "When the fact was last checked (YYYY-MM-DD).",
    },
    "PlanDocument": {
        "format_version": "The document format; \"1\" (additions never change it).",
        "auto_id": "The auto id planned, e.g. auto/thrifty or auto/coding:subscription.",
        "category": "The auto id's category (coding, chat, ...), or null for none.",
        "tier": "The auto id's tier: subscription or thrifty.",
        "now": "The instant the plan was made for (RFC 3339, UTC).",
        "now_source": "Where now came from: the --now flag, the quota snapshot or the clock.",
        "settings": "The effective settings the plan was made with.",
        "rungs": "The five rungs in ladder order, each with its state.",
        "pool": "The pool in dispatch order: one entry per candidate and rung (R11, R12).",
        "excluded": "Every connection (or connection and model) left out, with its reason.",
        "connections": "How each connection bills, and where that came from (R1, R2, R2a).",
        "clamps": "Cooldowns clamped to the connection's own reset (R9).",
        "warnings": "Warnings about the inputs, one line each.",
        "summary": "The one-line verdict the table view ends with.",
        "omniladder_version": "The version that saved the plan (plan --out only).",
        "inputs": "Each input file's role, path and sha256 (plan --out only).",
    },
    "DocumentSettings": {
        "exit_cutoff_percent": "R7: a pair in play leaves at or below this remaining percent.",
        "reentry_min_remaining_percent": "R7: a pair out of play comes back only above this.",
        "max_reading_age_seconds": "R6.5: a reading older than this is stale.",
        "rung_budget_usd": "R8: the budget of each paid rung per period, in USD.",
        "budget_period": "R8: the budget period (day, week or month).",
        "clamp_cooldown_to_reset": "R9: whether a cooldown is clamped to the connection's reset.",
        "cheap_max_input_usd_per_mtok": (
            "R3: the input price per million tokens a cheap model stays within."),
        "within_rung_order": "R15: expiring-first; absent when the order is declared (R12).",
    },
    "DocumentRung": {
        "rung": "The rung: subscription, keyless, free, cheap or premium.",
        "state": "serving, exhausted, empty, disabled, budget-spent or not-in-id.",
        "candidates": "Pool entries on the rung.",
        "connections": "Connections serving on the rung.",
        "budget_usd": "The rung's budget per period in USD, or null for none.",
        "spent_usd": "What the spend ledger counts against the budget this period, or null.",
        "note": "A readable note on the rung's state.",
    },
    "DocumentMark": {
        "connection_id": "The unverified connection.",
        "reason": "Why it is unverified (a quota or status reason code).",
        "detail": "The reason in words.",
    },
    "DocumentEntry": {
        "position": "1-based place in the dispatch order.",
        "rung": "The rung of this entry.",
        "provider": "The candidate's provider.",
        "model": "The candidate's model.",
        "allowed_connection_ids": "The connections allowed to serve it, in file order.",
        "unverified_connection_ids": "The allowed connections admitted without a verified quota.",
        "unverified": "Why each unverified connection is unverified.",
        "order_reasons": ("R15 expiring-first, quota rungs only: why each allowed connection "
                          "stands where it does, in allowlist order, e.g. 5h resets in 1h57m "
                          "with 40% left: 20.5%/h."),
        "order_stale_at": ("R15 expiring-first, quota rungs only: the soonest reset among the "
                           "entry's connections (RFC 3339), by when the order may change."),
    },
    "DocumentExclusion": {
        "connection_id": "The connection left out.",
        "provider": "Its provider.",
        "model": "The model left out, or null when the reason covers every model.",
        "rung": "The rung the pair would stand on, or null.",
        "reason": "A stable reason code (SPEC §4.2).",
        "detail": "The reason in words.",
        "fix": "What would bring it back, or null.",
    },
    "DocumentConnection": {
        "id": "The connection's id.",
        "provider": "Its provider.",
        "auth_type": "Its auth type.",
        "billing": "Its billing class (R1).",
        "overage": "What happens past its quota (R2, R2a).",
        "billing_source": ("Where the billing came from: keyless, catalog, "
                           "catalog-provider-wide, uncurated or override."),
        "catalog_file": "The catalog file of its entry, or null.",
        "override": "The connection's own billing and overage settings, or null.",
        "overage_source": "Where the overage came from; observed when a reading decided it (R2a).",
        "capacity_weight": "Its capacity_weight, when the connections file gives one.",
        "reserve_percent": (
            "R16: the share of each window kept for use outside the gateway (present only "
            "when the connection sets one)."),
        "seat_price_usd": "What the seat costs per seat_period (present only when set).",
        "seat_period": ("The period of seat_price_usd: day, week or month; month when the "
                        "price is given without one (present only with a price or a period)."),
    },
    "DocumentClamp": {
        "connection_id": "The connection whose cooldown is clamped.",
        "rate_limited_until": "The configured end of the cooldown.",
        "clamped_to": "The end after the clamp: the connection's own reset.",
        "cooling": "Whether it is still cooling down at now.",
    },
    "DocumentInput": {
        "role": "What the file is to the plan (connections, quota, spend, settings, catalog).",
        "path": "The file's path as given.",
        "sha256": "The sha256 of its content.",
    },
}
"""The description of every property of every input model, by model and field name: added to
the schemas when they are generated (editors show them on hover), so the models the loaders
build at start-up carry no extra metadata. A test holds it to the models' fields exactly."""


def _describe(schema: dict[str, Any], model: str) -> None:
    known = DESCRIPTIONS.get(model, {})
    for name, prop in schema.get("properties", {}).items():
        if name in known:
            prop["description"] = known[name]


def schema_file_name(kind: str) -> str:
    return f"{kind}.schema.json"


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one input kind (validation mode: what a file may contain)."""
    schema = KINDS[kind].model_json_schema(mode="validation")
    _describe(schema, KINDS[kind].__name__)
    for model, definition in schema.get("$defs", {}).items():
        _describe(definition, model)
    return {"$schema": SCHEMA_DIALECT, **schema, "title": _TITLES[kind]}


def schema_text(kind: str) -> str:
    """The schema as committed under schemas/: two-space JSON with a final newline, generated
    for an input kind, the shipped file for an output kind (``audit-traffic``'s findings
    written from their table)."""
    if kind in KINDS:
        return _json_text(json_schema(kind))
    if kind in OUTPUT_KINDS:
        text = (shipped_schema_dir() / schema_file_name(kind)).read_text(encoding="utf-8")
        if kind in _FROM_TABLES:
            return _json_text(_FROM_TABLES[kind](json.loads(text)))
        return text
    near = close_match(kind, ALL_KINDS)
    raise UsageError(f"unknown kind {kind!r}" + (f"; did you mean {near!r}?" if near else "")
                     + f" (kinds: {', '.join(ALL_KINDS)})", field="KIND")


def _json_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _counted(names: tuple[str, ...], kind: str) -> dict[str, Any]:
    """An object's ``required`` and ``properties``: one count or sum of ``kind`` a name."""
    return {"required": list(names),
            "properties": {name: {"type": kind, "minimum": 0} for name in names}}


def _with_findings(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``audit traffic --json`` schema with every part that names the findings written
    from ``findings.FINDINGS``: the counts' keys (of the audit, a connection and an hour),
    the leak's keys and wording, and a listed event's finding. Keys keep their places."""
    every, leaking = findings.kinds(), findings.leaking()
    properties = schema["properties"]
    for counted in (properties, properties["by_connection"]["items"]["properties"],
                    properties["by_hour"]["items"]["properties"]):
        counted["counts"].update(_counted(every, "integer"))
    properties["leak_by_finding"].update(_counted(leaking, "number"))
    properties["leak_usd"]["description"] = (f"The cost of {findings.in_words(leaking)} "
                                             "events that could be priced.")
    schema["$defs"]["judged"]["properties"]["finding"]["enum"] = list(every)
    return schema


_FROM_TABLES = {"audit-traffic": _with_findings}
"""The output kinds whose shipped schema has parts written from a table of the program."""


def shipped_schema_dir() -> Path:
    """The committed schemas: inside an installed wheel, or at the top of a checkout."""
    here = Path(__file__).resolve().parent.parent  # the package: omniladder/
    for candidate in (here / "_schemas", here.parent / "schemas"):
        if (candidate / schema_file_name(OUTPUT_KINDS[0])).is_file():
            return candidate
    raise InputError("the shipped schemas are missing from this installation",
                     file=str(here / "_schemas"))
