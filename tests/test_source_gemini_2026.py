"""`omniladder import gemini-quota` on the responses clients published in 2026 (SPEC §6 v1.2;
docs/sources.md#gemini-quota), the window catalog's alias table, and the curated billing of Gemini
CLI's Google sign-in, through the CLI and through `plan`.

Fixtures: tests/fixtures/sources/gemini (README.md names where each body was published).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.inputs.scopes import load_window_scopes
from omniladder.scope_models import WindowAliasEntry, WindowScopeCatalog
from omniladder.sources import gemini_quota
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "sources" / "gemini"
runner = CliRunner()

MODELS = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-flash-preview",
          "gemini-3.1-pro-preview", "gemini-3-pro-preview", "gemini-3.5-flash"]
FLEET = f"""\
[[connections]]
id = "gemini-cli"
provider = "gemini-cli"
auth_type = "oauth"
models = {json.dumps(MODELS)}
"""
AT = "2026-06-13T12:00:00Z"  # the published June 2026 payload's buckets reset at 18:00/20:00
AT_DEC = "2025-12-10T12:00:00Z"  # the issue #14883 payload's bucket resets at 22:19:52
HARD_STOP = """\
[[entries]]
provider = "gemini-cli"
auth_type = "oauth"
billing = "subscription"
overage = "hard-stop"
reason = "a free-tier account: no AI credits to spend"
source = "operator"
reviewed = 2026-12-01
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(FLEET, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, fixture: str, at: str, *extra: str) -> Any:
    return runner.invoke(app, ["import", "gemini-quota", str(FIXTURES / fixture),
                               "--connection", "gemini-cli", "--connections",
                               str(fleet / "connections.toml"), "--quota",
                               str(fleet / "quota.json"), "--at", at, *extra])


def _windows(fleet: Path) -> dict[str, dict[str, Any]]:
    (reading,) = json.loads((fleet / "quota.json").read_text(encoding="utf-8"))["readings"]
    return {w["name"]: w for w in reading.get("windows", [])}


