"""`omniladder import claude-usage | codex-sessions | copilot-user | gemini-quota`, end to end.

Fixtures under tests/fixtures/sources carry secret canaries; none may reach stdout, stderr or
the quota file, and no input file may change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "sources"
AT = "2026-11-29T12:00:00Z"
runner = CliRunner()

CONNECTIONS = """\
[[connections]]
id = "claude-max"
provider = "claude"
auth_type = "oauth"
models = ["claude-sonnet-4-5", "claude-opus-4-1"]

[[connections]]
id = "codex-pro"
provider = "codex"
auth_type = "oauth"

[[connections]]
id = "copilot-seat"
provider = "github"
auth_type = "oauth"
models = ["gpt-4.1", "claude-sonnet-4-5"]

[[connections]]
id = "gemini-cli"
provider = "gemini"
auth_type = "oauth"
models = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"]
"""

SOURCES: list[tuple[str, str, str]] = [
    ("claude-usage", "claude/usage.json", "claude-max"),
    ("claude-usage", "claude/usage-extra-enabled.json", "claude-max"),
    ("codex-sessions", "codex", "codex-pro"),
    ("copilot-user", "copilot/user.json", "copilot-seat"),
    ("copilot-user", "copilot/user-free.json", "copilot-seat"),
    ("gemini-quota", "gemini/quota.json", "gemini-cli"),
]


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, source: str, *args: str, quota: str = "quota.json",
            at: str | None = AT, stdin: bytes | None = None) -> Any:
    extra = ["--at", at] if at is not None and source != "codex-sessions" else []
    return runner.invoke(app, ["import", source, *args, "--quota", str(fleet / quota),
                               "--connections", str(fleet / "connections.toml"), *extra],
                         input=stdin)


def _quota(fleet: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((fleet / "quota.json").read_text(encoding="utf-8"))
    return data


def _digests() -> dict[str, str]:
    return {str(p.relative_to(FIXTURES)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(FIXTURES.rglob("*")) if p.is_file()}


def _canaries() -> set[str]:
    found: set[str] = set()
    for path in FIXTURES.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            text = path.read_text(encoding="utf-8")
            found |= {word.strip('",') for word in text.replace("=", " ").split()
                      if "CANARY-" in word}
    return {c[c.index("CANARY-"):] for c in found}


def _listed_beside(path: Path) -> bool:
    """A capture published by others is kept field for field: no key may be added to it, so
    the README beside it names it and says where it was published."""
    readme = path.parent / "README.md"
    return readme.is_file() and f"`{path.name}`" in readme.read_text(encoding="utf-8")


def test_every_source_fixture_carries_a_canary_and_says_where_its_shape_comes_from() -> None:
    for path in FIXTURES.rglob("*.json"):
        if _listed_beside(path):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        assert "_fixture_source" in data, path
        assert "CANARY-" in path.read_text(encoding="utf-8"), path
    assert (FIXTURES / "codex" / "README.md").is_file()
    assert any("CANARY-" in p.read_text() for p in FIXTURES.rglob("*.jsonl"))


@pytest.mark.parametrize(("source", "fixture", "connection"), SOURCES)
def test_no_secret_reaches_any_output_and_inputs_stay_byte_identical(
        fleet: Path, source: str, fixture: str, connection: str) -> None:
    canaries = _canaries()
    assert len(canaries) >= 6
    before = _digests()
    result = _import(fleet, source, str(FIXTURES / fixture), "--connection", connection)
    assert result.exit_code == 0, result.output
    written = (fleet / "quota.json").read_text(encoding="utf-8")
    for canary in canaries:
        assert canary not in result.stdout
        assert canary not in result.stderr
        assert canary not in written
    assert "CANARY" not in written + result.output
    assert _digests() == before
    assert result.stdout.strip() == str(fleet / "quota.json")


@pytest.mark.parametrize(("source", "fixture", "connection"), SOURCES)
def test_reimport_leaves_the_quota_file_byte_identical(
        fleet: Path, source: str, fixture: str, connection: str) -> None:
    args = (str(FIXTURES / fixture), "--connection", connection)
    assert _import(fleet, source, *args).exit_code == 0
    first = (fleet / "quota.json").read_bytes()
    again = _import(fleet, source, *args)
    assert again.exit_code == 0, again.output
    assert "0 readings added" in again.stderr
    assert "skipped as identical" in again.stderr
    assert (fleet / "quota.json").read_bytes() == first


def test_summary_line_and_scope_notes_on_stderr(fleet: Path) -> None:
    result = _import(fleet, "gemini-quota", str(FIXTURES / "gemini/quota.json"),
                     "--connection", "gemini-cli")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("omniladder: gemini-quota: 1 reading added, 0 skipped as "
                               "identical, for connection 'gemini-cli'")
    assert "(created)" in lines[0]
    assert any("no value reported" in line and "'gemini-2.5-flash'" in line for line in lines)
    assert any("limit none of the connection's models" in line and "'gemini-2.0-flash'" in line
               for line in lines)


def test_gemini_buckets_are_scoped_to_their_model(fleet: Path) -> None:
    assert _import(fleet, "gemini-quota", str(FIXTURES / "gemini/quota.json"),
                   "--connection", "gemini-cli").exit_code == 0
    windows = {w["name"]: w for w in _quota(fleet)["readings"][0]["windows"]}
    assert windows["gemini-2.5-pro"] == {"name": "gemini-2.5-pro", "remaining_percent": 25,
                                         "reset_at": "2026-11-30T00:00:00Z",
                                         "models": ["gemini-2.5-pro"]}
    assert windows["gemini-2.5-flash-lite (TOKENS)"]["models"] == ["gemini-2.5-flash-lite"]
    assert "gemini-2.5-flash" not in windows  # no remainingFraction: no value, not 0


def test_copilot_unlimited_chat_and_ignored_completions(fleet: Path) -> None:
    assert _import(fleet, "copilot-user", str(FIXTURES / "copilot/user.json"),
                   "--connection", "copilot-seat").exit_code == 0
    reading = _quota(fleet)["readings"][0]
    windows = {w["name"]: w for w in reading["windows"]}
    assert windows["chat"] == {"name": "chat", "unlimited": True,
                               "reset_at": "2026-12-01T00:00:00Z"}
    assert "completions" not in windows
    # premium requests: the included model gpt-4.1 draws none
    assert windows["premium_interactions"]["models"] == ["claude-sonnet-4-5"]
    assert reading["overage"] == "hard-stop"


def test_codex_credits_give_an_observed_meters_to_paid_reading(fleet: Path) -> None:
    """Codex credits.has_credits → observed meters-to-paid; R2a then keeps the connection out
    of auto/subscription, whatever the reading's age."""
    result = _import(fleet, "codex-sessions", str(FIXTURES / "codex"), "--connection",
                     "codex-pro")
    assert result.exit_code == 0, result.output
    data = _quota(fleet)
    latest = max(data["readings"], key=lambda r: r["checked_at"])
    assert latest["checked_at"] == "2026-11-29T10:20:00Z"
    assert latest["overage"] == "meters-to-paid"
    assert data["taken_at"] == "2026-11-29T10:20:00Z"
    # a connection without `models` gets the model catalog's models for its provider
    assert latest["windows"][0]["models"] == ["gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.1"]
    plan = _plan(fleet, "auto/subscription", "2026-11-30T10:20:00Z")
    (record,) = [c for c in plan["connections"] if c["id"] == "codex-pro"]
    assert (record["overage"], record["overage_source"]) == ("meters-to-paid", "observed")
    reasons = {e["reason"] for e in plan["excluded"] if e["connection_id"] == "codex-pro"}
    assert reasons == {"overage-not-hard-stop"}


