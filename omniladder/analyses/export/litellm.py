"""A plan as a LiteLLM proxy ``config.yaml`` fragment: one model group per auto id.

The group is named ``managed_name(auto_id)`` (``omniladder-thrifty``); each pool entry
becomes one deployment per allowed connection, in the plan's order, with
``litellm_params.order`` = the entry's rank among the exported entries (1, 2, …); under R15's
``expiring-first`` each connection of a quota rung's entry takes its own rank (order
sub-levels), so the allowlist is tried in the plan's order rather than balanced. LiteLLM
tries the lowest order first and, with order-based fallback, the next order when it fails
(``_get_deployment_order`` in BerriAI/litellm ``litellm/utils.py`` reads
``litellm_params.order``; PR #24611 "order-based fallback across deployment priority
levels"), exactly so from 1.101.0 on (``VERIFIED_ON``; older versions route otherwise, and
the report warns of it). So the ladder lives inside one group and the export needs no
``fallbacks``: it writes no ``router_settings`` at all (they would apply to every group of
the proxy), and ``auto/subscription`` can never fall out of its group into a paid one (the
trap of BerriAI/litellm issue #41344). The next order answers any failure, not only a
spent plan, and an unset key variable falls back to the provider's default one: the
report says both.

Fields written, all documented by LiteLLM (docs.litellm.ai/docs/proxy/configs,
/docs/proxy/load_balancing; schemas/export-litellm.schema.json lists them):
``model_name``; ``litellm_params.model`` (the map's ``model_prefix`` + the plan's model),
``api_base``, ``api_key`` (``os.environ/NAME``, never a value) and ``order``;
``model_info.id``.

``model_info.id`` is the key LiteLLM's router keeps each deployment's state under (cooldowns,
``model_id_to_deployment_index_map``, one index per id), so it must be unique across the
whole ``model_list``. A connection serves several models and sits in several auto ids, so
the id is ``<group>~<connection>~<provider>~<model>``, each part escaped so that no ``:``
reaches it (``deployment_id``): unique, and still names the connection first after the
group.

The document is written as JSON, the subset of YAML every YAML loader reads (LiteLLM loads
its config with PyYAML's ``safe_load``), with a comment header. Characters YAML 1.1 does not
allow raw in a stream, or reads as line breaks, are written as ``\\uXXXX`` escapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from omniladder.analyses.export.compare import by_identity
from omniladder.analyses.export.fidelity import (
    Fidelity,
    Tally,
    item,
    order_items,
    reserve_items,
)
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportPlan
from omniladder.analyses.export.targets import Built, ExportTarget
from omniladder.errors import InputError, UsageError, close_match
from omniladder.models import SECRET_KEYS

PAID = ("cheap", "premium")
VERIFIED_ON = "1.101.0"
"""The oldest LiteLLM whose router follows ``order`` as the ladder needs (the gateways tests
run the export in LiteLLM's own Router; docs/gateways.md#export-litellm)."""
ENV_REFERENCE = re.compile(r"os\.environ/[A-Za-z_][A-Za-z0-9_]*")


def build(plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None, *,
          verified_only: bool) -> tuple[dict[str, Any], list[Fidelity], int]:
    """The config fragment, the report's items, and how many pool entries it holds."""
    name = plan.name
    items: list[Fidelity] = [item("snapshot", f"planned for {plan.now}; the plan changes at "
                                  "every reset and reading: re-export on a schedule, and "
                                  "re-apply when --current says it differs")]
    deployments: list[dict[str, Any]] = []
    env_names: dict[str, None] = {}
    rungs_out: dict[str, None] = {}
    tally = Tally()
    dropped: list[Fidelity] = []
    rank = 0
    held = 0
    routed: set[str] = set()  # the connections a deployment routes to
    sub_levels = plan.expiring_first
    _require_a_route(plan, routes)
    for entry in plan.entries:
        kept: list[dict[str, Any]] = []
        marks = {mark.connection_id: mark for mark in entry.unverified}
        for cid in entry.allowed:
            where = (cid, entry.provider, entry.model)
            mark = marks.get(cid)
            if mark is not None:
                why = mark.reason + (f": {mark.detail}" if mark.detail else "")
                if verified_only:
                    tally.add("unverified-dropped", *where,
                              f"unverified ({why}); left out under --verified-only")
                    continue
            route = routes.get(cid) if routes is not None else None
            if route is None:
                tally.add("litellm-not-mapped", *where, _unmapped(cid, routes, plan))
                continue
            if entry.rung == "subscription" and route.api_base is None:
                tally.add("litellm-subscription-without-api-base", *where)
                continue
            if mark is not None:
                tally.add("unverified-exported", *where, f"unverified ({why}); exported as "
                          "the plan admits it (R11); --verified-only leaves it out")
            if route.api_key_env is not None:
                env_names[route.api_key_env] = None
            elif entry.rung != "keyless":
                tally.add("litellm-default-credentials", *where)
            defaults = default_key_variables(route.model_prefix)
            if entry.rung == "subscription" and defaults:
                tally.add("litellm-subscription-default-key", *where, _default_key_detail(
                    route, defaults))
            # R15: an expiring-first quota rung gives each connection its own order
            # sub-level, so that LiteLLM tries them one after the other, as the plan orders
            step = len(kept) if sub_levels and entry.rung not in PAID else 0
            kept.append(_deployment(name, cid, entry.provider, entry.model, route,
                                    rank + 1 + step))
            routed.add(cid)
        if not kept:
            dropped.append(item("entry-dropped", f"{entry.rung} entry at position "
                                f"{entry.position} kept no connection",
                                provider=entry.provider, model=entry.model))
            continue
        rank = max(deployment["litellm_params"]["order"] for deployment in kept)
        held += 1
        rungs_out[entry.rung] = None
        deployments.extend(kept)
    items += tally.items() + dropped
    if not deployments:
        items.append(item("empty-export", f"no deployment: the model group {name} will not "
                          "exist and requests for it fail"))
    if "subscription" in rungs_out:
        items.append(item("litellm-no-subscription-login"))
    for rung in PAID:
        if rung in rungs_out:
            note = plan.rung_notes.get(rung, "")
            items.append(item("litellm-budget-not-enforced",
                              f"{rung}: {note or 'budget checked when planned'}; LiteLLM "
                              "does not enforce it for this group: re-export after spend, or set "
                              "max_budget and budget_duration on these deployments yourself"))
    if rank > 1:
        items.append(item("litellm-order-fallback"))
        items.append(item("litellm-steps-down-on-any-error"))
    if env_names:
        items.append(item("litellm-env-vars", "LiteLLM must hold " + ", ".join(env_names)
                          + "; a missing one is not no key: LiteLLM then sends the "
                          "provider's default variable (OPENAI_API_KEY for openai/…) if its "
                          "environment holds one"))
    items += order_items(plan.order_stale_at, set(rungs_out),
                         "held by one order sub-level per connection")
    items += reserve_items(plan.reserves or {}, routed, "LiteLLM")
    items.append(item("litellm-outside-fallbacks",
                      f"the export writes no fallbacks: check that router_settings and "
                      f"litellm_settings have no fallbacks entry for {name}, no '*' entry "
                      "and no default_fallbacks, which would route its failed requests out "
                      "of the plan's pool"))
    return {"model_list": deployments}, items, held


DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY", "AZURE_API_KEY"),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "xai": ("XAI_API_KEY",),
}
"""The variables LiteLLM reads a provider's key from when a deployment's own ``api_key`` is
empty, as an unset ``os.environ/NAME`` leaves it (BerriAI/litellm 1.110.2: ``completion``
in ``litellm/main.py``, ``api_key or litellm.api_key or litellm.openai_key or
get_secret("OPENAI_API_KEY")`` and the like per provider; ``litellm/llms/gemini/
common_utils.py``, ``litellm/llms/xai/common_utils.py``,
``litellm/litellm_core_utils/get_llm_provider_logic.py`` for DeepSeek)."""


