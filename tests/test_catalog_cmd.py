"""`omniladder catalog show|check`: the effective catalogs and their lint."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.catalog_check import lint_catalogs
from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()
TODAY = "2026-12-01"  # the day a user runs the check; shipped reviews are judged against RELEASED

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


def test_shipped_reviews_never_fail_a_users_check() -> None:
    """The shipped entries' ages are judged against the release date, and only reported:
    a user cannot edit them (tests/test_catalog_dates.py has the rest)."""
    result = _check("--today", "2027-06-06")
    assert result.exit_code == 0, result.output
    assert _codes(result) == []
    notes = json.loads(result.stdout)["notes"]
    assert [(n["file"], n["code"]) for n in notes] == [("<shipped>", "release-age")]


def test_max_age_days_is_the_bound() -> None:
    # the oldest shipped billing reviews are dated 2026-08-22: 101 days before TODAY
    assert _check("--no-shipped-catalogs").exit_code == 0
    billing_only = ("--catalog", str(Path(__file__).parent.parent / "catalogs" /
                                     "connection-billing.toml"), "--no-shipped-catalogs")
    assert _check(*billing_only, "--max-age-days", "101").exit_code == 0
    result = _check(*billing_only, "--max-age-days", "100")
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
                           date(2026, 12, 1))
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
    assert result.stdout.strip().splitlines()[-1].startswith("8 billing entries from 1 file")


# --- accepted findings: --baseline and --write-baseline ----------------------------------

FLEET = ("--config", str(EXAMPLES / "omniladder.toml"))
UNCURATED = {"claude/apikey", "openrouter/apikey", "gemini/apikey"}


def _text_check(*args: str) -> Any:
    return runner.invoke(app, ["catalog", "check", "--today", TODAY, *FLEET, *args])


def test_write_baseline_accepts_every_finding_then_gates_on_new_ones(tmp_path: Path) -> None:
    written = tmp_path / "accepted.toml"
    first = _text_check("--write-baseline", str(written))
    assert first.exit_code == 0, first.output
    assert f"wrote 3 accepted findings to {written}" in first.stderr
    import tomllib

    document = tomllib.loads(written.read_text(encoding="utf-8"))
    assert [(e["code"], e["key"]) for e in document["accepted"]] == [
        ("uncurated", "claude/apikey"), ("uncurated", "openrouter/apikey"),
        ("uncurated", "gemini/apikey")]
    assert "where" not in document["accepted"][0]  # a fleet finding has no field path
    assert "used by claude-api" in document["accepted"][0]["note"]
    assert written.read_text(encoding="utf-8").startswith("# Catalog findings accepted")
    again = _text_check("--baseline", str(written))
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines() == [
        "catalog check: ok, no new problems in 4 catalog file(s) and examples/connections.toml; "
        f"3 accepted by {written}"]
    assert again.stderr == ""
    as_json = _check(*FLEET, "--baseline", str(written))
    assert as_json.exit_code == 0, as_json.output
    doc = json.loads(as_json.stdout)
    assert (doc["ok"], doc["problems"], doc["stale"]) == (True, [], [])
    assert {p["key"] for p in doc["accepted"]} == UNCURATED
    assert doc["baseline"] == str(written)
    without = _check(*FLEET)  # without a baseline the document is as before
    assert "accepted" not in json.loads(without.stdout)
    assert without.exit_code == 1


def test_a_finding_the_baseline_does_not_list_fails(tmp_path: Path) -> None:
    baseline = _write(tmp_path, "b.toml", """
[[accepted]]
code = "uncurated"
key = "claude/apikey"
note = "the Sonnet key is metered on purpose"
""")
    result = _text_check("--baseline", str(baseline))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert [line.split(": ")[1] for line in lines[:-1]] == ["openrouter/apikey",
                                                            "gemini/apikey"]
    assert lines[-1] == ("catalog check: 2 new problem(s) in 4 catalog file(s) and "
                         f"examples/connections.toml; 1 accepted by {baseline}")
    assert result.stderr == (f"omniladder: exit 1: 2 new catalog problems found "
                             f"(1 accepted by {baseline})\n")
    doc = json.loads(_check(*FLEET, "--baseline", str(baseline)).stdout)
    assert doc["ok"] is False
    assert [p["key"] for p in doc["problems"]] == ["openrouter/apikey", "gemini/apikey"]
    assert [p["key"] for p in doc["accepted"]] == ["claude/apikey"]


def test_a_stale_entry_warns_and_does_not_fail(tmp_path: Path) -> None:
    written = tmp_path / "accepted.json"
    assert _text_check("--write-baseline", str(written)).exit_code == 0
    document = json.loads(written.read_text(encoding="utf-8"))
    document["accepted"].append({"code": "uncurated", "key": "acme/oauth"})
    written.write_text(json.dumps(document), encoding="utf-8")
    before = written.read_bytes()
    result = _text_check("--baseline", str(written))
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"omniladder: warning: {written}: accepted[3]: uncurated "
                             "acme/oauth matches no finding any more (stale); remove it from "
                             "the baseline\n")
    assert result.stdout.endswith("3 accepted by " + str(written) + ", 1 stale baseline entry\n")
    doc = json.loads(_check(*FLEET, "--baseline", str(written)).stdout)
    assert doc["stale"] == [{"index": 3, "code": "uncurated", "key": "acme/oauth"}]
    assert doc["ok"] is True
    assert written.read_bytes() == before  # an input file is never modified


def test_rewriting_a_baseline_keeps_notes_and_drops_stale_entries(tmp_path: Path) -> None:
    baseline = _write(tmp_path, "b.toml", """
