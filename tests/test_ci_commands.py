"""The CI commands end to end: `check` (table, JSON, JUnit, exit codes), `plan --out` and
`--compare`, and `diff`; plus the shipped CI examples."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from omniladder import __version__
from omniladder.cli import app
from omniladder.rendering import Format, check_view, diff_view
from tests.conftest import EXAMPLES, ROOT
from tests.errors import one_error

runner = CliRunner()
POLICY = EXAMPLES / "policy.toml"
FAILING = EXAMPLES / "policy-failing.toml"
CONFIG = EXAMPLES / "omniladder.toml"
TIGHT = EXAMPLES / "omniladder-tight.toml"
SAVED = EXAMPLES / "ci" / "plan-thrifty.json"


# --- check ---------------------------------------------------------------------------------


def test_the_example_policy_passes() -> None:
    result = runner.invoke(app, ["check", str(POLICY)])
    assert result.exit_code == 0, result.output
    assert "check: 4 of 4 expectations passed" in result.stdout
    assert "FAIL" not in result.stdout


def test_the_failing_example_fails_with_evidence() -> None:
    result = runner.invoke(app, ["check", str(FAILING)])
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "check: 1 of 5 expectations passed, 4 failed: auto/thrifty never bills per token" in out
    assert "✗ FAIL every plan connection is verified" in out
    assert ("    - antigravity-main is admitted unverified: quota-stale: reading at 11:50Z is "
            "10m old (max 3m)") in out
    assert ("    - claude-pro-personal is not in the pool: quota-below-reentry: 5h window at 1.5% "
            "(re-entry floor 5%, out since 10:30Z), resets 14:30Z; held from the reading at "
            "10:30Z (the one at 11:58:30Z shows 4%): no regain before a reset") in out
    assert "✓ pass auto/subscription never bills" in out


def test_check_json_document() -> None:
    result = runner.invoke(app, ["check", str(FAILING), "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["passed"] is False
    assert [e["passed"] for e in doc["expectations"]] == [False, False, False, False, True]
    verified = doc["expectations"][1]
    assert verified["now"] == "2026-11-29T12:00:00Z"
    assert verified["now_source"] == "snapshot"
    (check,) = verified["checks"]
    assert check["check"] == "max_unverified"
    assert check["actual"] == "3 unverified"
    assert len(check["evidence"]) == 3


def _junit(tmp_path: Path, policy: Path, code: int) -> ET.Element:
    report = tmp_path / "reports" / "junit.xml"
    report.parent.mkdir()
    result = runner.invoke(app, ["check", str(policy), "--junit", str(report)])
    assert result.exit_code == code, result.output
    assert [p.name for p in report.parent.iterdir()] == ["junit.xml"]  # no temp file left
    return ET.parse(report).getroot()


def test_junit_one_testcase_per_expectation_with_evidence(tmp_path: Path) -> None:
    root = _junit(tmp_path, FAILING, 1)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "4", "0")
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [
        "auto/thrifty never bills per token", "every plan connection is verified",
        "the personal Pro plan is serving", "the keyless backend leads coding work",
        "auto/subscription never bills"]
    assert cases[0].get("classname") == "auto/thrifty"
    failures = [c.find("failure") for c in cases]
    assert failures[4] is None
    first = failures[0]
    assert first is not None
    assert first.get("message") == "2 of 2 checks failed: forbidden_rungs, forbid_billing"
    assert first.text is not None
    assert "openai-key bills as metered" in first.text
    assert "#11 premium claude/claude-sonnet-4-5 [claude-api] is on forbidden rung" in first.text
    pro = failures[2]
    assert pro is not None
    assert pro.text is not None
    assert "openai-key: expected budget-spent, excluded with billing-not-subscription" in pro.text
    out = cases[4].find("system-out")
    assert out is not None
    assert out.text is not None
    assert "pass allowed_rungs: expected only subscription" in out.text


def test_junit_of_a_passing_policy(tmp_path: Path) -> None:
    root = _junit(tmp_path, POLICY, 0)
    assert root.get("failures") == "0"
    assert len(root.findall(".//testcase")) == 4
    assert root.findall(".//failure") == []


def test_junit_is_well_formed_whatever_the_names(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'config = "{CONFIG.as_posix()}"\n[[expect]]\nname = "<&> \\u0001 \\"quoted\\""\n'
        'auto_id = "auto/thrifty"\nmax_pool = 0\n', encoding="utf-8")
    root = _junit(tmp_path, policy, 1)
    (case,) = root.findall(".//testcase")
    assert case.get("name") == '<&> \ufffd "quoted"'


@pytest.mark.parametrize(("text", "message"), [
    ('[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\nmin_pol = 1\n',
     "policy.toml:4: expect[0].min_pol: unknown key 'min_pol'"),
    ('[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\nmust_exclude = ["openai"]\n',
     "policy.toml:4: expect[0].must_exclude[0]: unknown connection id 'openai': it is not in "),
    ('[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\n'
     'expect_reason = { openai-key = "too-expensive" }\n',
     "expect[0].expect_reason.openai-key: unknown reason code 'too-expensive'"),
], ids=["unknown-key", "unknown-connection", "unknown-reason"])
def test_an_invalid_policy_exits_2_and_writes_no_report(tmp_path: Path, text: str,
                                                        message: str) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f'config = "{CONFIG.as_posix()}"\n' + text, encoding="utf-8")
    report = tmp_path / "junit.xml"
    result = runner.invoke(app, ["check", str(policy), "--junit", str(report)])
    one_error(result, message.replace("policy.toml:4", "policy.toml:5"))
    assert not report.exists()


def test_missing_policy_and_missing_settings_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2, result.output
    assert "nope.toml: file not found" in result.output
    policy = tmp_path / "policy.toml"
    policy.write_text('config = "gone.toml"\n[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\n'
                      "min_pool = 1\n", encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy)])
    assert result.exit_code == 2, result.output
    assert "gone.toml: file not found" in result.output


def _small_policy(tmp_path: Path, body: str, config: str | None = None) -> Path:
    policy = tmp_path / "policy.toml"
    head = f'config = "{config}"\n' if config else ""
    policy.write_text(head + '[[expect]]\nname = "a"\nauto_id = "auto/thrifty"\n' + body,
                      encoding="utf-8")
    return policy


def test_the_policy_config_is_relative_to_the_policy_and_config_overrides_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the tight settings the paid rungs are out (R8): 8 pool entries, not 12."""
    fleet = tmp_path / "fleet"
    shutil.copytree(EXAMPLES, fleet)
    (fleet / "policies").mkdir()
    policy = _small_policy(fleet / "policies", "max_pool = 8\n", "../omniladder.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    fails = runner.invoke(app, ["check", str(policy)])
    assert fails.exit_code == 1, fails.output
    assert "12 pool entries" in fails.stdout
    passes = runner.invoke(app, ["check", str(policy), "--config",
                                 str(fleet / "omniladder-tight.toml")])
    assert passes.exit_code == 0, passes.output


def test_an_expectation_now_wins_over_the_now_flag_R14(tmp_path: Path) -> None:
    """codex-plus cools down until 12:30Z (clamped, R9)."""
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'config = "{CONFIG.as_posix()}"\n'
        '[[expect]]\nname = "own"\nauto_id = "auto/thrifty"\nnow = "2026-11-29T12:31:00Z"\n'
        'must_include = ["codex-plus"]\n'
        '[[expect]]\nname = "flag"\nauto_id = "auto/thrifty"\nmust_include = ["codex-plus"]\n',
        encoding="utf-8")
    at_snapshot = runner.invoke(app, ["check", str(policy), "--json"])
    assert at_snapshot.exit_code == 1, at_snapshot.output
    doc = json.loads(at_snapshot.stdout)
    assert [(e["name"], e["passed"], e["now_source"]) for e in doc["expectations"]] == [
        ("own", True, "policy"), ("flag", False, "snapshot")]
    later = runner.invoke(app, ["check", str(policy), "--json", "--now", "2026-11-29T12:40:00Z"])
    assert later.exit_code == 0, later.output
    assert [e["now_source"] for e in json.loads(later.stdout)["expectations"]] == [
        "policy", "flag"]
    bad = runner.invoke(app, ["check", str(policy), "--now", "noon"])
    assert bad.exit_code == 2, bad.output


