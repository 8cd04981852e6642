"""`omniladder export`: a plan as a LiteLLM config fragment or an OmniRoute combo, with its
fidelity report, `--map`, `--current` and `--out` (docs/gateways.md#export).

Every LiteLLM export is read back with a YAML parser and held to
schemas/export-litellm.schema.json (LiteLLM's documented fields); every OmniRoute export to
schemas/export-omniroute.schema.json (``createComboSchema``'s fields); both for all twelve
auto ids on the example fleet. Generated fleets: tests/test_export_properties.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from typer.testing import CliRunner

from omniladder.analyses.export.core import Export, export
from omniladder.analyses.export.fidelity import CODES, LEVELS
from omniladder.analyses.export.litellm import deployment_id, parse_deployment_id
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportPlan, managed_name
from omniladder.cli import app
from omniladder.commands.export_cmd import exported_plan
from omniladder.engine.autoid import all_auto_ids, parse_auto_id
from omniladder.engine.plan import make_plan
from omniladder.engine.records import Plan
from omniladder.inputs.input_set import load_inputs
from tests.conftest import EXAMPLES, ROOT
from tests.test_meta import IMPORTS_PROBE, core_modules, run_python_args, section, table_rows

runner = CliRunner()
SCHEMAS = ROOT / "schemas"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "export"
GOLDEN = Path(__file__).resolve().parent / "golden"
CONFIG = str(EXAMPLES / "omniladder.toml")
MAP = str(EXAMPLES / "litellm-map.toml")
SECRET = "sk-live-0123456789abcdefSECRET"


# --- a JSON Schema check without a dependency ------------------------------------------------

ANNOTATIONS = {"$schema", "$defs", "title", "description", "$comment"}
CHECKED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const",
           "pattern", "minLength", "maxLength", "minimum", "minItems", "uniqueItems", "$ref",
           "oneOf"}
"""Every keyword the committed export schemas use: a test holds them to this list, so a
keyword this checker does not know can never be silently ignored."""

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": int, "number": (int, float),
}


def schema_errors(value: Any, schema: dict[str, Any], root: dict[str, Any],
                  path: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema`` (the keywords in CHECKED), [] when it holds."""
    if "$ref" in schema:
        return schema_errors(value, root["$defs"][schema["$ref"].split("/")[-1]], root, path)
    if "oneOf" in schema:
        passing = [option for option in schema["oneOf"]
                   if not schema_errors(value, option, root, path)]
        return [] if len(passing) == 1 else [f"{path}: matches {len(passing)} of oneOf"]
    found: list[str] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(isinstance(value, _TYPES[kind]) and not (
            isinstance(value, bool) and kind in ("integer", "number")) for kind in kinds)
        if not ok:
            return [f"{path}: {type(value).__name__} is not {kinds}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{path}: longer than {schema['maxLength']}")
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            found.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int | float) and not isinstance(value, bool) and (
            value < schema.get("minimum", value)):
        found.append(f"{path}: below {schema['minimum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            found.append(f"{path}: fewer than {schema['minItems']} items")
        if schema.get("uniqueItems") and len({json.dumps(v) for v in value}) != len(value):
            found.append(f"{path}: items repeat")
        for index, item in enumerate(value):
            found += schema_errors(item, schema.get("items", {}), root, f"{path}[{index}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                found.append(f"{path}: {key} is required")
        for key, item in value.items():
            if key in props:
                found += schema_errors(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{path}: {key} is not a documented field")
    return found


def load_schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return loaded


LITELLM_SCHEMA = load_schema("export-litellm.schema.json")
OMNIROUTE_SCHEMA = load_schema("export-omniroute.schema.json")
REPORT_SCHEMA = load_schema("export.schema.json")


def _keywords(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, item in schema.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for sub in item.values():
                    found |= _keywords(sub)
            elif key in ("items", "additionalProperties") and isinstance(item, dict):
                found |= _keywords(item)
            elif key == "oneOf":
                for sub in item:
                    found |= _keywords(sub)
    return found


@pytest.mark.parametrize("name", ["export.schema.json", "export-litellm.schema.json",
                                  "export-omniroute.schema.json"])
def test_the_export_schemas_use_only_checked_keywords(name: str) -> None:
    assert _keywords(load_schema(name)) - ANNOTATIONS - CHECKED == set()


def test_the_schema_check_can_fail() -> None:
    """The checker refuses what the schemas forbid, so a passing export means something."""
    good = {"model_name": "g", "litellm_params": {"model": "m", "api_key": "os.environ/K"}}
    assert schema_errors({"model_list": [good]}, LITELLM_SCHEMA, LITELLM_SCHEMA) == []
    literal = {**good, "litellm_params": {"model": "m", "api_key": SECRET}}
    assert schema_errors({"model_list": [literal]}, LITELLM_SCHEMA, LITELLM_SCHEMA)
    unknown = {**good, "litellm_params": {"model": "m", "apikey": "x"}}
    assert schema_errors({"model_list": [unknown]}, LITELLM_SCHEMA, LITELLM_SCHEMA)
    step = {"kind": "model", "providerId": "p", "model": "p/m", "allowedConnectionIds": []}
    combo = {"name": "omniladder-thrifty", "strategy": "priority", "models": [step]}
    assert schema_errors(combo, OMNIROUTE_SCHEMA, OMNIROUTE_SCHEMA)  # an empty allowlist
    assert schema_errors({**combo, "name": "auto/thrifty:x"}, OMNIROUTE_SCHEMA,
                         OMNIROUTE_SCHEMA)


def test_a_published_litellm_config_passes_the_documented_fields_schema() -> None:
    """The schema is LiteLLM's, not ours: the docs' own model_config.yaml (fixture README)
    is valid against it."""
    published = yaml.safe_load((FIXTURES / "litellm-model-config-docs.yaml").read_text())
    assert schema_errors(published, LITELLM_SCHEMA, LITELLM_SCHEMA) == []
    assert published == json.loads((FIXTURES / "litellm-model-config-docs.json").read_text())


# --- the pure core ---------------------------------------------------------------------------


def test_the_export_package_is_in_the_pure_core() -> None:
    """CONVENTIONS 1: omniladder.analyses.export imports neither typer nor rich (nor click)."""
    modules = [m for m in core_modules() if m.startswith("omniladder.analyses.export")]
    assert {"omniladder.analyses.export", "omniladder.analyses.export.core",
            "omniladder.analyses.export.source",
            "omniladder.analyses.export.routes", "omniladder.analyses.export.fidelity",
            "omniladder.analyses.export.litellm", "omniladder.analyses.export.omniroute",
            "omniladder.analyses.export.targets", "omniladder.rendering.export_view"} <= {
        *modules, *core_modules()}
    found = json.loads(run_python_args(IMPORTS_PROBE, *modules,
                                       "omniladder.rendering.export_view"))
    assert found == {name: [] for name in [*modules, "omniladder.rendering.export_view"]}


# --- names and codes -------------------------------------------------------------------------

MANAGED_NAMES = {
    "auto/subscription": "omniladder-subscription",
    "auto/thrifty": "omniladder-thrifty",
    "auto/coding:subscription": "omniladder-coding-subscription",
    "auto/coding:thrifty": "omniladder-coding-thrifty",
    "auto/reasoning:subscription": "omniladder-reasoning-subscription",
    "auto/reasoning:thrifty": "omniladder-reasoning-thrifty",
    "auto/vision:subscription": "omniladder-vision-subscription",
    "auto/vision:thrifty": "omniladder-vision-thrifty",
    "auto/chat:subscription": "omniladder-chat-subscription",
    "auto/chat:thrifty": "omniladder-chat-thrifty",
    "auto/multimodal:subscription": "omniladder-multimodal-subscription",
    "auto/multimodal:thrifty": "omniladder-multimodal-thrifty",
}
"""The stable managed name of every auto id: operators' clients call these."""


def test_every_auto_id_has_its_stable_managed_name() -> None:
    assert set(MANAGED_NAMES) == set(all_auto_ids())
    for auto_id, name in MANAGED_NAMES.items():
        assert managed_name(parse_auto_id(auto_id)) == name
    name_rule = OMNIROUTE_SCHEMA["properties"]["name"]
    for name in MANAGED_NAMES.values():
        assert schema_errors(name, name_rule, OMNIROUTE_SCHEMA) == []
        assert not name.startswith("auto/")


FIDELITY_CODES = (
    "snapshot", "empty-export", "entry-dropped", "unverified-exported", "unverified-dropped",
    "litellm-not-mapped", "litellm-subscription-without-api-base",
    "litellm-no-subscription-login", "litellm-default-credentials", "litellm-env-vars",
    "litellm-order-fallback", "litellm-budget-not-enforced", "litellm-outside-fallbacks",
    "omniroute-call-combo-name", "omniroute-verify-allowlists", "omniroute-quota-only-steps",
    "litellm-steps-down-on-any-error", "litellm-subscription-default-key",
    "omniroute-split-candidate", "omniroute-per-model-window", "omniroute-hysteresis-hold",
    "omniroute-cooldown-not-clamped", "omniroute-budget-not-enforced", "omniroute-budget-spent",
    "omniroute-coding-filter", "omniroute-provider-order", "order-until-next-export",
    "reserve-not-held",
)
"""Every fidelity code, in full (CONVENTIONS 12b): a code never disappears or changes."""


def test_every_fidelity_code_is_pinned_documented_and_in_the_schema() -> None:
    assert tuple(CODES) == FIDELITY_CODES
    assert {level for level, _ in CODES.values()} == set(LEVELS)
    enum = REPORT_SCHEMA["$defs"]["fidelity"]["properties"]["code"]["enum"]
    assert enum == list(FIDELITY_CODES)
    text = section("The fidelity report", "gateways")
    assert text is not None, "docs/gateways.md has no '## The fidelity report' section"
    documented = {row[0].strip("`"): row[1] for row in table_rows(text)
                  if row and row[0].strip("`") in CODES}
    assert set(documented) == set(CODES)
    for code, (level, _) in CODES.items():
        assert documented[code] == level, code


# --- the example fleet, every auto id ---------------------------------------------------------


def example_plan(auto_id: str) -> Plan:
    inputs = load_inputs(EXAMPLES / "omniladder.toml")
    assert inputs.quota is not None
    assert inputs.quota.taken_at is not None
    return make_plan(inputs, parse_auto_id(auto_id), inputs.quota.taken_at, "snapshot")


def full_routes(plan: Plan) -> dict[str, ConnectionRoute]:
    """A route for every connection of the fleet, each with a proxy and a key variable."""
    return {c.id: ConnectionRoute(id=c.id, model_prefix="openai/",
                                  api_base=f"http://proxy.internal/{c.id}/v1",
                                  api_key_env=f"KEY_{index}")
            for index, c in enumerate(plan.connections)}


def yaml_document(text: str) -> Any:
    """What a YAML loader (LiteLLM's: PyYAML safe_load) reads from an exported file."""
    return yaml.safe_load(text)


def check_litellm(result: Export, plan: ExportPlan) -> None:
    """Read back with YAML, hold to the documented fields, and to the plan's pool and order."""
    loaded = yaml_document(result.text)
    assert loaded == result.document
    assert schema_errors(loaded, LITELLM_SCHEMA, LITELLM_SCHEMA) == []
    deployments = loaded["model_list"]
    ids = [d["model_info"]["id"] for d in deployments]
    assert len(set(ids)) == len(ids)
    assert {d["model_name"] for d in deployments} <= {plan.name}
    for deployment in deployments:
        assert not str(deployment["litellm_params"].get("api_key", "os.environ/")).startswith(
            "sk-")
    if plan.auto_id.tier == "subscription":
        assert all(e.rung == "subscription" for e in plan.entries)


def exported_litellm_pool(document: dict[str, Any]) -> list[tuple[int, str, list[str]]]:
    """(order, provider/model, connections) per order, read back from model_info.id."""
    out: list[tuple[int, str, list[str]]] = []
    for deployment in document["model_list"]:
        parsed = parse_deployment_id(deployment["model_info"]["id"])
        assert parsed is not None
        _, cid, provider, model = parsed
        candidate = f"{provider}/{model}"
        order = deployment["litellm_params"]["order"]
        if out and out[-1][0] == order:
            assert out[-1][1] == candidate
            out[-1][2].append(cid)
        else:
            out.append((order, candidate, [cid]))
    return out


@pytest.mark.parametrize("auto_id", all_auto_ids())
def test_every_litellm_export_of_the_example_is_yaml_in_documented_fields_in_plan_order(
        auto_id: str) -> None:
    made = example_plan(auto_id)
    plan = exported_plan(made)
    result = export("litellm", plan, routes=full_routes(made))
    check_litellm(result, plan)
    assert exported_litellm_pool(result.document) == [
        (rank, f"{e.provider}/{e.model}", list(e.allowed_connection_ids))
        for rank, e in enumerate(made.pool, start=1)]
    if auto_id.endswith("subscription"):
        assert {e.rung for e in made.pool} <= {"subscription"}


def check_omniroute(result: Export, plan: ExportPlan) -> None:
    document = json.loads(result.text)
    assert document == result.document
    assert schema_errors(document, OMNIROUTE_SCHEMA, OMNIROUTE_SCHEMA) == []
    assert document["name"] == plan.name


@pytest.mark.parametrize("auto_id", all_auto_ids())
def test_every_omniroute_export_of_the_example_is_a_combo_with_the_plans_steps(
        auto_id: str) -> None:
    made = example_plan(auto_id)
    plan = exported_plan(made)
    result = export("omniroute", plan)
    check_omniroute(result, plan)
    steps = result.document["models"]
    assert [(s["model"], s["allowedConnectionIds"]) for s in steps] == [
        (f"{e.provider}/{e.model}", list(e.allowed_connection_ids)) for e in made.pool]
    assert [s.get("fallbackOnlyOnQuotaExhaustion", False) for s in steps] == [
        e.rung == "subscription" for e in made.pool]


def test_auto_subscription_of_the_example_exports_only_its_plan_connection() -> None:
    """R10 through to the gateway: one step, the one usable hard-stop plan, no paid rung."""
    made = example_plan("auto/subscription")
    combo = export("omniroute", exported_plan(made)).document
    assert [(s["model"], s["allowedConnectionIds"]) for s in combo["models"]] == [
        ("claude/claude-sonnet-4-5", ["claude-max-work"])]
    litellm = export("litellm", exported_plan(made), routes=full_routes(made)).document
    assert [d["model_info"]["id"] for d in litellm["model_list"]] == [
        "omniladder-subscription~claude-max-work~claude~claude-sonnet-4-5"]
    assert "router_settings" not in litellm


# --- the command: goldens, streams, --out ------------------------------------------------------


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def invoke(*args: str) -> Any:
    return runner.invoke(app, ["export", *args])


def golden(name: str, text: str) -> None:
    """``text`` equals the golden file and says what its checker requires
    (tests/golden_checks.py), so that a golden file regenerated wrong fails."""
    import os

    from tests.golden_checks import check_golden

    check_golden(name, text)
    path = GOLDEN / name

    if os.environ.get("OMNILADDER_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"golden {name} differs"


@pytest.mark.usefixtures("at_root")
def test_golden_litellm_export_of_the_example() -> None:
    result = invoke("litellm", "auto/thrifty", "--config", "examples/omniladder.toml",
                    "--map", "examples/litellm-map.toml")
    assert result.exit_code == 0, result.output
    golden("export-litellm-thrifty.yaml", result.stdout)
    # The plan's warnings come first; one depends on the clock (a stale snapshot).
    golden("export-litellm-thrifty.txt", "".join(
        line for line in result.stderr.splitlines(keepends=True)
        if not line.startswith("omniladder: warning:")))


@pytest.mark.usefixtures("at_root")
def test_golden_omniroute_export_of_the_example() -> None:
    result = invoke("omniroute", "auto/thrifty", "--config", "examples/omniladder.toml",
                    "--json")
    assert result.exit_code == 0, result.output
    golden("export-omniroute-thrifty.json", result.stdout)
    report = json.loads(result.stdout)
    assert schema_errors(report, REPORT_SCHEMA, REPORT_SCHEMA) == []
    assert schema_errors(report["document"], OMNIROUTE_SCHEMA, OMNIROUTE_SCHEMA) == []


def test_the_document_goes_to_stdout_and_the_report_to_stderr() -> None:
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["name"] == "omniladder-subscription"
    assert "omniroute-call-combo-name" in result.stderr
    assert "omniroute-call-combo-name" not in result.stdout


def test_out_writes_the_document_and_nothing_to_stdout(tmp_path: Path) -> None:
    target = tmp_path / "combo.json"
    printed = invoke("omniroute", "auto/thrifty", "--config", CONFIG)
    written = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--out", str(target))
    assert written.exit_code == 0, written.output
    assert written.stdout == ""
    assert target.read_text(encoding="utf-8") == printed.stdout
    assert f"written to {target}" in written.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["combo.json"]  # no temporary left


def test_json_report_holds_the_document_and_validates() -> None:
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert schema_errors(report, REPORT_SCHEMA, REPORT_SCHEMA) == []
    assert report["name"] == "omniladder-subscription"
    assert report["exported"] == {"pool_entries": 1, "entries": 1, "units": 1}
    assert schema_errors(report["document"], LITELLM_SCHEMA, LITELLM_SCHEMA) == []
    assert report["current"] is None
    assert report["out"] is None
    assert result.stderr == ""  # warnings are in the document under --json


def test_markdown_report_carries_the_document_for_a_pull_request() -> None:
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP,
                    "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("### omniladder export litellm auto/thrifty")
    assert "| `litellm-not-mapped` | `copilot-seat copilot-web` | no route in the --map" \
        in result.stdout
    assert "```yaml\n# omniladder export litellm auto/thrifty" in result.stdout
    assert '"model_name": "omniladder-thrifty"' in result.stdout


def test_json_and_another_format_is_a_usage_error() -> None:
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--json",
                    "--format", "markdown")
    assert result.exit_code == 2
    assert "--format" in result.stderr


@pytest.mark.parametrize("auto_id", ["auto/coding", "auto/Thrifty", "auto/coding:paid"])
def test_an_invalid_auto_id_is_exit_2(auto_id: str) -> None:
    result = invoke("omniroute", auto_id, "--config", CONFIG)
    assert result.exit_code == 2
    assert "AUTO_ID" in result.stderr
    assert "Traceback" not in result.output


def test_an_unknown_target_is_exit_2() -> None:
    result = invoke("traefik", "auto/thrifty", "--config", CONFIG)
    assert result.exit_code == 2
    assert "litellm" in result.stderr
    assert "omniroute" in result.stderr


# --- what LiteLLM can and cannot hold ----------------------------------------------------------


def codes(report: dict[str, Any]) -> list[str]:
    return [item["code"] for item in report["fidelity"]]


def report_of(*args: str) -> dict[str, Any]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def test_an_unmapped_connection_is_left_out_never_exported_without_its_key() -> None:
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    dropped = [(i["code"], i["connection_id"]) for i in report["fidelity"]
               if i["level"] == "dropped"]
    assert ("litellm-not-mapped", "copilot-seat") in dropped
    ids = [d["model_info"]["id"] for d in report["document"]["model_list"]]
    assert not any("~copilot-seat~" in i for i in ids)
    assert "entry-dropped" in codes(report)


def test_a_subscription_connection_without_api_base_is_left_out() -> None:
    """LiteLLM holds no subscription login: without a proxy it would call the metered API."""
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    found = [i for i in report["fidelity"]
             if i["code"] == "litellm-subscription-without-api-base"]
    assert [i["connection_id"] for i in found] == ["antigravity-main"]
    assert all("~antigravity-main~" not in d["model_info"]["id"]
               for d in report["document"]["model_list"])


def test_a_keyless_connection_may_go_without_a_key_but_a_metered_one_is_warned(
        tmp_path: Path) -> None:
    routes = tmp_path / "map.toml"
    routes.write_text('[[connections]]\nid = "ollama-local"\nmodel_prefix = "ollama/"\n'
                      'api_base = "http://localhost:11434"\n\n'
                      '[[connections]]\nid = "openai-key"\nmodel_prefix = "openai/"\n')
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", str(routes))
    warned = [i["connection_id"] for i in report["fidelity"]
              if i["code"] == "litellm-default-credentials"]
    assert set(warned) == {"openai-key"}
    assert "litellm-env-vars" not in codes(report)


def test_without_a_map_a_plan_with_connections_is_a_usage_error_naming_map(
        tmp_path: Path) -> None:
    """No route for any connection would deploy an empty group, which fails every request:
    exit 2 naming --map, and nothing written, not even on a cron job's --current/--out."""
    deployed = tmp_path / "omniladder-thrifty.yaml"
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG,
                    "--current", str(deployed), "--out", str(deployed))
    assert result.exit_code == 2, result.output
    assert "--map" in result.stderr
    assert "omniladder-thrifty would be empty" in result.stderr
    assert result.stdout == ""
    assert not deployed.exists()


def test_a_map_that_routes_no_connection_of_the_plan_is_exit_2_with_the_likely_typo(
        tmp_path: Path) -> None:
    routes = write_map(tmp_path, '[[connections]]\nid = "claude-max-wrok"\n'
                       'model_prefix = "openai/"\napi_base = "http://proxy.internal/v1"\n')
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", routes)
    assert result.exit_code == 2, result.output
    assert "the map routes no connection of the plan (claude-max-work)" in result.stderr
    assert "'claude-max-wrok' for 'claude-max-work'" in result.stderr


def test_a_mistyped_map_id_beside_good_ones_is_named_in_the_dropped_item(
        tmp_path: Path) -> None:
    text = Path(MAP).read_text().replace('id = "openai-key"', 'id = "openai-kye"')
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG,
                       "--map", write_map(tmp_path, text))
    (found,) = [i for i in report["fidelity"] if i["code"] == "litellm-not-mapped"
                and i["connection_id"] == "openai-key"]
    assert "did you mean" in found["message"]
    assert "'openai-kye'" in found["message"]
    (other,) = [i for i in report["fidelity"] if i["code"] == "litellm-not-mapped"
                and i["connection_id"] == "copilot-seat"]
    assert "did you mean" not in other["message"]


def test_an_empty_pool_exports_an_empty_group_without_a_map() -> None:
    """Nothing to route is no usage error: the plan's pool is empty (fail closed)."""
    source = ExportPlan(auto_id=parse_auto_id("auto/subscription"), now="2026-11-29T12:00:00Z",
                        now_source="flag",
                        entries=(), rung_notes={}, warnings=(), plan_file=None)
    result = export("litellm", source)
    assert result.document == {"model_list": []}
    assert "empty-export" in [f.code for f in result.fidelity]


def _empty_saved_plan(tmp_path: Path) -> str:
    data = saved_plan(tmp_path)
    data["pool"] = []
    path = tmp_path / "empty-plan.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_an_export_that_empties_the_deployed_group_is_exit_1_naming_it(
        tmp_path: Path) -> None:
    deployed = tmp_path / "omniladder-subscription.yaml"
    assert invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                  "--out", str(deployed)).exit_code == 0
    result = invoke("litellm", _empty_saved_plan(tmp_path), "--map", MAP, "--json",
                    "--current", str(deployed))
    assert result.exit_code == 1, result.output
    current = json.loads(result.stdout)["current"]
    assert current["empties"] == "omniladder-subscription"
    assert current["differences"] == [
        "the export empties the deployed model group omniladder-subscription: its 1 "
        "deployment go, and a request for omniladder-subscription then finds no deployment "
        "and fails"]
    assert ("exit 1: the export empties the deployed model group omniladder-subscription;"
            in result.stderr)