def test_claude_extra_usage_enabled_meters_to_paid_and_disabled_is_the_catalogs_word(
        fleet: Path) -> None:
    """R2a: extra_usage.is_enabled true narrows Claude to meters-to-paid; false agrees with
    the catalog's hard-stop, which stays the source."""
    assert _import(fleet, "claude-usage", str(FIXTURES / "claude/usage-extra-enabled.json"),
                   "--connection", "claude-max", at="2026-11-29T12:00:00Z").exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2026-11-29T12:01:00Z")
    (record,) = [c for c in plan["connections"] if c["id"] == "claude-max"]
    assert (record["overage"], record["overage_source"]) == ("meters-to-paid", "observed")
    assert not any("claude-max" in e["allowed_connection_ids"] for e in plan["pool"])
    assert _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                   "--connection", "claude-max", at="2026-11-29T12:05:00Z").exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2026-11-29T12:06:00Z")
    (record,) = [c for c in plan["connections"] if c["id"] == "claude-max"]
    assert (record["overage"], record["overage_source"]) == ("hard-stop", "catalog")
    assert any("claude-max" in e["allowed_connection_ids"] for e in plan["pool"])


def test_copilot_overage_not_permitted_widens_the_catalogs_unknown_while_fresh(
        fleet: Path) -> None:
    """R2a: github/oauth is subscription with overage unknown in the catalog; a fresh report
    of overage_permitted false makes it hard-stop, and the seat serves auto/subscription; the
    same report an hour later widens nothing."""
    assert _import(fleet, "copilot-user", str(FIXTURES / "copilot/user.json"),
                   "--connection", "copilot-seat").exit_code == 0
    (reading,) = _quota(fleet)["readings"]
    assert reading["overage"] == "hard-stop"
    fresh = _plan(fleet, "auto/subscription", "2026-11-29T12:01:00Z")
    (record,) = [c for c in fresh["connections"] if c["id"] == "copilot-seat"]
    assert (record["overage"], record["overage_source"]) == ("hard-stop", "observed")
    assert any("copilot-seat" in e["allowed_connection_ids"] for e in fresh["pool"])
    later = _plan(fleet, "auto/subscription", "2026-11-29T13:00:00Z")
    (record,) = [c for c in later["connections"] if c["id"] == "copilot-seat"]
    assert (record["overage"], record["overage_source"]) == ("unknown", "catalog")
    assert not any("copilot-seat" in e["allowed_connection_ids"] for e in later["pool"])


