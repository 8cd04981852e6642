"""A plan as an OmniRoute combo: the body of ``POST /api/combos`` (or ``PUT /api/combos/{id}``).

Facts read in OmniRoute's source (diegosouzapw/OmniRoute, and xz-dev/OmniRoute, the fork of
the PR that added quota-only steps):

* ``src/app/api/combos/route.ts``: ``POST /api/combos`` validates the body with
  ``createComboSchema`` and refuses a name that exists (``PUT /api/combos/[id]`` updates);
* ``src/shared/validation/schemas/combo.ts``: ``createComboSchema`` takes ``name``
  (``comboNameSchema``: ``^[a-zA-Z0-9_/.\\-\\[\\] ]+$``, ≤ 100), ``description`` (≤ 2000),
  ``models`` (the steps) and ``strategy`` (default ``priority``); a model step
  (``comboModelStepInputSchema``) takes ``kind: "model"``, ``providerId``, ``model``
  (≤ 300), ``label`` (≤ 200); ``fallbackOnlyOnQuotaExhaustion`` is a step field since
  diegosouzapw/OmniRoute PR #9983 (the combo moves past the step only on trusted quota or
  billing exhaustion, never on a 429, timeout or 5xx; dormant for strategies but priority);
* ``src/lib/combos/steps.ts``: a step's ``allowedConnectionIds`` is kept only when it is a
  non-empty list, and ``open-sse/services/combo/comboStructure.ts`` passes it to credential
  selection as the step's account allowlist (issue #3266, PR #12697). A step without one may
  use every connection of its provider, so an entry is never written with an empty list;
* zod objects drop keys their schema does not list, so on a version whose step schema lacks
  ``allowedConnectionIds`` the POST succeeds and the allowlist is gone: the report says to
  read the combo back (``GET /api/combos``) and compare it with ``--current``.

Connection ids are OmniRoute's own (``provider_connections.id``, which ``import omniroute``
keeps), so no map is needed. Each step names the full ``provider/model`` string and its
``providerId``, as ``steps.ts`` normalises a step, so a model id holding a ``/`` keeps its
provider.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from omniladder import timefmt
from omniladder.analyses.export.compare import by_identity
from omniladder.analyses.export.fidelity import (
    Fidelity,
    Tally,
    item,
    order_items,
    reserve_items,
)
from omniladder.analyses.export.litellm import redacted
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportPlan
from omniladder.analyses.export.targets import Built, ExportTarget
from omniladder.errors import InputError


def build(plan: ExportPlan, *, verified_only: bool
          ) -> tuple[dict[str, Any], list[Fidelity], int]:
    """The combo document, the report's items, and how many pool entries it holds."""
    items: list[Fidelity] = [item("snapshot", f"planned for {plan.now}; the plan changes at "
                                  "every reset and reading: re-export on a schedule, and "
                                  "re-apply when --current says it differs")]
    steps: list[dict[str, Any]] = []
    tally = Tally()
    dropped: list[Fidelity] = []
    for entry in plan.entries:
        marks = {mark.connection_id: mark for mark in entry.unverified}
        allowed: list[str] = []
        for cid in entry.allowed:
            mark = marks.get(cid)
            if mark is None:
                allowed.append(cid)
                continue
            why = mark.reason + (f": {mark.detail}" if mark.detail else "")
            where = (cid, entry.provider, entry.model)
            if verified_only:
                tally.add("unverified-dropped", *where,
                          f"unverified ({why}); left out under --verified-only")
            else:
                tally.add("unverified-exported", *where, f"unverified ({why}); exported as the "
                          "plan admits it (R11); --verified-only leaves it out")
                allowed.append(cid)
        if not allowed:
            dropped.append(item("entry-dropped", f"{entry.rung} entry at position "
                                f"{entry.position} kept no connection",
                                provider=entry.provider, model=entry.model))
            continue
        # R15: an expiring-first quota rung is one step per connection, in the plan's
        # order (a step's allowlist names who may serve, not who goes first); a 429 moves
        # on to the entry's next connection, and only its last step holds the request to
        # quota exhaustion, as the entry's one step does otherwise
        split = plan.expiring_first and entry.rung not in PAID
        groups = [[cid] for cid in allowed] if split else [allowed]
        for number, group in enumerate(groups, start=1):
            step: dict[str, Any] = {"kind": "model", "providerId": entry.provider,
                                    "model": f"{entry.provider}/{entry.model}",
                                    "allowedConnectionIds": group,
                                    "label": f"{entry.rung} rung"}
            if entry.rung == "subscription" and number == len(groups):
                step["fallbackOnlyOnQuotaExhaustion"] = True
            steps.append(step)
    items += tally.items() + dropped
    if not steps:
        items.append(item("empty-export", f"no step: do not apply it. OmniRoute ignores an "
                          f"empty combo and resolves {plan.name} through its model mappings "
                          "(newer releases refuse to create one), so it is no refusal: take "
                          "a deployed combo out of service instead (DELETE "
                          "/api/combos/{id}), which leaves the name unresolved, as the "
                          "empty plan says"))
    if any(step.get("fallbackOnlyOnQuotaExhaustion") for step in steps):
        items.append(item("omniroute-quota-only-steps"))
    items += divergences(plan, steps)
    items += order_items(plan.order_stale_at, {step["label"].removesuffix(" rung")
                                               for step in steps},
                         "held by one step per connection, in the plan's order")
    items += reserve_items(plan.reserves or {}, {cid for step in steps
                                                 for cid in step["allowedConnectionIds"]},
                           "OmniRoute")
    items.append(item("omniroute-call-combo-name",
                      f"clients must call {plan.name}, not {plan.auto_id.text}: OmniRoute "
                      "builds auto/… as a virtual combo whose filtering falls back to the "
                      "full pool"))
    items.append(item("omniroute-verify-allowlists"))
    document = {
        "name": plan.name,
        "description": f"Managed by omniladder: {plan.auto_id.text} planned for {plan.now}. "
                       "Re-exported on a schedule; edits here are overwritten.",
        "strategy": "priority",
        "models": steps,
    }
    return document, items, len(steps)


