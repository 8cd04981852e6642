"""The fidelity report: what an export could not carry to its target, and what it left out.

Every item has a stable code (the list below is pinned by a test and documented in
docs/gateways.md#fidelity; a code never changes meaning) and a level:

* ``dropped`` — part of the plan is not in the exported document;
* ``warning`` — it is, but the target may not do what the plan says unless the operator acts;
* ``info`` — how the target differs from the plan, always true of this target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

from omniladder import timefmt

Level = Literal["dropped", "warning", "info"]
LEVELS: tuple[Level, ...] = ("dropped", "warning", "info")
"""In the order a report lists them."""


class Fidelity(NamedTuple):
    code: str
    level: Level
    message: str
    connection_id: str | None = None
    provider: str | None = None
    model: str | None = None

    @property
    def subject(self) -> str:
        """What the item is about, for a table: ``connection provider/model``, or ``-``."""
        candidate = (f"{self.provider}/{self.model}" if self.provider and self.model is not None
                     else self.provider or "")
        return " ".join(part for part in (self.connection_id or "", candidate) if part) or "-"


CODES: dict[str, tuple[Level, str]] = {
    "snapshot": (
        "info", "the export holds the plan at one instant; the plan changes at every reset "
        "and every reading, so re-export on a schedule (--current says when to re-apply)"),
    "empty-export": (
        "warning", "the plan's pool is empty (or every entry was left out): a LiteLLM group "
        "with no deployment fails every request for it, as planned; an empty OmniRoute combo "
        "is no refusal (OmniRoute ignores it and resolves the name through its model "
        "mappings; newer releases refuse to create it), so do not apply it: take the "
        "deployed combo out of service"),
    "entry-dropped": (
        "dropped", "a pool entry kept no connection and is not in the export"),
    "unverified-exported": (
        "warning", "a connection with an unknown quota verdict is exported because the plan "
        "admits it (R11); --verified-only leaves such connections out"),
    "unverified-dropped": (
        "dropped", "a connection with an unknown quota verdict is left out (--verified-only)"),
    "litellm-not-mapped": (
        "dropped", "the --map names no route for the connection, so it is left out: without "
        "one LiteLLM would call the provider with whatever key its environment holds"),
    "litellm-subscription-without-api-base": (
        "dropped", "a subscription connection mapped without api_base is left out: LiteLLM "
        "holds no subscription login, and without a subscription proxy it would call the "
        "provider's metered API"),
    "litellm-no-subscription-login": (
        "info", "LiteLLM holds no Claude, Codex or Copilot login: subscription deployments "
        "reach their plan through the api_base of a subscription proxy, and the plan's "
        "hard stop holds only as far as that proxy refuses past the plan"),
    "litellm-default-credentials": (
        "warning", "a metered connection mapped without api_key_env: LiteLLM uses the "
        "provider's default credentials from its environment, which may be another account"),
    "litellm-env-vars": (
        "info", "the environment variables LiteLLM must hold; a missing one is not no key: "
        "LiteLLM falls back to the provider's default variable (OPENAI_API_KEY for "
        "openai/…) when its environment holds one"),
    "litellm-order-fallback": (
        "warning", "escalation is carried by litellm_params.order inside one model group, "
        "which LiteLLM follows exactly from 1.101.0 on (the version the ladder is verified "
        "on); up to 1.82.6 order is ignored unless router_settings.enable_pre_call_checks is "
        "true, so paid rungs take requests while subscriptions answer, and 1.83.0 to 1.100.5 "
        "draw the next pick from every remaining order once two orders failed in one "
        "request, so a paid rung can answer before a healthy free one"),
    "litellm-budget-not-enforced": (
        "warning", "a paid rung's budget was checked when the plan was made; LiteLLM does not "
        "know it, so spend past it is stopped only by the next export"),
    "litellm-outside-fallbacks": (
        "info", "the export writes no fallbacks: a fallbacks entry for this group, a '*' "
        "entry or default_fallbacks in your router_settings or litellm_settings would route "
        "failed requests out of the plan's pool"),
    "omniroute-call-combo-name": (
        "info", "clients must call the combo by its name: OmniRoute builds auto/… as a virtual "
        "combo whose filtering falls back to the full pool"),
    "omniroute-verify-allowlists": (
        "warning", "OmniRoute may store the combo without a step's allowedConnectionIds or "
        "fallbackOnlyOnQuotaExhaustion (3.8.50 strips both from every step, and no version "
        "is known to keep both); a step without its allowlist may use, and bill, every "
        "connection of its provider: read the combo back with --current right after "
        "applying, and when it differs take the combo out of service (DELETE "
        "/api/combos/{id})"),
    "omniroute-quota-only-steps": (
        "info", "subscription steps are marked fallbackOnlyOnQuotaExhaustion: a 429, timeout "
        "or 5xx there fails the request instead of stepping to a paid rung"),
    "litellm-steps-down-on-any-error": (
        "warning", "LiteLLM moves to the next order on any failure, not only when a plan "
        "is spent: a 429, a 5xx, a timeout, even a 401 or a 400 (a bad proxy key, a bad "
        "request) is answered by the next rung, at last a paid one; the OmniRoute export's "
        "quota-only subscription steps fail such a request instead"),
    "litellm-subscription-default-key": (
        "warning", "a subscription route's model_prefix names a provider whose default key "
        "variable LiteLLM falls back to when the route's own is unset: it would send that "
        "metered key to the subscription proxy"),
    "omniroute-split-candidate": (
        "warning", "the plan splits a mixed candidate by rung into two steps (R11); "
        "OmniRoute's own ladder keeps its metered key at the subscription rung (SPEC §5), so "
        "the split holds only while each step keeps its allowedConnectionIds"),
    "omniroute-per-model-window": (
        "warning", "a connection spent for some models only still routes others; OmniRoute "
        "reads one exhausted per-model window as the whole connection spent (SPEC §5) and "
        "skips it on the step, so the request moves on to the next step"),
    "omniroute-hysteresis-hold": (
        "info", "the plan holds the connection out until it is back above the re-entry floor "
        "(R7), a rule OmniRoute does not have (SPEC §5): the combo keeps it out until an "
        "export re-admits it, while OmniRoute's own auto ids would use it again at once"),
    "omniroute-cooldown-not-clamped": (
        "warning", "the plan ended a cooldown at the connection's reset (R9); OmniRoute never "
        "clamps (SPEC §5) and skips the connection on its step until the cooldown it holds "
        "ends, so the request moves on to the next step"),
    "omniroute-budget-not-enforced": (
        "warning", "a paid rung's budget was checked when the plan was made; OmniRoute "
        "enforces no positive rung budget (SPEC §5), so spend past it is stopped only by "
        "the next export"),
    "omniroute-budget-spent": (
        "info", "a paid rung whose budget is spent has no step in the combo; OmniRoute's own "
        "ladder would still route to it (SPEC §5)"),
    "omniroute-coding-filter": (
        "info", "the combo holds only the models the catalog files under coding (R13); "
        "OmniRoute's own coding category filters nothing (SPEC §5), so clients call the "
        "combo, never auto/coding…"),
    "omniroute-provider-order": (
        "info", "the combo lists its steps in the plan's order with providers interleaved "
        "(R12), and runs them so under strategy priority; OmniRoute's own ladder orders "
        "candidates grouped by provider (SPEC §5), which a client calling auto/… would get"),
    "order-until-next-export": (
        "warning", "the plan orders its quota rungs expiring-first (R15): the seat whose "
        "quota must be burnt fastest goes first, an order that moves as resets near; the "
        "export holds the order of one instant only until the next export, at the latest "
        "until the soonest reset among the rung's ordered connections: re-export before it"),
    "reserve-not-held": (
        "warning", "an exported connection keeps a reserve (R16) that the plan holds and the "
        "gateway cannot: the gateway does not know it and routes to the connection until the "
        "vendor refuses, so between two exports it can spend the reserve; the plan takes the "
        "connection out at the first reading at or below its reserve, which reaches the "
        "gateway with the next export"),
}
"""Every code an export can report: its level and what it means."""


def item(code: str, message: str | None = None, *, connection_id: str | None = None,
         provider: str | None = None, model: str | None = None) -> Fidelity:
    """A report item of a known code; the message defaults to the code's meaning."""
    level, meaning = CODES[code]
    return Fidelity(code=code, level=level, message=message or meaning, connection_id=connection_id,
                    provider=provider, model=model)