[[accepted]]
code = "uncurated"
key = "gemini/apikey"
note = "free tier, reviewed by ops"

[[accepted]]
code = "uncurated"
key = "gone/apikey"
""")
    result = _text_check("--baseline", str(baseline), "--write-baseline", str(baseline))
    assert result.exit_code == 0, result.output
    import tomllib

    entries = tomllib.loads(baseline.read_text(encoding="utf-8"))["accepted"]
    assert [e["key"] for e in entries] == ["claude/apikey", "openrouter/apikey",
                                           "gemini/apikey"]
    assert entries[2]["note"] == "free tier, reviewed by ops"


def test_where_narrows_an_entry_to_one_field(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.toml", BAD_BILLING)
    args = ("--no-shipped-catalogs", "--catalog", str(bad))
    found = {(w, k, c) for w, k, c in _codes(_check(*args))}
    assert ("entries[0].reviewed", "acme/oauth", "review-stale") in found
    for where, accepted in (("entries[0].reviewed", True), ("entries[1].reviewed", False),
                            (None, True)):
        line = "" if where is None else f'where = "{where}"\n'
        baseline = _write(tmp_path, "b.toml", '[[accepted]]\ncode = "review-stale"\n'
                          f'key = "acme/oauth"\n{line}')
        doc = json.loads(_check(*args, "--baseline", str(baseline)).stdout)
        assert [(p["where"], p["code"]) for p in doc["accepted"]] == (
            [("entries[0].reviewed", "review-stale")] if accepted else []), where
        assert len(doc["problems"]) + len(doc["accepted"]) == len(found)
        assert doc["stale"] == ([] if accepted else [
            {"index": 0, "code": "review-stale", "key": "acme/oauth", "where": where}])


@pytest.mark.parametrize(("text", "name", "message"), [
    ('[[accepted]]\ncode = "uncurrated"\nkey = "a/b"\n', "b.toml",
     "b.toml:2: accepted[0].code: must be one of"),
    ('[[accepted]]\ncode = "uncurated"\nkye = "a/b"\n', "b.toml",
     "b.toml:3: accepted[0].kye: unknown key 'kye'; did you mean 'key'?"),
    ('[[accepted]]\ncode = "uncurated"\n', "b.toml", "accepted[0].key: required field"),
    ('{"accepted": 3}', "b.json", "b.json: accepted: must be an array"),
    ("accepted = [", "b.toml", "b.toml"),
    (None, "missing.toml", "missing.toml: file not found"),
])
def test_a_bad_baseline_is_exit_2(tmp_path: Path, text: str | None, name: str,
                                  message: str) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    result = _text_check("--baseline", str(path))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.output


def test_write_baseline_needs_a_toml_or_json_name(tmp_path: Path) -> None:
    result = _text_check("--write-baseline", str(tmp_path / "accepted.yaml"))
    assert result.exit_code == 2, result.output
    assert "--write-baseline" in result.stderr
    assert not (tmp_path / "accepted.yaml").exists()


def test_the_shipped_catalogs_are_found_as_a_wheel_installs_them(tmp_path: Path) -> None:
    """An installed wheel carries the catalogs inside the package (``omniladder/_catalogs``,
    pyproject's force-include), beside ``inputs/``, not beside the module that looks for
    them; a checkout keeps them at its top."""
    import shutil
    import subprocess
    import sys

    from tests.conftest import ROOT

    installed = tmp_path / "site"
    shutil.copytree(ROOT / "omniladder", installed / "omniladder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "catalogs", installed / "omniladder" / "_catalogs")
    probe = "from omniladder.inputs.catalogs import shipped_catalog_dir as d; print(d())"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(installed)}, check=False)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == (installed / "omniladder" / "_catalogs").resolve()
    from omniladder.inputs.catalogs import shipped_catalog_dir

    assert shipped_catalog_dir() == (ROOT / "catalogs").resolve()
