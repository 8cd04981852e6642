"""Golden output for the shipped examples: the exact human view and the exact JSON.

The terminal is pinned by conftest (COLUMNS=120, NO_COLOR). To accept a deliberate change of
output, regenerate and review the diff:

    OMNILADDER_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import __version__
from omniladder.cli import app
from omniladder.engine.records import REASON_CODES
from tests.conftest import ROOT
from tests.golden_checks import CHECKS, check_golden
from tests.source_trees import parsed

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("OMNILADDER_UPDATE_GOLDEN") == "1"

PLANS: dict[str, tuple[str, str]] = {
    "thrifty": ("auto/thrifty", "examples/omniladder.toml"),
    "subscription": ("auto/subscription", "examples/omniladder.toml"),
    "coding-thrifty": ("auto/coding:thrifty", "examples/omniladder.toml"),
    "tight-thrifty": ("auto/thrifty", "examples/omniladder-tight.toml"),
}

runner = CliRunner()


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths in the output are shown relative to the working directory: make it the root."""
    monkeypatch.chdir(ROOT)


def run(name: str, *extra: str) -> tuple[str, str]:
    auto_id, config = PLANS[name]
    result = runner.invoke(app, ["plan", auto_id, "--config", config, *extra])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def compare(path: Path, actual: str) -> None:
    """``actual`` equals the golden file, and says what its checker (tests/golden_checks.py)
    requires, so that a golden file regenerated wrong fails."""
    check_golden(path.name, actual)
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"{path} is missing; run with OMNILADDER_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{path.name} differs; if the change is deliberate, regenerate with "
        "OMNILADDER_UPDATE_GOLDEN=1 and review the diff")


@pytest.mark.parametrize("name", list(PLANS))
def test_human_view(name: str) -> None:
    stdout, stderr = run(name)
    compare(GOLDEN / f"{name}.txt", stdout)
    document = json.loads(run(name, "--json")[0])
    assert stderr.splitlines() == [f"omniladder: warning: {w}" for w in document["warnings"]]


WIDTHS = (60, 80, 120)


