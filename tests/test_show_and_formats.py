"""Saved plans shown and stamped (`show`, `plan --out`, the provenance of a diff) and the
output formats (`--format table|json|markdown`, `--json` its alias)."""

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
from typer.main import get_command
from typer.testing import CliRunner

from omniladder import __version__
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
from tests.conftest import EXAMPLES, ROOT
from tests.errors import one_error

runner = CliRunner()
CONFIG = EXAMPLES / "omniladder.toml"


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def save(tmp_path: Path, name: str = "plan.json", *extra: str) -> Path:
    out = tmp_path / name
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG),
                                 "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


# --- show ----------------------------------------------------------------------------------


def test_show_prints_the_plan_view_of_the_saved_plan(tmp_path: Path) -> None:
    saved = save(tmp_path)
    fresh = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG)])
    shown = runner.invoke(app, ["show", str(saved)])
    assert shown.exit_code == 0, shown.output
    before, after = fresh.stdout.splitlines(), shown.stdout.splitlines()
    assert before[1] == ("now 2026-11-29T12:00:00Z (from the quota snapshot) · 15 connections"
                         " · 17 candidates")
    assert after[:3] == [before[0], f"saved plan {saved}, made by omniladder {__version__}",
                         before[1].removesuffix(" · 17 candidates")]
    assert after[3:] == before[2:]  # the inputs line, ladder, pool, exclusions, verdict
    assert shown.stderr == fresh.stderr  # the saved warnings, as plan said them


def test_show_detail_lists_not_in_category_exclusions(tmp_path: Path) -> None:
    saved = tmp_path / "coding.json"
    made = runner.invoke(app, ["plan", "auto/coding:thrifty", "--config", str(CONFIG),
                               "--out", str(saved)])
    assert made.exit_code == 0, made.output
    plain = runner.invoke(app, ["show", str(saved)])
    detailed = runner.invoke(app, ["show", str(saved), "--detail"])
    assert "1 not-in-category exclusion not listed" in plain.stdout
    assert plain.stdout.count("not-in-category") == 1  # only the note
    assert "1 not-in-category exclusion not listed" not in detailed.stdout
    # the row, and its remedy under "To change this"
    assert detailed.stdout.count("not-in-category") == 2
    assert "To change this" in detailed.stdout
    fresh = runner.invoke(app, ["plan", "auto/coding:thrifty", "--config", str(CONFIG),
                                "--detail"])
    assert detailed.stdout.splitlines()[3:] == fresh.stdout.splitlines()[2:]


def test_show_json_passes_the_document_through_unchanged(tmp_path: Path) -> None:
    saved = save(tmp_path)
    document = json.loads(saved.read_text(encoding="utf-8"))
    document["a_field_from_a_later_release"] = {"kept": True}
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(document, indent=4), encoding="utf-8")  # no final newline
    for flags in (["--json"], ["--format", "json"], ["--json", "--format", "json"]):
        result = runner.invoke(app, ["show", str(odd), *flags])
        assert result.exit_code == 0, result.output
        assert result.stdout == odd.read_text(encoding="utf-8") + "\n"
        assert result.stderr == ""  # warnings stay in the document under --json


def test_show_reads_a_plan_printed_by_json_too(tmp_path: Path) -> None:
    printed = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--json"])
    path = tmp_path / "printed.json"
    path.write_text(printed.stdout, encoding="utf-8")
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[1] == f"saved plan {path}"  # no stamp: no version to name
    assert lines[3] == ""  # and no inputs line
    assert lines[-1].startswith("auto/thrifty: 10 of 15 connections eligible")


