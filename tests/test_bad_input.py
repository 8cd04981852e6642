"""Bad input through the command line: exit 2, one line naming the file and field, no traceback.

Each case copies the examples to a scratch directory, breaks one thing, and plans
``auto/thrifty`` with the scratch settings file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.inputs.documents import parse_text
from tests.conftest import EXAMPLES, ROOT
from tests.errors import one_error_line

CANARY = "CANARY-sk-9f8e7d6c5b4a"


def edit(name: str, old: str, new: str, count: int = 1) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        path = folder / name
        text = path.read_text(encoding="utf-8")
        assert text.count(old) >= count, (name, old)
        path.write_text(text.replace(old, new, count), encoding="utf-8")
    return change


def line_of(name: str, marker: str) -> int:
    """The line number, in the broken file, of the first line holding marker."""
    for number, text in enumerate((EXAMPLES / name).read_text(encoding="utf-8").splitlines(),
                                  start=1):
        if marker in text:
            return number
    raise AssertionError(marker)


@dataclass(frozen=True)
class Case:
    break_it: Callable[[Path], None] | None
    file: str | None
    """The file the message must name (relative to the scratch folder), if any."""
    field: str | None
    """The field path the message must name, if any."""
    says: tuple[str, ...] = ()
    """Further fragments the message must carry."""
    args: tuple[str, ...] = ()
    auto_id: str = "auto/thrifty"
    line: int | None = None
    absent: tuple[str, ...] = ()
    """Text that must appear nowhere in the output."""


CASES = {
    "missing-connections-file": Case(
        edit("omniladder.toml", 'connections = "connections.toml"',
             'connections = "nope.toml"'), "nope.toml", None, ("file not found",)),
    "missing-settings-file": Case(None, "absent.toml", None, ("file not found",),
                                  args=("--config", "{dir}/absent.toml")),
    "missing-catalog-overlay": Case(
        edit("omniladder.toml", 'billing = ["billing-overlay.toml"]',
             'billing = ["gone.toml"]'), "gone.toml", None, ("file not found",)),
    "invalid-toml": Case(
        edit("connections.toml", 'id = "codex-team"', 'id = "codex-team'),
        "connections.toml", None, ("invalid TOML",),
        line=line_of("connections.toml", 'id = "codex-team"')),
    "key-set-twice": Case(
        edit("connections.toml", 'provider = "ollama"\n', 'provider = "ollama"\nprovider = "x"\n'),
        "connections.toml", None, ("key provider is set twice",),
        line=line_of("connections.toml", 'provider = "ollama"') + 1, absent=('"x"',)),
    "table-declared-twice": Case(
        edit("omniladder.toml", "[ladder]\n", "[ladder]\n[ladder]\n"),
        "omniladder.toml", None, ("table [ladder] is declared twice",),
        line=line_of("omniladder.toml", "[ladder]") + 1, absent=("('ladder',)",)),
    "window-limiting-no-model": Case(
        edit("quota.json", '"models": ["claude-opus-4-1"]}', '"models": []}'),
        "quota.json", "readings[0].windows[2].models", ("must name at least one model",)),
    "invalid-json": Case(
        edit("quota.json", '"status": "unknown"}', '"status": "unknown",}'),
        "quota.json", None, ("invalid JSON",),
        line=line_of("quota.json", '"status": "unknown"}')),
    "invalid-json-spend": Case(
        edit("spend.json", '"cost_usd": 0.42}', '"cost_usd": 0.42'),
        "spend.json", None, ("invalid JSON",)),
    "unsupported-extension": Case(
        edit("omniladder.toml", 'quota = "quota.json"', 'quota = "quota.yaml"'),
        "quota.yaml", None, ("use a .toml or .json file",)),
    "unknown-key-connections": Case(
        edit("connections.toml", 'label = "Workstation GPU"', 'lable = "Workstation GPU"'),
        "connections.toml", "connections[9].lable", ("unknown key",),
        line=line_of("connections.toml", 'label = "Workstation GPU"')),
    "unknown-key-settings": Case(
        edit("omniladder.toml", "max_reading_age_seconds = 180", "max_reading_age = 180"),
        "omniladder.toml", "ladder.max_reading_age", ("unknown key",)),
    "unknown-key-quota": Case(
        edit("quota.json", '"taken_at"', '"taken"'), "quota.json", "taken", ("unknown key",)),
    "enabled-flag-is-not-a-setting": Case(
        edit("omniladder.toml", "[ladder]\n", "[ladder]\nenabled = false\n"),
        "omniladder.toml", "ladder.enabled", ("unknown key",)),
    "missing-required-field": Case(
        edit("connections.toml", 'provider = "ollama"\n', ""),
        "connections.toml", "connections[9].provider", ("required field is missing",)),
    "missing-required-reading-field": Case(
        edit("quota.json", '"checked_at": "2026-11-29T11:58:00Z", ', ""),
        "quota.json", "readings[9].checked_at", ("required field is missing",)),
    "wrong-type": Case(
        edit("connections.toml", "active = false", 'active = "no"'),
        "connections.toml", "connections[7].active", ("boolean",)),
    "wrong-type-percent": Case(
        edit("quota.json", '"remaining_percent": 64, "reset_at": "2026-11-30',
             '"remaining_percent": "64", "reset_at": "2026-11-30'),
        "quota.json", "readings[12].remaining_percent", ("number",)),
    "timestamp-without-offset": Case(
        edit("quota.json", '"checked_at": "2026-11-29T11:50:00Z"',
             '"checked_at": "2026-11-29T11:50:00"'),
        "quota.json", "readings[10].checked_at", ("offset",)),
    "timestamp-without-offset-in-connections": Case(
        edit("connections.toml", 'rate_limited_until = "2026-11-29T18:00:00Z"',
             'rate_limited_until = "2026-11-29T18:00:00"'),
        "connections.toml", "connections[4].rate_limited_until", ("offset",)),
    "toml-local-datetime-without-offset": Case(
        edit("connections.toml", 'rate_limited_until = "2026-11-29T18:00:00Z"',
             "rate_limited_until = 2026-11-29T18:00:00"),
        "connections.toml", "connections[4].rate_limited_until", ("offset",)),
    "timestamp-not-a-timestamp": Case(
        edit("spend.json", '"2026-11-29T09:12:00Z"', '"yesterday"'),
        "spend.json", "events[5].at", ("RFC 3339",)),
    "duplicate-connection-id": Case(
        edit("connections.toml", 'id = "codex-team"', 'id = "codex-plus"'),
        "connections.toml", "connections[5]", ("duplicate connection id 'codex-plus'",)),
    "percent-above-100": Case(
        edit("quota.json", '"remaining_percent": 37.5', '"remaining_percent": 137.5'),
        "quota.json", "readings[1].windows[0].remaining_percent", ("100",)),
    "percent-below-0": Case(
        edit("quota.json", '"remaining_percent": 64, "reset_at": "2026-11-30',
             '"remaining_percent": -1, "reset_at": "2026-11-30'),
        "quota.json", "readings[12].remaining_percent", ("0",)),
    "setting-percent-above-100": Case(
        edit("omniladder.toml", "exit_cutoff_percent = 2", "exit_cutoff_percent = 120"),
        "omniladder.toml", "ladder.exit_cutoff_percent", ("100",)),
    "secret-looking-key": Case(
        edit("connections.toml", 'label = "Workstation GPU"', f'api_key = "{CANARY}"'),
        "connections.toml", "connections[9].api_key", ("secret", "never"),
        absent=(CANARY,)),
    "secret-looking-key-in-json": Case(
        edit("quota.json", '"status": "unknown"}', f'"status": "unknown", "token": "{CANARY}"}}'),
        "quota.json", "readings[9].token", ("secret",), absent=(CANARY,)),
    **{f"secret-key-{key}": Case(
        edit("connections.toml", 'label = "Workstation GPU"', f'{key} = "{CANARY}"'),
        "connections.toml", f"connections[9].{key}", ("secret",), absent=(CANARY,))
       for key in ("access_token", "refresh_token", "token", "password", "cookie")},
    "secret-looking-key-in-settings": Case(
        edit("omniladder.toml", "[ladder]\n", f'[ladder]\nPassword = "{CANARY}"\n'),
        "omniladder.toml", "ladder.Password", ("secret",), absent=(CANARY,)),
    "widening-billing-override": Case(
        edit("connections.toml", 'id = "deepseek-key"\n',
             'id = "deepseek-key"\nbilling = "subscription"\n'),
        "connections.toml", "deepseek-key", ("widen", "billing catalog overlay", "--catalog")),
    "widening-overage-override": Case(
        edit("connections.toml", 'id = "devin-team"\n',
             'id = "devin-team"\noverage = "hard-stop"\n'),
        "connections.toml", "overage", ("widen", "billing catalog overlay")),
    "budget-on-a-quota-rung": Case(
        edit("omniladder.toml", "rung_budget_usd = { cheap = 5.0, premium = 20.0 }",
             "rung_budget_usd = { subscription = 1 }"),
        "omniladder.toml", "budgets.rung_budget_usd.subscription",
        ("only cheap and premium take a budget",)),
    "budget-period-unknown": Case(
        edit("omniladder.toml", 'period = "month"', 'period = "fortnight"'),
        "omniladder.toml", "budgets.period", ("day", "week", "month")),
    "spend-event-without-rung": Case(
        edit("spend.json", '"connection": "openai-key", "model": "gpt-5-mini", "cost_usd": 0.42',
             '"connection": "openai-key", "cost_usd": 0.42'),
        "spend.json", "events[5]", ("rung",)),
    "invalid-auto-id": Case(None, None, "AUTO_ID", ("auto/subscription", "auto/thrifty",
                                                    "coding, reasoning, vision, chat, "
                                                    "multimodal"),
                            auto_id="auto/coding"),
    "invalid-category": Case(None, None, "AUTO_ID",
                             ("coding, reasoning, vision, chat, multimodal",),
                             auto_id="auto/poetry:thrifty"),
    "invalid-tier": Case(None, None, "AUTO_ID", ("subscription, thrifty",),
                         auto_id="auto/coding:premium"),
    "now-without-offset": Case(None, None, "--now", ("offset",),
                               args=("--now", "2026-11-29T12:00:00")),
    "now-not-a-timestamp": Case(None, None, "--now", ("RFC 3339",), args=("--now", "noon")),
}


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    for item in EXAMPLES.iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path / item.name)
    return tmp_path


def argv(case: Case, folder: Path) -> list[str]:
    args = [arg.replace("{dir}", str(folder)) for arg in case.args]
    if "--config" not in args:
        args = ["--config", str(folder / "omniladder.toml"), *args]
    return ["plan", case.auto_id, *args]


def check(case: Case, folder: Path, code: int, stdout: str, stderr: str) -> None:
    output = stdout + stderr
    assert code == 2, output
    assert stdout == ""
    assert "Traceback" not in output
    message = one_error_line(stderr)
    if case.file is not None:
        shown = str(folder / case.file)
        assert shown in message, message
        if case.line is not None:
            assert f"{shown}:{case.line}:" in message, message
    if case.field is not None:
        assert case.field in message, message
    for fragment in case.says:
        assert fragment in message, message
    for secret in case.absent:
        assert secret not in output


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name: str, scratch: Path) -> None:
    case = CASES[name]
    if case.break_it is not None:
        case.break_it(scratch)
    result = CliRunner().invoke(app, argv(case, scratch), catch_exceptions=False)
    check(case, scratch, result.exit_code, result.stdout, result.stderr)


@pytest.mark.parametrize("name", ["invalid-toml", "secret-looking-key", "widening-billing-override",
                                  "now-without-offset"])
def test_bad_input_in_a_real_process(name: str, scratch: Path) -> None:
    """The same through a real interpreter: nothing but the one line reaches the terminal."""
    case = CASES[name]
    if case.break_it is not None:
        case.break_it(scratch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "omniladder", *argv(case, scratch)],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    check(case, scratch, done.returncode, done.stdout, done.stderr)


def test_input_files_are_never_modified(scratch: Path) -> None:
    break_it = CASES["widening-billing-override"].break_it
    assert break_it is not None
    break_it(scratch)
    before = {p.name: p.read_bytes() for p in scratch.iterdir()}
    CliRunner().invoke(app, ["plan", "auto/thrifty", "--config", str(scratch / "omniladder.toml")])
    assert {p.name: p.read_bytes() for p in scratch.iterdir()} == before


def test_every_case_breaks_a_file_the_examples_really_have() -> None:
    """Guard the table itself: the edits above must find their text (checked when applied)."""
    names = {p.name for p in EXAMPLES.iterdir()}
    for case in CASES.values():
        if case.file is not None and not re.search(r"(nope|absent|gone)\.toml|\.yaml$",
                                                    case.file):
            assert case.file in names, case.file


def test_no_inputs_at_all_is_a_usage_error(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["plan", "auto/thrifty"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("omniladder: error: no connections file")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(("text", "says"), [
    ("a = 1\na = 2\n", "invalid TOML: key a is set twice; a TOML key is set once"),
    ('"q.r" = 1\n"q.r" = 2\n', 'invalid TOML: key "q.r" is set twice'),
    ("[x.y]\n[x.y]\n", "invalid TOML: table [x.y] is declared twice"),
    ("x = {a = 1}\nx.b = 2\n",
     "invalid TOML: x was written whole (an inline table or array), so it cannot be extended"),
])
def test_a_toml_key_or_table_given_twice_is_named_as_the_file_writes_it(
        text: str, says: str) -> None:
    """tomllib names a repeated table as a Python tuple and a repeated key not at all; the
    message names either as the file spells it, on the line of the second (SPEC §2)."""
    with pytest.raises(InputError) as caught:
        parse_text(text, ".toml", "f.toml")
    assert says in str(caught.value)
    assert caught.value.line == 2