QUOTA_OUT = frozenset({"quota-exhausted", "quota-below-cutoff", "quota-below-reentry"})
"""The reasons of an exhausted quota verdict (R6, R7) that OmniRoute reads as exhausted too,
so one of a per-model window makes it skip the whole connection (SPEC §5). Not
``quota-below-reserve`` (R16): that pair is out only because of a reserve OmniRoute does
not know, at a figure above the ladder's own thresholds, so OmniRoute skips nothing for it;
the combo leaves the pair out as it leaves out every excluded pair."""
PAID = ("cheap", "premium")


def divergences(plan: ExportPlan, steps: list[dict[str, Any]]) -> list[Fidelity]:
    """The items of SPEC §5 that change what the exported combo does on OmniRoute, whose
    own ladder lacks the rule: each named where this plan meets it."""
    found: list[Fidelity] = []
    seen: dict[str, tuple[int, str]] = {}
    for index, step in enumerate(steps, start=1):
        first, label = seen.setdefault(step["model"], (index, step["label"]))
        if label != step["label"]:  # one step per connection on one rung is no split
            found.append(item("omniroute-split-candidate", (
                f"{step['model']} is split by rung into steps {first} and {index} (R11): "
                "OmniRoute's own ladder keeps a mixed candidate's metered key at the "
                "subscription rung (SPEC §5), so the split holds only while each step keeps "
                "its allowedConnectionIds"), provider=step["providerId"],
                model=step["model"].split("/", 1)[1]))
    in_steps = {cid: step["model"] for step in steps for cid in step["allowedConnectionIds"]}
    spent = {(e.connection_id, e.model) for e in plan.excluded if e.reason in QUOTA_OUT
             and e.model is not None and e.connection_id in in_steps}
    for cid in dict.fromkeys(cid for cid, _ in spent):
        models = sorted(model for one, model in spent if one == cid and model is not None)
        found.append(item("omniroute-per-model-window", (
            f"{cid} is spent for {', '.join(models)} only and still routes "
            f"{in_steps[cid]}: OmniRoute reads one exhausted per-model window as the whole "
            "connection spent (SPEC §5), so it skips the connection on that step and the "
            "request moves on to the next step"), connection_id=cid))
    for cid in dict.fromkeys(e.connection_id for e in plan.excluded
                             if e.reason == "quota-below-reentry"):
        found.append(item("omniroute-hysteresis-hold", connection_id=cid))
    for clamp in plan.clamps:
        if clamp.connection_id in in_steps and not clamp.cooling \
                and _after(clamp.rate_limited_until, plan.now):
            found.append(item("omniroute-cooldown-not-clamped", (
                f"the plan ended {clamp.connection_id}'s cooldown at its reset (R9), but "
                f"OmniRoute never clamps (SPEC §5) and holds it until "
                f"{clamp.rate_limited_until}: it skips the connection on its step, and the "
                "request moves on to the next step"), connection_id=clamp.connection_id))
    rungs = {step["label"].removesuffix(" rung") for step in steps}
    for rung in PAID:
        if rung in rungs:
            note = plan.rung_notes.get(rung, "")
            found.append(item("omniroute-budget-not-enforced", (
                f"{rung}: {note or 'budget checked when planned'}; OmniRoute enforces no "
                "positive rung budget (SPEC §5): spend past it is stopped only by the next "
                "export")))
    for rung in PAID:
        if rung not in rungs and any(e.reason == "budget-spent" and e.rung == rung
                                     for e in plan.excluded):
            found.append(item("omniroute-budget-spent", (
                f"{rung}: its budget is spent, so the combo has no {rung} step; OmniRoute's "
                "own ladder enforces no positive budget (SPEC §5) and would still route to "
                "it: call the combo, not an auto id")))
    if plan.auto_id.category == "coding":
        found.append(item("omniroute-coding-filter"))
    providers = [step["providerId"] for step in steps]
    if providers != sorted(providers, key=providers.index):
        found.append(item("omniroute-provider-order"))
    return found