@pytest.mark.parametrize("columns", WIDTHS)
def test_human_view_at_every_width(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connection ids, provider/model and reason codes are never cut: wrapped or stacked."""
    monkeypatch.setenv("COLUMNS", str(columns))
    stdout, _ = run("thrifty", "--detail")
    compare(GOLDEN / f"thrifty-detail-{columns}.txt", stdout)
    assert "…" not in stdout
    assert all(len(line) <= columns for line in stdout.splitlines()
               if not line.startswith(("now ", "inputs: ", "auto/")))
    document = json.loads(run("thrifty", "--json")[0])
    for x in document["excluded"]:
        for identifier in (x["connection_id"], x["reason"], x["model"] or "all models"):
            assert identifier in stdout
    for entry in document["pool"]:
        assert f"{entry['provider']}/{entry['model']}" in stdout


@pytest.mark.parametrize("name", list(PLANS))
def test_json_view(name: str) -> None:
    stdout, stderr = run(name, "--json")
    assert stderr == ""
    compare(GOLDEN / f"{name}.json", stdout)


def documents() -> dict[str, dict[str, Any]]:
    return {name: json.loads(run(name, "--json")[0]) for name in PLANS}


def test_the_examples_keep_showing_what_they_are_for() -> None:
    """The golden files pin today's output exactly; this pins what the examples exist to show,
    so a regenerated golden file cannot quietly lose it: every rung serving under thrifty, at
    least eight reason codes, hysteresis, a clamp, a spent and a disabled budget."""
    found = documents()
    document = found["thrifty"]
    assert [(r["rung"], r["state"]) for r in document["rungs"]] == [
        (rung, "serving") for rung in ("subscription", "keyless", "free", "cheap", "premium")]
    assert {entry["rung"] for entry in document["pool"]} == {
        "subscription", "keyless", "free", "cheap", "premium"}
    codes = {x["reason"] for d in found.values() for x in d["excluded"]}
    assert codes <= set(REASON_CODES)
    assert len(codes) >= 8, sorted(codes)
    reentry = [x for x in found["thrifty"]["excluded"] if x["reason"] == "quota-below-reentry"]
    assert [x["connection_id"] for x in reentry] == ["claude-pro-personal"]
    assert "re-entry floor 5%" in reentry[0]["detail"]
    clamps = found["thrifty"]["clamps"]
    assert clamps == [{"connection_id": "codex-plus",
                       "rate_limited_until": "2026-11-29T18:00:00Z",
                       "clamped_to": "2026-11-29T12:30:00Z", "cooling": True}]
    tight = {r["rung"]: r for r in found["tight-thrifty"]["rungs"]}
    assert tight["cheap"]["state"] == "budget-spent"
    assert tight["cheap"]["spent_usd"] >= tight["cheap"]["budget_usd"]
    assert tight["premium"]["state"] == "disabled"
    assert {x["rung"] for x in found["tight-thrifty"]["pool"]} <= {
        "subscription", "keyless", "free"}


WHO: dict[str, list[str]] = {
    "who-sonnet": ["claude/claude-sonnet-4-5"],
    "who-codex-coding": ["codex/gpt-5.1-codex", "auto/coding:subscription"],
}


@pytest.mark.parametrize("name", list(WHO))
def test_who_views(name: str) -> None:
    """`who`'s exact tree and JSON for the examples."""
    base = ["who", *WHO[name], "--config", "examples/omniladder.toml"]
    text = runner.invoke(app, base)
    assert text.exit_code == 0, text.output
    compare(GOLDEN / f"{name}.txt", text.stdout)
    document = runner.invoke(app, [*base, "--json"])
    assert document.exit_code == 0, document.output
    compare(GOLDEN / f"{name}.json", document.stdout)


def test_every_golden_file_belongs_to_a_plan() -> None:
    """A renamed or dropped plan must not leave a stale golden file behind."""
    expected = {f"{name}.{ext}" for name in PLANS for ext in ("txt", "json")}
    expected |= {f"thrifty-detail-{columns}.txt" for columns in WIDTHS}
    expected |= {"check-results.json", "plan-diffs.json", "audit-subscription.txt",
                 "audit-subscription.json", "audit-subscription.md"}
    expected |= {"thrifty.md", "check-failing.md", "diff-thrifty-tight.md"}
    expected |= {f"{name}.{ext}" for name in WHO for ext in ("txt", "json")}
    # tests/test_export.py: one export per target, the LiteLLM one with its report.
    expected |= {"export-litellm-thrifty.yaml", "export-litellm-thrifty.txt",
                 "export-omniroute-thrifty.json"}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_every_golden_file_has_a_checker() -> None:
    """A golden file is only trusted with assertions on its document, stated apart from its
    text: every file in tests/golden/ has a checker, and both comparison helpers run it."""
    import inspect

    from tests.test_export import golden

    assert set(CHECKS) == {p.name for p in GOLDEN.iterdir()}
    for helper in (compare, golden):
        assert "check_golden(" in inspect.getsource(helper), helper.__name__


MUTATIONS: list[tuple[str, list[str], str, str]] = [
    # (golden, command, what a wrong regeneration would hold, in place of what)
    ("thrifty.json", ["plan", "auto/thrifty", "--json"], '"claude-max-extra"',
     '"claude-pro-personal"'),
    ("thrifty.json", ["plan", "auto/thrifty", "--json"], '"position": 12', '"position": 13'),
    ("thrifty.txt", ["plan", "auto/thrifty"], "groq-key              all models        cheap ",
     "groq-key              all models        free  "),
    ("thrifty-detail-60.txt", ["plan", "auto/thrifty", "--detail"], "allowlist: openai-key",
     "allowlist: deepseek-key"),
    ("thrifty.md", ["plan", "auto/thrifty", "--format", "markdown"], "`quota-stale`",
     "`quota-unknown`"),
    ("subscription.json", ["plan", "auto/subscription", "--json"], '"billing-uncurated"',
     '"billing-not-subscription"'),
    ("who-sonnet.txt", ["who", "claude/claude-sonnet-4-5"], "claude-api (premium): in at #11",
     "claude-api (premium): in at #12"),
]


@pytest.mark.parametrize(("name", "command", "old", "new"), MUTATIONS,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MUTATIONS)])
def test_a_checker_fails_a_wrong_document(name: str, command: list[str], old: str, new: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A checker can fail: the real output passes it, the same with one fact changed does not."""
    if "detail-60" in name:
        monkeypatch.setenv("COLUMNS", "60")
    result = runner.invoke(app, [*command, "--config", "examples/omniladder.toml"])
    assert result.exit_code == 0, result.output
    assert old in result.stdout
    check_golden(name, result.stdout)
    with pytest.raises(AssertionError):
        check_golden(name, result.stdout.replace(old, new, 1))


def test_the_views_are_held_to_the_json_of_their_own_inputs() -> None:
    """The tight settings' plan is not the example plan: the thrifty checkers refuse it."""
    for name, extra in (("thrifty.json", ["--json"]), ("thrifty.txt", [])):
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                     "examples/omniladder-tight.toml", *extra])
        assert result.exit_code == 0, result.output
        with pytest.raises(AssertionError):
            check_golden(name, result.stdout)