def _plan(fleet: Path, auto_id: str, now: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def test_claude_opus_window_spent_keeps_sonnet_served_and_excludes_opus(fleet: Path) -> None:
    assert _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                   "--connection", "claude-max").exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2026-11-29T12:01:00Z")
    served = {(e["provider"], e["model"]): e["allowed_connection_ids"] for e in plan["pool"]}
    assert served[("claude", "claude-sonnet-4-5")] == ["claude-max"]
    assert ("claude", "claude-opus-4-1") not in served
    opus = [e for e in plan["excluded"]
            if e["connection_id"] == "claude-max" and e["model"] == "claude-opus-4-1"]
    assert [e["reason"] for e in opus] == ["quota-below-cutoff"]


def test_claude_weekly_at_ninety_percent_used_is_still_served(fleet: Path) -> None:
    """utilization 90 is 10 % remaining (above the 2 % cutoff); read as remaining it would be
    90 and the opus window would read 100 % left."""
    assert _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                   "--connection", "claude-max").exit_code == 0
    windows = {w["name"]: w for w in _quota(fleet)["readings"][0]["windows"]}
    assert windows["seven_day"]["remaining_percent"] == 10
    assert windows["seven_day_opus"]["remaining_percent"] == 0
    assert windows["seven_day_opus"]["models"] == ["claude-opus-4-1"]


def test_at_defaults_to_the_file_modification_time(fleet: Path) -> None:
    copy = fleet / "usage.json"
    shutil.copy(FIXTURES / "claude/usage.json", copy)
    stamp = datetime(2026, 11, 29, 11, 45, 30, tzinfo=UTC).timestamp()
    os.utime(copy, (stamp, stamp))
    result = _import(fleet, "claude-usage", str(copy), "--connection", "claude-max", at=None)
    assert result.exit_code == 0, result.output
    assert _quota(fleet)["readings"][0]["checked_at"] == "2026-11-29T11:45:30Z"


def test_standard_input_is_read_and_stamped_with_the_clock(fleet: Path) -> None:
    raw = (FIXTURES / "copilot/user.json").read_bytes()
    before = datetime.now(UTC).replace(microsecond=0)
    result = _import(fleet, "copilot-user", "-", "--connection", "copilot-seat", at=None,
                     stdin=raw)
    assert result.exit_code == 0, result.output
    checked = datetime.fromisoformat(_quota(fleet)["readings"][0]["checked_at"])
    assert before <= checked <= datetime.now(UTC)


def test_several_files_are_several_readings(fleet: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copy(FIXTURES / "claude/usage.json", first)
    shutil.copy(FIXTURES / "claude/usage-extra-enabled.json", second)
    os.utime(first, (1795950000, 1795950000))
    os.utime(second, (1795951000, 1795951000))
    result = _import(fleet, "claude-usage", str(first), str(second), "--connection",
                     "claude-max", at=None)
    assert result.exit_code == 0, result.output
    assert [r.get("overage") for r in _quota(fleet)["readings"]] == ["hard-stop",
                                                                   "meters-to-paid"]


def test_an_unknown_connection_lists_the_closest_ids(fleet: Path) -> None:
    result = _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                     "--connection", "claude-mx")
    assert result.exit_code == 2
    assert "no connection 'claude-mx'" in result.stderr
    assert "closest: claude-max" in result.stderr
    assert not (fleet / "quota.json").exists()


