"""`omniladder init` and `omniladder schema`, and the schemas committed under schemas/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.commands.schema_cmd import KIND_NAMES
from omniladder.inputs.documents import read_document
from omniladder.inputs.input_set import load_inputs
from omniladder.inputs.schemas import (
    ALL_KINDS,
    IGNORES_UNKNOWN_KEYS,
    KINDS,
    json_schema,
    schema_file_name,
    schema_text,
)
from omniladder.inputs.starter import STARTER_FILES
from tests.conftest import EXAMPLES, ROOT

runner = CliRunner()
SCHEMAS = ROOT / "schemas"


# --- init ----------------------------------------------------------------------------------


def test_init_writes_files_that_load_and_plan(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "new")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == sorted(STARTER_FILES)
    inputs = load_inputs(tmp_path / "new" / "omniladder.toml")
    assert [c.id for c in inputs.connections] == ["claude-max", "local-ollama"]
    plan = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                               str(tmp_path / "new" / "omniladder.toml"), "--json"])
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.stdout)["pool"]


def test_init_files_are_commented(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    for name in STARTER_FILES:
        assert (tmp_path / name).read_text().startswith("# ")


@pytest.mark.parametrize("existing", sorted(STARTER_FILES))
def test_init_never_overwrites(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).write_text("mine\n")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{existing}: already exists" in result.output
    assert (tmp_path / existing).read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [existing]


def test_init_defaults_to_the_working_directory(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "omniladder", "init"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["omniladder.toml", "connections.toml"]
    planned = subprocess.run([sys.executable, "-m", "omniladder", "plan", "auto/subscription"],
                             cwd=tmp_path, env=env, capture_output=True, text=True,
                             check=False)
    assert planned.returncode == 0, planned.stderr


# --- schema --------------------------------------------------------------------------------


def test_every_kind_has_a_command_choice_and_a_committed_file() -> None:
    """The command offers every kind, and every kind has its file under schemas/ and no file
    lacks a kind. export*.schema.json describe export's output and its targets' documents,
    written by hand from the gateways' facts (tests/test_export.py checks them);
    forecast*.schema.json and audit-traffic.schema.json describe those commands' output
    (tests/test_forecast.py, tests/test_backtest.py, tests/test_traffic_cli.py)."""
    assert KIND_NAMES == ALL_KINDS
    assert sorted(p.name for p in SCHEMAS.iterdir()) == sorted(
        schema_file_name(kind) for kind in ALL_KINDS)


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.iterdir()))
def test_every_committed_schema_is_printed_byte_for_byte(name: str) -> None:
    """`omniladder schema KIND > schemas/KIND.schema.json` leaves every committed file as it
    is: the input kinds generated from their models, the output documents as shipped."""
    result = runner.invoke(app, ["schema", name.removesuffix(".schema.json")])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (SCHEMAS / name).read_bytes()


@pytest.mark.parametrize("name", ["window-catalog.schema.json", "forecast.schema.json"])
def test_the_process_prints_a_committed_schema_byte_for_byte(name: str) -> None:
    """The same through the process's own standard output, for a kind generated from its
    model (its text past ASCII) and a document as shipped; each kind's bytes are held
    above, in process."""
    result = subprocess.run([sys.executable, "-m", "omniladder", "schema",
                             name.removesuffix(".schema.json")],
                            capture_output=True, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (SCHEMAS / name).read_bytes()


@pytest.mark.parametrize("kind", list(KINDS))
def test_committed_schema_matches_the_models(kind: str) -> None:
    committed = (SCHEMAS / schema_file_name(kind)).read_text()
    assert committed == schema_text(kind), (
        f"schemas/{schema_file_name(kind)} is out of date; regenerate it with "
        f"`python -m omniladder schema {kind} > schemas/{schema_file_name(kind)}`")


@pytest.mark.parametrize("kind", list(KINDS))
def test_schema_command_prints_it(kind: str) -> None:
    result = runner.invoke(app, ["schema", kind])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json_schema(kind)


def test_unknown_kind_is_one_line_naming_the_kinds() -> None:
    result = runner.invoke(app, ["schema", "fleet"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("omniladder: error: KIND: unknown kind 'fleet'")
    assert all(kind in line for kind in ALL_KINDS)


def test_a_misspelt_kind_says_the_kind_it_is_close_to() -> None:
    result = runner.invoke(app, ["schema", "audit-trafic"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert "did you mean 'audit-traffic'?" in line


def test_schemas_forbid_unknown_keys_like_the_loaders() -> None:
    for kind in KINDS:
        schema = json_schema(kind)
        forbids = kind not in IGNORES_UNKNOWN_KEYS
        assert (schema.get("additionalProperties") is False) == forbids, kind
        for definition in schema.get("$defs", {}).values():
            assert (definition.get("additionalProperties") is False) == forbids, kind


# A small validator for the subset of JSON Schema pydantic emits, so the committed schemas
# are checked against real files without a dependency.

def _valid(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if "$ref" in schema:
        return _valid(value, root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "anyOf" in schema:
        return any(_valid(value, option, root) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "const" in schema and value != schema["const"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        if set(schema.get("required", ())) - set(value):
            return False
        return all(_valid(item, props[key], root) for key, item in value.items()
                   if key in props)
    if kind == "array":
        return isinstance(value, list | tuple) and all(
            _valid(item, schema.get("items", {}), root) for item in value)
    if kind == "string":
        return isinstance(value, str | date)
    if kind in ("number", "integer"):
        ok = isinstance(value, int if kind == "integer" else int | float) and not isinstance(
            value, bool)
        return ok and value >= schema.get("minimum", value) and value <= schema.get(
            "maximum", value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    return True


@pytest.mark.parametrize(("kind", "path"), [
    ("connections", EXAMPLES / "connections.toml"),
    ("quota", EXAMPLES / "quota.json"),
    ("settings", EXAMPLES / "omniladder.toml"),
    ("spend", EXAMPLES / "spend.json"),
    ("billing-catalog", ROOT / "catalogs" / "connection-billing.toml"),
    ("model-catalog", ROOT / "catalogs" / "models.toml"),
    ("window-catalog", ROOT / "catalogs" / "quota-windows.toml"),
    ("billing-catalog", EXAMPLES / "billing-overlay.toml"),
    ("plan", EXAMPLES / "ci" / "plan-thrifty.json"),
], ids=lambda v: v if isinstance(v, str) else v.name)
def test_committed_schemas_accept_the_shipped_files(kind: str, path: Path) -> None:
    schema = json.loads((SCHEMAS / schema_file_name(kind)).read_text())
    assert _valid(read_document(path), schema, schema)


@pytest.mark.parametrize(("kind", "document"), [
    ("connections", {"connections": [{"id": "a", "provider": "p", "auth_typ": "oauth"}]}),
    ("connections", {"connections": [{"id": "a", "provider": "p", "auth_type": "oauth",
                                      "status": "sleepy"}]}),
    ("settings", {"ladder": {"exit_cutoff_percent": 101}}),
    ("settings", {"budgets": {"rung_budget_usd": {"free": 1}}}),
    ("quota", {"readings": [{"connection": "a"}]}),
])
def test_schemas_reject_what_the_loaders_reject(kind: str, document: dict[str, Any]) -> None:
    schema = json_schema(kind)
    assert not _valid(document, schema, schema)
    with pytest.raises(ValidationError):
        KINDS[kind].model_validate(_tuples(document))


def _tuples(value: Any) -> Any:
    """Arrays as the loaders hand them to the models (read_document makes them tuples)."""
    if isinstance(value, dict):
        return {key: _tuples(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    return value


def test_a_fixed_document_passes_both() -> None:
    document = {"connections": [{"id": "a", "provider": "p", "auth_type": "oauth",
                                 "status": "banned"}]}
    schema = json_schema("connections")
    assert _valid(document, schema, schema)
    KINDS["connections"].model_validate(_tuples(document))
