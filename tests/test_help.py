"""Self-documenting: -h everywhere, examples and exit codes in every help, schema
descriptions, and shell completion that sees every command."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.commands import COMMANDS
from omniladder.commands.help import COMMAND_HELP, command_help
from omniladder.errors import EXIT_MEANINGS, ExitCode
from omniladder.inputs.schemas import ALL_KINDS, KINDS, json_schema
from tests.conftest import ROOT, click_tree
from tests.test_meta import command_paths, section, table_rows

runner = CliRunner()


def click_command(path: tuple[str, ...]) -> Any:
    command: Any = click_tree()
    for part in path:
        command = command.commands[part]
    return command


GROUPS = sorted(name for name, (_, _, group) in COMMANDS.items() if group)


@pytest.mark.parametrize("path", [(), *[(g,) for g in GROUPS], *command_paths()],
                         ids=lambda p: " ".join(p) or "root")
def test_dash_h_is_help_everywhere(path: tuple[str, ...]) -> None:
    short = runner.invoke(app, [*path, "-h"])
    long = runner.invoke(app, [*path, "--help"])
    assert short.exit_code == 0, short.output
    assert short.stdout == long.stdout
    assert short.stdout.startswith("Usage: ")
    assert "-h, --help" in short.stdout


def test_every_command_has_one_help_entry() -> None:
    """Each in COMMAND_HELP, or, for a quota source's import, in QUOTA_SOURCES."""
    from omniladder.quota_sources import QUOTA_SOURCES

    assert sorted([*COMMAND_HELP, *(f"import {name}" for name in QUOTA_SOURCES)]) == sorted(
        " ".join(path) for path in command_paths())


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_help_shows_examples_and_its_exit_codes(path: tuple[str, ...]) -> None:
    text = runner.invoke(app, [*path, "-h"]).stdout
    examples, codes = text.split("Examples:", 1)[1].split("Exit codes:", 1)
    entry = command_help(" ".join(path))
    shown = "\n".join(line[4:] for line in examples.strip("\n").splitlines()).rstrip()
    assert shown == "\n".join(entry.examples)
    # Each example is a whole command line; at least one runs this very command.
    assert any(f"omniladder {' '.join(path)}" in example for example in entry.examples)
    listed = [int(m) for m in re.findall(r"^ +(\d)  ", codes, flags=re.M)]
    # A command answers "no" (exit 1) exactly when its code can call answer_is_no.
    says_no = "answer_is_no(" in inspect.getsource(click_command(path).callback)
    assert listed == ([0, 1, 2] if says_no else [0, 2])
    assert f"0 {EXIT_MEANINGS[ExitCode.ANSWERED]}" in flat(codes)
    assert f"2 {EXIT_MEANINGS[ExitCode.UNANSWERABLE]}" in flat(codes)
    if says_no:
        assert entry.no is not None
        assert f'1 the answer is "no": {entry.no}' in flat(codes)
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_root_help_lists_the_whole_exit_code_table() -> None:
    text = flat(runner.invoke(app, ["-h"]).stdout.split("Exit codes:", 1)[1])
    for code, meaning in EXIT_MEANINGS.items():
        assert f"{int(code)} {meaning}" in text


def test_the_readme_exit_code_table_is_the_one_the_help_prints() -> None:
    text = section("Exit codes")
    assert text is not None
    assert {int(row[0]): row[1] for row in table_rows(text)} == {
        int(code): meaning for code, meaning in EXIT_MEANINGS.items()}


def test_schema_help_lists_every_kind() -> None:
    # click wraps the help at a hyphen too: joined again here
    text = flat(runner.invoke(app, ["schema", "-h"]).stdout).replace("- ", "-")
    assert "connections, quota, settings, spend, traffic, billing-catalog, model-catalog, " \
        "window-catalog, plan, whatif-scenarios, audit-traffic, forecast, " \
        "forecast-backtest, export, export-litellm, export-omniroute, whatif." in text
    for kind in ALL_KINDS:
        assert kind in text


def undescribed(schema: Any, where: str) -> list[str]:
    """Every property, at any depth, without a non-empty description."""
    found: list[str] = []
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            described = isinstance(prop, dict) and str(prop.get("description", "")).strip()
            if not described:
                found.append(f"{where}.{name}")
        for key, value in schema.items():
            found += undescribed(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += undescribed(value, f"{where}[{index}]")
    return found


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_schema_property_has_a_description(kind: str) -> None:
    schema = json_schema(kind)
    assert undescribed(schema, kind) == []
    committed = json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text("utf-8"))
    assert undescribed(committed, kind) == []
    assert json.dumps(schema).count('"description"') >= 3  # the walk had properties to see


def test_the_description_table_names_exactly_the_models_fields() -> None:
    """No description for a field that is gone, none missing for a new one."""
    from omniladder import models, scope_models
    from omniladder.inputs import plan_document, scenarios
    from omniladder.inputs.ledger import schema as ledger_schema
    from omniladder.inputs.schemas import DESCRIPTIONS

    names = set()
    for kind, model in KINDS.items():
        names |= {model.__name__, *json_schema(kind).get("$defs", {})}
    assert set(DESCRIPTIONS) == names
    for name in names:
        model = (getattr(models, name, None) or getattr(scope_models, name, None)
                 or getattr(plan_document, name, None) or getattr(scenarios, name, None)
                 or getattr(ledger_schema, name))
        assert set(DESCRIPTIONS[name]) == set(models.field_types(model)), name
        assert all(text.strip().endswith(".") for text in DESCRIPTIONS[name].values()), name


def test_the_walk_finds_a_missing_description() -> None:
    schema = {"properties": {"a": {"type": "string", "description": "A."},
                             "b": {"$ref": "#/$defs/B"}},
              "$defs": {"B": {"properties": {"c": {"type": "string", "description": " "}}}}}
    assert undescribed(schema, "k") == ["k.b", "k/$defs/B.c"]


# --- shell completion ----------------------------------------------------------------------


def complete(words: str) -> list[str]:
    """What bash completion offers after ``words``, asked as the completion script asks."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "_OMNILADDER_COMPLETE": "complete_bash",
           "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - (
               0 if words.endswith(" ") else 1))}
    # Called back as the script calls it: a program named omniladder, with no arguments.
    call = ("import sys; sys.argv = ['omniladder']\n"
            "from omniladder.cli import main\nmain()")
    done = subprocess.run([sys.executable, "-c", call], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT)
    return done.stdout.split()


def test_completion_offers_every_command_and_sub_command() -> None:
    # the order of the root help: commands, then groups (click lists groups last)
    assert sorted(complete("omniladder ")) == sorted(COMMANDS)
    assert complete("omniladder catalog ") == ["show", "check"]
    assert complete("omniladder import c") == ["claude-usage", "codex-sessions",
                                               "copilot-user"]
    assert complete("omniladder schema ") == list(ALL_KINDS)
    assert complete("omniladder schema forecast") == ["forecast", "forecast-backtest"]
    assert "--fail-on-empty" in complete("omniladder plan --f")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_a_script_that_calls_omniladder_back(shell: str) -> None:
    result = runner.invoke(app, ["completion", shell])
    assert result.exit_code == 0, result.output
    assert "_OMNILADDER_COMPLETE" in result.stdout
    assert f"complete_{shell}" in result.stdout
    assert "omniladder" in result.stdout


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    result = runner.invoke(app, ["completion", "tcsh"])
    assert result.exit_code == 2
    assert "tcsh" in result.output
