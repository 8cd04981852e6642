"""`omniladder catalog show|check`: the effective catalogs and their lint."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.catalog_lint import lint_catalogs
from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()
TODAY = "2026-11-30"  # the newest shipped review (github/oauth)

GOOD_BILLING = """
[[entries]]
provider = "openai"
billing = "metered"
overage = "meters-to-paid"
reason = "pay per token"
source = "price list"
reviewed = 2026-11-01
"""

BAD_BILLING = """
[[entries]]
provider = "acme"
auth_type = "oauth"
billing = "subscription"
overage = "hard-stop"
reviewed = 2025-01-01

[[entries]]
provider = "acme"
auth_type = "oauth"
billing = "subscription"
overage = "hard-stop"
reason = "again"
source = "s"
reviewed = 2026-11-01

[[entries]]
provider = "zeta"
billing = "free"
overage = "hard-stop"
reason = "r"
source = "s"
reviewed = 2027-01-01
"""

BAD_MODELS = """
[[models]]
provider = "acme"
model = "m1"
input_usd_per_mtok = -1.0
output_usd_per_mtok = -2.0
categories = ["coding", "poetry", "Vision"]
as_of = 2026-11-01
source = "s"

[[models]]
provider = "acme"
model = "m2"
input_usd_per_mtok = 0.5
output_usd_per_mtok = 1.0
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _check(*args: str) -> Any:
    return runner.invoke(app, ["catalog", "check", "--today", TODAY, "--json", *args])


def _codes(result: Any) -> list[tuple[str, str, str]]:
    document = json.loads(result.stdout)
    return [(p["where"], p["key"], p["code"]) for p in document["problems"]]


def test_shipped_catalogs_are_clean_today() -> None:
    result = runner.invoke(app, ["catalog", "check", "--today", TODAY])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("ok, no problems in 3 catalog file(s)")


def test_shipped_reviews_go_stale() -> None:
    result = _check("--today", "2027-06-01")
    assert result.exit_code == 1, result.output
    codes = _codes(result)
    assert ("entries[0].reviewed", "claude/oauth", "review-stale") in codes
    assert {code for _, _, code in codes} == {"review-stale"}


def test_max_age_days_is_the_bound() -> None:
    # the oldest shipped billing reviews are dated 2026-08-22: 100 days before TODAY
    assert _check("--no-shipped-catalogs").exit_code == 0
    billing_only = ("--catalog", str(Path(__file__).parent.parent / "catalogs" /
                                     "connection-billing.toml"), "--no-shipped-catalogs")
    assert _check(*billing_only, "--max-age-days", "100").exit_code == 0
    result = _check(*billing_only, "--max-age-days", "99")
    assert result.exit_code == 1, result.output
    assert all(code == "review-stale" for _, _, code in _codes(result))


def test_every_problem_of_every_entry_is_reported(tmp_path: Path) -> None:
    billing = _write(tmp_path, "billing.toml", BAD_BILLING)
    models = _write(tmp_path, "models.toml", BAD_MODELS)
    result = _check("--no-shipped-catalogs", "--catalog", str(billing),
                    "--models-catalog", str(models))
    assert result.exit_code == 1, result.output
    assert _codes(result) == [
        ("entries[0].reason", "acme/oauth", "missing-reason"),
        ("entries[0].source", "acme/oauth", "missing-source"),
        ("entries[0].reviewed", "acme/oauth", "review-stale"),
        ("entries[1]", "acme/oauth", "duplicate-key"),
        ("entries[2].reviewed", "zeta/*", "review-in-future"),
        ("entries[2].billing", "zeta/*", "invalid-entry"),
        ("models[0].input_usd_per_mtok", "acme/m1", "negative-price"),
        ("models[0].output_usd_per_mtok", "acme/m1", "negative-price"),
        ("models[0].categories[1]", "acme/m1", "unknown-category"),
        ("models[0].categories[2]", "acme/m1", "unknown-category"),
        ("models[1].source", "acme/m2", "missing-source"),
        ("models[1].as_of", "acme/m2", "missing-as-of"),
    ]
    messages = {p["where"]: p["message"] for p in json.loads(result.stdout)["problems"]}
    assert "'poetry'" in messages["models[0].categories[1]"]
    assert "-1.0" in messages["models[0].input_usd_per_mtok"]


def test_text_view_one_line_per_problem(tmp_path: Path) -> None:
    billing = _write(tmp_path, "billing.toml", BAD_BILLING)
    result = runner.invoke(app, ["catalog", "check", "--today", TODAY, "--no-shipped-catalogs",
                                 "--catalog", str(billing)])
    assert result.exit_code == 1, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0].endswith("entries[0].reason: acme/oauth: missing-reason: reason is "
                             "missing: every curated fact says why it holds")
    assert lines[-1] == "catalog check: 6 problem(s) in 1 catalog file(s)"