def test_an_omniroute_export_that_empties_the_deployed_combo_is_exit_1_naming_it(
        tmp_path: Path) -> None:
    deployed = tmp_path / "combo.json"
    assert invoke("omniroute", "auto/subscription", "--config", CONFIG,
                  "--out", str(deployed)).exit_code == 0
    result = invoke("omniroute", _empty_saved_plan(tmp_path), "--current", str(deployed))
    assert result.exit_code == 1, result.output
    assert "exit 1: the export empties the deployed combo omniladder-subscription;" \
        in result.stderr


def test_orders_are_dense_ranks_of_the_exported_entries() -> None:
    """Entries left out leave no gap: LiteLLM's order fallback tries 2, 3, … in turn."""
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    orders = sorted({d["litellm_params"]["order"] for d in report["document"]["model_list"]})
    assert orders == list(range(1, len(orders) + 1))
    assert report["exported"]["entries"] == len(orders) == 9


def test_paid_rungs_warn_that_litellm_does_not_enforce_their_budget() -> None:
    thrifty = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    budget = [i["message"] for i in thrifty["fidelity"]
              if i["code"] == "litellm-budget-not-enforced"]
    assert budget[0].startswith("cheap: $3.20 of $5.00 spent this month;")
    assert budget[1].startswith("premium: $7.50 of $20.00 spent this month;")
    subscription = report_of("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP)
    assert "litellm-budget-not-enforced" not in codes(subscription)
    assert "litellm-order-fallback" not in codes(subscription)  # one order: nothing to fall to


def test_no_router_settings_no_fallbacks_ever() -> None:
    for auto_id in all_auto_ids():
        report = report_of("litellm", auto_id, "--config", CONFIG, "--map", MAP)
        assert set(report["document"]) == {"model_list"}, auto_id
        assert "litellm-outside-fallbacks" in codes(report)


# --- unverified connections --------------------------------------------------------------------


def test_unverified_connections_are_exported_by_default_and_reported() -> None:
    report = report_of("omniroute", "auto/thrifty", "--config", CONFIG)
    unverified = [i["connection_id"] for i in report["fidelity"]
                  if i["code"] == "unverified-exported"]
    assert unverified == ["codex-team", "copilot-seat", "antigravity-main"]
    (copilot,) = [i for i in report["fidelity"] if i["connection_id"] == "copilot-seat"]
    assert copilot["message"].endswith("— in 2 pool entries: copilot-web/gpt-4.1, "
                                       "copilot-web/claude-sonnet-4-5")
    assert copilot["model"] is None
    models = [s["model"] for s in report["document"]["models"]]
    assert "codex/gpt-5.1-codex" in models


def test_verified_only_drops_them_and_never_writes_an_empty_allowlist() -> None:
    """OmniRoute reads an empty or absent step allowlist as every connection of the
    provider: an entry left with none is dropped whole, never written empty."""
    report = report_of("omniroute", "auto/thrifty", "--config", CONFIG, "--verified-only")
    steps = report["document"]["models"]
    assert all(step["allowedConnectionIds"] for step in steps)
    models = [s["model"] for s in steps]
    assert "codex/gpt-5.1-codex" not in models
    assert "antigravity/gemini-3-pro-preview" not in models
    dropped = [(i["code"], i["provider"], i["model"]) for i in report["fidelity"]
               if i["code"] in ("unverified-dropped", "entry-dropped")]
    assert ("entry-dropped", "codex", "gpt-5.1-codex") in dropped
    assert report["verified_only"] is True
    assert report["exported"] == {"pool_entries": 12, "entries": 8, "units": 8}


# --- saved plans -------------------------------------------------------------------------------


def test_a_saved_plan_exports_as_the_plan_it_was(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    made = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--out", str(saved)])
    assert made.exit_code == 0, made.output
    direct = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    from_file = invoke("litellm", str(saved), "--map", MAP)
    assert from_file.exit_code == 0, from_file.output
    assert from_file.stdout == direct.stdout
    report = report_of("omniroute", str(saved))
    assert report["plan_file"] == str(saved)
    assert report["now_source"] == "snapshot"


@pytest.mark.parametrize("extra", [["--config", CONFIG], ["--now", "2026-11-29T12:00:00Z"],
                                   ["--quota", "q.json"]])
def test_input_options_with_a_saved_plan_are_a_usage_error(tmp_path: Path,
                                                           extra: list[str]) -> None:
    saved = tmp_path / "plan.json"
    runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG, "--out", str(saved)])
    result = invoke("omniroute", str(saved), *extra)
    assert result.exit_code == 2
    assert "PLAN" in result.stderr
    assert "saved plan" in result.stderr


