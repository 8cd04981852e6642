"""The output formats: `--format table|json|markdown` and `--json` its alias; markdown
escaped and never cut."""


from __future__ import annotations

import hashlib
import importlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.rendering import (
    FORMAT_RENDERERS,
    METRICS_RENDERERS,
    Format,
    PlanFormat,
    render,
)
from omniladder.rendering.escape import printable
from omniladder.rendering.markdown import code, plan_markdown, text
from omniladder.rendering.plan_view import view_of_plan
from tests.builders import at, conn, fleet, plan, reading, window
from tests.conftest import EXAMPLES, click_tree
from tests.errors import one_error
from tests.saved_plans import CONFIG, save

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("at_the_root")



# --- --format and --json -------------------------------------------------------------------


def commands_taking_format() -> dict[str, Any]:
    """Every command and sub-command (``audit omniroute``) with a --format option."""
    from tests.test_meta import command_paths

    found = {}
    for path in command_paths():
        command: Any = click_tree()
        for name in path:
            command = command.commands[name]
        for param in command.params:
            if "--format" in getattr(param, "opts", []):
                found[" ".join(path)] = param
    return found


def test_every_format_has_a_renderer_for_every_command_taking_format() -> None:
    """CONVENTIONS 9: one renderer per format behind one interface, for every command."""
    taking = commands_taking_format()
    assert set(taking) == set(FORMAT_RENDERERS) == {"plan", "show", "check", "diff",
                                                    "audit omniroute", "audit traffic",
                                                    "export", "forecast", "whatif"}
    for name, param in taking.items():
        if name in METRICS_RENDERERS:  # plan and forecast also write openmetrics
            assert list(param.type.choices) == [f.value for f in PlanFormat], name
            module, function = METRICS_RENDERERS[name].split(":")
            assert callable(getattr(importlib.import_module(module), function)), name
        else:
            assert list(param.type.choices) == [f.value for f in Format], name
        renderers = importlib.import_module(FORMAT_RENDERERS[name]).RENDERERS
        assert set(renderers) == set(Format), name
    assert set(METRICS_RENDERERS) == {"plan", "forecast", "audit traffic"}
    assert [f.value for f in PlanFormat] == [*(f.value for f in Format), "openmetrics"]


SAVED = "examples/ci/plan-thrifty.json"
FORMAT_COMMANDS = {
    "plan": ["plan", "auto/thrifty", "--config", str(CONFIG)],
    "show": ["show", SAVED],
    "check": ["check", "examples/policy.toml"],
    "diff": ["diff", SAVED, SAVED],
    "audit omniroute": ["audit", "omniroute",
                        "tests/fixtures/sources/omniroute-candidates/example-fleet-clean.json",
                        "--config", str(CONFIG)],
    "whatif": ["whatif", "auto/thrifty", "--config", "examples/whatif/omniladder.toml",
               "--no-bound"],
}


@pytest.mark.parametrize("name", list(FORMAT_COMMANDS))
def test_format_json_is_the_json_flag(name: str) -> None:
    args = FORMAT_COMMANDS[name]
    flag = runner.invoke(app, [*args, "--json"])
    option = runner.invoke(app, [*args, "--format", "json"])
    both = runner.invoke(app, [*args, "--json", "--format", "JSON"])
    assert flag.exit_code == option.exit_code == both.exit_code == 0, flag.output
    assert flag.stdout == option.stdout == both.stdout
    json.loads(option.stdout)
    table = runner.invoke(app, [*args, "--format", "table"])
    assert table.stdout == runner.invoke(app, args).stdout


@pytest.mark.parametrize("name", list(FORMAT_COMMANDS))
@pytest.mark.parametrize("other", ["table", "markdown"])
def test_json_and_another_format_is_a_usage_error(name: str, other: str) -> None:
    result = runner.invoke(app, [*FORMAT_COMMANDS[name], "--json", "--format", other])
    one_error(result, f"--json asks for json and --format asks for {other}")
    assert result.stdout == ""


