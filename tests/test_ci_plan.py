"""The committed CI plan (examples/ci/plan-thrifty.json) is what `plan --out` writes today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import ROOT

runner = CliRunner()


# --- 6. the committed CI plan is what `plan --out` writes today ----------------------------

SAVED_PLAN = ROOT / "examples" / "ci" / "plan-thrifty.json"


def test_the_shipped_ci_plan_is_the_current_plan_out(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/ci/plan-thrifty.json is made with `omniladder plan auto/thrifty --config
    examples/omniladder.toml --out examples/ci/plan-thrifty.json` from the repository root;
    it must be byte for byte what that writes now, but for the version stamp (which changes
    with every release). When the output changes on purpose, regenerate it that way."""
    monkeypatch.chdir(ROOT)
    fresh = tmp_path / "plan.json"
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 "examples/omniladder.toml", "--out", str(fresh)])
    assert result.exit_code == 0, result.output
    saved = json.loads(SAVED_PLAN.read_text(encoding="utf-8"))
    current = json.loads(fresh.read_text(encoding="utf-8"))
    assert saved.pop("omniladder_version")
    current.pop("omniladder_version")
    assert saved == current, ("examples/ci/plan-thrifty.json is stale: regenerate it with "
                              "the command in this test's docstring")


def test_the_shipped_ci_plan_shows_every_section_and_compares_equal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`show` on it has the sections today's plans have, and `.ci/run`'s `--compare` on it
    finds no difference."""
    monkeypatch.chdir(ROOT)
    document = json.loads(SAVED_PLAN.read_text(encoding="utf-8"))
    assert {"omniladder_version", "inputs"} <= set(document)
    assert all("unverified" in entry for entry in document["pool"])
    assert all("fix" in x for x in document["excluded"])
    assert all("overage_source" in c for c in document["connections"])
    shown = runner.invoke(app, ["show", str(SAVED_PLAN)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert any(line.startswith("Unverified") for line in lines)
    assert "To change this" in lines
    compare = runner.invoke(app, ["plan", "auto/thrifty", "--config", "examples/omniladder.toml",
                                  "--compare", "examples/ci/plan-thrifty.json"])
    assert compare.exit_code == 0, compare.output
    assert compare.stdout.rstrip().endswith("no differences: the two plans route the same way")