def saved_plan(tmp_path: Path, auto_id: str = "auto/subscription") -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--config", CONFIG, "--json"])
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def test_a_saved_subscription_plan_holding_a_paid_entry_is_refused(tmp_path: Path) -> None:
    """R10 is checked again on a file anyone can edit: a premium entry under
    auto/subscription is exit 2 and nothing is exported."""
    data = saved_plan(tmp_path)
    data["pool"].append({"position": 2, "rung": "premium", "provider": "claude",
                         "model": "claude-sonnet-4-5", "allowed_connection_ids": ["claude-api"],
                         "unverified_connection_ids": []})
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    for target in ("litellm", "omniroute"):
        result = invoke(target, str(tampered), *(["--map", MAP] if target == "litellm" else []))
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert "pool[1].rung" in result.stderr
        assert "auto/subscription never exports a rung but subscription" in result.stderr


def test_a_saved_plan_with_an_empty_allowlist_is_refused(tmp_path: Path) -> None:
    data = saved_plan(tmp_path, "auto/thrifty")
    data["pool"][0]["allowed_connection_ids"] = []
    data["pool"][0]["unverified_connection_ids"] = []
    data["pool"][0]["unverified"] = []
    broken = tmp_path / "empty.json"
    broken.write_text(json.dumps(data))
    result = invoke("omniroute", str(broken))
    assert result.exit_code == 2
    assert "pool[0].allowed_connection_ids" in result.stderr
    assert "every connection of the provider" in result.stderr