def test_a_conflicting_reading_is_exit_2_naming_file_connection_and_instant(
        fleet: Path) -> None:
    args = ("--connection", "claude-max")
    assert _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"), *args
                   ).exit_code == 0
    before = (fleet / "quota.json").read_bytes()
    result = _import(fleet, "claude-usage", str(FIXTURES / "claude/usage-extra-enabled.json"),
                     *args)
    assert result.exit_code == 2
    assert "quota.json: readings[0] already holds a different reading of connection " \
           "'claude-max' at 2026-11-29T12:00:00Z" in result.stderr
    assert "Traceback" not in result.output
    assert (fleet / "quota.json").read_bytes() == before


@pytest.mark.parametrize(("source", "document", "message"), [
    ("claude-usage", {"seven_day": {"utilization": "abc"}},
     'bad.json: seven_day.utilization: expected a number 0–100 (percent used), got "abc"'),
    ("copilot-user", {"quota_snapshots": {"chat": {"quota_reset_at": "tomorrow"}}},
     'bad.json: quota_snapshots.chat.quota_reset_at: expected epoch seconds, got "tomorrow"'),
    ("gemini-quota", {"buckets": [{"modelId": "m", "remainingFraction": 25}]},
     "bad.json: buckets[0].remainingFraction: expected a fraction 0–1 (remaining), got 25"),
])
def test_bad_values_are_exit_2_naming_file_and_field(fleet: Path, source: str,
                                                     document: dict[str, Any], message: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    bad = fleet / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.chdir(fleet)
    fitting = {"claude-usage": "claude-max", "copilot-user": "copilot-seat",
               "gemini-quota": "gemini-cli"}[source]
    result = _import(fleet, source, "bad.json", "--connection", fitting)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"omniladder: error: {message}"
    assert "Traceback" not in result.output
    assert not (fleet / "quota.json").exists()


def test_a_broken_rollout_line_is_exit_2_naming_file_and_line(fleet: Path) -> None:
    folder = fleet / "sessions"
    folder.mkdir()
    (folder / "rollout-x.jsonl").write_text('{"type": "session_meta"}\n{"timestamp": \n')
    result = _import(fleet, "codex-sessions", str(folder), "--connection", "codex-pro")
    assert result.exit_code == 2
    assert "rollout-x.jsonl:2: not a JSON line" in result.stderr
    assert "Traceback" not in result.output


def test_invalid_json_is_exit_2(fleet: Path) -> None:
    bad = fleet / "bad.json"
    bad.write_text('{"access_token": "CANARY-x", ')
    result = _import(fleet, "claude-usage", str(bad), "--connection", "claude-max")
    assert result.exit_code == 2
    assert "invalid JSON" in result.stderr
    assert "CANARY" not in result.output


def test_quota_file_defaults_to_the_settings_file(fleet: Path) -> None:
    settings = fleet / "omniladder.toml"
    settings.write_text('[inputs]\nconnections = "connections.toml"\nquota = "snap.json"\n')
    result = runner.invoke(app, ["import", "gemini-quota", str(FIXTURES / "gemini/quota.json"),
                                 "--connection", "gemini-cli", "--config", str(settings),
                                 "--at", AT])
    assert result.exit_code == 0, result.output
    assert (fleet / "snap.json").is_file()
    assert result.stdout.strip() == str(fleet / "snap.json")


def test_without_a_quota_file_anywhere_it_is_a_usage_error(fleet: Path) -> None:
    result = runner.invoke(app, ["import", "gemini-quota", str(FIXTURES / "gemini/quota.json"),
                                 "--connection", "gemini-cli", "--connections",
                                 str(fleet / "connections.toml")])
    assert result.exit_code == 2
    assert "--quota" in result.stderr


def test_a_missing_input_file_is_exit_2(fleet: Path) -> None:
    result = _import(fleet, "claude-usage", str(fleet / "nope.json"), "--connection",
                     "claude-max")
    assert result.exit_code == 2
    assert "nope.json: file not found" in result.stderr


def test_a_bad_at_is_a_usage_error(fleet: Path) -> None:
    result = _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                     "--connection", "claude-max", at="2026-11-29T12:00:00")
    assert result.exit_code == 2
    assert "--at" in result.stderr


