"""An output never replaces an input (docs/contract.md#edges), as a class over the
application's own option lists.

Every path parameter of every command is either an output declared in ``OUTPUTS`` or an
input. Each command has command lines (``CASES``) that give every one of its inputs, and
the run must read each: a new input option that no case gives, or a new output option left
undeclared (it would be an "input" the run never reads), fails
``test_every_path_parameter_is_a_declared_output_or_an_input_the_run_reads``. Then every
output of every case is pointed at every file the run reads — shipped catalogs and files a
settings file names included — by its path as given, its absolute path, a symbolic link
and a hard link, and must be exit 2 with one line before anything is written. An output
may replace only the input it is documented to update (``OUTPUTS``' partner: plan
``--out`` the saved plan of ``--compare``, export ``--out`` its ``--current``, ``catalog
check --write-baseline`` its ``--baseline``, an import's ``--quota`` itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES, ROOT, click_tree
from tests.errors import one_error

runner = CliRunner()
SOURCES = ROOT / "tests" / "fixtures" / "sources"

DIRECTORY = "a directory"
"""An output that is a directory the command writes files into."""

# The quota file an import merges into is read too, on purpose.
_IMPORT_OUTPUT: dict[str, str | None] = {"--quota": "--quota"}
OUTPUTS: dict[str, dict[str, str | None]] = {
    # command: {output parameter: the input it may replace on purpose (or DIRECTORY)}
    "plan": {"--out": "--compare", "--metrics-out": None},
    "simulate": {"--svg": None},
    "forecast": {"--metrics-out": None, "--svg": None},
    "check": {"--junit": None},
    "export": {"--out": "--current"},
    "catalog check": {"--write-baseline": "--baseline"},
    "import claude-usage": _IMPORT_OUTPUT,
    "import codex-sessions": _IMPORT_OUTPUT,
    "import copilot-user": _IMPORT_OUTPUT,
    "import gemini-quota": _IMPORT_OUTPUT,
    "quota prune": {"--quota": "--quota"},
    "import omniroute": {"--out": DIRECTORY},
    # the ledger an import merges into is read too, on purpose
    "import litellm-spend": {"--traffic": "--traffic"},
    "init": {"DIRECTORY": DIRECTORY},
    "whatif": {"--svg": None},
}

FRESH = {"--out": "fresh.json", "--metrics-out": "fresh.prom", "--svg": "fresh.svg",
         "--junit": "fresh.xml", "--write-baseline": "fresh.toml", "--quota": "fresh.json",
         "--traffic": "fresh.jsonl"}
"""A new file for each output option (export's --out and prune's --quota: see ``fresh``)."""

NOT_READ_WITH = {("quota prune", "--config"): "--quota"}
"""Inputs a run reads only without a given option: prune reads the settings only to find
its quota file (tests/test_edges_io.py holds the settings naming themselves as quota)."""

_SHARED = ["--config", "omniladder.toml", "--connections", "connections.toml", "--quota",
           "quota.json", "--spend", "spend.json", "--catalog", "billing-overlay.toml",
           "--models-catalog", "models-overlay.json"]
_NOW = ["--now", "2026-11-29T11:30:00Z"]
_IMPORT = ["--config", "omniladder.toml", "--connections", "catalogued.toml",
           "--windows-catalog", "windows.toml", "--models-catalog", "models-overlay.json"]
_AT = ["--at", "2026-11-29T11:59:30Z"]

CASES: dict[str, list[list[str]]] = {
    # command: command lines giving every input (outputs are added by the tests)
    "plan": [["plan", "auto/thrifty", *_SHARED, "--compare", "saved.json"]],
    "why": [["why", "claude-max-work", *_SHARED, "--traffic", "traffic.jsonl"]],
    "who": [["who", "claude/claude-sonnet-4-5", *_SHARED]],
    "simulate": [["simulate", "auto/thrifty", *_SHARED, "--from", "2026-11-29T11:00:00Z",
                  "--to", "2026-11-29T11:30:00Z", "--traffic", "traffic.jsonl"]],
    "forecast": [["forecast", "auto/thrifty", *_SHARED, *_NOW, "--horizon", "1h"]],
    "check": [["check", "policy-gateway.toml", *_SHARED]],
    "diff": [["diff", "saved.json", "ci/plan-thrifty.json"]],
    "show": [["show", "saved.json"]],
    "export": [["export", "litellm", "auto/thrifty", *_SHARED, "--map", "litellm-map.toml",
                "--current", "deployed.yaml"],
               ["export", "litellm", "saved.json", "--map", "litellm-map.toml",
                "--current", "deployed.yaml"]],
    "catalog show": [["catalog", "show", "--config", "omniladder.toml", "--catalog",
                      "billing-overlay.toml", "--models-catalog", "models-overlay.json",
                      "--windows-catalog", "windows.toml"]],
    "catalog check": [["catalog", "check", "--config", "omniladder.toml", "--connections",
                       "connections.toml", "--catalog", "billing-overlay.toml",
                       "--models-catalog", "models-overlay.json", "--windows-catalog",
                       "windows.toml", "--baseline", "accepted.toml", "--today",
                       "2026-11-29"]],
    "audit omniroute": [["audit", "omniroute", "omniroute-candidates.json", "auto/thrifty",
                         *_SHARED]],
    "audit traffic": [["audit", "traffic", "auto/thrifty", *_SHARED, "--traffic",
                       "traffic.jsonl"]],
    "import claude-usage": [["import", "claude-usage", "claude.json", "--connection",
                             "claude-max-work", *_IMPORT, *_AT]],
    "import copilot-user": [["import", "copilot-user", "copilot.json", "--connection",
                             "copilot-seat", *_IMPORT, *_AT]],
    "import gemini-quota": [["import", "gemini-quota", "gemini.json", "--connection",
                             "gemini-free", "--force", *_IMPORT, *_AT]],
    "import codex-sessions": [["import", "codex-sessions", "sessions", "--connection",
                               "codex-plus", *_IMPORT]],
    "import omniroute": [["import", "omniroute", "omniroute.db", "--models-catalog",
                          "models-overlay.json", "--windows-catalog", "windows.toml", "--now",
                          "2026-11-29T12:00:00Z", "--force"]],
    "import litellm-spend": [["import", "litellm-spend", "spend-logs.json", "--since", "all",
                              "--config", "omniladder.toml", "--connections", "catalogued.toml",
                              "--models-catalog", "models-overlay.json", "--map",
                              "litellm-map.toml"]],
    "quota prune": [["quota", "prune", "--before", "2026-11-29T11:00:00Z", "--all", "--config",
                     "omniladder.toml"]],
    "init": [["init", "starter"]],
    "whatif": [["whatif", "auto/thrifty", *_SHARED, "--traffic", "traffic.jsonl",
                "--scenario", "scenarios.toml", "--no-bound"]],
}

MODELS_OVERLAY = {"models": [
    {"provider": "acme", "model": "acme-1", "input_usd_per_mtok": 0.5,
     "output_usd_per_mtok": 1.5, "categories": ["coding"], "as_of": "2026-11-01"},
]}


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples, the fleet with no models named, an overlay of every catalog kind, a
    baseline, a saved plan, a deployed export, telemetry of every source, an OmniRoute
    database and a copy of the shipped catalogs (an output that wrongly replaced one hits
    the copy), as the working directory."""
    from omniladder.inputs import catalogs
    from tests.omniroute_db import build_db

    for item in EXAMPLES.iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path / item.name)
    shutil.copytree(EXAMPLES / "ci", tmp_path / "ci")
    shutil.copy(EXAMPLES / "ci" / "plan-thrifty.json", tmp_path / "saved.json")
    shipped = tmp_path / "shipped"
    shutil.copytree(catalogs.shipped_catalog_dir(), shipped)
    monkeypatch.setattr(catalogs, "shipped_catalog_dir", lambda: shipped)
    (tmp_path / "models-overlay.json").write_text(json.dumps(MODELS_OVERLAY))
    (tmp_path / "windows.toml").write_text('[[windows]]\nprovider = "acme"\nwindow = "x"\n'
                                           'ignore = true\n')
    (tmp_path / "accepted.toml").write_text("accepted = []\n")
    (tmp_path / "scenarios.toml").write_text('[[scenarios]]\nname = "first"\n'
                                             'order = "expiring-first"\n')
    # A connection naming no models takes its provider's from the model catalogs, which an
    # import then reads too.
    fleet_text = (EXAMPLES / "connections.toml").read_text(encoding="utf-8")
    (tmp_path / "catalogued.toml").write_text("".join(
        line for line in fleet_text.splitlines(keepends=True)
        if not line.startswith("models = ")), encoding="utf-8")
    for source, fixture in (("claude", "usage.json"), ("copilot", "user.json"),
                            ("gemini", "quota.json")):
        shutil.copy(SOURCES / source / fixture, tmp_path / f"{source}.json")
    shutil.copytree(SOURCES / "codex" / "sessions", tmp_path / "sessions")
    shutil.copy(SOURCES / "litellm" / "spend-logs-payload-e2e.json", tmp_path / "spend-logs.json")
    build_db(tmp_path / "omniroute.db")
    monkeypatch.chdir(tmp_path)
    deployed = runner.invoke(app, ["export", "litellm", "auto/thrifty", "--config",
                                   "omniladder.toml", "--map", "litellm-map.toml", "--out",
                                   "deployed.yaml"])
    assert deployed.exit_code == 0, deployed.output
    (tmp_path / "aliases").mkdir()
    return tmp_path