def default_key_variables(model_prefix: str) -> tuple[str, ...]:
    """The default key variables of the provider a ``model_prefix`` routes to."""
    provider, slash, _ = model_prefix.partition("/")
    return DEFAULT_KEYS.get(provider.strip().lower(), ()) if slash else ()


def _default_key_detail(route: ConnectionRoute, defaults: tuple[str, ...]) -> str:
    variables = " or ".join(defaults)
    when = (f"when {route.api_key_env} is unset in LiteLLM's environment"
            if route.api_key_env is not None else "since the map gives no api_key_env")
    return (f"{route.model_prefix}… falls back to {variables} {when}: LiteLLM then sends "
            "that key, a metered one, to the subscription proxy at the route's api_base: "
            "keep it out of LiteLLM's environment")


def _unmapped(cid: str, routes: Mapping[str, ConnectionRoute] | None,
              plan: ExportPlan) -> str:
    """The detail of a connection the map has no route for, with the map's id it is likely
    a typo of: an id that names no connection of the plan's pool."""
    if routes is None:
        return "no --map given"
    wanted = {one for entry in plan.entries for one in entry.allowed}
    close = close_match(cid, [given for given in routes if given not in wanted])
    if close is None:
        return "no route in the --map"
    return (f"no route in the --map; did you mean its {close!r}, which names no connection "
            "of the plan?")