def test_a_file_that_is_not_a_plan_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "combo.json"
    other.write_text(json.dumps({"name": "x", "models": []}))
    result = invoke("omniroute", str(other))
    assert result.exit_code == 2
    assert "not a saved omniladder plan" in result.stderr


# --- --map: strict, and never a secret ----------------------------------------------------------


def write_map(tmp_path: Path, text: str, suffix: str = ".toml") -> str:
    path = tmp_path / f"map{suffix}"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("key", ["api_key", "token", "password", "Authorization"])
def test_a_literal_secret_in_the_map_is_exit_2_and_never_shown(tmp_path: Path,
                                                               key: str) -> None:
    routes = write_map(tmp_path, f'[[connections]]\nid = "openai-key"\n'
                                 f'model_prefix = "openai/"\n{key} = "{SECRET}"\n')
    for fmt in ([], ["--json"], ["--format", "markdown"]):
        result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", routes, *fmt)
        assert result.exit_code == 2
        assert SECRET not in result.output
        assert f"connections[0].{key}: key '{key}' looks like a secret; omniladder never " \
               "needs credentials" in result.stderr


def test_a_secret_in_a_json_map_is_refused_too(tmp_path: Path) -> None:
    routes = write_map(tmp_path, json.dumps({"connections": [
        {"id": "openai-key", "api_key": SECRET}]}), ".json")
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", routes)
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert "looks like a secret" in result.stderr