def _after(instant: str, now: str) -> bool:
    """Whether an RFC 3339 instant lies after ``now``; False when either cannot be read."""
    try:
        return timefmt.from_rfc3339(instant) > timefmt.from_rfc3339(now)
    except ValueError:
        return False


def document_text(document: dict[str, Any]) -> str:
    """The request body as it is sent (``curl --data @FILE``)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- what is deployed -----------------------------------------------------------------------


def parse_current(text: str, shown: str) -> Any:
    """A deployed combo document: JSON, any of the shapes ``find_combo`` takes."""
    from omniladder.inputs.documents import parse_json

    return parse_json(text, shown, hint="--current reads the export's combo or OmniRoute's "
                      "GET /api/combos answer")


def find_combos(data: Any, name: str, shown: str) -> list[tuple[str, dict[str, Any]]]:
    """Every combo named ``name`` in a deployed document, with where it sits: a combo itself
    (the export, or ``GET /api/combos/{id}``), ``{"combos": [...]}`` (``GET /api/combos``)
    or a list of combos. [] when no combo has that name: it is not deployed yet."""
    if isinstance(data, dict) and "combos" in data:
        listed, field = data["combos"], "combos"
    elif isinstance(data, list):
        listed, field = data, ""
    elif isinstance(data, dict):
        listed, field = [data], ""
    else:
        raise InputError("not a combo: the top level must be an object or a list",
                         file=shown)
    if not isinstance(listed, list):
        raise InputError("must be a list of combos", file=shown, field=field or None)
    found: list[tuple[str, dict[str, Any]]] = []
    for index, combo in enumerate(listed):
        where = f"{field}[{index}]" if field else (f"[{index}]" if isinstance(data, list)
                                                     else None)
        if not isinstance(combo, dict) or not isinstance(combo.get("name"), str):
            raise InputError("a combo must be an object with a name", file=shown,
                             field=where)
        if combo["name"].strip() == name:
            if not isinstance(combo.get("models", []), list):
                raise InputError("must be a list of steps", file=shown,
                                 field=f"{where}.models" if where else "models")
            found.append((where or "the combo", combo))
    return found


def differences_of(name: str, exported: dict[str, Any],
                   combos: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], int]:
    """How what is deployed under the managed name differs from the export, and how many
    steps the deployed combos hold. Two combos of the name are a difference of their own,
    whatever their order: which one a request meets is the gateway's choice, so each is
    compared and each difference names its combo."""
    if len(combos) < 2:
        combo = combos[0][1] if combos else None
        steps = len(combo.get("models", [])) if combo is not None else 0
        return differences(name, exported, combo), steps
    found = [f"{len(combos)} combos named {name} are deployed ("
             + ", ".join(where for where, _ in combos) + "): keep one, and delete the others "
             "(DELETE /api/combos/{id}), since a request for the name meets only one of them"]
    for where, combo in combos:
        found += [f"{where}: {line}" for line in differences(name, exported, combo)]
    return found, sum(len(combo.get("models", [])) for _, combo in combos)


def differences(name: str, exported: dict[str, Any], current: dict[str, Any] | None
                ) -> list[str]:
    """How the deployed combo routes differently from the export; [] when it does not.

    Compared: the strategy, whether the combo is active, and each step's provider, full
    model string, pinned connection, allowlist and quota-only mark, in the order OmniRoute
    runs the steps (``config.compositeTiers`` may reorder them); a ``config.evalRouting``
    that reorders them by eval scores (``_eval_ordered``); and a
    ``config.shadowRouting`` that copies requests to any target (``_shadow_targets``).
    Not compared: the
    description (it holds the plan's instant), labels, weights, the ids OmniRoute adds, and
    ``config.strategy``: OmniRoute dispatches by the top-level ``strategy`` (``priority``
    when absent; ``phaseComboSetup`` in diegosouzapw/OmniRoute
    ``open-sse/services/combo/comboSetup.ts`` @ 02bac80bf5253baf41d2153ad906165f795c30b4),
    and ``config.strategy`` only joins the merged runtime config.
    """
    if current is None:
        return [f"no combo named {name} is deployed"]
    found: list[str] = []
    strategy = current.get("strategy", "priority")
    if strategy != exported["strategy"]:
        found.append(f"strategy is {json.dumps(redacted(strategy))} deployed, "
                     f"{exported['strategy']} in the export")
    if current.get("isActive") is False:
        found.append("the deployed combo is inactive (isActive false)")
    listed = current.get("models", [])
    run = _run_order(name, listed, current.get("config"))
    ours = [_routing(step) for step in exported["models"]]
    theirs = [_routing(listed[index]) for index in run]
    if run != list(range(len(listed))) and ours != theirs:
        # PUT /api/combos/{id} merges the body into the stored combo (diegosouzapw/OmniRoute
        # src/app/api/combos/[id]/route.ts @ b7e1c1ae7d3797a5d0a52c4fdfcc827c30b3c243), so
        # re-applying the export, which has no config, leaves the tiers in place.
        found.append("config.compositeTiers runs the deployed steps in the order "
                     + ", ".join(str(index + 1) for index in run) + " (their places as "
                     "listed; the steps below are compared in that order)"
                     + _stays("compositeTiers"))
    if _eval_ordered(current.get("config")) and len(listed) > 1:
        found.append("config.evalRouting runs the deployed steps in the order of the "
                     "gateway's eval scores, best first, once it holds eval runs for their "
                     "models, not in the plan's order" + _stays("evalRouting"))
    if ours and not theirs:
        found.append(f"the deployed combo {name} has no step: the export's {len(ours)} "
                     f"step{'' if len(ours) == 1 else 's'} "
                     f"{'is' if len(ours) == 1 else 'are'} to apply")
    elif theirs and not ours:
        found.append(f"the export empties the deployed combo {name}: its {len(theirs)} "
                     f"step{'' if len(theirs) == 1 else 's'} go (see empty-export: do not "
                     "apply it, take the combo out of service)")
    else:
        found += by_identity(ours, theirs, key=_step_name, name=_step_name, show=_show,
                             same=lambda mine, deployed: mine == deployed, noun="step")
    if _connection_aware(current.get("config")):
        found.append("config.connectionAwareExpansion expands each step into one target per "
                     "account of its provider before the attempt loop, and skips an account "
                     "with a persisted cooldown without the quota-only protection, so a "
                     "subscription step's 429 or 5xx can move the request on to a paid step"
                     + _stays("connectionAwareExpansion"))
    copied = _shadow_targets(current.get("config"))
    if copied:
        found.append("config.shadowRouting copies requests to "
                     + ", ".join(_show(target) for target in copied) + ": each copy is a "
                     "request of its own, which spends its target's quota or bills its "
                     "rung beyond what the plan routes" + _stays("shadowRouting", "; "))
    return found


def _step_name(routing: dict[str, Any]) -> str:
    """What names a step in a difference: its ``provider/model`` (or the combo it refers
    to), else the step itself."""
    target = routing.get("model", routing.get("comboName"))
    if isinstance(target, str):
        return json.dumps(target, ensure_ascii=False)
    return _show(routing)


def _stays(key: str, joint: str = ": ") -> str:
    """Why a deployed ``config`` setting outlives a re-applied export, and what to do."""
    return (f"{joint}the export writes no config, and re-applying it keeps the deployed one, "
            f"so remove {key} from the combo")


def _shadow_targets(config: Any) -> list[dict[str, Any]]:
    """The targets ``config.shadowRouting`` copies requests to, as ``_routing`` reads them.

    Shadow routing runs when its ``enabled`` is the boolean true, its ``sampleRate``
    (default 1) is above 0 and it lists ``targets``; a sampled share of the combo's requests
    is then sent again, as a request of its own, to each of the first ``maxTargets``
    (default 2, 1 to 10) targets, a step or a combo reference like the combo's own
    (``normalizeShadowRoutingConfig``, ``resolveShadowTargets`` and
    ``scheduleShadowRouting`` in diegosouzapw/OmniRoute
    ``open-sse/services/combo/shadowRouting.ts`` @
    14145a51559b51f40f68077ac252b790dc176575). Every copy is a difference, even to a step
    the plan holds: it spends that step's quota, or bills its paid rung, a second time for
    a request the plan routes once."""
    shadow = config.get("shadowRouting") if isinstance(config, dict) else None
    if not isinstance(shadow, dict) or shadow.get("enabled") is not True:
        return []
    targets = shadow.get("targets")
    if not isinstance(targets, list) or _js_number(shadow.get("sampleRate"), 1) <= 0:
        return []
    first = max(1, min(10, math.floor(_js_number(shadow.get("maxTargets"), 2))))
    return [_routing(target) for target in targets[:first]]


def _js_number(value: Any, default: float) -> float:
    """``Number(value ?? default)`` as JavaScript reads a JSON value, or ``default`` where
    that is not a finite number (the fallback ``normalizeShadowRoutingConfig`` takes)."""
    if value is None:
        return default
    try:
        if isinstance(value, str):
            number = float(value.strip() or 0)
        elif isinstance(value, int | float):  # bool is an int: true is 1, false is 0
            number = float(value)
        else:
            return default
    except (ValueError, OverflowError):
        return default
    return number if math.isfinite(number) else default


def _connection_aware(config: Any) -> bool:
    """Whether the combo's own ``config.connectionAwareExpansion`` is the boolean true: it
    then expands each provider-level step into per-account targets for every strategy of
    OmniRoute's group B, ``priority`` among them (``shouldApplyConnectionAwareExpansion``
    in OmniRoute's ``open-sse/services/combo/connectionAwareExpansion.ts``; the combo's
    value wins over the settings' ``connectionAwareExpansion``, default false). The
    settings' value is the gateway's, never in the combo."""
    return isinstance(config, dict) and config.get("connectionAwareExpansion") is True


def _eval_ordered(config: Any) -> bool:
    """Whether ``config.evalRouting`` reorders the steps: when its ``enabled`` is the boolean
    true, OmniRoute sorts the combo's targets by the score of the eval runs it holds for
    their models (pass rate and latency), scored ones first and the rest after in their
    order, before the attempt loop runs them (``orderTargetsByEvalScores`` in
    ``open-sse/services/evalRouting.ts``, read in michaeljcfspb/OmniRoute @
    b3c3b396224b5b3070b934b35e8aeb906c3e999a, a fork of diegosouzapw/OmniRoute, whose
    ``open-sse/services/combo/targetResolution.ts`` @
    24e31285c22d452ef629163099533caf17b58d47 calls it). Which runs exist is the gateway's
    state, never in the combo, so an enabled one is taken as reordering."""
    evaluated = config.get("evalRouting") if isinstance(config, dict) else None
    return isinstance(evaluated, dict) and evaluated.get("enabled") is True


def _run_order(name: str, steps: list[Any], config: Any) -> list[int]:
    """The positions of ``steps`` in the order OmniRoute runs them.

    ``config.compositeTiers`` (``{defaultTier, tiers: {name: {stepId, fallbackTier}}}``)
    puts first the steps of the tier chain from ``defaultTier``, then those of the other
    tiers, then the rest as listed; a step named twice runs once, at its first place
    (``getCompositeTierStepOrder`` and ``orderRuntimeStepsByCompositeTiers`` in
    diegosouzapw/OmniRoute ``open-sse/services/combo/comboStructure.ts`` @
    02c2bcc29ceea24143d80910533748e6867909f7). Steps are named by the id OmniRoute gives
    them (``_step_id``). A step OmniRoute cannot read keeps its place in the tail, so the
    comparison still names it."""
    order = _tier_order(config)
    if not order:
        return list(range(len(steps)))
    ids = [_step_id(name, index, step) for index, step in enumerate(steps)]
    by_id = {step_id: index for index, step_id in enumerate(ids) if step_id is not None}
    placed: set[str] = set()
    run: list[int] = []
    for step_id in order:
        if step_id in by_id and step_id not in placed:
            run.append(by_id[step_id])
            placed.add(step_id)
    for index, own_id in enumerate(ids):
        if own_id is None or own_id not in placed:
            run.append(index)
            if own_id is not None:
                placed.add(own_id)
    return run


def _tier_order(config: Any) -> list[str]:
    """The step ids ``config.compositeTiers`` names, in the order it runs them; [] when it
    reorders nothing."""
    tiers_config = config.get("compositeTiers") if isinstance(config, dict) else None
    if not isinstance(tiers_config, dict):
        return []
    default = _trimmed(tiers_config.get("defaultTier"))
    tiers = tiers_config.get("tiers")
    if default is None or not isinstance(tiers, dict):
        return []
    entries: dict[str, tuple[str, str | None]] = {}
    for tier_name in _js_key_order(tiers):
        tier, key = tiers[tier_name], _trimmed(tier_name)
        step_id = _trimmed(tier.get("stepId")) if isinstance(tier, dict) else None
        if key is not None and step_id is not None:
            entries[key] = (step_id, _trimmed(tier.get("fallbackTier")))
    order: list[str] = []
    visited: set[str] = set()
    current: str | None = default
    while current is not None and current in entries and current not in visited:
        visited.add(current)
        step_id, current = entries[current]
        if step_id not in order:
            order.append(step_id)
    order += [step_id for step_id, _ in entries.values() if step_id not in order]
    return order


def _js_key_order(record: dict[str, Any]) -> list[str]:
    """The keys in the order JavaScript's ``Object.entries`` gives them: array-index keys
    (``"0"``, ``"12"``) first in numeric order, then the others as written."""
    def is_index(key: str) -> bool:
        return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") \
            and int(key) < 2**32 - 1
    indexes = sorted((key for key in record if is_index(key)), key=int)
    return indexes + [key for key in record if not is_index(key)]


def _step_id(name: str, index: int, step: Any) -> str | None:
    """The id OmniRoute gives the step at ``index`` (``normalizeComboStep`` in
    diegosouzapw/OmniRoute ``src/lib/combos/steps.ts`` @
    8d241cbd66c8b317411a29b42c00994b15cef6f6): its own ``id``, else
    ``<combo>-model-<position>-<target>`` (``-ref-`` for a combo reference) in slugs,
    where the target is the full model string, with ``:<connectionId>`` when pinned.
    None for a step OmniRoute drops. A string or kind-less step naming another combo is
    taken as a model here: OmniRoute would read it as a reference."""
    if isinstance(step, str):
        target = step.strip()
        return _built_id(name, "model", index, target) if target else None
    if not isinstance(step, dict):
        return None
    own = _trimmed(step.get("id"))
    if step.get("kind") == "combo-ref":
        ref = _trimmed(step.get("comboName"))
        return None if ref is None else own or _built_id(name, "ref", index, ref)
    model = _trimmed(step.get("model"))
    if model is None:
        return None
    if own is not None:
        return own
    provider = _trimmed(step.get("providerId")) or _trimmed(step.get("provider"))
    if "/" not in model and provider is not None:
        model = f"{provider}/{model}"
    pin = _trimmed(step.get("connectionId"))
    return _built_id(name, "model", index, f"{model}:{pin}" if pin else model)


def _built_id(name: str, kind: str, index: int, seed: str) -> str:
    parts = (_slug(name or "combo"), kind, str(index + 1), _slug(seed))
    return "-".join(parts)[:200]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "step"


def _trimmed(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _routing(step: Any) -> dict[str, Any]:
    """What routes in a step, as OmniRoute normalises it (``normalizeComboStep``): the kind,
    the full ``provider/model``, the pinned ``connectionId`` (absent or null = none), the
    allowlist (absent = []) and the quota-only mark (absent = false).

    The export never pins a step, but a deployed step may be pinned (the combo builder's
    connection selector): OmniRoute's credential layer then filters to that one connection
    before any selection (issue #3266, PR #12697), whatever the allowlist says."""
    if isinstance(step, str):
        step = {"model": step}
    if not isinstance(step, dict):
        return {"step": redacted(step)}
    kind = step.get("kind", "model")
    if kind == "combo-ref":
        return {"kind": kind, "comboName": step.get("comboName")}
    model = step.get("model")
    provider = step.get("providerId") or step.get("provider")
    if isinstance(model, str) and "/" not in model and isinstance(provider, str):
        model = f"{provider}/{model}"
    allowed = step.get("allowedConnectionIds") or []
    routing = {"kind": kind, "model": model}
    if step.get("connectionId"):  # only when pinned, so an unpinned step reads as before
        routing["connectionId"] = step["connectionId"]
    return {**routing,
            "allowedConnectionIds": list(allowed) if isinstance(allowed, list) else allowed,
            "fallbackOnlyOnQuotaExhaustion": step.get("fallbackOnlyOnQuotaExhaustion") is True}


def _show(step: dict[str, Any]) -> str:
    return json.dumps(redacted(step), ensure_ascii=False, separators=(", ", ": "))


class OmniRoute(ExportTarget):
    """The ``omniroute`` export target: a combo (``TARGETS``)."""

    name = "omniroute"
    unit = "step"
    group = "combo"
    format = "json"
    map_refusal = ("--map is for litellm: OmniRoute combos name OmniRoute's own connection "
                   "ids, so an omniroute export needs no map")

    def build(self, plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None, *,
              verified_only: bool) -> Built:
        document, items, entries = build(plan, verified_only=verified_only)
        return Built(document, document_text(document), items, entries,
                     len(document["models"]))

    def compare(self, name: str, document: dict[str, Any], text: str,
                shown: str) -> tuple[list[str], int]:
        combos = find_combos(parse_current(text, shown), name, shown)
        return differences_of(name, document, combos)


TARGET = OmniRoute()