def _require_a_route(plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None) -> None:
    """Refuse an export in which no connection of the plan has a route: it would deploy an
    empty group, which fails every request, however full the plan's pool is. A plan with an
    empty pool has nothing to route and is exported empty, as planned."""
    wanted = list(dict.fromkeys(cid for entry in plan.entries for cid in entry.allowed))
    if not wanted or (routes is not None and not routes.keys().isdisjoint(wanted)):
        return
    named = ", ".join(wanted[:3]) + (f" and {len(wanted) - 3} more" if len(wanted) > 3 else "")
    if routes is None:
        raise UsageError(
            f"export litellm needs --map: no connection of the plan ({named}) has a route, "
            f"so the model group {plan.name} would be empty and fail every request; give "
            "--map FILE saying where LiteLLM reaches each connection "
            "(docs/gateways.md#export-litellm)", field="--map")
    guesses = [f"{given!r} for {close!r}" for given in routes
               if (close := close_match(given, wanted)) is not None]
    hint = f" (a typo? the map has {', '.join(guesses[:3])})" if guesses else ""
    raise UsageError(
        f"the map routes no connection of the plan ({named}){hint}, so the model group "
        f"{plan.name} would be empty and fail every request; name the plan's connection "
        "ids in --map", field="--map")


def _deployment(name: str, cid: str, provider: str, model: str, route: ConnectionRoute,
                order: int) -> dict[str, Any]:
    params: dict[str, Any] = {"model": route.model_prefix + model}
    if route.api_base is not None:
        params["api_base"] = route.api_base
    if route.api_key_env is not None:
        params["api_key"] = f"os.environ/{route.api_key_env}"
    params["order"] = order
    return {"model_name": name, "litellm_params": params,
            "model_info": {"id": deployment_id(name, cid, provider, model)}}


ID_SEPARATOR = "~"
_ID_SAFE = re.compile(r"[A-Za-z0-9._-]")


