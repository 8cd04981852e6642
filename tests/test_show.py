"""Saved plans shown and stamped: `show` prints a saved plan as `plan` did, and `plan --out`
stamps what the plan was made from."""


from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import __version__
from omniladder.cli import app
from tests.conftest import EXAMPLES
from tests.errors import one_error
from tests.saved_plans import CONFIG, save

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("at_the_root")



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
