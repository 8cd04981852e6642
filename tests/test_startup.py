"""Quick start: --version, --help and ids do not pay for the engine, and --json never loads rich.

Each command runs in a fresh interpreter, which then reports what it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omniladder.commands import COMMANDS, NOT_AT_START
from tests.conftest import EXAMPLES, ROOT

PROBE = """
import json, sys
prelude = sys.argv[2] if len(sys.argv) > 2 else ""
sys.argv = ["omniladder", *json.loads(sys.argv[1])]
exec(prelude)
from omniladder.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def imported_by(*args: str, prelude: str = "") -> tuple[int, set[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), prelude], env=env,
                          capture_output=True, text=True, check=False, cwd=ROOT)
    report = json.loads(done.stderr.splitlines()[-1])
    return report["code"], set(report["modules"]), done.stdout


def not_at_start(modules: set[str]) -> list[str]:
    """The modules of ``modules`` that start-up never imports (``NOT_AT_START``); the stand-in
    for pydantic's plugin loader that ``main`` puts in place is none of them."""
    return sorted(m for m in modules if m != "pydantic.plugin._loader"
                  and any(m == name or m.startswith(f"{name}.") for name in NOT_AT_START))


ENGINE = ("rich.table", "omniladder.models", "omniladder.engine.plan",
          "omniladder.inputs.input_set")


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("plan", "--help"), ("ids",)])
def test_quick_commands_do_not_import_the_engine(args: tuple[str, ...]) -> None:
    code, modules, stdout = imported_by(*args)
    assert code in (0, None), stdout
    assert stdout.strip()
    assert sorted(set(ENGINE) & modules) == []


@pytest.mark.parametrize("args", [("--version",), ("--help",),
                                  *((name, "--help") for name in COMMANDS)])
def test_a_command_and_its_help_import_nothing_the_version_must_not(args: tuple[str, ...],
                                                                    ) -> None:
    """Registering a command (its module imported, its options turned into click's) and
    printing its help import no view, model, reader or engine module, nor rich or pydantic:
    those come with the command's run (omniladder.commands.NOT_AT_START)."""
    code, modules, stdout = imported_by(*args)
    assert code in (0, None), stdout
    assert stdout.strip()
    assert not_at_start(modules) == []


PLANTED = """
import omniladder.commands as commands
commands.__path__.append({folder!r})
commands.COMMANDS["planted"] = ("planted_cmd", "planted", False)
from omniladder.commands import help
help.COMMAND_HELP["planted"] = help.CommandHelp(("omniladder planted",), None)
"""


def test_the_check_sees_a_command_that_imports_the_models(tmp_path: Path) -> None:
    """A command module importing the models at its top is caught (the check can fail)."""
    (tmp_path / "planted_cmd.py").write_text(
        "import omniladder.models\n\ndef planted() -> None:\n    pass\n", encoding="utf-8")
    code, modules, stdout = imported_by("planted", "--help",
                                        prelude=PLANTED.format(folder=str(tmp_path)))
    assert code in (0, None), stdout
    assert "omniladder.models" in not_at_start(modules)


def test_version_prints_the_version() -> None:
    code, _, stdout = imported_by("--version")
    assert code in (0, None)
    assert stdout.startswith("omniladder ")


def test_version_imports_only_what_it_prints() -> None:
    """`--version` builds no command: none of their modules (nor the export, sources or
    analyses packages they reach) is imported."""
    code, modules, _ = imported_by("--version")
    assert code in (0, None)
    ours = sorted(m for m in modules if m.startswith("omniladder."))
    assert ours == ["omniladder.cli", "omniladder.commands", "omniladder.commands.help",
                    "omniladder.errors"]