@pytest.mark.parametrize("name", list(FORMAT_COMMANDS))
def test_an_unknown_format_is_a_usage_error(name: str) -> None:
    result = runner.invoke(app, [*FORMAT_COMMANDS[name], "--format", "html"])
    assert result.exit_code == 2
    assert "html" in result.output
    assert "markdown" in result.output


# --- markdown: escaping, never cut ---------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    ("plain-id", "`plain-id`"),
    ("a|b", "`a\\|b`"),
    ("a`b", "``a`b``"),
    ("`edge", "`` `edge ``"),
    ("x``y", "```x``y```"),
    ("two\nlines", "two<br>lines"),
    ("", ""),
])
def test_code_spans(value: str, expected: str) -> None:
    assert code(value) == expected


def test_text_escapes_what_markdown_would_interpret() -> None:
    assert text("*bold* _it_ <b>x</b> [l](u) a|b ~s~ & \\") == (
        "\\*bold\\* \\_it\\_ \\<b\\>x\\</b\\> \\[l\\](u) a\\|b \\~s\\~ \\& \\\\")
    assert text("one\r\ntwo\nthree\rfour") == "one<br>two<br>three<br>four"
    assert text("5h window at 0% (cutoff 2%), resets 15:00Z") == (
        "5h window at 0% (cutoff 2%), resets 15:00Z")


def cells(row: str) -> list[str]:
    """A markdown table row's cells, split on the pipes that are not escaped."""
    assert row.startswith("| "), row
    assert row.endswith(" |"), row
    return [c.strip() for c in re.split(r"(?<!\\)\|", row[1:-1])]


def test_markdown_keeps_every_row_whole_with_hostile_ids() -> None:
    hostile = "team|a*b_c<d>`e"
    long_id = "claude-max-" + "x" * 150
    result = plan(fleet(
        [conn(hostile, models=["sonnet|4"]), conn(long_id, models=["opus*max"]),
         conn("off", models=["sonnet|4"], active=False)],
        [reading(hostile, window("5h", 50, at(hours=1))),
         reading(long_id, window("5h", 50, at(hours=1)))]))
    out = plan_markdown(view_of_plan(result))
    rows = [line for line in out.splitlines() if line.startswith("|")]
    tables: dict[int, int] = {}
    for line in out.splitlines():
        if line.startswith("|"):
            width = len(cells(line))
            tables.setdefault(width, 0)
            tables[width] += 1
    assert set(tables) == {5, 4}  # ladder and exclusions have 5 columns, the pool 4
    pool = [cells(r) for r in rows if len(cells(r)) == 4][2:]
    assert [p[2] for p in pool] == ["`claude/sonnet\\|4`", "`claude/opus*max`"]
    assert pool[0][3] == "``team\\|a*b_c<d>`e``"
    assert pool[1][3] == f"`{long_id}`"  # never shortened
    assert "…" not in out
    excluded = [cells(r) for r in rows if len(cells(r)) == 5 and r.startswith("| `off`")]
    assert excluded == [["`off`", "all models", "`subscription`", "`inactive`",
                         "switched off (active = false)"]]


def test_markdown_of_an_empty_pool() -> None:
    result = plan(fleet([conn("c", models=["sonnet"], active=False)], []),
                  "auto/subscription")
    out = io.StringIO()
    render(result, Format.MARKDOWN, out)
    assert ("**Pool: empty** — no candidate has a usable connection under "
            "`auto/subscription`.") in out.getvalue()
    assert out.getvalue().rstrip().endswith("**")


def test_check_markdown_escapes_names_and_evidence(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'config = "{CONFIG}"\n[[expect]]\nname = "no | pipes * here"\n'
        'auto_id = "auto/subscription"\nmin_pool = 5\n', encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy), "--format", "markdown"])
    assert result.exit_code == 1, result.output
    rows = [cells(line) for line in result.stdout.splitlines() if line.startswith("| ")]
    assert rows[2] == ["❌ **FAIL**", "no \\| pipes \\* here", "`auto/subscription`",
                       "`min_pool`", "at least 5 pool entries", "1 pool entry"]
    assert "- ❌ **no \\| pipes \\* here** — auto/subscription at" in result.stdout


