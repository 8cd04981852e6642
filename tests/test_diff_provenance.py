"""`diff`: the provenance notes of two saved plans (versions, inputs, instants)."""


from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import __version__
from omniladder.cli import app
from tests.conftest import EXAMPLES
from tests.saved_plans import CONFIG, save

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("at_the_root")



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