def _plan(fleet: Path, auto_id: str, now: str, *extra: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", now, "--json", *extra])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def _served(plan: dict[str, Any]) -> dict[str, list[str]]:
    return {e["model"]: e["allowed_connection_ids"] for e in plan["pool"]}


def _unverified(plan: dict[str, Any]) -> set[str]:
    return {e["model"] for e in plan["pool"] if e["unverified_connection_ids"]}


def _excluded(plan: dict[str, Any]) -> dict[str | None, str]:
    return {e["model"]: e["reason"] for e in plan["excluded"]}


# --- resetTime at the epoch with remainingFraction 0: not on this tier --------------------------


def test_epoch_zero_reset_is_written_as_no_reset(fleet: Path) -> None:
    result = _import(fleet, "quota-epoch-unavailable-2026.json", AT)
    assert result.exit_code == 0, result.output
    windows = _windows(fleet)
    assert windows["gemini-2.5-pro"] == {"name": "gemini-2.5-pro", "remaining_percent": 0,
                                         "models": ["gemini-2.5-pro"]}
    assert windows["gemini-3.1-pro-preview"]["reset_at"] == "2026-06-13T18:00:00Z"
    assert "1970" not in (fleet / "quota.json").read_text(encoding="utf-8")
    assert "'claude-sonnet-4-6' ×1, 'gemini-embedding-001' ×1" in result.stderr


def test_a_model_not_on_this_tier_stays_out_while_the_reading_is_fresh(fleet: Path) -> None:
    """R6.6 with the reading's age up to max_reading_age_seconds (180): 0 % keeps
    gemini-2.5-pro out of thrifty; read as a 1970 reset it would be 'reset since the
    reading' and admitted. The buckets with figures serve, verified."""
    assert _import(fleet, "quota-epoch-unavailable-2026.json", AT).exit_code == 0
    for now in ("2026-06-13T12:00:00Z", "2026-06-13T12:03:00Z"):
        plan = _plan(fleet, "auto/thrifty", now)
        assert _excluded(plan) == {"gemini-2.5-pro": "quota-below-cutoff"}, now
        assert set(_served(plan)) == {"gemini-2.5-flash", "gemini-3-flash-preview",
                                      "gemini-3.1-pro-preview", "gemini-3-pro-preview",
                                      "gemini-3.5-flash"}, now
        assert _unverified(plan) == {"gemini-3-pro-preview", "gemini-3.5-flash"}, now


def test_with_no_reset_the_zero_holds_only_while_fresh(fleet: Path) -> None:
    """R6.5, the other side: a window with no reset_at is not held past the reading's age
    (R6.4 needs a reset), so one second later thrifty admits gemini-2.5-pro, unverified."""
    assert _import(fleet, "quota-epoch-unavailable-2026.json", AT).exit_code == 0
    plan = _plan(fleet, "auto/thrifty", "2026-06-13T12:03:01Z")
    assert "gemini-2.5-pro" in _unverified(plan)


@pytest.mark.parametrize(("reset", "kept"), [
    ("1970-01-01T00:00:00Z", None),
    ("1969-12-31T23:59:59Z", None),
    ("1970-01-01T01:00:00+01:00", None),
    ("1970-01-01T00:00:01Z", datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
])
def test_a_reset_at_or_before_the_epoch_is_no_reset(reset: str, kept: datetime | None) -> None:
    document = {"buckets": [{"modelId": "m", "remainingFraction": 0.5, "resetTime": reset}]}
    (window,) = gemini_quota.parse(document, "q.json", datetime(2026, 6, 1, tzinfo=UTC)).windows
    assert window.reset_at == kept
    assert window.remaining_percent == 50


# --- alias bucket ids (the window catalog's [[aliases]]) -----------------------------------

# Each bucket id Code Assist returns that is not the id of every model it limits, and the
# models it is the quota of: gemini-cli's Config.refreshUserQuota in @google/gemini-cli-core
# 0.61.0 (npm) reads the three Flash ids as one quota and the two Flash-Lite ids as one; the
# preview ids are the older payloads' (catalogs/quota-windows.toml cites each).
BUCKET_MODELS = {
    "gemini-3-pro": ("gemini-3-pro-preview",),
    "gemini-3.1-pro": ("gemini-3.1-pro-preview",),
    "gemini-3-flash": ("gemini-3-flash-preview", "gemini-3.5-flash", "gemini-3.8-flash"),
    "gemini-3.5-flash": ("gemini-3.8-flash",),
    "gemini-3.8-flash": ("gemini-3.5-flash",),
    "gemini-3.1-flash-lite": ("gemini-3.5-flash-lite",),
    "gemini-3.5-flash-lite": ("gemini-3.1-flash-lite",),
}
TODAYS_MODELS = ["gemini-2.5-pro", "gemini-3.5-flash", "gemini-3.8-flash",
                 "gemini-3.1-flash-lite", "gemini-3.5-flash-lite", "gemini-3.1-pro-preview"]


def _todays_fleet(tmp_path: Path, provider: str = "gemini-cli") -> Path:
    (tmp_path / "connections.toml").write_text(
        f'[[connections]]\nid = "gemini-cli"\nprovider = "{provider}"\nauth_type = "oauth"\n'
        f"models = {json.dumps(TODAYS_MODELS)}\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("provider", ["gemini", "gemini-cli", "google-gemini-cli"])
@pytest.mark.parametrize(("bucket", "models"), list(BUCKET_MODELS.items()))
def test_each_bucket_id_limits_every_model_it_is_the_quota_of(
        provider: str, bucket: str, models: tuple[str, ...]) -> None:
    every = sorted({m for ms in BUCKET_MODELS.values() for m in ms} | set(BUCKET_MODELS)
                   | {"gemini-2.5-pro", "gemini-2.5-flash"})
    scope = load_window_scopes().scope(provider, bucket, every)
    assert scope.models is not None, scope
    assert set(scope.models) == {bucket, *models}


@pytest.mark.parametrize("provider", ["gemini", "gemini-cli", "google-gemini-cli"])
def test_the_published_0_61_flash_bucket_limits_both_flash_models(
        tmp_path: Path, provider: str) -> None:
    """gemini-cli 0.61.0's own test body: its one bucket is gemini-3-flash, which that
    release reads as the quota of gemini-3.5-flash (or gemini-3.8-flash with the latest
    Flash). The old table scoped it to gemini-3-flash-preview only, and dropped it here."""
    fleet = _todays_fleet(tmp_path, provider)
    result = _import(fleet, "quota-gemini-cli-core-0.61.0-flash.json", AT)
    assert result.exit_code == 0, result.output
    assert _windows(fleet) == {"gemini-3-flash": {
        "name": "gemini-3-flash", "remaining_percent": 90,
        "models": ["gemini-3.5-flash", "gemini-3.8-flash"]}}
    assert "gemini-3-flash" not in result.stderr
    plan = _plan(fleet, "auto/thrifty", "2026-06-13T12:01:00Z")
    assert _served(plan)["gemini-3.5-flash"] == ["gemini-cli"]
    assert {"gemini-3.5-flash", "gemini-3.8-flash"}.isdisjoint(_unverified(plan))


def test_the_published_0_61_pooled_payload_reaches_the_latest_flash(tmp_path: Path) -> None:
    """The gemini-3.5-flash bucket is also the quota of gemini-3.8-flash (0.61.0 stores it
    there for an account with the latest Flash); the old table left that model unverified."""
    fleet = _todays_fleet(tmp_path)
    result = _import(fleet, "quota-gemini-cli-core-0.61.0-pooled.json", AT)
    assert result.exit_code == 0, result.output
    assert _windows(fleet) == {
        "gemini-2.5-pro": {"name": "gemini-2.5-pro", "remaining_percent": 20,
                           "models": ["gemini-2.5-pro"]},
        "gemini-3.5-flash": {"name": "gemini-3.5-flash", "remaining_percent": 80,
                             "models": ["gemini-3.5-flash", "gemini-3.8-flash"]}}
    assert "gemini-3.8-flash" not in _unverified(_plan(fleet, "auto/thrifty",
                                                       "2026-06-13T12:01:00Z"))


def test_an_exhausted_flash_lite_bucket_keeps_both_flash_lite_ids_out(tmp_path: Path) -> None:
    """Derived from the published 0.61.0 body: its bucket id written gemini-3.5-flash-lite
    at 0 with a reset; gemini-cli reads it as the quota of gemini-3.1-flash-lite too."""
    fleet = _todays_fleet(tmp_path)
    document = json.loads((FIXTURES / "quota-gemini-cli-core-0.61.0-flash.json").read_text())
    document["buckets"][0].update(modelId="gemini-3.5-flash-lite", remainingAmount="0",
                                  remainingFraction=0, resetTime="2026-06-13T20:00:00Z")
    spent = tmp_path / "spent.json"
    spent.write_text(json.dumps(document))
    result = runner.invoke(app, ["import", "gemini-quota", str(spent), "--connection",
                                 "gemini-cli", "--connections", str(fleet / "connections.toml"),
                                 "--quota", str(fleet / "quota.json"), "--at", AT])
    assert result.exit_code == 0, result.output
    excluded = _excluded(_plan(fleet, "auto/thrifty", "2026-06-13T12:01:00Z"))
    assert excluded["gemini-3.1-flash-lite"] == "quota-below-cutoff"
    assert excluded["gemini-3.5-flash-lite"] == "quota-below-cutoff"


def test_an_alias_bucket_serves_its_model_instead_of_being_dropped(fleet: Path) -> None:
    result = _import(fleet, "trap-alias-bucket.json", AT)
    assert result.exit_code == 0, result.output
    assert _windows(fleet)["gemini-3-flash"] == {
        "name": "gemini-3-flash", "remaining_percent": 60, "reset_at": "2026-06-13T20:00:00Z",
        "models": ["gemini-3-flash-preview", "gemini-3.5-flash"]}
    assert "'gemini-3-flash'" not in result.stderr
    plan = _plan(fleet, "auto/thrifty", "2026-06-13T12:01:00Z")
    assert _served(plan)["gemini-3-flash-preview"] == ["gemini-cli"]
    assert "gemini-3-flash-preview" not in _unverified(plan)


def test_an_exhausted_alias_bucket_keeps_its_model_out(fleet: Path, tmp_path: Path) -> None:
    """R6.4 through the alias: the bucket's 0 % with a reset limits gemini-3-flash-preview
    until then, whatever the reading's age."""
    document = json.loads((FIXTURES / "trap-alias-bucket.json").read_text())
    document["buckets"][1]["remainingFraction"] = 0
    spent = tmp_path / "spent.json"
    spent.write_text(json.dumps(document))
    result = runner.invoke(app, ["import", "gemini-quota", str(spent), "--connection",
                                 "gemini-cli", "--connections", str(fleet / "connections.toml"),
                                 "--quota", str(fleet / "quota.json"), "--at", AT])
    assert result.exit_code == 0, result.output
    for now in ("2026-06-13T12:01:00Z", "2026-06-13T19:59:59Z"):
        assert _excluded(_plan(fleet, "auto/thrifty", now))["gemini-3-flash-preview"] == \
            "quota-below-cutoff", now


def test_an_overlay_alias_replaces_the_shipped_one(fleet: Path) -> None:
    overlay = fleet / "aliases.toml"
    overlay.write_text('[[aliases]]\nprovider = "gemini-cli"\nwindow = "GEMINI-3-FLASH"\n'
                       'models = ["gemini-3.5-flash"]\nreason = "r"\nsource = "s"\n'
                       'reviewed = 2026-12-01\n', encoding="utf-8")
    result = _import(fleet, "trap-alias-bucket.json", AT, "--windows-catalog", str(overlay))
    assert result.exit_code == 0, result.output
    assert _windows(fleet)["gemini-3-flash"]["models"] == ["gemini-3.5-flash"]


def test_an_alias_keeps_the_qualifier_and_the_bucket_own_name() -> None:
    scopes = load_window_scopes()
    models = ["gemini-3-flash", "gemini-3-flash-preview", "gemini-2.5-pro"]
    tokens = scopes.scope("gemini-cli", "gemini-3-flash (TOKENS)", models)
    assert tokens.models == ("gemini-3-flash", "gemini-3-flash-preview")
    assert scopes.alias_names("gemini-cli", "gemini-3-flash (TOKENS)") == (
        "gemini-3-flash-preview (TOKENS)", "gemini-3.5-flash (TOKENS)",
        "gemini-3.8-flash (TOKENS)")
    assert scopes.scope("gemini-cli", "gemini-3-flash", ["gemini-2.5-pro"]).kind == "none"
    assert scopes.scope("antigravity", "gemini-3-flash", ["gemini-3-flash-preview"]).kind \
        == "none"
    assert scopes.scope("gemini", "gemini-3.1-pro", ["gemini-3.1-pro-preview"]).models == (
        "gemini-3.1-pro-preview",)


def test_an_alias_cannot_revive_a_window_the_catalog_ignores(tmp_path: Path) -> None:
    overlay = tmp_path / "w.toml"
    overlay.write_text('[[windows]]\nprovider = "p"\nwindow = "b"\nignore = true\n'
                       'reason = "r"\nsource = "s"\nreviewed = 2026-12-01\n\n'
                       '[[aliases]]\nprovider = "p"\nwindow = "b"\nmodels = ["m"]\n'
                       'reason = "r"\nsource = "s"\nreviewed = 2026-12-01\n', encoding="utf-8")
    scopes = load_window_scopes([overlay], include_shipped=False)
    assert scopes.scope("p", "b", ["m"]).kind == "ignore"
    assert scopes.scope("p", "c", ["m"]).kind == "all"


@pytest.mark.parametrize(("entry", "message"), [
    ({"window": "gemini-3-*", "models": ["m"]}, "aliases name exact ids, without *"),
    ({"window": "b", "models": ["{window}"]}, "aliases name exact ids, without { }"),
    ({"window": "b (REQUESTS)", "models": ["m"]}, "aliases name exact ids, without ( )"),
    ({"window": "b", "models": []}, "give the model ids the window limits"),
    ({"window": "b", "models": ["m", "M"]}, "models lists the same id twice"),
    ({"window": "b", "models": ["B"]}, "'b' is an alias of itself"),
    ({"window": "b", "models": ["m"], "model": "m"}, "Extra inputs are not permitted"),
    ({"window": "b"}, "Field required"),
])
def test_alias_entries_are_validated_strictly(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        WindowAliasEntry.model_validate({"provider": "p", **entry} | (
            {"models": tuple(entry["models"])} if "models" in entry else {}))
    assert message in str(caught.value)


def test_catalog_check_lints_alias_entries(tmp_path: Path) -> None:
    overlay = tmp_path / "w.toml"
    overlay.write_text(
        '[[aliases]]\nprovider = "p"\nwindow = "b"\nmodels = ["m"]\nsource = "s"\n'
        'reviewed = 2026-12-01\n\n'
        '[[aliases]]\nprovider = "p"\nwindow = "B"\nmodels = ["n"]\nreason = "r"\n'
        'source = "s"\nreviewed = 2027-01-01\n\n'
        '[[aliases]]\nprovider = "p"\nwindow = "c*"\nmodels = ["m"]\nreason = "r"\n'
        'source = "s"\nreviewed = 2026-12-01\n\n[[sourcez]]\n', encoding="utf-8")
    result = runner.invoke(app, ["catalog", "check", "--today", "2026-12-01", "--json",
                                 "--no-shipped-catalogs", "--windows-catalog", str(overlay)])
    assert result.exit_code == 1, result.output
    problems = [(p["where"], p["key"], p["code"]) for p in json.loads(result.stdout)["problems"]]
    assert problems == [
        ("sourcez", "", "unknown-key"),
        ("aliases[0].reason", "p: alias b", "missing-reason"),
        ("aliases[1]", "p: alias b", "duplicate-key"),
        ("aliases[1].reviewed", "p: alias b", "review-in-future"),
        ("aliases[2]", "p: alias c*", "invalid-entry"),
    ]
    assert "holds only [[windows]] and [[aliases]]" in result.stdout


def test_shipped_aliases_are_curated_and_shown_by_catalog_show() -> None:
    shipped = WindowScopeCatalog.model_validate(
        __import__("omniladder.inputs.documents", fromlist=["read_document"]).read_document(
            ROOT / "catalogs" / "quota-windows.toml", "shipped"))
    pairs = {(a.provider, a.window, a.models) for a in shipped.aliases}
    assert pairs == {(provider, bucket, models)
                     for provider in ("gemini", "gemini-cli", "google-gemini-cli")
                     for bucket, models in BUCKET_MODELS.items()}
    assert all(a.reason and a.reviewed and a.source and "gemini-cli" in a.source
               for a in shipped.aliases)
    assert all(a.reviewed == date(2026, 12, 4) for a in shipped.aliases)
    result = runner.invoke(app, ["catalog", "show", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["window_aliases"]
    assert {(r["provider"], r["window"], tuple(r["models"])) for r in rows} == pairs
    assert {r["file"] for r in rows} == {"<shipped>/quota-windows.toml"}
    table = runner.invoke(app, ["catalog", "show"], env={"COLUMNS": "200"})
    assert "Window aliases" in table.stdout
    assert "window scopes from 1 file(s), 21 window aliases" in table.stdout


# --- <model>_vertex twins, remainingAmount as a string ----------------------------------------


def test_a_vertex_twin_limits_the_same_model_and_the_lower_figure_decides(fleet: Path) -> None:
    result = _import(fleet, "trap-vertex-twin.json", AT_DEC)
    assert result.exit_code == 0, result.output
    windows = _windows(fleet)
    assert windows["gemini-3-pro-preview (vertex)"] == {
        "name": "gemini-3-pro-preview (vertex)", "remaining_percent": 1,
        "reset_at": "2025-12-10T22:19:52Z", "models": ["gemini-3-pro-preview"]}
    assert windows["gemini-3-pro-preview"]["remaining_percent"] == 76.175
    plan = _plan(fleet, "auto/thrifty", "2025-12-10T12:01:00Z")
    assert _excluded(plan)["gemini-3-pro-preview"] == "quota-below-cutoff"


def test_an_overlay_can_leave_vertex_twins_out(fleet: Path) -> None:
    overlay = fleet / "twins.toml"
    overlay.write_text('[[windows]]\nprovider = "gemini-cli"\nwindow = "* (vertex*)"\n'
                       'ignore = true\nreason = "this gateway never routes through Vertex"\n'
                       'source = "operator"\nreviewed = 2026-12-01\n', encoding="utf-8")
    result = _import(fleet, "trap-vertex-twin.json", AT_DEC, "--windows-catalog", str(overlay))
    assert result.exit_code == 0, result.output
    assert set(_windows(fleet)) == {"gemini-3-pro-preview"}
    assert "'gemini-3-pro-preview (vertex)' ×1" in result.stderr
    plan = _plan(fleet, "auto/thrifty", "2025-12-10T12:01:00Z")
    assert _served(plan)["gemini-3-pro-preview"] == ["gemini-cli"]


def test_the_published_issue_payload_reads_as_a_fraction(fleet: Path) -> None:
    assert _import(fleet, "quota-issue-14883.json", AT_DEC).exit_code == 0
    assert _windows(fleet) == {"gemini-3-pro-preview": {
        "name": "gemini-3-pro-preview", "remaining_percent": 76.175,
        "reset_at": "2025-12-10T22:19:52Z", "models": ["gemini-3-pro-preview"]}}


@pytest.mark.parametrize(("buckets", "names"), [
    ([{"modelId": "m"}, {"modelId": "m_vertex"}], ["m", "m (vertex)"]),
    ([{"modelId": "m", "tokenType": "A"}, {"modelId": "m", "tokenType": "B"},
      {"modelId": "m_vertex", "tokenType": "A"}, {"modelId": "m_vertex", "tokenType": "B"}],
     ["m (A)", "m (B)", "m (vertex A)", "m (vertex B)"]),
    ([{"modelId": "m_vertex"}, {"modelId": "m_vertex"}], ["m (vertex bucket 1)",
                                                          "m (vertex bucket 2)"]),
    ([{"modelId": "_vertex"}], ["_vertex"]),
])
def test_twin_buckets_get_names_that_tell_them_apart(buckets: list[dict[str, Any]],
                                                     names: list[str]) -> None:
    document = {"buckets": [{**b, "remainingFraction": 0.5} for b in buckets]}
    reading = gemini_quota.parse(document, "q.json", datetime(2026, 6, 1, tzinfo=UTC))
    assert [w.name for w in reading.windows] == names


@pytest.mark.parametrize(("amount", "percent"), [
    ("0", 0.0), (0, 0.0), ("0.0", 0.0), ("5", None), (12, None), (None, None),
])
def test_remaining_amount_without_a_fraction(amount: Any, percent: float | None) -> None:
    bucket: dict[str, Any] = {"modelId": "m", "resetTime": "2026-06-02T00:00:00Z"}
    if amount is not None:
        bucket["remainingAmount"] = amount
    (window,) = gemini_quota.parse({"buckets": [bucket]}, "q.json",
                                   datetime(2026, 6, 1, tzinfo=UTC)).windows
    assert window.remaining_percent == percent


def test_the_fraction_wins_over_the_amount() -> None:
    document = {"buckets": [{"modelId": "m", "remainingFraction": 0.25, "remainingAmount": "0"}]}
    (window,) = gemini_quota.parse(document, "q.json", datetime(2026, 6, 1, tzinfo=UTC)).windows
    assert window.remaining_percent == 25


@pytest.mark.parametrize("amount", ["lots", -1, "-3", True])
def test_an_unusable_amount_names_the_field(amount: Any) -> None:
    with pytest.raises(InputError) as caught:
        gemini_quota.parse({"buckets": [{"modelId": "m", "remainingAmount": amount}]},
                           "q.json", datetime(2026, 6, 1, tzinfo=UTC))
    assert str(caught.value).startswith(
        "q.json: buckets[0].remainingAmount: expected a count ≥ 0, got ")


# --- billing of Gemini CLI signed in with Google (R1) ---------------------------------------


def test_gemini_cli_oauth_is_a_curated_subscription_with_overage_unknown(fleet: Path) -> None:
    """R1.2/R10: no longer 'uncurated'; auto/subscription leaves it out on the overage
    check (AI credits may be spent past the quota), thrifty serves it on the subscription
    rung."""
    assert _import(fleet, "quota-issue-14883.json", AT_DEC).exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2025-12-10T12:01:00Z")
    (record,) = plan["connections"]
    assert (record["billing"], record["overage"], record["billing_source"]) == (
        "subscription", "unknown", "catalog")
    assert record["catalog_file"] == "<shipped>/connection-billing.toml"
    assert _excluded(plan) == {None: "overage-not-hard-stop"}
    thrifty = _plan(fleet, "auto/thrifty", "2025-12-10T12:01:00Z")
    assert {e["rung"] for e in thrifty["pool"]} == {"subscription"}


def test_an_overlay_granting_hard_stop_puts_the_account_in_auto_subscription(
        fleet: Path) -> None:
    overlay = fleet / "billing.toml"
    overlay.write_text(HARD_STOP, encoding="utf-8")
    assert _import(fleet, "quota-issue-14883.json", AT_DEC).exit_code == 0
    plan = _plan(fleet, "auto/subscription", "2025-12-10T12:01:00Z", "--catalog", str(overlay))
    assert _served(plan) == {"gemini-3-pro-preview": ["gemini-cli"]}


def test_oauth_on_the_gemini_api_provider_stays_uncurated(tmp_path: Path) -> None:
    """An OAuth login on provider gemini may be a Cloud project's metered Gemini API: the
    curated entry is for gemini-cli only."""
    (tmp_path / "c.toml").write_text(
        '[[connections]]\nid = "g"\nprovider = "gemini"\nauth_type = "oauth"\n'
        'models = ["gemini-2.5-pro"]\n', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/subscription", "--connections",
                                 str(tmp_path / "c.toml"), "--now", AT, "--json"])
    assert result.exit_code == 0, result.output
    (record,) = json.loads(result.stdout)["connections"]
    assert record["billing_source"] == "uncurated"


@pytest.mark.parametrize(("auth_type", "hint"), [
    ("apikey", False), ("oauth", True), ("token", False)])
def test_a_gemini_api_connection_is_not_told_it_meant_gemini_cli(tmp_path: Path, auth_type: str,
                                                                 hint: bool) -> None:
    """The near-miss hint names a provider only when its entry covers the auth type: the
    gemini-cli entry is OAuth, so a Gemini API key is not told it meant gemini-cli, while an
    OAuth login (or a misspelling, gemini-clj) is."""
    (tmp_path / "c.toml").write_text(
        f'[[connections]]\nid = "g"\nprovider = "gemini"\nauth_type = "{auth_type}"\n'
        'models = ["gemini-2.5-pro"]\n\n[[connections]]\nid = "t"\nprovider = "gemini-clj"\n'
        'auth_type = "oauth"\nmodels = ["gemini-2.5-pro"]\n', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/subscription", "--connections",
                                 str(tmp_path / "c.toml"), "--now", AT, "--json"])
    assert result.exit_code == 0, result.output
    details = {e["connection_id"]: e["detail"] for e in json.loads(result.stdout)["excluded"]}
    assert ("gemini-cli" in details["g"]) is hint
    assert "did you mean provider 'gemini-cli'?" in details["t"]