def test_json_plan_never_imports_rich() -> None:
    """JSON is written with json.dumps; rich is for the table view only (CONVENTIONS 8)."""
    code, modules, stdout = imported_by(
        "plan", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"), "--json")
    assert code in (0, None), stdout
    assert json.loads(stdout)["format_version"] == "1"
    assert "omniladder.engine.plan" in modules
    assert sorted(m for m in modules if m == "rich" or m.startswith("rich.")) == []


def test_a_named_command_imports_no_other_command() -> None:
    """Lazy command registration: `omniladder plan …` builds only the plan command."""
    code, modules, stdout = imported_by(
        "plan", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"), "--json")
    assert code in (0, None), stdout
    commands = sorted(m for m in modules if m.startswith("omniladder.commands.")
                      and m not in ("omniladder.commands.common", "omniladder.commands.help",
                                    "omniladder.commands.lifetime"))
    assert commands == ["omniladder.commands.plan_cmd"]


@pytest.mark.parametrize("name", ["plan", "ids", "import", "catalog", "audit", "init", "schema",
                                  "why", "who", "simulate", "check", "diff", "show",
                                  "completion", "export"])
@pytest.mark.parametrize("tail", [["--help"], [], ["--no-such-option"]])
def test_the_one_command_app_answers_as_the_whole_app(name: str, tail: list[str],
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from omniladder.cli import app, build_app
    from omniladder.commands import COMMANDS

    assert list(COMMANDS) == [c.name or "" for c in app.registered_commands][:2] + [
        g.name or "" for g in app.registered_groups] + [
        c.name or "" for c in app.registered_commands][2:]
    runner = CliRunner()
    outcomes = []
    for which, built in (("whole", app), ("alone", build_app(name))):
        (tmp_path / which).mkdir()
        monkeypatch.chdir(tmp_path / which)  # `init` writes where it runs
        outcomes.append(runner.invoke(built, [name, *tail]))
    whole, alone = outcomes
    assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)


def test_the_table_plan_does_not_look_for_pydantic_plugins() -> None:
    """Looking for pydantic plugins imports importlib.metadata and reads every installed
    distribution's metadata: 15-20 ms of the example's table view, for plugins omniladder
    never uses (docs/performance.md#start-up)."""
    code, modules, stdout = imported_by(
        "plan", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"))
    assert code in (0, None), stdout
    assert "Pool, in dispatch order" in stdout
    assert "omniladder.models" in modules
    assert "importlib.metadata" not in modules


PLUGIN_PROBE = """
import sys
from omniladder.commands import without_pydantic_plugins
without_pydantic_plugins()
import omniladder.models
from pydantic.plugin import _loader
print(list(_loader.get_plugins()), _loader.__spec__ is None)
# A name the stand-in does not define puts the real loader back (a later pydantic).
print(_loader.PYDANTIC_ENTRY_POINT_GROUP, sys.modules["pydantic.plugin._loader"].__spec__ is None)
"""


def test_the_plugin_stand_in_finds_none_and_gives_way_to_the_real_loader() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PLUGIN_PROBE], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT)
    assert done.stdout.split("\n")[:2] == ["[] True", "pydantic False"]


def test_a_program_importing_the_models_keeps_pydantic_plugins() -> None:
    """Only the command line goes without plugins: importing the models leaves pydantic's own
    loader in place for a program that uses them."""
    probe = ("import sys, omniladder.models\n"
             "print(sys.modules['pydantic.plugin._loader'].__spec__ is not None)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "True"


def test_a_plan_does_not_define_the_window_scope_catalog() -> None:
    """Only import, catalog, schema and the commands that scope windows read the quota-window
    scope catalog: its models live in a module of their own, which a plan never imports."""
    code, modules, stdout = imported_by(
        "plan", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"))
    assert code in (0, None), stdout
    assert "omniladder.models" in modules
    assert "omniladder.scope_models" not in modules


READERS = ("omniladder.inputs.ledger.read", "omniladder.inputs.ledger.events",
           "omniladder.inputs.ledger.lines", "omniladder.inputs.ledger.one_read")


@pytest.mark.parametrize(("spend", "readers"), [("spend.json", False), ("traffic.jsonl", True)])
def test_a_plan_loads_the_ledger_readers_only_for_a_ledger_of_traffic(spend: str,
                                                                       readers: bool) -> None:
    """A spend document is read through its pydantic record alone
    (docs/performance.md#ledger-import); a JSONL ledger needs the ledger's readers."""
    code, modules, stdout = imported_by(
        "plan", "auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"),
        "--spend", str(EXAMPLES / spend))
    assert code in (0, None), stdout
    assert "omniladder.inputs.ledger.suffixes" in modules
    assert [m for m in READERS if m in modules] == (list(READERS) if readers else [])
