"""Window anchors (SPEC §10.3): the window catalog says which windows start their cycle at
the first request after a reset and which keep the recorded resets; a window it does not name
is read as fixed, and a caller can tell it was not told."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.inputs.scopes import load_window_scopes, window_anchor
from tests.conftest import ROOT
from tests.errors import one_error

runner = CliRunner()


@pytest.mark.parametrize(("provider", "window", "anchor"), [
    # the five-hour windows, under every name a source writes
    ("claude", "five_hour", "first-use"),
    ("claude", "session (5h)", "first-use"),
    ("claude", "5h", "first-use"),
    ("codex", "session", "first-use"),
    ("codex", "5h", "first-use"),
    ("openai-codex", "session", "first-use"),
    # the weekly, daily and monthly ones
    ("claude", "seven_day", "fixed"),
    ("claude", "weekly (7d)", "fixed"),
    ("claude", "weekly", "fixed"),
    ("claude", "seven_day_opus", "fixed"),
    ("claude", "weekly_scoped claude-opus-4-1", "fixed"),
    ("codex", "weekly", "fixed"),
    ("openai-codex", "weekly", "fixed"),
    ("github", "premium_interactions", "fixed"),
    ("copilot", "chat", "fixed"),
    ("gemini", "gemini-2.5-pro", "fixed"),
    ("gemini-cli", "gemini-2.5-pro (REQUESTS)", "fixed"),
])
def test_SPEC10_3_the_shipped_catalog_names_each_windows_anchor(provider: str, window: str,
                                                                anchor: str) -> None:
    assert window_anchor(load_window_scopes(), provider, window) == (anchor, True)


@pytest.mark.parametrize(("provider", "window"), [
    ("claude", "monthly"),  # no entry matches
    ("nobody", "5h"),  # no entry for the provider
    ("claude", "seven_day_oauth_apps"),  # an entry without a duration or an anchor
    ("codex", "gpt_5_3_codex_spark_session"),  # same
])
def test_SPEC10_3_a_window_the_catalog_does_not_name_is_fixed_and_says_so(
        provider: str, window: str) -> None:
    assert window_anchor(load_window_scopes(), provider, window) == ("fixed", False)


def test_every_shipped_window_with_a_length_gives_its_anchor() -> None:
    """The catalog's header promises it: a length and no anchor would read as fixed."""
    catalog = tomllib.loads((ROOT / "catalogs" / "quota-windows.toml").read_text("utf-8"))
    timed = [entry for entry in catalog["windows"] if "duration" in entry]
    assert len(timed) == 37
    assert [entry["window"] for entry in timed if "anchor" not in entry] == []
    first_use = [(e["provider"], e["window"]) for e in timed if e["anchor"] == "first-use"]
    assert first_use == [("claude", "session (5h)"), ("claude", "five_hour"), ("claude", "5h"),
                         ("codex", "session"), ("codex", "5h"), ("openai-codex", "session")]
    assert all(e["duration"] == "5h" for e in timed if e["anchor"] == "first-use")
    assert all("support.anthropic.com" in e["source"] or "openai/codex" in e["source"]
               for e in timed if e["anchor"] == "first-use")


def test_an_overlay_anchor_is_read_before_the_shipped_one(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text('[[windows]]\nprovider = "claude"\nwindow = "weekly"\nmodels = ["*"]\n'
                       'anchor = "first-use"\n', encoding="utf-8")
    scopes = load_window_scopes([overlay])
    assert window_anchor(scopes, "claude", "weekly") == ("first-use", True)
    assert window_anchor(scopes, "claude", "seven_day") == ("fixed", True)


@pytest.mark.parametrize(("value", "message"), [
    ('"first_use"', "windows[0].anchor: must be one of 'first-use' or 'fixed', got "
                    "'first_use'; did you mean 'first-use'?"),
    ("true", "windows[0].anchor"),
])
def test_SPEC10_3_a_bad_anchor_is_exit_2_naming_the_file_and_field(
        tmp_path: Path, value: str, message: str) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text('[[windows]]\nprovider = "acme"\nwindow = "5h"\nmodels = ["*"]\n'
                       f'anchor = {value}\n', encoding="utf-8")
    result = runner.invoke(app, ["catalog", "show", "--windows-catalog", str(overlay)])
    one_error(result, "windows.toml:5: ", message)
