"""Window scopes (SPEC §6): every window key docs/sources.md#omniroute names, scoped by the
shipped catalog; overlay precedence; the catalog's lint and listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.inputs.scopes import load_window_scopes

runner = CliRunner()

CLAUDE = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
CODEX = ("gpt-5.1", "gpt-5.1-codex", "gpt-5.3-codex-spark")
ANTIGRAVITY = ("claude-opus-4-6-thinking", "claude-sonnet-4-5", "gemini-3-pro-preview",
               "gpt-oss-120b")
COPILOT = ("claude-sonnet-4-5", "gpt-4.1", "gpt-5-mini", "gpt-4o-2024-11-20")


@pytest.mark.parametrize(
    ("provider", "models", "window", "kind", "limited"),
    [
        # OmniRoute's quota_snapshots.window_key, per docs/sources.md#omniroute
        ("claude", CLAUDE, "session (5h)", "all", None),
        ("claude", CLAUDE, "weekly (7d)", "all", None),
        ("claude", CLAUDE, "weekly opus (7d)", "models", ("claude-opus-4-1",)),
        ("claude", CLAUDE, "weekly sonnet (7d)", "models", ("claude-sonnet-4-5",)),
        ("claude", CLAUDE, "Weekly Opus (7d)", "models", ("claude-opus-4-1",)),
        ("codex", CODEX, "session", "models", ("gpt-5.1", "gpt-5.1-codex")),
        ("codex", CODEX, "weekly", "models", ("gpt-5.1", "gpt-5.1-codex")),
        ("codex", CODEX, "code_review", "ignore", None),
        ("codex", CODEX, "code_review_weekly", "ignore", None),
        ("codex", CODEX, "gpt_5_3_codex_spark_session", "models", ("gpt-5.3-codex-spark",)),
        ("codex", CODEX, "gpt_5_3_codex_spark_weekly", "models", ("gpt-5.3-codex-spark",)),
        ("codex", CODEX[:2], "gpt_5_3_codex_spark_weekly", "none", ()),
        ("antigravity", ANTIGRAVITY, "claude-opus-4-6-thinking", "models",
         ("claude-opus-4-6-thinking",)),
        ("antigravity", ANTIGRAVITY, "gemini-3-pro-preview", "models",
         ("gemini-3-pro-preview",)),
        ("antigravity", ANTIGRAVITY, "gemini-2.5-flash", "none", ()),
        ("antigravity", ANTIGRAVITY, "gemini_weekly", "models", ("gemini-3-pro-preview",)),
        ("antigravity", ANTIGRAVITY, "claude_gpt_weekly", "models",
         ("claude-opus-4-6-thinking", "claude-sonnet-4-5", "gpt-oss-120b")),
        ("antigravity", ANTIGRAVITY, "credits", "ignore", None),
        ("antigravity", ANTIGRAVITY, "some_new_family_weekly", "all", None),
        ("github", COPILOT, "premium_interactions", "models", ("claude-sonnet-4-5",)),
        ("github", COPILOT, "chat", "all", None),
        ("github", COPILOT, "completions", "ignore", None),
        ("kiro", ("claude-sonnet-4-5",), "agentic_request", "all", None),
        # Claude's OAuth usage endpoint keys
        ("claude", CLAUDE, "five_hour", "all", None),
        ("claude", CLAUDE, "seven_day", "all", None),
        ("claude", CLAUDE, "seven_day_opus", "models", ("claude-opus-4-1",)),
        ("claude", CLAUDE, "seven_day_sonnet", "models", ("claude-sonnet-4-5",)),
        ("claude", CLAUDE, "seven_day_oauth_apps", "all", None),
        # what no entry names limits every model
        ("claude", CLAUDE, "monthly", "all", None),
        ("nobody", ("m",), "anything", "all", None),
    ],
)
def test_shipped_scopes(provider: str, models: tuple[str, ...], window: str, kind: str,
                        limited: tuple[str, ...] | None) -> None:
    scope = load_window_scopes().scope(provider, window, models)
    assert (scope.kind, scope.models) == (kind, limited)
    assert (scope.matched is None) == (provider == "nobody" or window in (
        "monthly", "some_new_family_weekly"))


def test_an_unmatched_window_is_not_curated_but_kept() -> None:
    scope = load_window_scopes().scope("claude", "monthly", CLAUDE)
    assert scope.kept
    assert scope.matched is None


OVERLAY = """\
[[windows]]
provider = "claude"
window = "weekly opus (7d)"
models = ["*"]
reason = "This account's Opus window also holds back the other models."
source = "our own account manager"
reviewed = 2026-11-20