def plan_document(tmp_path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(save(tmp_path).read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize(("content", "fragments"), [
    ("", ["bad.json:1: invalid JSON: Expecting value"]),
    ("[1, 2]", ["bad.json: not a saved omniladder plan: the top level must be an object"]),
    ('{"auto_id": "auto/thrifty"}', ["bad.json: format_version: not a saved omniladder plan"]),
])
def test_show_refuses_what_is_not_a_plan(tmp_path: Path, content: str,
                                         fragments: list[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    one_error(runner.invoke(app, ["show", str(bad)]), *fragments)


def test_show_refuses_a_truncated_plan_naming_the_line(tmp_path: Path) -> None:
    whole = save(tmp_path).read_text(encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(whole[:len(whole) // 2], encoding="utf-8")
    line = one_error(runner.invoke(app, ["show", str(bad)]), "invalid JSON")
    assert re.search(r"bad\.json:\d+: invalid JSON", line), line


def test_show_refuses_another_format_version(tmp_path: Path) -> None:
    document = plan_document(tmp_path)
    document["format_version"] = "2"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    one_error(runner.invoke(app, ["show", str(bad)]),
              "bad.json: format_version: plan format_version '2' is not supported")


def test_show_refuses_a_plan_missing_a_field(tmp_path: Path) -> None:
    document = plan_document(tmp_path)
    del document["pool"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    one_error(runner.invoke(app, ["show", str(bad)]), "bad.json", "pool")


@pytest.mark.parametrize(("command", "what"), [
    (["check", "examples/policy.toml", "--json"], "an `omniladder check --json` document"),
    (["diff", "examples/ci/plan-thrifty.json", "examples/ci/plan-thrifty.json", "--json"],
     "an `omniladder diff --json` document"),
    (["why", "claude-max-work", "--config", "examples/omniladder.toml", "--json"],
     "an `omniladder why --json` document"),
    (["catalog", "show", "--json"], "an `omniladder catalog show --json` document"),
])
def test_show_names_another_omniladder_document(tmp_path: Path, command: list[str],
                                                what: str) -> None:
    made = runner.invoke(app, command)
    assert made.exit_code == 0, made.output
    other = tmp_path / "other.json"
    other.write_text(made.stdout, encoding="utf-8")
    for args in (["show", str(other)], ["diff", str(other), str(other)]):
        one_error(runner.invoke(app, args), f"other.json: not a saved omniladder plan: "
                  f"this is {what}")


def test_show_a_missing_file_or_a_directory(tmp_path: Path) -> None:
    one_error(runner.invoke(app, ["show", str(tmp_path / "none.json")]), "file not found")
    one_error(runner.invoke(app, ["show", str(tmp_path)]), "is a directory")


# --- the stamp of plan --out -----------------------------------------------------------------


def test_the_stamp_follows_the_inputs_and_json_stays_unstamped(tmp_path: Path) -> None:
    copy = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("ci", "day"))
    first = json.loads(save(tmp_path, "a.json", "--config", str(copy / "omniladder.toml"))
                       .read_text(encoding="utf-8"))
    quota = copy / "quota.json"
    quota.write_text(quota.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    second = json.loads(save(tmp_path, "b.json", "--config", str(copy / "omniladder.toml"))
                        .read_text(encoding="utf-8"))
    digests = {i["role"]: i["sha256"] for i in second["inputs"]}
    assert digests["quota"] == hashlib.sha256(quota.read_bytes()).hexdigest()
    changed = [i["role"] for i, j in zip(first["inputs"], second["inputs"], strict=True)
               if i["sha256"] != j["sha256"]]
    assert changed == ["quota"]
    printed = json.loads(runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                             str(CONFIG), "--json"]).stdout)
    assert "omniladder_version" not in printed
    assert "inputs" not in printed


def test_a_plan_without_shipped_catalogs_stamps_only_what_it_read(tmp_path: Path) -> None:
    document = json.loads(save(tmp_path, "p.json", "--no-shipped-catalogs")
                          .read_text(encoding="utf-8"))
    assert [i["path"] for i in document["inputs"] if "catalog" in i["role"]] == [
        "examples/billing-overlay.toml"]


# --- diff: the provenance notes --------------------------------------------------------------


def edited(path: Path, **changes: Any) -> Path:
    document = json.loads(path.read_text(encoding="utf-8"))
    document.update(changes)
    target = path.with_name("edited-" + path.name)
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_diff_notes_other_inputs_but_they_are_no_difference(tmp_path: Path) -> None:
    copy = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("ci", "day"))
    old = save(tmp_path, "old.json", "--config", str(copy / "omniladder.toml"))
    quota = copy / "quota.json"
    quota.write_text(quota.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    new = save(tmp_path, "new.json", "--config", str(copy / "omniladder.toml"))
    result = runner.invoke(app, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output  # the same routing: still "no differences"
    shown_quota = str(quota)
    assert f"note: the inputs differ: quota {shown_quota} (sha256 changed)" in result.stdout
    assert "versions" not in result.stdout
    document = json.loads(runner.invoke(app, ["diff", str(old), str(new), "--json"]).stdout)
    made = document["provenance"]
    assert made["versions_differ"] is False
    assert made["inputs_differ"] is True
    assert made["inputs"] == [{
        "role": "quota", "old_path": shown_quota, "new_path": shown_quota,
        "old_sha256": json.loads(old.read_text("utf-8"))["inputs"][2]["sha256"],
        "new_sha256": hashlib.sha256(quota.read_bytes()).hexdigest()}]
    assert document["equal"] is True


def test_diff_the_same_inputs_read_from_elsewhere_are_the_same(tmp_path: Path) -> None:
    copy = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("ci", "day"))
    here = save(tmp_path, "here.json")
    there = save(tmp_path, "there.json", "--config", str(copy / "omniladder.toml"))
    result = runner.invoke(app, ["diff", str(here), str(there), "--json"])
    made = json.loads(result.stdout)["provenance"]
    assert made["inputs_differ"] is False
    assert made["inputs"] == []
    assert "note:" not in runner.invoke(app, ["diff", str(here), str(there)]).stdout


def test_diff_notes_another_version_and_a_file_read_by_one_plan_only(tmp_path: Path) -> None:
    old = save(tmp_path, "old.json")
    document = json.loads(old.read_text(encoding="utf-8"))
    spend = document["inputs"].pop(3)
    assert spend["role"] == "spend"
    new = edited(old, omniladder_version="9.9.9", inputs=document["inputs"])
    result = runner.invoke(app, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (f"note: the plans were made by different omniladder versions ({__version__}, "
            "9.9.9)") in lines
    assert (f"note: the inputs differ: spend examples/spend.json (read only for {old})"
            in lines)
    markdown = runner.invoke(app, ["diff", str(old), str(new), "--format", "markdown"])
    assert "> **note:** the plans were made by different omniladder versions" \
        in markdown.stdout


def test_diff_of_an_unstamped_plan_cannot_compare_inputs(tmp_path: Path) -> None:
    printed = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--json"])
    unstamped = tmp_path / "printed.json"
    unstamped.write_text(printed.stdout, encoding="utf-8")
    stamped = save(tmp_path)
    for old, new in ((unstamped, stamped), (stamped, unstamped)):
        result = runner.invoke(app, ["diff", str(old), str(new), "--json"])
        assert result.exit_code == 0, result.output
        made = json.loads(result.stdout)["provenance"]
        assert made["inputs_differ"] is None
        assert made["versions_differ"] is None
        assert made["inputs"] == []
        assert "note:" not in runner.invoke(app, ["diff", str(old), str(new)]).stdout


def test_compare_notes_changed_inputs_and_keeps_the_exit_code(tmp_path: Path) -> None:
    copy = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("ci", "day"))
    config = str(copy / "omniladder.toml")
    saved = save(tmp_path, "saved.json", "--config", config)
    settings = copy / "omniladder.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n# reviewed\n",
                        encoding="utf-8")
    for fmt, note in (("table", "note: the inputs differ: settings"),
                      ("markdown", "> **note:** the inputs differ: settings")):
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config", config,
                                     "--compare", str(saved), "--format", fmt])
        assert result.exit_code == 0, result.output
        assert note in result.stdout


# --- --format and --json -------------------------------------------------------------------


def commands_taking_format() -> dict[str, Any]:
    """Every command and sub-command (``audit omniroute``) with a --format option."""
    from tests.test_meta import command_paths

    found = {}
    for path in command_paths():
        command: Any = get_command(app)
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
                                                    "export", "forecast"}
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
