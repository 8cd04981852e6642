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
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine import billing, budgets, records, tiers
from omniladder.engine.records import REASON_CODES
from omniladder.errors import ExitCode
from omniladder.models import Overage
from omniladder.rendering import RENDERERS, Format, render
from tests.builders import at, conn, fleet, reading, window
from tests.builders import plan as make_plan
from tests.conftest import ROOT, click_tree
from tests.source_trees import tree_of

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"

EDGE = ("omniladder.cli", "omniladder.__main__", "omniladder.commands")
"""The CLI edge: typer lives here."""
RICH_ALLOWED = ("omniladder.rendering.table", "omniladder.rendering.catalog_view",
                "omniladder.rendering.check_view", "omniladder.rendering.diff_view",
                "omniladder.rendering.timeline", "omniladder.rendering.why_view",
                "omniladder.rendering.audit_view", "omniladder.rendering.who_view")
"""The rich renderers; the rendering interface and the JSON view stay pure (CONVENTIONS 8)."""


def core_modules() -> list[str]:
    """Every module of the package but the CLI edge: the engine, loaders, importers, sources,
    the plain renderers. Found on disk, so a new or moved module is covered too."""
    found = []
    for path in sorted((ROOT / "omniladder").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name in RICH_ALLOWED or name.startswith(EDGE):
            continue
        found.append(name)
    return found


def section(heading: str, page: str | None = None) -> str | None:
    """The text of a README section, or of a section of ``docs/<page>.md``, up to the next
    heading of the same level."""
    text = README if page is None else (DOCS / f"{page}.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else None


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|[\s|:-]+\|", line.strip()):
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header row


def run_python(code: str) -> str:
    return run_python_args(code)


def run_python_args(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return done.stdout.strip()


# --- a pure core ---------------------------------------------------------------------------


IMPORTS_PROBE = """
import importlib, json, sys
edge = ("typer", "rich", "click")
found = {}
for name in sys.argv[1:]:
    importlib.import_module(name)
    found[name] = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in edge})
    for m in [m for m in sys.modules if m.split(".")[0] in edge]:
        del sys.modules[m]  # so the next module is judged on its own imports
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def edge_imports() -> dict[str, list[str]]:
    """What each core module pulls in of typer, rich and click, in one fresh interpreter."""
    found: dict[str, list[str]] = json.loads(run_python_args(IMPORTS_PROBE, *core_modules()))
    return found


def test_the_core_is_found() -> None:
    modules = core_modules()
    assert {"omniladder.engine.plan", "omniladder.engine.quota", "omniladder.analyses.check",
            "omniladder.analyses.diff", "omniladder.rendering", "omniladder.rendering.json_view",
            "omniladder.sources.merge", "omniladder.analyses.why",
            "omniladder.analyses.audit"} <= set(modules)
    assert not [m for m in modules if m.startswith(("omniladder.cli", "omniladder.commands"))]


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_neither_typer_nor_rich(module: str,
                                                    edge_imports: dict[str, list[str]]) -> None:
    """CONVENTIONS 1: the pure core never imports the CLI's libraries."""
    assert edge_imports[module] == []


def test_the_cli_loads_the_engine_lazily() -> None:
    """`omniladder --version` and `--help` do not pay for the engine or rich tables."""
    loaded = run_python("import sys, omniladder.cli; print(sorted(m for m in sys.modules if m "
                        "in ('omniladder.engine.plan', 'omniladder.inputs.input_set', "
                        "'omniladder.engine.quota', "
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


def command_paths() -> list[tuple[str, ...]]:
    """Every command, a group's subcommands included (``import omniroute``, ``catalog show``)."""
    paths: list[tuple[str, ...]] = []
    for name, command in sorted(click_tree().commands.items()):
        subcommands = getattr(command, "commands", None)
        if subcommands:
            paths += [(name, sub) for sub in sorted(subcommands)]
        else:
            paths.append((name,))
    return paths


def readme_commands() -> list[str]:
    text = section("Commands")
    assert text is not None, "README has no '## Commands' section"
    documented = []
    for row in table_rows(text):
        match = re.match(r"`omniladder ([a-z -]+?)(?: [A-Z\[.]|`)", row[0])
        assert match is not None, row
        documented.append(match.group(1))
    return documented


def test_the_readme_commands_table_lists_only_real_commands() -> None:
    assert sorted(readme_commands()) == sorted(" ".join(path) for path in command_paths())


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_command_is_in_the_readme_and_has_help(path: tuple[str, ...]) -> None:
    """CONVENTIONS 10: a README row for the command and a --help showing its help text."""
    assert " ".join(path) in readme_commands()
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    command = click_tree()
    for part in path:
        command = command.commands[part]
    assert command.help, f"{' '.join(path)} has no help text"
    first = " ".join(command.help.split("\n")[0].split())
    assert first in " ".join(result.stdout.split())


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
    for name in ("records", "decide", "plan", "report", "quota", "budgets", "billing",
                 "tiers"):
        source = ROOT / "omniladder" / "engine" / f"{name}.py"
        tree = tree_of(source)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and re.fullmatch(r"[a-z]+(-[a-z]+)+", node.value)):
                found.add(node.value)
    return found


def test_every_code_the_engine_can_emit_is_a_known_reason_code() -> None:
    """Any hyphenated word in the engine that is not other vocabulary must be a reason code."""
    vocabulary = {*get_args(Overage), *get_args(billing.BillingSource),
                  *get_args(tiers.TierSource), *get_args(records.RungState),
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


ADDED_CODES = ("no-models", "connection-status-unknown", "quota-below-reserve")
"""The codes after the SPEC's first list, in the order they were added (docs/contract.md,
"Reason codes"): this project's two, then SPEC v1.4's R16 code; like the SPEC's, none may
disappear or change meaning."""


def test_every_spec_reason_code_is_kept() -> None:
    assert set(SPEC_CODES) <= set(REASON_CODES)
    assert REASON_CODES[:len(SPEC_CODES)] == SPEC_CODES
    assert REASON_CODES == SPEC_CODES + ADDED_CODES


def test_every_reason_code_is_documented_in_the_contract() -> None:
    text = section("Reason codes", "contract")
    assert text is not None, "docs/contract.md has no '## Reason codes' section"
    documented = {row[0].strip("`") for row in table_rows(text)}
    missing = [code for code in REASON_CODES if code not in documented]
    assert not missing, f"reason codes without a docs/contract.md table row: {missing}"


def test_ci_runs_the_slow_tests_the_default_run_leaves_out() -> None:
    """The default run leaves out the tests marked slow; .ci/run runs the README's test
    command and right after it the slow ones, so CI runs every test."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_config = config["tool"]["pytest"]["ini_options"]
    addopts = pytest_config["addopts"]
    assert addopts[addopts.index("-m") + 1] == "not slow"
    assert any(marker.startswith("slow:") for marker in pytest_config["markers"])
    readme_command = next(line for line in README.splitlines()
                          if line.startswith("python3 -m venv .venv") and "pytest" in line)
    test_command = readme_command.rsplit("&& ", 1)[1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if "-m pytest" in line]
    assert ci[:2] == [test_command, ".venv/bin/python -m pytest -n auto -m slow"]
    mutmut_args = config["tool"]["mutmut"]["pytest_add_cli_args"]
    assert mutmut_args[mutmut_args.index("-m") + 1] == ""


def test_the_configuration_sets_no_verbosity_so_the_test_command_prints_its_summary() -> None:
    """A ``-q`` in addopts adds to the command line's: ``pytest -q`` would be ``-qq``, which
    drops the summary line (passed, failed, skipped) the README's test command ends with."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"]
    verbosity = [option for option in addopts
                 if option in ("--quiet", "--verbose") or re.fullmatch(r"-[qv]+", option)]
    assert verbosity == []


SLOW_TESTS = {
    "tests.test_fuzz": ("test_mutated_file_never_crashes", "test_random_file_never_crashes",
                        "test_mutated_file_in_a_subprocess",
                        "test_secret_canaries_are_never_shown",
                        "test_every_command_keeps_its_exit_code_at_the_stream_edges"),
    "tests.test_simulate_stepping": ("test_stepping_equals_replanning_every_step",),
    "tests.test_why": ("test_narrowed_why_equals_the_whole_plans_on_generated_fleets",),
    "tests.test_properties": ("test_every_plan_keeps_its_invariants",),
    "tests.test_json_encoding": ("test_lists_of_records_have_the_same_text_as_json_dumps",),
}
"""The heaviest loops (docs/development.md#slow): a merge that drops a marker would put the
default run back past a minute."""


@pytest.mark.parametrize(("module", "name"), [
    (module, name) for module, names in SLOW_TESTS.items() for name in names])
def test_the_heaviest_loops_stay_marked_slow(module: str, name: str) -> None:
    import importlib

    function = getattr(importlib.import_module(module), name)
    assert "slow" in [mark.name for mark in getattr(function, "pytestmark", [])]


# --- the tests' own helpers ----------------------------------------------------------------


def test_a_refused_run_is_asserted_by_the_one_helper() -> None:
    """tests/errors.py holds the one assertion of a refused run: no test module words the error
    line's prefix again (a copy would drift from it)."""
    from tests.errors import ERROR_PREFIX

    quoted = f'"{ERROR_PREFIX}"'
    copies = [path.name for path in sorted((ROOT / "tests").glob("test_*.py"))
              if quoted in path.read_text(encoding="utf-8")]
    assert copies == []


def test_every_reason_code_has_its_summary_phrase() -> None:
    """The one-line summary words each reason code (``reason_phrase`` has no fallback)."""
    from omniladder.engine.records import reason_phrase

    phrases = {code: reason_phrase(code, "") for code in REASON_CODES}
    assert all(phrases.values())
    assert reason_phrase("overage-not-hard-stop", "overage meters-to-paid") == (
        "overage meters to paid")


@pytest.mark.slow  # a gate of .ci/run, as ruff and mypy are; this reruns it in the slow run
def test_no_name_is_left_unused() -> None:
    """Dead code stays gone: vulture, configured in pyproject.toml (the package, the tests and
    .ci/vulture_whitelist.py) finds no unused name (docs/development.md#dead-code)."""
    done = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, f"unused names (delete them):\n{done.stdout}{done.stderr}"


def test_vulture_is_one_of_the_gates() -> None:
    """.ci/run runs vulture with the gates, after mypy."""
    gates = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert gates.index(".venv/bin/mypy") < next(
        index for index, line in enumerate(gates) if line.startswith(".venv/bin/vulture"))
