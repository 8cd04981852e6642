"""SPEC §4: colour only on a terminal, NO_COLOR honoured, plain text when piped, the JSON
document's shape, and --fail-on-empty."""

from __future__ import annotations

import errno
import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.records import Plan
from omniladder.rendering.table import render_table
from tests.builders import at, conn, fleet, plan, reading, window
from tests.conftest import EXAMPLES, ROOT

runner = CliRunner()
CONFIG = str(EXAMPLES / "omniladder.toml")
SGR = re.compile(r"\x1b\[([0-9;]*)m")

SPEC_KEYS = ["format_version", "auto_id", "category", "tier", "now", "now_source", "settings",
             "rungs", "pool", "excluded", "connections", "warnings", "summary"]


def colour_codes(text: str) -> list[str]:
    """The SGR parameters that set a colour (30-49, 90-107, 38/48 extended)."""
    found = []
    for params in SGR.findall(text):
        for part in params.split(";"):
            if part.isdigit() and (30 <= int(part) <= 49 or 90 <= int(part) <= 107):
                found.append(part)
    return found


@pytest.fixture
def colour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A capable terminal in the environment, colour not switched off."""
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm-256color")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.usefixtures("colour_terminal")
@pytest.mark.parametrize("columns", ["0", "00"])
def test_columns_zero_on_a_terminal_still_prints_the_view(
        columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS=0 is no width (docs/contract.md#s4-1: the table view is for people): the
    terminal's own width stands in, as for an unset COLUMNS. rich took it as a width of 0
    and the whole view came out empty, exit 0."""
    monkeypatch.delenv("COLUMNS")
    unset = FakeTerminal()
    render_table(sample_plan(), unset)
    assert "Pool, in dispatch order" in unset.getvalue()
    monkeypatch.setenv("COLUMNS", columns)
    zero = FakeTerminal()
    render_table(sample_plan(), zero)
    assert zero.getvalue() == unset.getvalue()


def sample_plan() -> Plan:
    return plan(fleet([conn("c", models=["sonnet"]), conn("k", "openai", "apikey")],
                      [reading("c", window("5h", 50, at(hours=1)))]))


@pytest.mark.usefixtures("colour_terminal")
def test_colour_on_a_terminal() -> None:
    out = FakeTerminal()
    render_table(sample_plan(), out)
    assert colour_codes(out.getvalue())


@pytest.mark.usefixtures("colour_terminal")
def test_no_color_is_honoured_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = FakeTerminal()
    render_table(sample_plan(), out)
    assert colour_codes(out.getvalue()) == []


@pytest.mark.usefixtures("colour_terminal")
def test_plain_text_when_piped() -> None:
    out = io.StringIO()
    render_table(sample_plan(), out)
    assert "\x1b" not in out.getvalue()
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", CONFIG])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert " ".join(result.stdout.split()).endswith(
        "auto/thrifty: 10 of 15 connections eligible (3 unverified) — 1 below re-entry floor, "
        "1 cooling down, 1 inactive, 1 quota exhausted, 1 terminal status")