def test_a_windows_catalog_overlay_scopes_before_the_shipped_one(fleet: Path) -> None:
    overlay = fleet / "windows.toml"
    overlay.write_text('[[windows]]\nprovider = "claude"\nwindow = "five_hour"\nignore = true\n'
                       'reason = "test"\n[[windows]]\nprovider = "claude"\n'
                       'window = "seven_day"\nmodels = ["*sonnet*"]\n')
    result = _import(fleet, "claude-usage", str(FIXTURES / "claude/usage.json"),
                     "--connection", "claude-max", "--windows-catalog", str(overlay))
    assert result.exit_code == 0, result.output
    windows = {w["name"]: w for w in _quota(fleet)["readings"][0]["windows"]}
    assert "five_hour" not in windows
    assert windows["seven_day"]["models"] == ["claude-sonnet-4-5"]
    assert "'five_hour' ×1" in result.stderr


# --- every provider a source serves reads a payload the same way ----------------------------

SERVED_FIXTURES: list[tuple[str, str, list[str]]] = [
    ("gemini-quota", "gemini/quota-epoch-unavailable-2026.json",
     ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash-preview", "gemini-3.1-pro-preview"]),
    ("gemini-quota", "gemini/trap-alias-bucket.json",
     ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash-preview"]),
    ("copilot-user", "copilot/user-token-billing-2026.json", ["gpt-4.1", "claude-sonnet-4-5"]),
    ("copilot-user", "copilot/user-free-limited-2026.json", ["gpt-4.1", "claude-sonnet-4-5"]),
    ("codex-sessions", "codex/published/codex-hud-plan-then-spark.jsonl",
     ["gpt-5.1-codex", "gpt-5.3-codex-spark"]),
]


def _served_providers(importer: str) -> list[str]:
    import tomllib

    catalog = tomllib.loads((ROOT / "catalogs" / "quota-windows.toml").read_text("utf-8"))
    (entry,) = [s for s in catalog["sources"] if s["importer"] == importer]
    providers: list[str] = entry["providers"]
    return providers


def _windows_on(tmp_path: Path, source: str, fixture: str, provider: str,
                models: list[str]) -> tuple[list[Any], str]:
    folder = tmp_path / provider
    folder.mkdir()
    (folder / "connections.toml").write_text(
        f'[[connections]]\nid = "seat"\nprovider = "{provider}"\nauth_type = "oauth"\n'
        f"models = {json.dumps(models)}\n", encoding="utf-8")
    result = _import(folder, source, str(FIXTURES / fixture), "--connection", "seat",
                     at=None if source == "codex-sessions" else "2026-06-10T12:00:00Z")
    assert result.exit_code == 0, result.output
    readings = _quota(folder)["readings"]
    return [r.get("windows", []) for r in readings], result.stderr


@pytest.mark.parametrize(("source", "fixture", "models"), SERVED_FIXTURES,
                         ids=[f[1] for f in SERVED_FIXTURES])
def test_every_served_provider_scopes_a_published_payload_alike(
        tmp_path: Path, source: str, fixture: str, models: list[str]) -> None:
    """docs/sources.md#fit and #window-scopes: a provider id the shipped [[sources]] table
    serves reads the source's windows as its first id does (Gemini buckets limit their own
    model, Copilot completions are ignored, Spark limits only the Spark models). Without
    window scopes of its own, every window would limit every model: one unavailable
    Gemini model, or a spent Spark limit, would read as the whole connection exhausted."""
    first, *others = _served_providers(source)
    expected, _ = _windows_on(tmp_path, source, fixture, first, models)
    for provider in others:
        windows, stderr = _windows_on(tmp_path, source, fixture, provider, models)
        assert windows == expected, provider
        assert "not in the window-scope catalog" not in stderr, provider


@pytest.mark.parametrize(("empty", "said"), [
    (1, "1 reading kept no window and no overage after scoping, and was not written"),
    (2, "2 readings kept no window and no overage after scoping, and were not written"),
])
def test_readings_not_written_are_counted_in_good_grammar(empty: int, said: str) -> None:
    """One reading "were not written" read as a typo of a count."""
    from omniladder.sources.merge import MergeOutcome
    from omniladder.sources.run import ImportOutcome

    merged = MergeOutcome(path=Path("q.json"), created=False, added=0, skipped=0, written=False,
                          taken_at=None)
    assert ImportOutcome(merge=merged, parsed=3, empty=empty).notes() == [said]