[[windows]]
provider = "claude"
window = "monthly"
ignore = true
reason = "A reporting window, no limit."
source = "our own gateway"
reviewed = 2026-11-20
"""


def test_an_overlay_is_tried_first_and_replaces_the_same_key(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text(OVERLAY, encoding="utf-8")
    scopes = load_window_scopes([overlay])
    opus = scopes.scope("claude", "weekly opus (7d)", CLAUDE)
    assert opus.kind == "all"
    assert opus.matched is not None
    assert opus.matched.file.endswith("windows.toml")
    assert scopes.scope("claude", "monthly", CLAUDE).kind == "ignore"
    assert scopes.scope("claude", "weekly sonnet (7d)", CLAUDE).models == ("claude-sonnet-4-5",)
    keys = [(s.entry.provider, s.entry.window) for s in scopes.entries]
    assert keys.count(("claude", "weekly opus (7d)")) == 1
    assert keys[:2] == [("claude", "weekly opus (7d)"), ("claude", "monthly")]


BAD = """\
[[windows]]
provider = "codex"
window = "*"
models = ["*"]
reason = "catches everything"
source = "x"
reviewed = 2026-11-20

[[windows]]
provider = "codex"
window = "code_review"
ignore = true
source = "x"
reviewed = 2026-11-20

[[windows]]
provider = "codex"
window = "code_review"
ignore = true
models = ["*"]
reason = "both at once"
source = "x"
reviewed = 2020-01-01

[[windows]]
provider = "codex"
window = "nothing"
reason = "neither models nor ignore"
source = "x"
reviewed = 2026-11-20
"""


def test_catalog_check_lints_window_scopes(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text(BAD, encoding="utf-8")
    result = runner.invoke(app, ["catalog", "check", "--today", "2026-11-30", "--json",
                                 "--no-shipped-catalogs", "--windows-catalog", str(overlay)])
    assert result.exit_code == 1, result.output
    problems = [(p["where"], p["key"], p["code"])
                for p in json.loads(result.stdout)["problems"]]
    assert problems == [
        ("windows[1].reason", "codex: code_review", "missing-reason"),
        ("windows[2]", "codex: code_review", "duplicate-key"),
        ("windows[2].reviewed", "codex: code_review", "review-stale"),
        ("windows[2]", "codex: code_review", "invalid-entry"),
        ("windows[3]", "codex: nothing", "invalid-entry"),
        ("windows[1]", "codex: code_review", "shadowed-entry"),
    ]
    invalid = [p["message"] for p in json.loads(result.stdout)["problems"]
               if p["code"] == "invalid-entry"]
    assert invalid == ["give models (and exclude_models) or ignore = true, not both",
                       'give models (name patterns such as "*opus*") or ignore = true']
    assert "earlier entry for window '*'" in result.stdout


def test_shipped_window_scopes_lint_clean() -> None:
    result = runner.invoke(app, ["catalog", "check", "--today", "2026-12-01", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert "<shipped>/quota-windows.toml" in document["files"]


def test_catalog_show_lists_window_scopes_in_the_order_they_are_tried(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text(OVERLAY, encoding="utf-8")
    result = runner.invoke(app, ["catalog", "show", "--json", "--windows-catalog", str(overlay)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["window_files"][0] == "<shipped>/quota-windows.toml"
    first = document["windows"][0]
    assert (first["provider"], first["window"], first["models"]) == (
        "claude", "weekly opus (7d)", ["*"])
    assert first["file"].endswith("windows.toml")
    codex = [w for w in document["windows"] if w["provider"] == "codex"]
    assert [w["window"] for w in codex] == ["code_review*", "*spark*", "codex_bengalfox_*",
                                            "session", "5h", "weekly"]
    assert codex[3]["exclude_models"] == ["*spark*"]
    table = runner.invoke(app, ["catalog", "show"], env={"COLUMNS": "160"})
    assert table.exit_code == 0, table.output
    assert "* except *spark*" in table.stdout
    assert "window scopes from 1 file(s)" in table.stdout