# --- plan --out / --compare, diff ----------------------------------------------------------


def test_plan_out_writes_the_json_document(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "plan.json"
    shown = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--json"])
    saved = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--out",
                                str(out)])
    assert saved.exit_code == 0, saved.output
    assert "Pool, in dispatch order" in saved.stdout  # the normal view still prints
    document = json.loads(out.read_text(encoding="utf-8"))
    stamp = {key: document.pop(key) for key in ("omniladder_version", "inputs")}
    assert document == json.loads(shown.stdout)  # the --json document plus the stamp
    assert "omniladder_version" not in shown.stdout  # stdout --json is as it was
    assert stamp["omniladder_version"] == __version__
    assert [(i["role"], i["path"]) for i in stamp["inputs"]] == [
        ("settings", "examples/omniladder.toml"), ("connections", "examples/connections.toml"),
        ("quota", "examples/quota.json"), ("spend", "examples/spend.json"),
        ("billing-catalog", "<shipped>/connection-billing.toml"),
        ("billing-catalog", "examples/billing-overlay.toml"),
        ("models-catalog", "<shipped>/models.toml")]
    for item in stamp["inputs"]:
        real = ROOT / "catalogs" / item["path"].removeprefix("<shipped>/") \
            if item["path"].startswith("<shipped>/") else ROOT / item["path"]
        assert item["sha256"] == hashlib.sha256(real.read_bytes()).hexdigest(), item
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]
    assert out.stat().st_mode & 0o044  # readable by others, like any file the user makes