@pytest.mark.parametrize(("field", "value", "says"), [
    ("api_key_env", SECRET, "must be the name of an environment variable"),
    ("api_key_env", f"os.environ/{SECRET.upper().replace('-', '_')}", "name alone"),
    ("api_base", f"https://user:{SECRET}@proxy.internal/v1", "must not carry a user"),
    ("api_base", f"https://proxy.internal/v1?key={SECRET}", "must not carry a query"),
    ("api_base", SECRET, "must be an http:// or https:// URL"),
])
def test_a_key_pasted_into_another_field_is_exit_2_and_never_shown(
        tmp_path: Path, field: str, value: str, says: str) -> None:
    routes = write_map(tmp_path, f'[[connections]]\nid = "openai-key"\n{field} = "{value}"\n')
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", routes, "--json")
    assert result.exit_code == 2
    assert value not in result.output
    assert SECRET not in result.output
    assert SECRET.upper().replace("-", "_") not in result.output
    assert f"connections[0].{field}" in result.stderr
    assert says in result.stderr


def test_an_unknown_map_key_is_exit_2_with_file_line_and_field(tmp_path: Path) -> None:
    routes = write_map(tmp_path, '[[connections]]\nid = "openai-key"\nmodel_prefx = "openai/"\n')
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", routes)
    assert result.exit_code == 2
    assert "map.toml:3: connections[0].model_prefx: unknown key 'model_prefx'; did you mean " \
           "'model_prefix'?" in result.stderr


def test_a_repeated_map_id_is_exit_2(tmp_path: Path) -> None:
    routes = write_map(tmp_path, '[[connections]]\nid = "a"\n\n[[connections]]\nid = "a"\n')
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", routes)
    assert result.exit_code == 2
    assert "connections[1].id: repeats the id of connections[0]" in result.stderr


def test_a_map_for_omniroute_is_a_usage_error() -> None:
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    assert result.exit_code == 2
    assert "--map is for litellm" in result.stderr


def test_the_env_var_names_are_listed_never_a_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """The export writes os.environ/NAME and never reads the variable itself."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    assert result.exit_code == 0, result.output
    assert '"api_key": "os.environ/OPENAI_API_KEY"' in result.stdout
    assert SECRET not in result.output


# --- --current: safe to run from cron ----------------------------------------------------------


def test_current_is_exit_0_when_identical_and_1_after_a_change(tmp_path: Path) -> None:
    deployed = tmp_path / "omniladder-thrifty.yaml"
    first = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP,
                   "--out", str(deployed))
    assert first.exit_code == 0, first.output
    same = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP,
                  "--current", str(deployed))
    assert same.exit_code == 0, same.output
    assert f"identical to {deployed}" in same.stderr
    lines = deployed.read_text().splitlines(keepends=True)
    data = json.loads("".join(line for line in lines if not line.startswith("#")))
    data["model_list"].pop()  # the premium openai deployment went missing
    deployed.write_text(json.dumps(data))
    later = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP,
                   "--current", str(deployed))
    assert later.exit_code == 1, later.output
    assert re.search(r'deployment 10 of the export, "[^"]+", is not deployed',
                     later.stderr), later.stderr
    assert "(1 difference)" in later.stderr
    assert "omniladder: exit 1: the export differs from" in later.stderr


def test_current_ignores_the_instant_only_routing_counts(tmp_path: Path) -> None:
    """Re-exporting the same routing at another instant is no change (the header and the
    description hold the instant; cron must not re-apply for it)."""
    deployed = tmp_path / "combo.json"
    invoke("omniroute", "auto/subscription", "--config", CONFIG, "--out", str(deployed))
    data = json.loads(deployed.read_text())
    data["description"] = "edited by hand"
    deployed.write_text(json.dumps(data))
    again = invoke("omniroute", "auto/subscription", "--config", CONFIG,
                   "--current", str(deployed))
    assert again.exit_code == 0, again.output


def test_current_then_out_on_one_file_compares_first_then_rewrites(tmp_path: Path) -> None:
    deployed = tmp_path / "combo.json"
    deployed.write_text(json.dumps({"name": "omniladder-thrifty", "models": []}))
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG,
                    "--current", str(deployed), "--out", str(deployed))
    assert result.exit_code == 1
    assert ("the deployed combo omniladder-thrifty has no step: the export's 12 steps are "
            "to apply") in result.stderr
    assert "(1 difference)" in result.stderr
    after = invoke("omniroute", "auto/thrifty", "--config", CONFIG,
                   "--current", str(deployed))
    assert after.exit_code == 0, after.output


def test_omniroute_current_reads_get_api_combos_and_finds_the_managed_combo() -> None:
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG, "--current",
                    str(FIXTURES / "omniroute-combos-deployed.json"))
    assert result.exit_code == 0, result.output


def test_omniroute_current_catches_an_allowlist_the_gateway_dropped() -> None:
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG, "--json",
                    "--current", str(FIXTURES / "omniroute-combos-allowlist-dropped.json"))
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["current"]["equal"] is False
    (difference,) = report["current"]["differences"]
    assert difference.startswith('step "claude/claude-sonnet-4-5": the export has')
    assert '"allowedConnectionIds": ["claude-max-work"]' in difference
    assert '"allowedConnectionIds": []' in difference


def test_omniroute_current_catches_a_step_pinned_to_another_connection() -> None:
    """docs/gateways.md#export-omniroute: a step's ``connectionId`` pins it to one
    connection (OmniRoute's credential layer filters to it first), so a deployed step
    pinned to a metered connection routes out of the plan's allowlist (R12)."""
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG, "--json",
                    "--current", str(FIXTURES / "omniroute-combos-step-pinned.json"))
    assert result.exit_code == 1, result.output
    (difference,) = json.loads(result.stdout)["current"]["differences"]
    assert difference.startswith('step "claude/claude-sonnet-4-5": the export has')
    assert '"connectionId": "claude-api"' in difference


def _stored_thrifty_combo(tmp_path: Path, with_ids: bool = True) -> dict[str, Any]:
    """The export of auto/thrifty as OmniRoute stores it: each step with the ``id``
    ``normalizeComboStep`` gives it (diegosouzapw/OmniRoute ``src/lib/combos/steps.ts``)."""
    out = tmp_path / "combo.json"
    assert invoke("omniroute", "auto/thrifty", "--config", CONFIG,
                  "--out", str(out)).exit_code == 0
    combo: dict[str, Any] = json.loads(out.read_text())
    if with_ids:
        for index, step in enumerate(combo["models"]):
            step["id"] = f"step-{index + 1}"
    return combo


def _current_of(tmp_path: Path, combo: dict[str, Any]) -> Any:
    deployed = tmp_path / "combos.json"
    deployed.write_text(json.dumps({"combos": [combo]}))
    return invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--json",
                  "--current", str(deployed))