class Tally:
    """Items about connections: one per (code, connection), however many pool entries the
    connection is in, so a fleet of thousands gets a report an operator can read."""

    SHOWN = 3
    """Entries a message names before it counts the rest."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], tuple[str, str, list[str]]] = {}

    def add(self, code: str, connection_id: str, provider: str, model: str,
            detail: str | None = None) -> None:
        """One more entry of the connection under ``code``; the first entry's detail is the
        item's (the code's meaning when None)."""
        key = (code, connection_id)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = (provider, detail or CODES[code][1], [])
        found[2].append(model)

    def items(self) -> list[Fidelity]:
        out: list[Fidelity] = []
        for (code, cid), (provider, detail, models) in self._found.items():
            count = len(models)
            if count == 1:  # the subject names the one entry
                out.append(item(code, detail, connection_id=cid, provider=provider,
                                model=models[0]))
                continue
            named = ", ".join(f"{provider}/{model}" for model in models[:self.SHOWN])
            if count > self.SHOWN:
                named += f" and {count - self.SHOWN} more"
            out.append(item(code, f"{detail} — in {count} pool entries: {named}",
                            connection_id=cid, provider=provider))
        return out


def order_items(stale_at: dict[str, str] | None, rungs: set[str],
                held: str) -> list[Fidelity]:
    """R15: one ``order-until-next-export`` per exported quota rung of an expiring-first
    plan, naming the instant its order goes stale; ``held`` says how the target holds it."""
    if stale_at is None:
        return []
    found: list[Fidelity] = []
    for rung in ("subscription", "keyless", "free"):
        if rung not in rungs:
            continue
        when = stale_at.get(rung)
        until = (f"stale after {when} (the soonest reset among its ordered connections)"
                 if when is not None else "no reset among its connections is known")
        found.append(item("order-until-next-export",
                          f"{rung}: the expiring-first order is {held}; it holds only until "
                          f"the next export: {until}"))
    return found


def reserve_items(reserves: Mapping[str, float], exported: set[str],
                  gateway: str) -> list[Fidelity]:
    """R16: one ``reserve-not-held`` per exported connection that keeps a reserve, in the
    plan's order of connections; ``gateway`` names the target in the message."""
    return [item("reserve-not-held", (
        f"{cid} keeps {timefmt.pct(reserve)} of each window for use outside the gateway "
        f"(reserve_percent, R16); {gateway} does not know it and routes to {cid} until the "
        "vendor refuses, so between two exports it can spend the reserve (the plan takes "
        f"it out at the first reading at or below {timefmt.pct(reserve)}, the gateway at "
        "the next export)"), connection_id=cid)
        for cid, reserve in reserves.items() if reserve > 0 and cid in exported]


def ordered(items: list[Fidelity]) -> tuple[Fidelity, ...]:
    """Dropped first, then warnings, then info; stable within a level."""
    return tuple(sorted(items, key=lambda found: LEVELS.index(found.level)))