def test_show_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    saved = save(tmp_path)
    marked = tmp_path / "marked.json"
    marked.write_bytes(b"\xef\xbb\xbf" + saved.read_bytes())
    table = runner.invoke(app, ["show", str(marked)])
    assert table.exit_code == 0, table.output
    as_json = runner.invoke(app, ["show", str(marked), "--json"])
    assert as_json.stdout == saved.read_text(encoding="utf-8")  # the document, without the mark


def test_markdown_carries_the_warnings_as_a_quote() -> None:
    from omniladder.rendering.markdown import warning_lines

    assert warning_lines([]) == []
    assert warning_lines(["a|b_c", "second"]) == [
        "> **warning:** a\\|b\\_c  \n> **warning:** second", ""]
    result = plan(fleet([conn("c", models=["sonnet"])], []))._replace(
        warnings=("first <b>", "second"))
    lines = plan_markdown(view_of_plan(result)).splitlines()
    start = lines.index("> **warning:** first \\<b\\>  ")
    assert lines[start + 1:start + 4] == ["> **warning:** second", "", "**Ladder**"]


# --- markdown cells: property tests ----------------------------------------------------------

_CELL_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


def _read_text(cell: str) -> str:
    """What a GFM renderer shows for a ``text`` cell: escapes undone, <br> a newline."""
    return re.sub(r"\\(.)|<br>", lambda m: m.group(1) if m.group(1) else "\n", cell)


def _read_code(cell: str) -> str:
    """What a GFM renderer shows for a ``code`` cell (table pipes unescaped first)."""
    fence = re.match(r"`+", cell)
    assert fence is not None, cell
    ticks = fence.group(0)
    assert cell.endswith(ticks), cell
    inner = cell[len(ticks):-len(ticks)].replace("\\|", "|")
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    return inner


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@given(_CELL_TEXT)
def test_a_text_cell_never_breaks_a_row_and_reads_back(value: str) -> None:
    """A text cell reads back as the value, each control character as its escape."""
    cell = text(value)
    assert "\n" not in cell
    assert "\r" not in cell
    assert not re.search(r"(?<!\\)\|", cell)
    assert not _CONTROL.search(cell)
    lines = value.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert _read_text(cell) == "\n".join(printable(line) for line in lines)


@given(_CELL_TEXT.filter(lambda v: "\n" not in v and "\r" not in v and v != ""))
def test_a_code_cell_never_breaks_a_row_and_reads_back(value: str) -> None:
    cell = code(value)
    assert not re.search(r"(?<!\\)\|", cell)
    assert not _CONTROL.search(cell)
    assert _read_code(cell) == printable(value)


def test_the_stamp_is_of_the_bytes_planned_from(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A quota file replaced while the plan is made (a scheduled import) does not change the
    stamp: it records the files as they were read, and a file deleted meanwhile is no error."""
    copy = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("ci", "day"))
    quota = copy / "quota.json"
    planned = hashlib.sha256(quota.read_bytes()).hexdigest()
    spend = copy / "spend.json"
    spent = hashlib.sha256(spend.read_bytes()).hexdigest()
    engine = importlib.import_module("omniladder.engine.plan")
    make_plan = engine.make_plan

    def replacing(*args: Any, **kwargs: Any) -> Any:
        quota.write_text(quota.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        spend.unlink()
        return make_plan(*args, **kwargs)

    monkeypatch.setattr(engine, "make_plan", replacing)
    document = json.loads(save(tmp_path, "p.json", "--config", str(copy / "omniladder.toml"))
                          .read_text(encoding="utf-8"))
    digests = {i["role"]: i["sha256"] for i in document["inputs"]}
    assert digests["quota"] == planned != hashlib.sha256(quota.read_bytes()).hexdigest()
    assert digests["spend"] == spent