def test_omniroute_current_orders_the_steps_as_composite_tiers_run_them(
        tmp_path: Path) -> None:
    """docs/gateways.md#export-omniroute: a combo's ``config.compositeTiers`` puts the steps
    in another order at run time (``orderRuntimeStepsByCompositeTiers``, diegosouzapw/OmniRoute
    ``open-sse/services/combo/comboStructure.ts`` @ 02c2bcc): a tier chain that puts a paid
    step first routes out of the plan's order (R12) though the steps read as exported."""
    combo = _stored_thrifty_combo(tmp_path)
    last = len(combo["models"])
    combo["config"] = {"compositeTiers": {"defaultTier": "fast", "tiers": {
        "fast": {"stepId": f"step-{last}", "fallbackTier": "plan"},
        "plan": {"stepId": "step-1"}}}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    differences = json.loads(result.stdout)["current"]["differences"]
    assert differences[0].startswith(f"config.compositeTiers runs the deployed steps in "
                                     f"the order {last}, 1, 2,")
    assert re.fullmatch(rf'step "[^"]+" moved: {last} in the export, 1 deployed',
                        differences[1]), differences
    assert len(differences) == 2


def test_omniroute_composite_tiers_that_keep_the_order_are_no_difference(
        tmp_path: Path) -> None:
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"compositeTiers": {"defaultTier": "a", "tiers": {
        "a": {"stepId": "step-1", "fallbackTier": "b"}, "b": {"stepId": "step-2"}}}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 0, result.output


def test_omniroute_composite_tiers_name_a_step_without_an_id_by_the_id_omniroute_gives_it(
        tmp_path: Path) -> None:
    """A step stored without ``id`` gets ``<combo>-model-<position>-<target>``, slugged
    (``buildStepId`` in ``src/lib/combos/steps.ts`` @ 8d241cb), and a tier may name it."""
    combo = _stored_thrifty_combo(tmp_path, with_ids=False)
    second = combo["models"][1]["model"]  # codex/gpt-5.1-codex
    step_id = "omniladder-thrifty-model-2-" + re.sub(r"[^a-z0-9]+", "-", second.lower())
    combo["config"] = {"compositeTiers": {"defaultTier": "x", "tiers": {
        "x": {"stepId": step_id}}}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["current"]["differences"][0].startswith(
        "config.compositeTiers runs the deployed steps in the order 2, 1, 3,")


def test_omniroute_config_strategy_does_not_route_the_top_level_one_does(
        tmp_path: Path) -> None:
    """OmniRoute dispatches by the combo's top-level ``strategy`` (``priority`` when absent;
    ``phaseComboSetup`` in ``open-sse/services/combo/comboSetup.ts`` @ 02bac80);
    ``config.strategy`` only joins the merged runtime config, so it is no difference."""
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"strategy": "round-robin"}
    assert _current_of(tmp_path, combo).exit_code == 0
    del combo["strategy"]
    assert _current_of(tmp_path, combo).exit_code == 0
    combo["strategy"] = "round-robin"
    combo["config"] = {"strategy": "priority"}
    assert _current_of(tmp_path, combo).exit_code == 1



@pytest.mark.parametrize("targets", [
    ["openai/gpt-5-mini"],
    [{"kind": "model", "providerId": "claude", "model": "claude/claude-sonnet-4-5"}],
    [{"kind": "model", "model": "claude/claude-sonnet-4-5",
      "allowedConnectionIds": ["claude-max-work", "claude-pro-personal"]}],
    [{"kind": "combo-ref", "comboName": "paid-pool"}],
    [{"kind": "model", "model": "claude/claude-sonnet-4-5",
      "allowedConnectionIds": ["claude-max-work"]}],
    ["openai/gpt-5-mini", {"kind": "model", "model": "codex/gpt-5.1-codex",
                           "connectionId": "codex-team"}],
])
def test_omniroute_shadow_routing_to_any_target_differs(
        tmp_path: Path, targets: list[Any]) -> None:
    """docs/gateways.md#export-omniroute: ``config.shadowRouting`` with ``enabled: true``
    sends a copy of a sampled share of the combo's requests to each of its first
    ``maxTargets`` targets (``resolveShadowTargets`` and ``scheduleShadowRouting``,
    diegosouzapw/OmniRoute ``open-sse/services/combo/shadowRouting.ts`` @ 14145a5): a real
    request beyond what the plan routes: it bills on a target out of the plan's pool (R12)
    — a model the plan does not hold, a step without the plan's allowlist (every
    connection of the provider), a connection the allowlist leaves out, another combo —
    and spends a held step's quota, or bills its paid rung, a second time."""
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"shadowRouting": {"enabled": True, "targets": targets}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    (difference,) = json.loads(result.stdout)["current"]["differences"]
    assert difference.startswith("config.shadowRouting copies requests to ")
    assert "remove shadowRouting from the combo" in difference


@pytest.mark.parametrize("shadow", [
    {"targets": ["openai/gpt-5-mini"]},
    {"enabled": False, "targets": ["openai/gpt-5-mini"]},
    {"enabled": "true", "targets": ["openai/gpt-5-mini"]},
    {"enabled": True, "sampleRate": 0, "targets": ["openai/gpt-5-mini"]},
    {"enabled": True, "targets": []},
])
def test_omniroute_shadow_routing_that_is_off_is_no_difference(
        tmp_path: Path, shadow: dict[str, Any]) -> None:
    """Shadow routing runs only when ``enabled`` is the boolean true, the sample rate is
    above 0 and there are targets (``normalizeShadowRoutingConfig``)."""
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"shadowRouting": shadow}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 0, result.output


def test_omniroute_shadow_routing_names_only_the_targets_it_copies_to(tmp_path: Path) -> None:
    """A target past ``maxTargets`` gets no copy (``resolveShadowTargets``), so the
    difference does not name it."""
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"shadowRouting": {"enabled": True, "maxTargets": 1, "targets": [
        "openai/gpt-5-mini", "anthropic/claude-opus-4-1"]}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    (difference,) = json.loads(result.stdout)["current"]["differences"]
    assert "gpt-5-mini" in difference
    assert "claude-opus" not in difference


def test_omniroute_eval_routing_reorders_the_steps_and_differs(tmp_path: Path) -> None:
    """docs/gateways.md#export-omniroute: ``config.evalRouting`` with ``enabled: true``
    sorts the targets by the gateway's eval scores before dispatch (``orderTargetsByEvalScores``,
    ``open-sse/services/evalRouting.ts``, called from ``open-sse/services/combo/
    targetResolution.ts`` @ 24e3128 in diegosouzapw/OmniRoute): a paid step with a better
    score runs before a subscription step with quota left, out of the plan's order (R12)."""
    combo = _stored_thrifty_combo(tmp_path)
    combo["config"] = {"evalRouting": {"enabled": True, "suiteIds": ["golden-set"]}}
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    (difference,) = json.loads(result.stdout)["current"]["differences"]
    assert difference.startswith("config.evalRouting runs the deployed steps in the order of ")
    assert "remove evalRouting from the combo" in difference
    combo["config"] = {"evalRouting": {"enabled": False, "suiteIds": ["golden-set"]}}
    assert _current_of(tmp_path, combo).exit_code == 0
    combo["config"] = {"evalRouting": {"enabled": True}}
    combo["models"] = combo["models"][:1]
    assert "config.evalRouting" not in _current_of(tmp_path, combo).stderr


def test_omniroute_current_through_the_v1_surface_never_shows_an_allowlist() -> None:
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG, "--current",
                    str(FIXTURES / "omniroute-v1-combos-steps-issue-10968.json"))
    assert result.exit_code == 1
    assert 'step "claude/claude-sonnet-4-5" moved' not in result.stderr
    assert re.search(r'step 1 of the export, "claude/claude-sonnet-4-5", is not deployed',
                     result.stderr)
    assert len(re.findall(r'step \d deployed, "jina-ai/some-embed", is not in the export',
                          result.stderr)) == 2


