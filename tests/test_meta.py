"""The project keeps its own promises: a pure core, exit codes, commands and reason codes
documented, one renderer per format."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import subprocess
import sys
from typing import get_args

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from omniladder import billing, budgets, plan, tiers
from omniladder.cli import app
from omniladder.errors import ExitCode
from omniladder.models import Overage
from omniladder.plan import REASON_CODES
from omniladder.rendering import RENDERERS, Format, render
from tests.builders import at, conn, fleet, reading, window
from tests.builders import plan as make_plan
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")

CORE = ("models", "loading", "billing", "tiers", "quota", "budgets", "autoid", "plan",
        "errors", "timefmt", "rendering", "rendering.json_view")
"""Engine modules, plus the renderer interface and the JSON view (never through rich)."""


def section(heading: str) -> str | None:
    """The text of a README section, up to the next heading of the same level."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", README, re.M | re.S)
    return match.group(1) if match else None


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|[\s|:-]+\|", line.strip()):
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header row


def run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return done.stdout.strip()


# --- a pure core ---------------------------------------------------------------------------


def test_core_imports_neither_typer_nor_rich() -> None:
    imports = "; ".join(f"import omniladder.{name}" for name in CORE)
    loaded = run_python(f"import sys; {imports}; print(sorted({{m.split('.')[0] for m in "
                        "sys.modules if m.split('.')[0] in ('typer', 'rich', 'click')}))")
    assert loaded == "[]"


def test_the_cli_loads_the_engine_lazily() -> None:
    """`omniladder --version` and `--help` do not pay for the engine or rich tables."""
    loaded = run_python("import sys, omniladder.cli; print(sorted(m for m in sys.modules if m "
                        "in ('omniladder.plan', 'omniladder.loading', 'omniladder.quota', "
                        "'rich.table', 'tomllib')))")
    assert loaded == "[]"


# --- exit codes ----------------------------------------------------------------------------


def test_exit_codes_agree_with_the_readme_table() -> None:
    text = section("Exit codes")
    assert text is not None, "README has no '## Exit codes' section"
    rows = table_rows(text)
    documented = [int(row[0]) for row in rows]
    assert sorted(documented) == sorted(int(code) for code in ExitCode)
    meaning = {int(row[0]): row[1] for row in rows}
    assert "answered" in meaning[ExitCode.ANSWERED]
    assert '"no"' in meaning[ExitCode.NO]
    assert "could not be answered" in meaning[ExitCode.UNANSWERABLE]


# --- commands ------------------------------------------------------------------------------


def command_names() -> list[str]:
    group = get_command(app)
    assert hasattr(group, "commands")
    return sorted(group.commands)


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for name in command_names():
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        command = get_command(app).commands[name]  # type: ignore[attr-defined]
        assert command.help, f"{name} has no help text"
        first = " ".join(command.help.split("\n")[0].split())
        assert first in " ".join(result.stdout.split())


def test_every_command_is_in_the_readme_commands_table() -> None:
    text = section("Commands")
    assert text is not None, "README has no '## Commands' section"
    documented = set()
    for row in table_rows(text):
        match = re.match(r"`omniladder ([a-z-]+)", row[0])
        assert match is not None, row
        documented.add(match.group(1))
    assert set(command_names()) == documented


# --- rendering -----------------------------------------------------------------------------


def test_every_format_has_a_renderer() -> None:
    assert set(RENDERERS) == set(Format)
    result = make_plan(fleet([conn("c", models=["sonnet"])],
                             [reading("c", window("5h", 50, at(hours=1)))]))
    for fmt in Format:
        out = io.StringIO()
        render(result, fmt, out)
        assert "claude/sonnet" in out.getvalue() or '"model": "sonnet"' in out.getvalue()
    out = io.StringIO()
    render(result, Format.JSON, out)
    assert json.loads(out.getvalue())["pool"][0]["allowed_connection_ids"] == ["c"]


# --- reason codes --------------------------------------------------------------------------


def hyphenated_constants() -> set[str]:
    """Every hyphenated lowercase string constant in the engine modules."""
    found: set[str] = set()
    for name in ("plan", "quota", "budgets", "billing", "tiers"):
        tree = ast.parse((ROOT / "omniladder" / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and re.fullmatch(r"[a-z]+(-[a-z]+)+", node.value)):
                found.add(node.value)
    return found


def test_every_code_the_engine_can_emit_is_a_known_reason_code() -> None:
    """Any hyphenated word in the engine that is not other vocabulary must be a reason code."""
    vocabulary = {*get_args(Overage), *get_args(billing.BillingSource),
                  *get_args(tiers.TierSource), *get_args(plan.RungState),
                  *get_args(budgets.BudgetState)}
    unknown = hyphenated_constants() - vocabulary - set(REASON_CODES)
    assert not unknown, f"reason codes missing from REASON_CODES: {sorted(unknown)}"
    assert len(REASON_CODES) == len(set(REASON_CODES))
    assert {"inactive", "cooldown"} <= set(REASON_CODES)


SPEC_CODES = (
    "inactive", "terminal-status", "cooldown", "billing-not-subscription", "billing-uncurated",
    "keyless-not-subscription", "overage-not-hard-stop", "quota-missing", "quota-unknown",
    "quota-stale", "quota-reset-since-reading", "quota-exhausted", "quota-below-cutoff",
    "quota-below-reentry", "budget-disabled", "budget-spent", "not-in-category",
)
"""SPEC §4.2; codes never change meaning, so none may disappear."""


def test_every_spec_reason_code_is_kept() -> None:
    assert set(SPEC_CODES) <= set(REASON_CODES)
    assert REASON_CODES[:len(SPEC_CODES)] == SPEC_CODES


def test_every_reason_code_is_documented_in_the_readme() -> None:
    text = section("Reason codes")
    if text is None:
        pytest.skip("README has no '## Reason codes' section yet")
    documented = {row[0].strip("`") for row in table_rows(text)}
    missing = [code for code in REASON_CODES if code not in documented]
    assert not missing, f"reason codes without a README table row: {missing}"