def test_plan_out_replaces_an_existing_file_and_fails_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    out.write_text("old", encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(CONFIG),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8"))["auto_id"] == "auto/subscription"
    missing = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--out",
                                  str(tmp_path / "no-such-dir" / "plan.json")])
    assert missing.exit_code == 2, missing.output
    assert "no-such-dir/plan.json: --out: the directory " in missing.output
    assert "no-such-dir does not exist" in missing.output


def test_plan_compare_against_the_committed_saved_plan() -> None:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--compare",
                                 str(SAVED)])
    assert result.exit_code == 0, result.output
    assert "no differences" in result.stdout


def test_plan_compare_exits_1_when_the_routing_changed() -> None:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(TIGHT), "--compare",
                                 str(SAVED)])
    assert result.exit_code == 1, result.output
    assert "  - #11 premium claude/claude-sonnet-4-5 [claude-api]" in result.stdout
    assert "  ~ cheap: serving → budget-spent — cheap budget spent: $3.20 of $3.00" in result.stdout
    assert "  + deepseek-key (all models): budget-spent" in result.stdout
    as_json = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(TIGHT), "--compare",
                                  str(SAVED), "--json"])
    assert as_json.exit_code == 1, as_json.output
    doc = json.loads(as_json.stdout)
    assert doc["equal"] is False
    assert doc["counts"]["pool_removed"] == 4
    assert doc["new"]["label"] == "current plan"


def test_plan_compare_with_out_to_the_same_file_compares_then_replaces(
        tmp_path: Path) -> None:
    """--compare F --out F is the update workflow, as export's --current F --out F: the first
    run compares with the old plan (exit 1, it differs) and replaces it; the second finds no
    difference."""
    saved = tmp_path / "plan.json"
    saved.write_text(SAVED.read_text(encoding="utf-8"), encoding="utf-8")
    before = saved.read_bytes()
    args = ["plan", "auto/thrifty", "--config", str(TIGHT), "--compare", str(saved), "--out",
            str(saved)]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    assert saved.read_bytes() != before
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output


def test_plan_compare_refuses_another_format_version(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    saved.write_text('{"format_version": "2"}', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG), "--compare",
                                 str(saved)])
    assert result.exit_code == 2, result.output
    assert "plan format_version '2' is not supported" in result.output


def _save(tmp_path: Path, name: str, config: Path, *extra: str) -> Path:
    out = tmp_path / name
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(config), "--out",
                                 str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


