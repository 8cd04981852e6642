"""The composite GitHub Action (action.yml) and the pre-commit hooks, run here without GitHub.

The action's steps run as GitHub runs them: each step's `run` under bash, with its `env`
after the `${{ inputs.* }}` expressions are replaced by the inputs (or their defaults). The
install step is the one thing replaced: omniladder is this checkout's, not a fresh install.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from tests.conftest import EXAMPLES, ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")


def steps() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ACTION["runs"]["steps"]
    return found


def test_the_action_is_a_composite_that_installs_from_its_own_checkout() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["inputs"]["policy"]["required"] is True
    install, check = steps()
    assert install["id"] == "install"
    assert 'pip install -q "$GITHUB_ACTION_PATH"' in install["run"]
    assert check["run"] == 'bash "$GITHUB_ACTION_PATH/.github/omniladder-action.sh"'
    assert (ROOT / ".github" / "omniladder-action.sh").is_file()
    for step in steps():
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "inputs reach a script only through env"
    used = {name for step in steps() for value in step.get("env", {}).values()
            for name in EXPRESSION.findall(str(value))}
    assert used == set(ACTION["inputs"]), "every input is passed on, and only inputs"
    for output in ACTION["outputs"].values():
        assert output["value"].startswith("${{ steps.check.outputs.")


def omniladder_command(tmp_path: Path) -> str:
    """An `omniladder` executable for this checkout, as the install step makes one."""
    wrapper = tmp_path / "bin" / "omniladder"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m omniladder "$@"\n',
                       encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper)


def run_action(tmp_path: Path, **inputs: str) -> tuple[int, str, dict[str, str], str]:
    """Run the action's steps with ``inputs`` (names as in action.yml): exit code, job
    summary, step outputs and stdout."""
    work = tmp_path / "work"
    work.mkdir()
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    base = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
            "OMNILADDER": omniladder_command(tmp_path)}
    code = 0
    stdout = ""
    for step in steps():
        if step["id"] == "install":
            continue
        env = dict(base)
        for key, value in step.get("env", {}).items():
            env[key] = EXPRESSION.sub(
                lambda m: inputs.get(m.group(1), str(ACTION["inputs"][m.group(1)].get(
                    "default", ""))), str(value))
        done = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=work,
                              capture_output=True, text=True, check=False)
        code, stdout = done.returncode, stdout + done.stdout
        if code:
            break
    text = summary.read_text(encoding="utf-8") if summary.exists() else ""
    found = dict(line.split("=", 1) for line in outputs.read_text(encoding="utf-8")
                 .splitlines()) if outputs.exists() else {}
    return code, text, found, stdout


def junit_counts(path: Path) -> tuple[int, int]:
    root = ET.parse(path).getroot()
    return int(root.get("tests", "-1")), int(root.get("failures", "-1"))


def test_a_passing_policy_and_an_unchanged_plan(tmp_path: Path) -> None:
    code, summary, outputs, stdout = run_action(
        tmp_path, policy=str(EXAMPLES / "policy.toml"),
        config=str(EXAMPLES / "omniladder.toml"),
        compare=str(EXAMPLES / "ci" / "plan-thrifty.json"))
    assert code == 0, summary
    assert outputs == {"check-exit-code": "0", "junit": "omniladder-junit.xml",
                       "compare-exit-code": "0"}
    assert junit_counts(tmp_path / "work" / "omniladder-junit.xml") == (4, 0)
    sections = ("\n" + summary).split("\n## ")[1:]
    assert [s.splitlines()[0] for s in sections] == [
        f"omniladder check {EXAMPLES / 'policy.toml'}: pass",
        f"omniladder plan auto/thrifty --compare {EXAMPLES / 'ci' / 'plan-thrifty.json'}: "
        "no change"]
    # the markdown view: one table row per check (18) of the four expectations
    check_view = sections[0].split("\n\n", 1)[1].strip()
    assert check_view.startswith(f"### omniladder check `{EXAMPLES / 'policy.toml'}`")
    assert check_view.count("\n| ✅ pass | ") == 18
    assert check_view.endswith("**check: 4 of 4 expectations passed**")
    assert "FAIL" not in check_view
    assert check_view in stdout  # the log shows the same view
    assert "no differences" in sections[1]
    assert "> omniladder:" not in summary  # no reason lines when the answer is yes


def test_a_failing_policy_fails_the_step_with_its_evidence(tmp_path: Path) -> None:
    code, summary, outputs, _ = run_action(
        tmp_path, policy=str(EXAMPLES / "policy-failing.toml"), junit="reports/junit.xml")
    assert code == 1, summary
    assert outputs == {"check-exit-code": "1", "junit": "reports/junit.xml"}
    tests, failures = junit_counts(tmp_path / "work" / "reports" / "junit.xml")
    assert tests == 5
    assert failures == 4
    assert summary.count("| ❌ **FAIL** | ") >= failures  # a row per failed check
    assert summary.startswith(f"## omniladder check {EXAMPLES / 'policy-failing.toml'}: "
                              "fail\n\n> omniladder: exit 1: 4 of 5 expectations failed: "
                              "auto/thrifty never bills per token, ")
    # the reason, then the markdown view
    assert "leads coding work  \n\n### omniladder check `" in summary
    assert "compare" not in summary


def test_a_changed_plan_fails_the_step(tmp_path: Path) -> None:
    saved = tmp_path / "tight.json"
    subprocess.run([sys.executable, "-m", "omniladder", "plan", "auto/thrifty", "--config",
                    str(EXAMPLES / "omniladder-tight.toml"), "--out", str(saved)],
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                   check=True)
    code, summary, outputs, _ = run_action(
        tmp_path, policy=str(EXAMPLES / "policy.toml"),
        config=str(EXAMPLES / "omniladder.toml"), compare=str(saved))
    assert code == 1, summary
    assert (outputs["check-exit-code"], outputs["compare-exit-code"]) == ("0", "1")
    assert f"--compare {saved}: changed\n" in summary
    assert ": pass\n" in summary  # the check itself still passed, and says so
    assert "| changed |" in summary or "changed" in summary.split("--compare")[1]


@pytest.mark.parametrize("policy", ["missing.toml", ""])
def test_no_answer_is_exit_2(tmp_path: Path, policy: str) -> None:
    code, summary, outputs, _ = run_action(tmp_path, policy=policy)
    assert code == 2
    if policy:
        assert ": error (exit 2)\n\n> omniladder: error: missing.toml: file not found  \n" \
            in summary
        assert outputs["check-exit-code"] == "2"
    else:
        assert summary == ""


def test_the_summary_view_switch_is_one_line() -> None:
    """The summary is markdown; one line switches it to the text view in a fence."""
    script = (ROOT / ".github" / "omniladder-action.sh").read_text(encoding="utf-8")
    assert script.count("\nview=(--format markdown)\n") == 1
    assert "#   view=()" in script
    assert script.count('"${view[@]}"') == 2


# --- pre-commit hooks ------------------------------------------------------------------------


def test_the_pre_commit_hooks() -> None:
    hooks = {hook["id"]: hook for hook in HOOKS}
    assert set(hooks) == {"omniladder-catalog-check", "omniladder-check"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert re.search(hook["files"], "fleet/connections.toml")
        assert re.search(hook["files"], "quota.json")
        assert not re.search(hook["files"], "README.md")
    assert hooks["omniladder-catalog-check"]["entry"] == "omniladder catalog check"
    assert hooks["omniladder-check"]["entry"] == "omniladder check"
    assert hooks["omniladder-check"]["args"] == ["policy.toml"]


# --- docs/ci.md shows them as they are ------------------------------------------------------


def docs_yaml_blocks() -> list[Any]:
    """The YAML examples of docs/ci.md (the GitHub Action and pre-commit sections)."""
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", page, re.S)]


def test_the_documented_action_example_uses_the_real_inputs() -> None:
    (uses,) = [step for block in docs_yaml_blocks() if isinstance(block, dict)
               for step in block.get("steps", []) if "OWNER/omniladder@" in step.get("uses", "")]
    assert set(uses["with"]) == set(ACTION["inputs"]) - {"python"}
    for name, value in uses["with"].items():
        if name in ("policy", "config", "compare"):
            assert (ROOT / value).is_file(), value


def test_the_documented_pre_commit_example_names_the_real_hooks() -> None:
    (repo,) = [repo for block in docs_yaml_blocks() if isinstance(block, dict)
               for repo in block.get("repos", [])]
    assert [hook["id"] for hook in repo["hooks"]] == [hook["id"] for hook in HOOKS]