def _id_part(text: str) -> str:
    """``text`` with every character but letters, digits, ``.``, ``_`` and ``-`` written as
    ``%XX`` (its UTF-8 bytes): no ``:``, no ``~`` and no ``/`` is left raw."""
    return "".join(char if _ID_SAFE.fullmatch(char) else "".join(
        f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")) for char in text)


def deployment_id(name: str, cid: str, provider: str, model: str) -> str:
    """A deployment's ``model_info.id``: ``<group>~<connection>~<provider>~<model>``, each
    part escaped by ``_id_part``, so no ``:`` ever reaches it.

    LiteLLM's usage-based-routing-v2 takes the part of an id before its first ``:`` as the
    deployment's id (the key of its usage counters), so a deployment whose id holds a ``:``
    is never found; model names carry their own (``qwen2.5-coder:32b``,
    ``deepseek-chat-v3.1:free``). The escape is reversible (``parse_deployment_id``)."""
    return ID_SEPARATOR.join(_id_part(part) for part in (name, cid, provider, model))


def parse_deployment_id(identity: str) -> tuple[str, str, str, str] | None:
    """(group, connection, provider, model) of an id ``deployment_id`` wrote, or None."""
    parts = identity.split(ID_SEPARATOR)
    if len(parts) != 4:
        return None
    try:
        group, cid, provider, model = (
            unquote_to_bytes(part).decode("utf-8", "surrogatepass") for part in parts)
    except UnicodeDecodeError:
        return None
    return group, cid, provider, model


# --- the text -------------------------------------------------------------------------------

_NOT_RAW = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
"""Characters JSON leaves raw that a YAML 1.1 stream may not hold raw (DEL, C1 controls, lone
surrogates, U+FEFF/FFFE/FFFF) or reads as a line break (U+0085, U+2028, U+2029); they only
ever occur inside strings, where ``\\uXXXX`` means the same in JSON and in YAML."""


def document_text(plan: ExportPlan, document: dict[str, Any]) -> str:
    """The file: a comment header, then the document as JSON that YAML reads as is."""
    header = (
        f"# omniladder export litellm {plan.auto_id.text}: model group {plan.name}\n"
        f"# Planned for {plan.now}. Generated: re-export, never edit by hand; include it from\n"
        "# your config.yaml (include: [this file]). JSON is YAML, so LiteLLM reads it as is.\n"
        f"# Routes as planned on LiteLLM {VERIFIED_ON} or later; older versions do not follow\n"
        "# litellm_params.order as the ladder needs (docs/gateways.md#export-litellm).\n")
    body = json.dumps(document, indent=2, ensure_ascii=False)
    return header + _NOT_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", body) + "\n"


# --- what is deployed -----------------------------------------------------------------------


def parse_current(text: str, shown: str) -> dict[str, Any]:
    """A deployed fragment as ``export litellm`` writes it: comment lines, then JSON."""
    lines = text.splitlines()
    skipped = 0
    while skipped < len(lines) and (not lines[skipped].strip()
                                    or lines[skipped].lstrip().startswith("#")):
        skipped += 1
    from omniladder.inputs.documents import parse_json

    data = parse_json("\n".join(lines[skipped:]), shown,
                      what="not a fragment `omniladder export litellm` writes",
                      hint="--current reads the file the export wrote (JSON after # comment "
                      "lines), not a hand-written config.yaml", first_line=skipped + 1)
    if not isinstance(data, dict):
        raise InputError("the top level must be an object", file=shown)
    listed = data.get("model_list", [])
    if not isinstance(listed, list):
        raise InputError("must be a list", file=shown, field="model_list")
    for index, deployment in enumerate(listed):
        if not isinstance(deployment, dict) or not isinstance(
                deployment.get("model_name"), str):
            raise InputError("each deployment must be an object with a model_name",
                             file=shown, field=f"model_list[{index}]")
    return data


def differences(name: str, exported: dict[str, Any], current: dict[str, Any]
                ) -> tuple[list[str], int]:
    """How the deployed fragment's group differs from the export's ([] when it does not),
    and how many deployments of the group are deployed.

    Only what routes is compared: the group's deployments, matched by ``model_info.id``
    (every field of each, and their order), any alias that sends a request for the group
    to another name before the router picks deployments, and any fallbacks the router
    reads (``router_settings``, else ``litellm_settings``) that would lead the group's
    requests elsewhere; the comment header (with the plan's instant) is not.
    """
    ours = [d for d in exported["model_list"] if d["model_name"] == name]
    theirs = [d for d in current.get("model_list", []) if d.get("model_name") == name]
    found: list[str] = []
    if ours and not theirs:
        found.append(f"the model group {name} is not deployed: the export's {len(ours)} "
                     f"deployment{'' if len(ours) == 1 else 's'} "
                     f"{'is' if len(ours) == 1 else 'are'} to apply")
    elif theirs and not ours:
        found.append(f"the export empties the deployed model group {name}: its "
                     f"{len(theirs)} deployment{'' if len(theirs) == 1 else 's'} go, and a "
                     f"request for {name} then finds no deployment and fails")
    else:
        found += by_identity(ours, theirs, key=_identity, name=_identity, show=_brief,
                             same=lambda mine, deployed: mine == deployed, noun="deployment")
    hops, requested = _aliases_applied(name, current)
    if requested != name:
        found.append(f"{', then '.join(hops)} sends {name}'s requests to "
                     f"{json.dumps(redacted(requested), ensure_ascii=False)}, not to its "
                     "deployments; the export has none")
    for where, key, value in _fallbacks_read(current):
        if key == "default_fallbacks" or any(
                isinstance(rule, dict) and (name in rule or "*" in rule)
                for rule in (value if isinstance(value, list) else ())):
            found.append(f"{where}.{key} routes {name}'s failed requests to other groups; "
                         "the export has none")
    return found, len(theirs)


def _identity(deployment: Any) -> str:
    """What names a deployment: its ``model_info.id``, else the deployment itself."""
    info = deployment.get("model_info") if isinstance(deployment, dict) else None
    if isinstance(info, dict) and isinstance(info.get("id"), str):
        return json.dumps(info["id"], ensure_ascii=False)
    return _brief(deployment)


FALLBACK_KEYS = ("fallbacks", "context_window_fallbacks", "content_policy_fallbacks",
                 "default_fallbacks")


def _fallbacks_read(current: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Each fallback setting LiteLLM's router reads from a deployed file: (section, key,
    value), non-empty values only.

    The proxy sets every ``litellm_settings`` key on the ``litellm`` module, and its Router
    takes each fallback setting from ``router_settings`` or, when that is empty, from the
    module (``ProxyConfig.load_config`` in BerriAI/litellm ``litellm/proxy/proxy_server.py``
    @ 9344afb26bc94b9555d82a71a7bd6371c475c65b; ``Router.__init__``, ``fallbacks or
    litellm.fallbacks`` and the like, in ``litellm/router.py`` @
    f292d1ae7d83f2bc07c80c10d1a61bf63cb087bd). So a fallback written under
    ``litellm_settings`` routes as one under ``router_settings``, unless that one is set."""
    sections = [(where, current.get(where)) for where in ("router_settings",
                                                          "litellm_settings")]
    read: list[tuple[str, str, Any]] = []
    for key in FALLBACK_KEYS:
        for where, settings in sections:
            if isinstance(settings, dict) and settings.get(key):
                read.append((where, key, settings[key]))
                break
    return read


def _aliases_applied(name: str, current: dict[str, Any]) -> tuple[list[str], Any]:
    """The settings that rename a request for ``name`` before the router picks its
    deployments, in the order the proxy applies them, and the name the router then looks up.

    The proxy replaces every request's model by ``general_settings.completion_model`` when
    it is set, then renames it by ``litellm.model_alias_map`` (``litellm_settings`` keys
    are set on the module) (``common_processing_pre_call_logic`` in BerriAI/litellm
    ``litellm/proxy/common_request_processing.py`` @
    001501fb31dd77e6e911fdd565eec6f24a7ae26f); the Router then takes its
    ``model_group_alias`` (a name, or ``{model, hidden}``: ``hidden`` only keeps the alias
    out of the model listing) before it looks the group up, so an alias wins over a group
    of the same name (``_common_checks_available_deployment`` and ``_get_model_from_alias``
    in ``litellm/router.py`` @ f292d1ae7d83f2bc07c80c10d1a61bf63cb087bd). The Router reads
    ``model_group_alias`` from ``router_settings`` only. Key and team aliases live in the
    proxy's database, not in a config file."""
    def section(key: str) -> dict[str, Any]:
        found = current.get(key)
        return found if isinstance(found, dict) else {}

    hops: list[str] = []
    requested: Any = name
    forced = section("general_settings").get("completion_model")
    if forced:
        hops.append("general_settings.completion_model")
        requested = forced
    for where, key in (("litellm_settings", "model_alias_map"),
                       ("router_settings", "model_group_alias")):
        aliases = section(where).get(key)
        if isinstance(requested, str) and isinstance(aliases, dict) and requested in aliases:
            hops.append(f"{where}.{key}")
            requested = aliases[requested]
            if key == "model_group_alias" and isinstance(requested, dict) \
                    and "model" in requested:
                requested = requested["model"]
    return hops, requested


def _brief(deployment: Any) -> str:
    """A deployment on one line, without the group name every one of them repeats, and
    with any literal key a deployed file holds replaced by ``<redacted>``."""
    if not isinstance(deployment, dict):
        return json.dumps(redacted(deployment), ensure_ascii=False)
    rest = {k: v for k, v in deployment.items() if k != "model_name"}
    return json.dumps(redacted(rest), ensure_ascii=False, separators=(", ", ": "))


SECRET_WORDS = frozenset({"secret", "token", "password", "key", "apikey", "credentials",
                          "cookie", "authorization"})
"""A word that makes a field name secret-looking wherever it sits in the name: LiteLLM takes
a provider's credentials under the provider's own names (``aws_secret_access_key``,
``aws_session_token``, ``vertex_credentials``: BerriAI/litellm
``docs/my-website/docs/providers/bedrock.md``), not only ``api_key``."""


def secret_looking(key: Any) -> bool:
    """Whether a field of that name may hold a key: one of the loaders' secret names, or a
    name with a secret word among its ``_``/``-``/``.`` separated words."""
    if not isinstance(key, str):
        return False
    name = key.strip().lower()
    return name in SECRET_KEYS or not SECRET_WORDS.isdisjoint(re.split(r"[_.\-]", name))


def redacted(value: Any) -> Any:
    """``value`` with every value under a secret-looking key replaced, unless it is an
    ``os.environ/NAME`` reference (a name, not a key)."""
    if isinstance(value, dict):
        return {key: ("<redacted>" if secret_looking(key)
                      and not (isinstance(item, str) and ENV_REFERENCE.fullmatch(item))
                      else redacted(item))
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(item) for item in value]
    return value


class LiteLLM(ExportTarget):
    """The ``litellm`` export target: a ``config.yaml`` model group (``TARGETS``)."""

    name = "litellm"
    unit = "deployment"
    group = "model group"
    format = "yaml"

    def build(self, plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None, *,
              verified_only: bool) -> Built:
        document, items, entries = build(plan, routes, verified_only=verified_only)
        return Built(document, document_text(plan, document), items, entries,
                     len(document["model_list"]))

    def compare(self, name: str, document: dict[str, Any], text: str,
                shown: str) -> tuple[list[str], int]:
        return differences(name, document, parse_current(text, shown))


TARGET = LiteLLM()