# --- the application's path parameters ------------------------------------------------------


def _commands() -> Iterator[tuple[str, Any]]:
    def walk(command: Any, path: str) -> Iterator[tuple[str, Any]]:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in sorted(subcommands.items()):
                yield from walk(sub, f"{path} {name}".strip())
        else:
            yield path, command

    return walk(click_tree(), "")


def _flag(parameter: Any) -> str:
    """An option's first flag (``--out``), an argument's name in capitals (``DIRECTORY``)."""
    if parameter.param_type_name == "argument":
        return str(parameter.name).upper()
    return str(parameter.opts[0])


def path_parameters() -> dict[str, dict[str, Any]]:
    """Every command's parameters that take a path, by flag."""
    found: dict[str, dict[str, Any]] = {}
    for name, command in _commands():
        paths = {_flag(p): p for p in command.params if type(p.type).__name__ == "TyperPath"}
        if paths:
            found[name] = paths
    return found


def given(name: str, args: list[str]) -> dict[str, list[Path]]:
    """The paths a command line gives each path parameter, as the command parses them."""
    command = dict(_commands())[name]
    words = len(name.split())
    context = command.make_context(name, list(args[words:]), resilient_parsing=True)
    result: dict[str, list[Path]] = {}
    for flag, parameter in path_parameters()[name].items():
        value = context.params.get(parameter.name)
        if value is None or value == ():
            continue
        values = value if isinstance(value, list | tuple) else [value]
        result[flag] = [Path(v) for v in values]
    return result