def test_omniroute_current_without_the_combo_is_not_deployed_yet() -> None:
    deployed = FIXTURES / "omniroute-combos-deployed.json"
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--current",
                    str(deployed))
    assert result.exit_code == 1
    assert "no combo named omniladder-thrifty is deployed" in result.stderr


def test_an_inactive_combo_differs(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "omniroute-combos-deployed.json").read_text())
    data["combos"][1]["isActive"] = False
    deployed = tmp_path / "combos.json"
    deployed.write_text(json.dumps(data))
    result = invoke("omniroute", "auto/subscription", "--config", CONFIG, "--current",
                    str(deployed))
    assert result.exit_code == 1
    assert "inactive" in result.stderr


def test_litellm_current_from_the_published_docs_config_is_not_deployed() -> None:
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(FIXTURES / "litellm-model-config-docs.json"))
    assert result.exit_code == 1
    assert ("the model group omniladder-subscription is not deployed: the export's 1 "
            "deployment is to apply") in result.stderr


def test_litellm_current_in_block_yaml_is_exit_2_with_what_to_give() -> None:
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(FIXTURES / "litellm-model-config-docs.yaml"))
    assert result.exit_code == 2
    assert "litellm-model-config-docs.yaml:1: not a fragment `omniladder export litellm` " \
           "writes" in result.stderr


def _litellm_deployed(tmp_path: Path, **sections: Any) -> Path:
    """The export of auto/subscription as deployed, with ``sections`` added to it."""
    deployed = tmp_path / "deployed.yaml"
    invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
           "--out", str(deployed))
    data = json.loads("\n".join(line for line in deployed.read_text().splitlines()
                                if not line.startswith("#")))
    deployed.write_text(json.dumps({**data, **sections}))
    return deployed


def test_litellm_current_names_outside_fallbacks(tmp_path: Path) -> None:
    deployed = _litellm_deployed(tmp_path, router_settings={
        "fallbacks": [{"omniladder-subscription": ["gpt-4o"]}]})
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(deployed))
    assert result.exit_code == 1
    assert "router_settings.fallbacks routes omniladder-subscription's failed requests" \
        in result.stderr


@pytest.mark.parametrize(("key", "value"), [
    ("fallbacks", [{"omniladder-subscription": ["gpt-4o"]}]),
    ("context_window_fallbacks", [{"omniladder-subscription": ["gpt-4o"]}]),
    ("content_policy_fallbacks", [{"*": ["gpt-4o"]}]),
    ("default_fallbacks", ["gpt-4o"]),
])
def test_litellm_current_names_fallbacks_given_under_litellm_settings(
        tmp_path: Path, key: str, value: Any) -> None:
    """docs/gateways.md#export-litellm: a fallback that routes the group's failed requests
    out of the plan's pool is a difference wherever the proxy reads it. LiteLLM's proxy
    sets every ``litellm_settings`` key on the ``litellm`` module and its Router falls back
    to those module values when ``router_settings`` gives none (BerriAI/litellm
    ``litellm/proxy/proxy_server.py`` @ 9344afb, ``litellm/router.py`` @ f292d1a)."""
    deployed = _litellm_deployed(tmp_path, litellm_settings={key: value})
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(deployed))
    assert result.exit_code == 1, result.output
    assert f"litellm_settings.{key} routes omniladder-subscription's failed requests" \
        in result.stderr


def test_litellm_settings_fallbacks_under_router_settings_ones_are_not_read(
        tmp_path: Path) -> None:
    """The Router takes ``router_settings.fallbacks`` when it is set and only then ignores
    ``litellm_settings.fallbacks``: one that is never read routes nothing."""
    deployed = _litellm_deployed(
        tmp_path, router_settings={"fallbacks": [{"gpt-4o": ["gpt-4o-mini"]}]},
        litellm_settings={"fallbacks": [{"omniladder-subscription": ["gpt-4o"]}]})
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(deployed))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("sections", "via"), [
    ({"router_settings": {"model_group_alias": {"omniladder-subscription": "gpt-4o"}}},
     "router_settings.model_group_alias"),
    ({"router_settings": {"model_group_alias": {
        "omniladder-subscription": {"model": "gpt-4o", "hidden": True}}}},
     "router_settings.model_group_alias"),
    ({"litellm_settings": {"model_alias_map": {"omniladder-subscription": "gpt-4o"}}},
     "litellm_settings.model_alias_map"),
    ({"general_settings": {"completion_model": "gpt-4o"}},
     "general_settings.completion_model"),
    ({"litellm_settings": {"model_alias_map": {"omniladder-subscription": "cheap"}},
      "router_settings": {"model_group_alias": {"cheap": "gpt-4o"}}},
     "litellm_settings.model_alias_map, then router_settings.model_group_alias"),
])
def test_litellm_current_names_an_alias_that_sends_the_group_elsewhere(
        tmp_path: Path, sections: dict[str, Any], via: str) -> None:
    """docs/gateways.md#export-litellm: the proxy renames a requested model before its
    Router picks deployments — ``general_settings.completion_model`` replaces every
    request's model, then ``litellm_settings.model_alias_map`` (the ``litellm`` module's)
    renames it (``common_processing_pre_call_logic``, BerriAI/litellm
    ``litellm/proxy/common_request_processing.py`` @ 001501f), and the Router takes
    ``router_settings.model_group_alias`` before it looks the group up, even when the group
    exists (``_common_checks_available_deployment``, ``litellm/router.py`` @ f292d1a). An
    alias keyed by the managed name sends all of its requests to another group (R12)."""
    deployed = _litellm_deployed(tmp_path, **sections)
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(deployed))
    assert result.exit_code == 1, result.output
    assert f"{via} sends omniladder-subscription's requests to \"gpt-4o\", not to its " \
           "deployments" in result.stderr


@pytest.mark.parametrize("sections", [
    {"router_settings": {"model_group_alias": {"gpt-4o": "omniladder-subscription"}}},
    {"litellm_settings": {"model_alias_map": {"omniladder-subscription": "sub"}},
     "router_settings": {"model_group_alias": {"sub": "omniladder-subscription"}}},
    {"general_settings": {"completion_model": "omniladder-subscription"}},
    {"router_settings": {"model_group_alias": {}}, "general_settings": {
        "completion_model": None}},
])
def test_litellm_aliases_that_leave_the_group_its_requests_are_no_difference(
        tmp_path: Path, sections: dict[str, Any]) -> None:
    """An alias from another name into the group, or a chain that ends at the group,
    leaves the group's requests on its deployments."""
    deployed = _litellm_deployed(tmp_path, **sections)
    result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                    "--current", str(deployed))
    assert result.exit_code == 0, result.output


def test_current_never_prints_a_literal_key_it_finds_deployed(tmp_path: Path) -> None:
    deployed = tmp_path / "deployed.yaml"
    invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
           "--out", str(deployed))
    text = deployed.read_text().replace("os.environ/PROXY_CLAUDE_MAX_WORK_KEY", SECRET)
    deployed.write_text(text)
    for fmt in ([], ["--json"], ["--format", "markdown"]):
        result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                        "--current", str(deployed), *fmt)
        assert result.exit_code == 1
        assert SECRET not in result.output
        assert "redacted" in result.output