def test_the_same_inputs_as_json_plan_the_same(tmp_path: Path) -> None:
    """SPEC §2: TOML and JSON carry the same shapes, chosen by extension."""
    import tomllib

    connections = tomllib.loads((ROOT / "examples" / "connections.toml").read_text("utf-8"))
    as_json = tmp_path / "connections.json"
    as_json.write_text(json.dumps(connections), encoding="utf-8")
    for name in PLANS:
        expected = run(name, "--json")[0]
        assert run(name, "--json", "--connections", str(as_json))[0] == expected



# --- check results and plan diffs: every field an operator reads, exactly ------------------

CHECK_POLICY = """
[[expect]]
name = "every kind of check, failing"
auto_id = "auto/thrifty"
max_pool = 3
head_rung = "free"
allowed_rungs = ["subscription", "keyless", "free"]
must_exclude = ["ollama-local", "claude-max-work"]
forbid_billing = ["keyless"]
expect_reason = { ollama-local = "inactive", claude-api = "cooldown", gemini-free = "inactive" }

[[expect]]
name = "an empty pool"
auto_id = "auto/multimodal:subscription"
head_rung = "subscription"
min_pool = 1

[[expect]]
name = "one-item lists failing, every other check passing"
auto_id = "auto/thrifty"
now = "2026-11-29T12:00:00Z"
min_pool = 12
max_pool = 12
head_rung = "subscription"
forbidden_rungs = ["keyless"]
must_include = ["ollama-local"]
must_exclude = ["gemini-free"]
forbid_billing = ["subscription"]
max_unverified = 5
expect_reason = { gemini-free = "quota-below-cutoff" }
"""


def _plain(value: Any) -> Any:
    """A dataclass tree as JSON-ready data, instants as text, timings left out."""
    import dataclasses
    from datetime import datetime

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name != "seconds"}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def test_check_results(tmp_path: Path) -> None:
    """Every check kind's expected, actual and evidence text, passing and failing."""
    from omniladder.analyses.check import evaluate, load_policy
    from omniladder.engine.autoid import parse_instant
    from omniladder.inputs.input_set import load_inputs

    inputs = load_inputs(ROOT / "examples" / "omniladder.toml")
    results = []
    for policy in (ROOT / "examples" / "policy-failing.toml", ROOT / "examples" / "policy.toml",
                   tmp_path / "policy.toml"):
        if policy.parent == tmp_path:
            policy.write_text(CHECK_POLICY, encoding="utf-8")
        loaded = load_policy(policy)
        result = evaluate(loaded, inputs, parse_instant("2026-11-29T12:00:00Z"), "snapshot")
        results.append({"policy": policy.name, "passed": result.passed,
                        "summary": result.summary, "warnings": list(result.warnings),
                        "expectations": _plain(result.expectations),
                        "failed": [r.name for r in result.failed]})
    compare(GOLDEN / "check-results.json", json.dumps(results, indent=2) + "\n")


DIFFS = [("thrifty", "subscription"), ("thrifty", "tight-thrifty"),
         ("coding-thrifty", "thrifty"), ("thrifty", "thrifty")]


def saved_plans(folder: Path) -> dict[str, Path]:
    """Each example plan saved with ``plan --out`` into ``folder``: the input of the tests of
    saved plans (a golden file is only ever compared with, never read as an input)."""
    saved = {}
    for name in PLANS:
        saved[name] = folder / f"{name}.json"
        run(name, "--out", str(saved[name]))
    return saved


