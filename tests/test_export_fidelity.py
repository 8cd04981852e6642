"""The fidelity report's items about how each gateway runs an export (docs/gateways.md#fidelity):
LiteLLM's versions, its escalation on any error and its key fallback; the OmniRoute
read-back and the items of SPEC §5 that change what the exported combo does.

The plans here are built by hand, each holding the one thing an item is about; the
example fleet's report is pinned by the golden files (tests/golden/export-*).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.export.core import Export, export
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportClamp, ExportEntry, ExportExclusion, ExportPlan
from omniladder.cli import app
from omniladder.engine.autoid import parse_auto_id
from omniladder.models import Rung
from tests.conftest import EXAMPLES

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
MAP = str(EXAMPLES / "litellm-map.toml")
NOW = "2026-11-29T12:00:00Z"


def entry(position: int, rung: Rung, provider: str, model: str, *cids: str) -> ExportEntry:
    return ExportEntry(position=position, rung=rung, provider=provider, model=model, allowed=cids,
                       unverified=())


def source(*entries: ExportEntry, auto_id: str = "auto/thrifty",
           excluded: tuple[ExportExclusion, ...] = (),
           clamps: tuple[ExportClamp, ...] = (),
           reserves: dict[str, float] | None = None) -> ExportPlan:
    return ExportPlan(auto_id=parse_auto_id(auto_id), now=NOW, now_source="flag", entries=entries,
                      rung_notes={}, warnings=(), plan_file=None,
                      excluded=excluded, clamps=clamps, reserves=reserves)


def found(result: Export, code: str) -> list[str]:
    return [f.message for f in result.fidelity if f.code == code]


def route(cid: str, prefix: str = "openai/", base: str | None = "http://proxy.internal/v1",
          env: str | None = "PROXY_KEY") -> dict[str, ConnectionRoute]:
    if base is None:
        return {cid: ConnectionRoute(id=cid, model_prefix=prefix, api_key_env=env)}
    return {cid: ConnectionRoute(id=cid, model_prefix=prefix, api_base=base, api_key_env=env)}


# --- LiteLLM ------------------------------------------------------------------------------------


LADDER = (entry(1, "subscription", "claude", "claude-sonnet-4-5", "sub"),
          entry(2, "premium", "openai", "gpt-5.1", "paid"))


def ladder_routes() -> dict[str, ConnectionRoute]:
    return {**route("sub"), **route("paid", base=None, env="OPENAI_API_KEY")}


def test_the_order_item_warns_and_names_the_versions_it_is_verified_on() -> None:
    result = export("litellm", source(*LADDER), routes=ladder_routes())
    (item,) = [f for f in result.fidelity if f.code == "litellm-order-fallback"]
    assert item.level == "warning"
    for words in ("1.101.0", "1.82.6", "enable_pre_call_checks", "1.83.0", "1.100.5"):
        assert words in item.message


def test_the_file_names_the_litellm_version_it_routes_as_planned_on() -> None:
    result = export("litellm", source(*LADDER), routes=ladder_routes())
    header = [line for line in result.text.splitlines() if line.startswith("#")]
    assert any("LiteLLM 1.101.0 or later" in line for line in header)


def test_the_report_says_litellm_steps_down_on_any_error() -> None:
    result = export("litellm", source(*LADDER), routes=ladder_routes())
    (message,) = found(result, "litellm-steps-down-on-any-error")
    for words in ("429", "5xx", "timeout", "401", "400", "paid"):
        assert words in message
    one_rung = export("litellm", source(LADDER[0]), routes=ladder_routes())
    assert not found(one_rung, "litellm-steps-down-on-any-error")  # nothing to step to


def test_a_missing_key_variable_is_not_worded_as_no_key() -> None:
    result = export("litellm", source(*LADDER), routes=ladder_routes())
    (message,) = found(result, "litellm-env-vars")
    assert "becomes no key" not in message
    assert "OPENAI_API_KEY" in message


@pytest.mark.parametrize(("prefix", "defaults"), [
    ("openai/", "OPENAI_API_KEY"), ("anthropic/", "ANTHROPIC_API_KEY"),
    ("openrouter/", "OPENROUTER_API_KEY or OR_API_KEY"),
])
def test_a_subscription_route_through_a_provider_with_a_default_key_warns(
        prefix: str, defaults: str) -> None:
    """LiteLLM sends the provider's default key when the route's own variable is unset:
    on a subscription route that is a metered key sent to the subscription proxy."""
    result = export("litellm", source(LADDER[0]), routes=route("sub", prefix))
    (item,) = [f for f in result.fidelity if f.code == "litellm-subscription-default-key"]
    assert item.level == "warning"
    assert item.connection_id == "sub"
    assert defaults in item.message
    assert "PROXY_KEY is unset" in item.message


@pytest.mark.parametrize("prefix", ["ollama/", ""])
def test_a_prefix_without_a_default_key_gets_no_such_warning(prefix: str) -> None:
    result = export("litellm", source(LADDER[0]), routes=route("sub", prefix))
    assert not found(result, "litellm-subscription-default-key")


def test_a_metered_route_with_a_default_key_is_not_the_subscription_warning() -> None:
    result = export("litellm", source(*LADDER), routes=ladder_routes())
    assert [f.connection_id for f in result.fidelity
            if f.code == "litellm-subscription-default-key"] == ["sub"]


# --- OmniRoute: SPEC §5 where it changes what the combo does ---------------------------------


def test_a_split_mixed_candidate_is_named_with_its_two_steps() -> None:
    result = export("omniroute", source(
        entry(1, "subscription", "claude", "claude-sonnet-4-5", "sub"),
        entry(2, "free", "openrouter", "free-model", "free"),
        entry(3, "premium", "claude", "claude-sonnet-4-5", "api")))
    (message,) = found(result, "omniroute-split-candidate")
    assert "claude/claude-sonnet-4-5 is split by rung into steps 1 and 3" in message
    unsplit = export("omniroute", source(*LADDER))
    assert not found(unsplit, "omniroute-split-candidate")


def test_a_per_model_window_is_named_for_a_connection_that_still_routes() -> None:
    spent = ExportExclusion("sub", "claude", "claude-opus-4-1", "subscription",
                            "quota-exhausted")
    result = export("omniroute", source(*LADDER, excluded=(spent,)))
    (message,) = found(result, "omniroute-per-model-window")
    assert message.startswith("sub is spent for claude-opus-4-1 only and still routes "
                              "claude/claude-sonnet-4-5")
    whole = ExportExclusion("sub", "claude", None, "subscription", "quota-exhausted")
    other = ExportExclusion("gone", "claude", "claude-opus-4-1", "subscription",
                            "quota-exhausted")
    for excluded in (whole, other):
        assert not found(export("omniroute", source(*LADDER, excluded=(excluded,))),
                         "omniroute-per-model-window")


def test_a_pair_out_only_for_its_reserve_is_no_per_model_window() -> None:
    """R16: ``sub`` is out for opus only because of its reserve (a figure above the ladder's
    own thresholds): OmniRoute, which knows no reserve, does not read that window as spent,
    so it skips nothing on the sonnet step and the report claims no per-model window. The
    combo leaves the pair out as it leaves out every excluded pair."""
    reserved = ExportExclusion("sub", "claude", "claude-opus-4-1", "subscription",
                               "quota-below-reserve")
    result = export("omniroute", source(*LADDER, excluded=(reserved,)))
    assert not found(result, "omniroute-per-model-window")
    assert ["sub"] in [step["allowedConnectionIds"] for step in result.document["models"]]


@pytest.mark.parametrize("target", ["litellm", "omniroute"])
def test_an_exported_connection_with_a_reserve_is_named_as_not_held(target: str) -> None:
    """R16: the gateway does not know ``sub``'s 20% reserve; ``gone`` keeps one too but is
    not exported, and ``paid`` keeps none (0 is no reserve)."""
    reserves = {"sub": 20.0, "gone": 30.0, "paid": 0.0}
    routes = ladder_routes() if target == "litellm" else None
    result = export(target, source(*LADDER, reserves=reserves), routes=routes)
    items = [f for f in result.fidelity if f.code == "reserve-not-held"]
    assert [(f.level, f.connection_id) for f in items] == [("warning", "sub")]
    gateway = {"litellm": "LiteLLM", "omniroute": "OmniRoute"}[target]
    assert items[0].message.startswith(
        f"sub keeps 20% of each window for use outside the gateway (reserve_percent, R16); "
        f"{gateway} does not know it and routes to sub until the vendor refuses")
    assert not [f for f in export(target, source(*LADDER), routes=routes).fidelity
                if f.code == "reserve-not-held"]


def test_a_hysteresis_hold_is_named() -> None:
    held = ExportExclusion("held", "claude", "claude-sonnet-4-5", "subscription",
                           "quota-below-reentry")
    result = export("omniroute", source(*LADDER, excluded=(held,)))
    assert [f.connection_id for f in result.fidelity
            if f.code == "omniroute-hysteresis-hold"] == ["held"]


def test_a_clamped_cooldown_still_running_on_omniroute_is_named() -> None:
    ended = ExportClamp("sub", "2026-11-29T14:00:00Z", cooling=False)
    result = export("omniroute", source(*LADDER, clamps=(ended,)))
    (message,) = found(result, "omniroute-cooldown-not-clamped")
    assert "holds it until 2026-11-29T14:00:00Z" in message
    for clamp in (ExportClamp("sub", "2026-11-29T14:00:00Z", cooling=True),
                  ExportClamp("sub", "2026-11-29T11:00:00Z", cooling=False),
                  ExportClamp("elsewhere", "2026-11-29T14:00:00Z", cooling=False)):
        assert not found(export("omniroute", source(*LADDER, clamps=(clamp,))),
                         "omniroute-cooldown-not-clamped")


def test_budgets_exported_and_spent_are_named() -> None:
    result = export("omniroute", source(*LADDER))
    (message,) = found(result, "omniroute-budget-not-enforced")
    assert message.startswith("premium:")
    spent = ExportExclusion("paid", "openai", "gpt-5.1", "premium", "budget-spent")
    without = export("omniroute", source(LADDER[0], excluded=(spent,)))
    (message,) = found(without, "omniroute-budget-spent")
    assert message.startswith("premium: its budget is spent")
    assert not found(without, "omniroute-budget-not-enforced")


def test_coding_filtering_nothing_there_is_named_for_coding_ids_only() -> None:
    coding = export("omniroute", source(*LADDER, auto_id="auto/coding:thrifty"))
    assert found(coding, "omniroute-coding-filter")
    assert not found(export("omniroute", source(*LADDER)), "omniroute-coding-filter")


def test_provider_grouped_order_is_named_only_when_providers_interleave() -> None:
    interleaved = export("omniroute", source(
        entry(1, "subscription", "claude", "a", "sub"), entry(2, "free", "openrouter", "b", "f"),
        entry(3, "premium", "claude", "c", "api")))
    assert found(interleaved, "omniroute-provider-order")
    grouped = export("omniroute", source(
        entry(1, "subscription", "claude", "a", "sub"), entry(2, "premium", "claude", "c", "api"),
        entry(3, "free", "openrouter", "b", "f")))
    assert not found(grouped, "omniroute-provider-order")


def test_an_empty_omniroute_export_is_not_worded_as_failing_every_request() -> None:
    result = export("omniroute", source())
    (message,) = found(result, "empty-export")
    assert "fails every request" not in message
    assert "model mappings" in message
    assert "DELETE /api/combos/{id}" in message


def test_the_read_back_item_names_what_3_8_50_strips_and_what_to_do() -> None:
    (message,) = found(export("omniroute", source(*LADDER)),
                       "omniroute-verify-allowlists")
    assert "3.8.50 strips both" in message
    assert "DELETE /api/combos/{id}" in message


# --- OmniRoute: --current ------------------------------------------------------------------------


def _deployed(tmp_path: Path, **config: Any) -> Path:
    out = tmp_path / "combo.json"
    assert runner.invoke(app, ["export", "omniroute", "auto/subscription", "--config", CONFIG,
                               "--out", str(out)]).exit_code == 0
    combo = json.loads(out.read_text())
    combo["config"] = config
    out.write_text(json.dumps({"combos": [combo]}))
    return out


@pytest.mark.parametrize(("value", "differs"), [(True, True), (False, False), ("true", False)])
def test_current_flags_connection_aware_expansion_when_set(tmp_path: Path, value: Any,
                                                          differs: bool) -> None:
    deployed = _deployed(tmp_path, connectionAwareExpansion=value)
    result = runner.invoke(app, ["export", "omniroute", "auto/subscription", "--config",
                                 CONFIG, "--current", str(deployed), "--json"])
    assert result.exit_code == (1 if differs else 0), result.output
    differences = json.loads(result.stdout)["current"]["differences"]
    assert bool(differences) is differs
    if differs:
        (line,) = differences
        assert line.startswith("config.connectionAwareExpansion expands each step")
        assert "remove connectionAwareExpansion" in line


# --- the documented procedures ------------------------------------------------------------------


def _shell_blocks(text: str) -> str:
    return "\n".join(text.split("```sh")[n].split("```")[0]
                     for n in range(1, text.count("```sh") + 1))


def test_the_omniroute_procedure_reads_back_and_deletes_and_sends_no_completion() -> None:
    from tests.conftest import ROOT

    guide = (ROOT / "docs" / "gateways.md").read_text(encoding="utf-8")
    commands = _shell_blocks(guide)
    assert "api/combos/test" not in commands  # a real completion through every step
    assert '-X DELETE -H "Authorization: Bearer $OMNIROUTE_ADMIN_KEY"' in commands
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    apply = readme.split("**Apply the plan.**")[1].split("**Forecast.**")[0]
    assert "--current deployed.json" in apply
    assert "candidates.json" not in apply  # an audit of a file it never fetched


SECTION_5 = (
    "hysteresis", "a positive rung budget is never enforced",
    "a budget of 0 disables the rung on both sides", "cooldown clamp", "top-level reset",
    "per-model window", "all-unlimited", "mixed candidate", "strict free mode",
    "[R2](#r2)", "[R2a](#r2a)", "`error`", "[R6.4](#r6-4)", "reset has already passed",
    "180 s", "no tier", "filters\nnothing", "grouped by\nprovider", "keyless rung reads no quota",
    "usage adapter",
)
"""Each item of SPEC §5 (divergences from the reference gateway), as docs/rules.md words it."""


def test_the_rules_divergence_section_says_every_item_of_spec_5() -> None:
    from tests.conftest import ROOT

    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    section = rules.split("## Where omniladder differs from the reference gateway")[1]
    missing = [words for words in SECTION_5 if words not in section]
    assert missing == []