def test_diff_exit_codes_and_views(tmp_path: Path) -> None:
    old = _save(tmp_path, "old.json", CONFIG)
    same = runner.invoke(app, ["diff", str(old), str(SAVED)])
    assert same.exit_code == 0, same.output
    assert same.stdout.rstrip().endswith("no differences: the two plans route the same way")

    later = _save(tmp_path, "later.json", CONFIG, "--now", "2026-11-29T12:31:00Z")
    changed = runner.invoke(app, ["diff", str(old), str(later)])
    assert changed.exit_code == 1, changed.output
    out = changed.stdout
    assert "  + #3 subscription codex/gpt-5.1 [codex-plus (unverified)]" in out
    assert "  ~ #2 subscription codex/gpt-5.1-codex allowlist: +codex-plus (unverified)" in out
    assert "  - codex-plus (all models): no longer excluded (was cooldown)" in out
    assert "allowlist: ollama-local now unverified" in out
    # claude-pro-personal stays held at its 1.5% 5h window until 14:30 (R6.4).
    assert "claude-pro-personal" not in out
    assert out.rstrip().endswith(
        "7 differences: 1 pool entry added, 5 allowlists changed, 1 exclusion cleared")

    as_json = runner.invoke(app, ["diff", str(old), str(later), "--json"])
    assert as_json.exit_code == 1, as_json.output
    doc = json.loads(as_json.stdout)
    assert [e["model"] for e in doc["pool"]["added"]] == ["gpt-5.1"]
    assert doc["excluded"]["removed"][0] == {
        "connection_id": "codex-plus", "model": None, "rung": "subscription",
        "reason": "cooldown",
        "detail": "rate limited until 12:30Z (clamped from 18:00Z to its own quota reset)"}


def test_diff_unreadable_input_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"format_version": "1", "pool": [}', encoding="utf-8")
    result = runner.invoke(app, ["diff", str(SAVED), str(broken)])
    assert result.exit_code == 2, result.output
    assert "broken.json:1: invalid JSON" in result.output
    result = runner.invoke(app, ["diff", str(tmp_path / "none.json"), str(SAVED)])
    assert result.exit_code == 2, result.output
    assert "none.json: file not found" in result.output


def test_every_format_has_a_renderer() -> None:
    assert set(check_view.RENDERERS) == set(Format)
    assert set(diff_view.RENDERERS) == set(Format)


# --- the shipped CI example, the README and docs/ci.md -------------------------------------


def test_the_workflow_names_files_that_exist_and_runs_both_gates() -> None:
    workflow = (EXAMPLES / "ci" / "omniladder.yml").read_text(encoding="utf-8")
    env = dict(re.findall(r"^  ([A-Z_]+): (\S+)", workflow, flags=re.MULTILINE))
    for key in ("POLICY", "CONFIG", "SAVED_PLAN"):
        assert (ROOT / env[key]).is_file(), key
    assert env["AUTO_ID"] == "auto/thrifty"
    assert 'omniladder check "$POLICY" --junit' in workflow
    assert '--compare "$SAVED_PLAN"' in workflow
    assert "pip install" in workflow


def test_the_workflow_commands_pass_on_the_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    check = runner.invoke(app, ["check", "examples/policy.toml"])
    assert check.exit_code == 0, check.output
    compare = runner.invoke(app, ["plan", "auto/thrifty", "--config", "examples/omniladder.toml",
                                  "--compare", "examples/ci/plan-thrifty.json"])
    assert compare.exit_code == 0, compare.output


def test_the_documented_policy_passes_on_the_examples(tmp_path: Path) -> None:
    """The first policy docs/ci.md#check shows passes on the examples."""
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = page.split("## `omniladder check POLICY`", 1)[1]
    snippet = section.split("```toml\n", 1)[1].split("```", 1)[0]
    policy = tmp_path / "policy.toml"
    policy.write_text(snippet, encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy), "--config", str(CONFIG)])
    assert result.exit_code == 0, result.output


def test_the_readme_lists_the_plan_flags_for_ci() -> None:
    """The commands and their help are test_meta's; the flags CI uses are checked here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`--out FILE`" in readme
    assert "`--compare FILE`" in readme