def every_file(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and not path.is_symlink()}


def files_opened(args: list[str], monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file a successful run reads, as the two reading functions see them (text
    inputs, and an OmniRoute database)."""
    from omniladder.inputs import files
    from omniladder.sources.omniroute import database

    opened: list[Path] = []

    def recording(original: Any) -> Any:
        def record(path: Path, *args: Any, **kwargs: Any) -> Any:
            opened.append(Path(path).resolve())
            return original(path, *args, **kwargs)

        return record

    with monkeypatch.context() as patched:
        patched.setattr(files, "open_input", recording(files.open_input))
        patched.setattr(database, "open_readonly", recording(database.open_readonly))
        result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), (args, result.output)
    return list(dict.fromkeys(opened))


def fresh(name: str, flag: str, fleet: Path) -> str:
    """A file the output option may create (or, for prune, a quota file to rewrite)."""
    if name == "export":
        return "fresh.yaml"
    if name == "quota prune":
        shutil.copy(fleet / "quota.json", fleet / "prune.json")
        return "prune.json"
    return FRESH[flag]


def with_outputs(name: str, args: list[str], fleet: Path,
                 **chosen: str) -> list[str]:
    """``args`` with each file output of the command: ``chosen`` (by flag) or a fresh one."""
    extra: list[str] = []
    for flag, partner in OUTPUTS.get(name, {}).items():
        if partner == DIRECTORY:
            if flag.startswith("--"):  # an argument's directory is in the case itself
                extra += [flag, chosen.get(flag) or "fresh-directory"]
            continue
        extra += [flag, chosen.get(flag) or fresh(name, flag, fleet)]
    return [*args, *extra]


def _cases() -> list[tuple[str, int]]:
    return [(name, index) for name, lines in CASES.items() for index in range(len(lines))]


# --- the tests ------------------------------------------------------------------------------


def test_every_path_parameter_is_a_declared_output_or_an_input_the_run_reads(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parameters = path_parameters()
    assert set(CASES) == set(parameters), "give each command with a path parameter a case"
    for name, declared in OUTPUTS.items():
        assert set(declared) <= set(parameters[name]), (name, declared)
    for name, flags in parameters.items():
        inputs = {flag for flag in flags if flag not in OUTPUTS.get(name, {})}
        covered: set[str] = set()
        for args in CASES[name]:
            line = with_outputs(name, args, fleet)
            read = files_opened(line, monkeypatch)
            for flag, paths in given(name, line).items():
                if flag not in inputs or NOT_READ_WITH.get((name, flag)) in line:
                    continue
                for path in paths:
                    full = path.resolve()
                    assert any(f == full or full in f.parents for f in read), (
                        f"{name} {flag} {path} is given but never read: an input the run "
                        "ignores, or an output to declare in OUTPUTS")
                covered.add(flag)
            for written in (fleet / "fresh.json", fleet / "prune.json"):
                written.unlink(missing_ok=True)
        missing = inputs - covered - {flag for (command, flag) in NOT_READ_WITH
                                      if command == name}
        assert not missing, f"no case of {name} gives {sorted(missing)}"


def _spellings(target: Path, fleet: Path, number: int) -> dict[str, str]:
    """The same file four ways: relative, absolute, a symbolic link and a hard link."""
    symbolic = fleet / "aliases" / f"symbolic-{number}{target.suffix}"
    hard = fleet / "aliases" / f"hard-{number}{target.suffix}"
    symbolic.symlink_to(target)
    os.link(target, hard)
    return {"relative": os.path.relpath(target), "absolute": str(target),
            "symlink": str(symbolic.relative_to(fleet)), "hardlink": str(hard.relative_to(fleet))}


@pytest.mark.parametrize("every_spelling", [
    pytest.param(False, id="one-spelling"),
    pytest.param(True, id="every-spelling", marks=pytest.mark.slow)])
@pytest.mark.parametrize(("name", "index"), [
    case for case in _cases() if any(partner != DIRECTORY
                                     for partner in OUTPUTS.get(case[0], {}).values())])
def test_every_output_refuses_every_file_its_run_reads_by_path_and_link(
        name: str, index: int, every_spelling: bool, fleet: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each output flag given each file the run reads: refused, nothing written. The
    default run spells each (flag, file) one of the four ways, taking them in turn; the slow
    run spells each all four ways."""
    args = CASES[name][index]
    line = with_outputs(name, args, fleet)
    read = files_opened(line, monkeypatch)
    assert read
    options = given(name, line)
    produced = {p.resolve() for flag in OUTPUTS[name] for p in options.get(flag, [])}
    for written in (fleet / "fresh.json", fleet / "prune.json"):
        written.unlink(missing_ok=True)
    number = 0
    for flag, partner in OUTPUTS[name].items():
        allowed = {p.resolve() for p in options.get(partner or "", [])}
        for target in read:
            if target in allowed or target in produced:
                continue
            number += 1
            spellings = _spellings(target, fleet, number)
            if not every_spelling:
                how = list(spellings)[number % len(spellings)]
                spellings = {how: spellings[how]}
            before = every_file(fleet)
            for how, spelled in spellings.items():
                result = runner.invoke(app, with_outputs(name, args, fleet, **{flag: spelled}))
                one_error(result, f"{flag}: this run reads it as ",
                             "an output never replaces an input")
                assert every_file(fleet) == before, (flag, target, how)
                (fleet / "prune.json").unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_every_directory_output_refuses_every_file_its_run_reads(
        how: str, fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """import omniroute --out DIR: each file it writes into DIR, reaching an input."""
    from omniladder.sources.omniroute.importer import CONNECTIONS_NAME, QUOTA_NAME, SETTINGS_NAME

    (args,) = CASES["import omniroute"]
    read = files_opened([*args, "--out", "fresh"], monkeypatch)
    assert len(read) >= 4, read
    before = every_file(fleet)
    for index, target in enumerate(read):
        for written in (CONNECTIONS_NAME, QUOTA_NAME, SETTINGS_NAME):
            out = fleet / f"out-{index}-{written}"
            out.mkdir()
            if how == "symlink":
                (out / written).symlink_to(target)
            else:
                os.link(target, out / written)
            before = every_file(fleet)
            result = runner.invoke(app, [*args, "--out", str(out.relative_to(fleet))])
            one_error(result, f"{out.name}/{written}: --out: this run reads it as ")
            assert every_file(fleet) == before


def test_outputs_of_one_run_never_share_a_file(fleet: Path) -> None:
    """Two outputs of one run onto one file, by name or through a link, are exit 2."""
    pairs = [(name, first, second) for name, outputs in OUTPUTS.items()
             for first in outputs for second in outputs
             if first != second and DIRECTORY not in (outputs[first], outputs[second])]
    assert pairs
    for number, (name, first, second) in enumerate(pairs):
        target = fleet / f"shared-{number}.out"
        target.write_text("kept\n")
        spellings = _spellings(target, fleet, 1000 + number)
        del spellings["relative"]
        for how, spelled in {"same name": target.name, **spellings}.items():
            (args,) = CASES[name]
            before = every_file(fleet)
            result = runner.invoke(app, with_outputs(name, args, fleet, **{
                first: target.name, second: spelled}))
            one_error(result, ": is the same file as ", f"{first}", f"{second}")
            assert every_file(fleet) == before, (name, first, second, how)