def test_current_never_prints_provider_keys_under_their_own_names() -> None:
    """docs/gateways.md#export: a deployed file's keys are never printed. LiteLLM takes a
    provider's credentials under its own field names (``aws_secret_access_key``, …, its
    Bedrock page), not only ``api_key``; the fixture's README says where it comes from."""
    deployed = FIXTURES / "litellm-bedrock-keys-deployed.yaml"
    for fmt in ([], ["--json"], ["--format", "markdown"]):
        result = invoke("litellm", "auto/subscription", "--config", CONFIG, "--map", MAP,
                        "--current", str(deployed), *fmt)
        assert result.exit_code == 1, result.output
        assert "wJalrXUtnFEMI" not in result.output
        assert "AKIAIOSFODNN7EXAMPLE" not in result.output
        assert "redacted" in result.output
        assert "us-east-1" in result.output  # what is no key is still shown


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "a combo must be an object with a name"),
    ('{"combos": {"name": "x"}}', "combos: must be a list of combos"),
    ('"text"', "the top level must be an object or a list"),
])
def test_omniroute_current_that_cannot_be_read_is_exit_2(tmp_path: Path, content: str,
                                                         says: str) -> None:
    deployed = tmp_path / "current.json"
    deployed.write_text(content)
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--current",
                    str(deployed))
    assert result.exit_code == 2, result.output
    assert says in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("target", ["litellm", "omniroute"])
def test_the_first_run_of_the_cron_step_bootstraps_from_a_missing_current_file(
        tmp_path: Path, target: str) -> None:
    """docs/gateways.md#export: --current F --out F on a first run, when F does not exist
    yet, is exit 1 (all to apply) and writes F; the next run compares with it."""
    deployed = tmp_path / "deployed"
    args = [target, "auto/thrifty", "--config", CONFIG,
            *(["--map", MAP] if target == "litellm" else []),
            "--current", str(deployed), "--out", str(deployed)]
    first = invoke(*args, "--json")
    assert first.exit_code == 1, first.output
    current = json.loads(first.stdout)["current"]
    assert current["first_run"] is True
    (difference,) = current["differences"]
    assert difference.startswith(f"{deployed} does not exist yet: nothing is deployed")
    assert deployed.exists()
    again = invoke(*args)
    assert again.exit_code == 0, again.output


def test_a_current_file_in_a_missing_folder_is_exit_2(tmp_path: Path) -> None:
    """A folder that does not exist is a mistyped path, not a first run."""
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--current",
                    str(tmp_path / "nowhere" / "absent.json"))
    assert result.exit_code == 2
    assert "absent.json: file not found" in result.stderr


@pytest.mark.parametrize("edited_first", [True, False])
def test_two_deployed_combos_of_the_managed_name_differ_whatever_their_order(
        tmp_path: Path, edited_first: bool) -> None:
    same = _stored_thrifty_combo(tmp_path, with_ids=False)
    edited = json.loads(json.dumps(same))
    edited["models"].pop(0)
    combos = [edited, same] if edited_first else [same, edited]
    deployed = tmp_path / "combos.json"
    deployed.write_text(json.dumps({"combos": combos}))
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG, "--json",
                    "--current", str(deployed))
    assert result.exit_code == 1, result.output
    differences = json.loads(result.stdout)["current"]["differences"]
    assert differences[0].startswith("2 combos named omniladder-thrifty are deployed "
                                     "(combos[0], combos[1])")
    where = "combos[0]" if edited_first else "combos[1]"
    assert len(differences) == 2, differences
    assert differences[1].startswith(f"{where}: step 1 of the export, ")


def test_current_diffs_by_identity_four_removed_steps_are_four_differences(
        tmp_path: Path) -> None:
    combo = _stored_thrifty_combo(tmp_path, with_ids=False)
    removed = [combo["models"][i]["model"] for i in (1, 3, 5, 7)]
    for index in (7, 5, 3, 1):
        combo["models"].pop(index)
    result = _current_of(tmp_path, combo)
    assert result.exit_code == 1, result.output
    differences = json.loads(result.stdout)["current"]["differences"]
    assert len(differences) == 4, differences
    for model, line in zip(removed, differences, strict=True):
        assert f'of the export, {json.dumps(model)}, is not deployed' in line


def test_litellm_current_diffs_by_identity(tmp_path: Path) -> None:
    deployed = tmp_path / "omniladder-thrifty.yaml"
    invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP, "--out", str(deployed))
    data = json.loads("\n".join(line for line in deployed.read_text().splitlines()
                                if not line.startswith("#")))
    data["model_list"] = data["model_list"][2:]
    deployed.write_text(json.dumps(data))
    result = invoke("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP, "--json",
                    "--current", str(deployed))
    differences = json.loads(result.stdout)["current"]["differences"]
    assert [line.split(",")[0] for line in differences] == [
        "deployment 1 of the export", "deployment 2 of the export"]


def test_a_long_report_lists_twenty_items_of_a_code_and_counts_the_rest() -> None:
    """A fleet of thousands gets a readable table; --json still lists every item."""
    import io

    from omniladder.analyses.export.source import ExportEntry, ExportMark
    from omniladder.rendering import Format
    from omniladder.rendering.export_view import ExportReport, render_report

    entries = tuple(ExportEntry(position=n, rung="free", provider="p", model=f"m{n}",
                                allowed=(f"c{n}",),
                                unverified=(ExportMark(f"c{n}", "quota-unknown", ""),))
                    for n in range(1, 26))
    source = ExportPlan(auto_id=parse_auto_id("auto/thrifty"), now="2026-11-29T12:00:00Z",
                        now_source="flag",
                        entries=entries, rung_notes={}, warnings=(), plan_file=None)
    result = export("omniroute", source)
    assert sum(f.code == "unverified-exported" for f in result.fidelity) == 25
    for fmt, more in ((Format.TABLE, "and 5 more unverified-exported items (--json lists "
                       "them all)"), (Format.MARKDOWN, "and 5 more unverified-exported items")):
        out = io.StringIO()
        render_report(ExportReport(result, None, None), fmt, out)
        text = out.getvalue()
        assert more in " ".join(text.split()), fmt
        assert "c20" in text
        assert "c21" not in text.replace(result.text, "")


def test_the_header_says_where_now_came_from_as_plan_does() -> None:
    result = invoke("omniroute", "auto/thrifty", "--config", CONFIG,
                    "--now", "2026-11-29T12:00:00Z")
    assert result.exit_code == 0, result.output
    assert "planned for 2026-11-29T12:00:00Z (from --now)" in result.stderr
    assert "(flag)" not in result.stderr


@pytest.mark.parametrize(("cid", "provider", "model"), [
    ("ollama-local", "ollama", "qwen2.5-coder:32b"),
    ("openrouter-free", "openrouter", "deepseek/deepseek-chat-v3.1:free"),
    ("a:b~c/d%e", "p:q", "m~n:o/%41"),
    ("ünï\u2028", "\ud800", " :x "),
])
def test_a_deployment_id_never_holds_a_colon_and_reads_back(cid: str, provider: str,
                                                            model: str) -> None:
    """LiteLLM's usage-based-routing-v2 takes an id's part before its first ':' as the
    deployment's id, so no ':' may reach one, from a connection or a model name either."""
    identity = deployment_id("omniladder-thrifty", cid, provider, model)
    assert ":" not in identity
    assert parse_deployment_id(identity) == ("omniladder-thrifty", cid, provider, model)


def test_every_exported_id_of_the_example_is_free_of_colons() -> None:
    report = report_of("litellm", "auto/thrifty", "--config", CONFIG, "--map", MAP)
    ids = [d["model_info"]["id"] for d in report["document"]["model_list"]]
    assert "omniladder-thrifty~ollama-local~ollama~qwen2.5-coder%3A32b" in ids
    assert not [i for i in ids if ":" in i]