def test_plan_diffs(tmp_path: Path) -> None:
    """Every difference the example plans have between them, field by field."""
    from omniladder.analyses.diff import diff_plans
    from omniladder.inputs.plan_document import load_saved_plan

    saved = saved_plans(tmp_path)
    found = []
    for old, new in DIFFS:
        result = diff_plans(load_saved_plan(saved[old]), load_saved_plan(saved[new]), old, new)
        found.append({"summary": result.summary, "counts": result.counts(),
                      "diff": _plain(result)})
    compare(GOLDEN / "plan-diffs.json", json.dumps(found, indent=2) + "\n")


@pytest.mark.parametrize(("extra", "golden"), [
    ([], "audit-subscription.txt"), (["--json"], "audit-subscription.json"),
    (["--format", "markdown"], "audit-subscription.md")], ids=["table", "json", "markdown"])
def test_the_example_gateway_audit(extra: list[str], golden: str) -> None:
    """`audit omniroute` on the example candidate list: exact view and exact document."""
    result = runner.invoke(app, ["audit", "omniroute", "examples/omniroute-candidates.json",
                                 "--config", "examples/omniladder.toml", *extra])
    assert result.exit_code == 1, result.output
    compare(GOLDEN / golden, result.stdout)


# --- markdown for pull requests (--format markdown) -----------------------------------------


def test_plan_markdown(tmp_path: Path) -> None:
    """The example plan as GitHub markdown, exactly; the same from ``show`` of it saved."""
    saved = tmp_path / "plan.json"
    stdout, _ = run("thrifty", "--format", "markdown", "--out", str(saved))
    compare(GOLDEN / "thrifty.md", stdout)
    assert "…" not in stdout
    shown = runner.invoke(app, ["show", str(saved), "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    fresh = stdout.splitlines()
    # a saved plan names its file and version, and does not record the candidate count
    assert shown.stdout.splitlines() == [
        fresh[0], fresh[1], f"saved plan `{saved}`, made by omniladder {__version__}  ",
        fresh[2].replace(" · 17 candidates", ""), *fresh[3:]]


def test_check_markdown() -> None:
    result = runner.invoke(app, ["check", "examples/policy-failing.toml", "--format",
                                 "markdown"])
    assert result.exit_code == 1, result.output
    compare(GOLDEN / "check-failing.md", result.stdout)


def test_diff_markdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved_plans(tmp_path)
    monkeypatch.chdir(tmp_path)  # the view names the files as given
    result = runner.invoke(app, ["diff", "thrifty.json", "tight-thrifty.json", "--format",
                                 "markdown"])
    assert result.exit_code == 1, result.output
    compare(GOLDEN / "diff-thrifty-tight.md", result.stdout)
    document = runner.invoke(app, ["diff", "thrifty.json", "tight-thrifty.json", "--json"])
    assert document.exit_code == 1, document.output
    parsed = json.loads(document.stdout)
    assert parsed["equal"] is False
    assert "cheap" in json.dumps(parsed)  # the tight budget closes the cheap rung


def test_no_golden_file_is_read_as_an_input() -> None:
    """A golden file is regenerated by OMNILADDER_UPDATE_GOLDEN; a test that read one as its
    input would then check the output against itself. Outside the comparison helpers
    (``compare`` here, ``golden`` in test_export.py) a path into tests/golden/ may only be
    the expected side of a ``compare`` call or the listing of the folder."""
    import ast

    found = []
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "golden/" not in text and "GOLDEN" not in text:
            continue  # neither a path into the folder nor its name: nothing to look at
        tree = parsed(text)
        allowed: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in (
                    "compare", "golden", "test_no_golden_file_is_read_as_an_input"):
                allowed |= {id(n) for n in ast.walk(node)}
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("compare", "golden") and node.args):
                allowed |= {id(n) for n in ast.walk(node.args[0])}
            if isinstance(node, ast.Attribute) and node.attr == "iterdir":
                allowed |= {id(n) for n in ast.walk(node.value)}
        for node in ast.walk(tree):
            golden_path = (isinstance(node, ast.Constant) and isinstance(node.value, str)
                           and "golden/" in node.value and "\n" not in node.value)
            golden_name = (isinstance(node, ast.Name) and node.id == "GOLDEN"
                           and isinstance(node.ctx, ast.Load))
            if (golden_path or golden_name) and id(node) not in allowed:
                found.append(f"{path.name}:{getattr(node, 'lineno', '?')}")
    assert found == [], f"golden files read as an input: {found}"