def run_in_a_terminal(*args: str, no_color: bool) -> str:
    """Run the real command line with its stdout on a pseudo-terminal; return what it wrote."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "omniladder", *args], stdout=slave,
                                   stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError as exc:  # EIO once the child closed the terminal (Linux)
                if exc.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=30) == 0
    finally:
        os.close(master)
    return b"".join(chunks).decode("utf-8")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal semantics")
def test_a_real_terminal_gets_colour_unless_no_color() -> None:
    args = ("plan", "auto/thrifty", "--config", CONFIG)
    coloured = run_in_a_terminal(*args, no_color=False)
    plain = run_in_a_terminal(*args, no_color=True)
    assert colour_codes(coloured)
    assert colour_codes(plain) == []
    assert SGR.sub("", coloured).replace("\r\n", "\n") == SGR.sub("", plain).replace(
        "\r\n", "\n")


def test_user_strings_are_never_read_as_markup(tmp_path: Path) -> None:
    connections = tmp_path / "connections.toml"
    connections.write_text('[[connections]]\nid = "[bold red]x[/]"\nprovider = "[link]p"\n'
                           'auth_type = "apikey"\nmodels = ["[i]m[/i]"]\n', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(connections),
                                 "--now", "2026-11-29T12:00:00Z"])
    assert result.exit_code == 0, result.output
    assert "[bold red]x[/]" in result.stdout
    assert "[link]p/[i]m[/i]" in result.stdout


# --- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize("auto_id", ["auto/thrifty", "auto/subscription", "auto/chat:thrifty"])
def test_json_has_exactly_the_documented_top_level_keys(auto_id: str) -> None:
    result = runner.invoke(app, ["plan", auto_id, "--config", CONFIG, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) == {*SPEC_KEYS, "clamps"}
    assert [key for key in document if key in SPEC_KEYS] == SPEC_KEYS
    assert document["format_version"] == "1"
    assert [r["rung"] for r in document["rungs"]] == [
        "subscription", "keyless", "free", "cheap", "premium"]


def test_json_stdout_is_only_data_even_with_warnings(tmp_path: Path) -> None:
    connections = tmp_path / "connections.toml"
    connections.write_text('[[connections]]\nid = "k"\nprovider = "openai"\n'
                           'auth_type = "apikey"\nmodels = ["not-in-any-catalog"]\n',
                           encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(connections),
                                 "--now", "2026-11-29T12:00:00Z", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert any("not-in-any-catalog" in w for w in document["warnings"])
    assert result.stderr == ""
    human = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(connections),
                                "--now", "2026-11-29T12:00:00Z"])
    assert "not-in-any-catalog" in human.stderr
    assert "warning" not in human.stdout


# --- --fail-on-empty -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("auto_id", "flag", "code"),
    [
        pytest.param("auto/multimodal:subscription", True, 1, id="empty-pool-fails"),
        pytest.param("auto/multimodal:subscription", False, 0, id="empty-pool-is-an-answer"),
        pytest.param("auto/thrifty", True, 0, id="pool-passes"),
        pytest.param("auto/subscription", True, 0, id="subscription-pool-passes"),
    ],
)
@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_fail_on_empty(auto_id: str, flag: bool, code: int, json_out: bool) -> None:
    args = ["plan", auto_id, "--config", CONFIG]
    args += ["--fail-on-empty"] if flag else []
    args += ["--json"] if json_out else []
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    if json_out:
        document = json.loads(result.stdout)
        assert bool(document["pool"]) == (auto_id != "auto/multimodal:subscription")
    else:
        empty = "multimodal" in auto_id
        assert ("Pool: empty" in result.stdout) == empty
        assert ("pool empty" in " ".join(result.stdout.split())) == empty


def test_piped_output_has_a_fixed_width_without_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped text does not depend on the environment: no COLUMNS means the same 120 columns."""
    monkeypatch.chdir(ROOT)
    args = ["plan", "auto/subscription", "--config", "examples/omniladder.toml"]
    pinned = runner.invoke(app, args)
    monkeypatch.delenv("COLUMNS")
    unpinned = runner.invoke(app, args)
    assert unpinned.exit_code == 0, unpinned.output
    assert unpinned.stdout == pinned.stdout
    # Tables fit the width; the header and the one-line verdict never wrap.
    lines = unpinned.stdout.splitlines()
    verdict = lines[-1]
    assert verdict.startswith("auto/subscription: ")
    unwrapped = ("now ", "inputs: ", verdict)
    assert max(len(line) for line in lines if not line.startswith(unwrapped)) <= 120


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("args", [
    ["why", "claude-max-work"], ["who", "claude/claude-sonnet-4-5"],
    ["who", "codex/gpt-5.1-codex", "auto/coding:subscription"]], ids=["why", "who", "who-id"])
def test_a_tree_wraps_under_its_own_guides(args: list[str], columns: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A long label continues under its node's guides, never back at the first column, and
    no line is wider than the terminal."""
    monkeypatch.setenv("COLUMNS", str(columns))
    result = runner.invoke(app, [*args, "--config", str(EXAMPLES / "omniladder.toml")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    root = next(n for n, line in enumerate(lines) if lines[n + 1][:1] in "├└")
    tree = lines[root + 1:]
    assert len(tree) > 10
    assert max(len(line) for line in lines) <= columns
    assert all(line[:1] in "│├└ " for line in tree), [x for x in tree if x[:1] not in "│├└ "]
    wrapped = [line for line in tree if not re.match(r"^[│ ]*[├└]── ", line)]
    assert wrapped, "the example has labels longer than the terminal"
    for line in wrapped:
        assert re.match(r"^(?:[│ ]   )*[│ ] \S", line), line