def test_strict_loader_refuses_what_the_linter_lists(tmp_path: Path) -> None:
    """The linter reports per entry where loading stops: show exits 2 on the same file."""
    models = _write(tmp_path, "models.toml", BAD_MODELS)
    result = runner.invoke(app, ["catalog", "show", "--models-catalog", str(models)])
    assert result.exit_code == 2, result.output
    assert "models[0].input_usd_per_mtok" in result.output


def test_wrong_kind_of_file_is_a_problem(tmp_path: Path) -> None:
    models = _write(tmp_path, "models.toml", BAD_MODELS)
    result = _check("--no-shipped-catalogs", "--catalog", str(models))
    assert result.exit_code == 1, result.output
    assert _codes(result) == [("models", "", "unknown-key")]


def test_unparseable_catalog_is_exit_2(tmp_path: Path) -> None:
    broken = _write(tmp_path, "broken.toml", "[[entries]\n")
    result = _check("--catalog", str(broken))
    assert result.exit_code == 2, result.output
    assert "invalid TOML" in result.output


def test_uncurated_providers_in_use_are_listed() -> None:
    """R1.4: uncurated providers are treated as metered; the check names them."""
    result = _check("--config", str(EXAMPLES / "omniladder.toml"))
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["connections"].endswith("connections.toml")
    uncurated = {p["key"]: p["message"] for p in document["problems"]
                 if p["code"] == "uncurated"}
    assert set(uncurated) == {"claude/apikey", "openrouter/apikey", "gemini/apikey"}
    assert "treated as metered" in uncurated["claude/apikey"]
    assert "claude-api" in uncurated["claude/apikey"]
    # the overlay from the settings file was linted, and curates openai provider-wide
    assert any(f.endswith("billing-overlay.toml") for f in document["files"])


def test_a_curating_overlay_clears_the_finding(tmp_path: Path) -> None:
    connections = _write(tmp_path, "connections.toml", """
[[connections]]
id = "k"
provider = "openai"
auth_type = "apikey"
models = ["gpt-5-mini", "gpt-9"]
""")
    before = _check("--connections", str(connections))
    assert [(k, c) for _, k, c in _codes(before)] == [
        ("openai/apikey", "uncurated"), ("openai/gpt-9", "model-not-in-catalog")]
    overlay = _write(tmp_path, "overlay.toml", GOOD_BILLING)
    after = _check("--connections", str(connections), "--catalog", str(overlay))
    assert [(k, c) for _, k, c in _codes(after)] == [("openai/gpt-9", "model-not-in-catalog")]


@pytest.mark.parametrize(("flag", "message"), [
    ("--today", "omniladder: error: --today: not a date: 'soon' (expected e.g. 2026-11-29)"),
    ("--max-age-days", "Invalid value for '--max-age-days': 'soon' is not a valid int"),
])
def test_bad_flag_values_are_exit_2(flag: str, message: str) -> None:
    result = runner.invoke(app, ["catalog", "check", flag, "soon"])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


def test_later_files_override_in_the_effective_catalog(tmp_path: Path) -> None:
    overlay = _write(tmp_path, "o.toml", GOOD_BILLING.replace('provider = "openai"',
                                                               'provider = "claude"\n'
                                                               'auth_type = "oauth"'))
    shipped = Path(__file__).parent.parent / "catalogs" / "connection-billing.toml"
    result = lint_catalogs([(shipped, "shipped"), (overlay, "overlay")], [],
                           date(2026, 11, 30))
    assert result.problems == ()
    assert result.catalogs.billing[("claude", "oauth")].file == "overlay"
    assert result.catalogs.billing[("claude", "oauth")].entry.billing == "metered"


# --- show ----------------------------------------------------------------------------------


def test_show_json_lists_entries_with_their_file() -> None:
    result = runner.invoke(app, ["catalog", "show", "--config", str(EXAMPLES / "omniladder.toml"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    files = {(e["provider"], e["auth_type"]): e["file"] for e in document["billing"]}
    assert files[("claude", "oauth")] == "<shipped>/connection-billing.toml"
    assert files[("openai", None)].endswith("billing-overlay.toml")
    models = {(m["provider"], m["model"]): m for m in document["models"]}
    assert models[("gemini", "gemini-2.5-pro")]["effective_tier"] == "free"  # R3 free provider
    assert models[("openai", "gpt-5-mini")]["effective_tier"] == "cheap"


def test_show_table() -> None:
    result = runner.invoke(app, ["catalog", "show"])
    assert result.exit_code == 0, result.output
    assert "Billing catalog (R1)" in result.stdout
    assert "devin-desktop" in result.stdout
    assert "<shipped>/connection-billing.toml" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("7 billing entries from 1 file")
