"""SPEC §6 (v1.2), "A payload must fit its source and its connection": every misfit is exit 2
with the inputs unchanged and nothing written; --force imports onto a connection whose
provider the source does not serve; a fitting import still works.

Error bodies are the ones providers really sent (tests/fixtures/sources/errors/README.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import timefmt
from omniladder.cli import app
from omniladder.inputs.documents import load_model
from omniladder.inputs.schemas import json_schema
from omniladder.quota_sources import QUOTA_SOURCES
from omniladder.scope_models import QuotaSource, WindowScopeCatalog
from omniladder.sources import fit
from tests.conftest import ROOT
from tests.errors import one_error

FIXTURES = ROOT / "tests" / "fixtures" / "sources"
ERRORS = FIXTURES / "errors"
SHIPPED_WINDOWS = ROOT / "catalogs" / "quota-windows.toml"
CLOCK = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
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
models = ["gpt-5-codex"]

[[connections]]
id = "copilot-seat"
provider = "github"
auth_type = "oauth"
models = ["gpt-4.1", "claude-sonnet-4-5"]

[[connections]]
id = "copilot-web"
provider = "copilot-web"
auth_type = "apikey"
models = ["gpt-4.1"]

[[connections]]
id = "gemini-cli"
provider = "gemini-cli"
auth_type = "oauth"
models = ["gemini-2.5-pro", "gemini-2.5-flash"]

[[connections]]
id = "gemini-free"
provider = "gemini"
auth_type = "oauth"
models = ["gemini-2.5-pro"]

[[connections]]
id = "antigravity-main"
provider = "antigravity"
auth_type = "oauth"
models = ["gemini-2.5-pro"]

[[connections]]
id = "anthropic-key"
provider = "anthropic"
auth_type = "apikey"
models = ["claude-sonnet-4-5"]

[[connections]]
id = "claude-key"
provider = "claude"
auth_type = "apikey"
models = ["claude-sonnet-4-5"]

[[connections]]
id = "codex-key"
provider = "codex"
auth_type = "apikey"
models = ["gpt-5-codex"]

[[connections]]
id = "gemini-key"
provider = "gemini"
auth_type = "apikey"
models = ["gemini-2.5-pro"]
"""

SNAPSHOT_FIXTURES = {
    "claude-usage": FIXTURES / "claude" / "usage.json",
    "copilot-user": FIXTURES / "copilot" / "user.json",
    "gemini-quota": FIXTURES / "gemini" / "quota.json",
}
FITTING = {"claude-usage": "claude-max", "codex-sessions": "codex-pro",
           "copilot-user": "copilot-seat", "gemini-quota": "gemini-cli"}


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import's clock, pinned: every instant below is judged against CLOCK."""
    monkeypatch.setattr("omniladder.sources.run._now", lambda: CLOCK)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, source: str, *args: str, at: str | None = AT) -> Any:
    extra = ["--at", at] if at is not None and source != "codex-sessions" else []
    return runner.invoke(app, ["import", source, *args, "--quota", str(fleet / "quota.json"),
                               "--connections", str(fleet / "connections.toml"), *extra])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _seed_quota(fleet: Path) -> bytes:
    """A quota file already there, from a fitting import: a misfit must leave its bytes."""
    seeded = _import(fleet, "claude-usage", str(SNAPSHOT_FIXTURES["claude-usage"]),
                     "--connection", "claude-max", at="2026-11-29T11:00:00Z")
    assert seeded.exit_code == 0, seeded.output
    return (fleet / "quota.json").read_bytes()


def _codex_line(timestamp: str) -> str:
    return json.dumps({"timestamp": timestamp, "type": "event_msg", "payload": {
        "type": "token_count", "info": None, "rate_limits": {
            "primary": {"used_percent": 40.0, "window_minutes": 300, "resets_at": 1796047200},
            "secondary": {"used_percent": 10.0, "window_minutes": 10080,
                          "resets_at": 1796500000}}}})


# --- the catalog's [[sources]] table --------------------------------------------------------


SERVED = {
    "claude-usage": ("claude",),
    "codex-sessions": ("codex", "openai-codex"),
    "copilot-user": ("github", "copilot-web", "github-copilot", "copilot"),
    "gemini-quota": ("gemini-cli", "gemini", "google-gemini-cli"),
}


def test_SPEC6_the_shipped_catalog_says_which_providers_every_source_serves() -> None:
    catalog = load_model(WindowScopeCatalog, SHIPPED_WINDOWS)
    assert {entry.importer: entry.providers for entry in catalog.sources} == SERVED
    for entry in catalog.sources:
        assert entry.reason, entry.importer
        assert entry.source, entry.importer
        assert entry.reviewed, entry.importer


def test_SPEC6_the_importers_are_one_closed_list_in_the_model_the_fit_check_and_the_modules(
) -> None:
    from typing import get_args

    assert get_args(QuotaSource) == tuple(QUOTA_SOURCES)
    assert set(QUOTA_SOURCES) == set(SERVED)
    for source, entry in QUOTA_SOURCES.items():
        loaded = __import__(entry.module, fromlist=["NAME"])
        assert source == loaded.NAME
        assert fit.own_keys(source) == loaded.OWN_KEYS
        assert loaded.OWN_KEYS


def test_SPEC6_every_provider_the_window_catalog_curates_for_a_source_is_served() -> None:
    """The provider ids the window catalog scopes windows of: each one a quota source reads
    is served by that source; Antigravity and Kiro are read only from OmniRoute."""
    catalog = load_model(WindowScopeCatalog, SHIPPED_WINDOWS)
    curated = {entry.provider for entry in catalog.windows}
    served = {provider for providers in SERVED.values() for provider in providers}
    assert curated - served == {"antigravity", "kiro"}
    assert "antigravity" not in SERVED["gemini-quota"]  # other pools (stablyai/orca#9122)


@pytest.mark.parametrize(("table", "message"), [
    ('importer = "claude-usag"\nproviders = ["claude"]',
     "overlay.toml:2: sources[0].importer: must be one of 'claude-usage', 'codex-sessions', "
     "'copilot-user' or 'gemini-quota', got 'claude-usag'; did you mean 'claude-usage'?"),
    ('importer = "claude-usage"\nproviders = []', "sources[0].providers"),
    ('importer = "claude-usage"\nproviders = ["claude", "claude"]',
     "provider 'claude' is listed twice"),
    ('importer = "claude-usage"\nproviders = ["claude"]\nprovider = "x"',
     "sources[0].provider: unknown key"),
    ('importer = "claude-usage"\nproviders = ["claude"]\n\n[[sources]]\n'
     'importer = "claude-usage"\nproviders = ["anthropic"]',
     "importer 'claude-usage' is given twice (sources[0] and sources[1])"),
], ids=["unknown-importer", "no-provider", "repeated-provider", "unknown-key",
        "repeated-importer"])
def test_SPEC6_a_bad_sources_table_is_exit_2_naming_the_file_and_field(
        fleet: Path, table: str, message: str) -> None:
    overlay = fleet / "overlay.toml"
    overlay.write_text(f"[[sources]]\n{table}\n", encoding="utf-8")
    result = _import(fleet, "claude-usage", str(SNAPSHOT_FIXTURES["claude-usage"]),
                     "--connection", "claude-max", "--windows-catalog", str(overlay))
    one_error(result, "overlay.toml", message)
    assert not (fleet / "quota.json").exists()


def test_SPEC6_an_overlay_entry_replaces_the_shipped_providers_of_its_importer(
        fleet: Path) -> None:
    overlay = fleet / "overlay.toml"
    overlay.write_text('[[sources]]\nimporter = "claude-usage"\nproviders = ["anthropic"]\n',
                       encoding="utf-8")
    usage = str(SNAPSHOT_FIXTURES["claude-usage"])
    result = _import(fleet, "claude-usage", usage, "--connection", "anthropic-key",
                     "--windows-catalog", str(overlay))
    assert result.exit_code == 0, result.output
    refused = _import(fleet, "claude-usage", usage, "--connection", "claude-max",
                      "--windows-catalog", str(overlay))
    one_error(refused, f"it serves anthropic: {overlay} [[sources]]", "that fit: anthropic-key")


def test_SPEC6_without_a_sources_entry_the_provider_is_not_checked_and_a_note_says_so(
        fleet: Path) -> None:
    bare = fleet / "windows.toml"
    bare.write_text("", encoding="utf-8")
    result = _import(fleet, "gemini-quota", str(SNAPSHOT_FIXTURES["gemini-quota"]),
                     "--connection", "claude-max", "--no-shipped-catalogs",
                     "--windows-catalog", str(bare))
    assert result.exit_code == 0, result.output
    assert ("note: no window catalog says which providers gemini-quota serves ([[sources]]): "
            "the provider of connection 'claude-max' was not checked") in result.stderr


def test_SPEC6_catalog_check_lints_the_sources_table(tmp_path: Path) -> None:
    overlay = tmp_path / "windows.toml"
    overlay.write_text(
        '[[sources]]\nimporter = "claude-usage"\nproviders = ["claude"]\n'
        'source = "s"\nreviewed = 2026-11-30\n\n'
        '[[sources]]\nimporter = "claude-usage"\nproviders = ["claude"]\nreason = "r"\n'
        'source = "s"\nreviewed = 2026-11-30\n\n'
        '[[sources]]\nimporter = "nobody"\nproviders = ["x"]\nreason = "r"\nsource = "s"\n'
        'reviewed = 2026-11-30\n\n[[aliases_typo]]\n', encoding="utf-8")
    result = runner.invoke(app, ["catalog", "check", "--today", "2026-12-01", "--json",
                                 "--no-shipped-catalogs", "--windows-catalog", str(overlay)])
    assert result.exit_code == 1, result.output
    problems = [(p["where"], p["key"], p["code"]) for p in json.loads(result.stdout)["problems"]]
    assert problems == [
        ("aliases_typo", "", "unknown-key"),
        ("sources[0].reason", "claude-usage", "missing-reason"),
        ("sources[1]", "claude-usage", "duplicate-key"),
        ("sources[2].importer", "nobody", "invalid-entry"),
    ]
    assert "the file is refused when loaded" in result.stdout


def test_SPEC6_the_committed_schema_knows_the_sources_table() -> None:
    schema = json.loads((ROOT / "schemas" / "window-catalog.schema.json").read_text())
    assert schema == json_schema("window-catalog")
    entry = schema["$defs"]["SourceProvidersEntry"]
    assert entry["properties"]["importer"]["enum"] == sorted(SERVED)
    assert entry["required"] == ["importer", "providers"]


# --- the connection -------------------------------------------------------------------------


def test_SPEC6_gemini_buckets_onto_a_claude_connection_are_exit_2_naming_the_fitting_ones(
        fleet: Path) -> None:
    result = _import(fleet, "gemini-quota", str(SNAPSHOT_FIXTURES["gemini-quota"]),
                     "--connection", "claude-max")
    one_error(result, "--connection: connection 'claude-max' is provider 'claude', which "
               "gemini-quota does not serve (it serves gemini-cli, gemini, google-gemini-cli",
               "connections of", "that fit: gemini-cli, gemini-free;", "--force")
    assert not (fleet / "quota.json").exists()


def test_SPEC6_a_misfit_with_no_fitting_connection_says_there_is_none(fleet: Path) -> None:
    rollouts = FIXTURES / "codex"
    (fleet / "connections.toml").write_text(CONNECTIONS.replace('"codex"', '"openai"'),
                                            encoding="utf-8")
    result = _import(fleet, "codex-sessions", str(rollouts), "--connection", "claude-max")
    one_error(result, "no connection of", "is of a provider codex-sessions serves")


def test_SPEC6_antigravity_is_not_a_gemini_quota_connection(fleet: Path) -> None:
    result = _import(fleet, "gemini-quota", str(SNAPSHOT_FIXTURES["gemini-quota"]),
                     "--connection", "antigravity-main")
    one_error(result, "provider 'antigravity', which gemini-quota does not serve")


def test_SPEC6_a_misfit_leaves_an_existing_quota_file_byte_for_byte(fleet: Path) -> None:
    before = _seed_quota(fleet)
    result = _import(fleet, "copilot-user", str(SNAPSHOT_FIXTURES["copilot-user"]),
                     "--connection", "claude-max")
    one_error(result, "copilot-user does not serve")
    assert (fleet / "quota.json").read_bytes() == before


@pytest.mark.parametrize("source", sorted(SNAPSHOT_FIXTURES))
def test_SPEC6_force_imports_onto_a_connection_the_source_does_not_serve(
        fleet: Path, source: str) -> None:
    result = _import(fleet, source, str(SNAPSHOT_FIXTURES[source]),
                     "--connection", "anthropic-key", "--force")
    assert result.exit_code == 0, result.output
    assert (f"note: connection 'anthropic-key' is provider 'anthropic', which {source} does "
            "not serve") in result.stderr
    assert "imported anyway (--force)" in result.stderr
    readings = json.loads((fleet / "quota.json").read_text())["readings"]
    assert [r["connection"] for r in readings] == ["anthropic-key"]


@pytest.mark.parametrize(("source", "connection"), [
    ("claude-usage", "claude-max"), ("copilot-user", "copilot-seat"),
    ("copilot-user", "copilot-web"), ("gemini-quota", "gemini-cli"),
    ("gemini-quota", "gemini-free"), ("codex-sessions", "codex-pro"),
])
def test_SPEC6_a_fitting_import_still_works_without_force_and_without_a_fit_note(
        fleet: Path, source: str, connection: str) -> None:
    given = FIXTURES / "codex" if source == "codex-sessions" else SNAPSHOT_FIXTURES[source]
    result = _import(fleet, source, str(given), "--connection", connection)
    assert result.exit_code == 0, result.output
    assert "serve" not in result.stderr
    readings = json.loads((fleet / "quota.json").read_text())["readings"]
    assert readings
    assert {r["connection"] for r in readings} == {connection}


@pytest.mark.parametrize("source", sorted(FITTING))
def test_SPEC6_every_import_source_documents_force_in_its_help(source: str) -> None:
    result = runner.invoke(app, ["import", source, "--help"])
    assert result.exit_code == 0
    assert "--force" in result.stdout
    assert "does not" in result.stdout
    assert "serve" in result.stdout


# --- the document ---------------------------------------------------------------------------


ERROR_BODIES: list[tuple[str, str, str, str]] = [
    ("claude-oauth-usage-not-supported.json", "claude-usage", "error.type",
     'authentication_error, "OAuth authentication is currently not supported."'),
    ("claude-token-expired.json", "claude-usage", "error.type",
     'authentication_error, "OAuth token has expired. Please obtain a new token'),
    ("claude-oauth-usage-rate-limited.json", "claude-usage", "error.type",
     'rate_limit_error, "Rate limited. Please try again later."'),
    ("github-not-found.json", "copilot-user", "message", "Not Found"),
    ("github-bad-credentials.json", "copilot-user", "message", "Bad credentials"),
    ("google-unauthenticated.json", "gemini-quota", "error.status",
     '401 UNAUTHENTICATED, "Request had invalid authentication credentials.'),
    ("gemini-permission-denied.json", "gemini-quota", "error.status",
     '403 PERMISSION_DENIED, "The caller does not have permission"'),
]


@pytest.mark.parametrize(("name", "source", "field", "said"), ERROR_BODIES,
                         ids=[body[0] for body in ERROR_BODIES])
def test_SPEC6_a_published_error_body_is_exit_2_saying_what_it_is_and_writes_nothing(
        fleet: Path, name: str, source: str, field: str, said: str) -> None:
    path = ERRORS / name
    digest = _digest(path)
    result = _import(fleet, source, str(path), "--connection", FITTING[source])
    line = one_error(result, f"{name}: {field}: an error response, not a {source} document: "
                      f"{said}", "nothing was written")
    canary = json.loads(path.read_text())["_fixture_source"].split()[-1]
    assert canary.startswith("CANARY-")
    assert canary not in result.output
    assert not (fleet / "quota.json").exists()
    assert _digest(path) == digest
    assert len(line) < 400


@pytest.mark.parametrize(("name", "source"), [(body[0], body[1]) for body in ERROR_BODIES])
def test_SPEC6_an_error_body_leaves_an_existing_quota_file_byte_for_byte(
        fleet: Path, name: str, source: str) -> None:
    before = _seed_quota(fleet)
    result = _import(fleet, source, str(ERRORS / name), "--connection", FITTING[source])
    one_error(result, "an error response")
    assert (fleet / "quota.json").read_bytes() == before


def test_SPEC6_an_error_body_piped_from_gh_api_is_exit_2(fleet: Path) -> None:
    body = (ERRORS / "github-not-found.json").read_bytes()
    result = runner.invoke(app, ["import", "copilot-user", "-", "--connection", "copilot-seat",
                                 "--quota", str(fleet / "quota.json"),
                                 "--connections", str(fleet / "connections.toml")],
                           input=body)
    one_error(result, "<stdin>: message: an error response, not a copilot-user document: "
               "Not Found")
    assert not (fleet / "quota.json").exists()


def test_SPEC6_githubs_newer_body_with_a_status_says_the_status(fleet: Path) -> None:
    """Derived from github-not-found.json: newer GitHub bodies add "status": "404"."""
    body = json.loads((ERRORS / "github-not-found.json").read_text())
    (fleet / "404.json").write_text(json.dumps({**body, "status": "404"}), encoding="utf-8")
    result = _import(fleet, "copilot-user", str(fleet / "404.json"),
                     "--connection", "copilot-seat")
    one_error(result, "Not Found (status 404)")


def test_SPEC6_googles_streaming_array_of_error_bodies_is_exit_2(fleet: Path) -> None:
    """Derived from gemini-permission-denied.json: as gemini-cli#25607 published it, in the
    streaming endpoint's array."""
    body = json.loads((ERRORS / "gemini-permission-denied.json").read_text())
    (fleet / "stream.json").write_text(json.dumps([body]), encoding="utf-8")
    result = _import(fleet, "gemini-quota", str(fleet / "stream.json"),
                     "--connection", "gemini-cli")
    one_error(result, "stream.json: [0].error.status: an error response, not a gemini-quota "
               'document: 403 PERMISSION_DENIED, "The caller does not have permission"')


def test_SPEC6_one_error_body_among_good_files_writes_nothing(fleet: Path) -> None:
    result = _import(fleet, "claude-usage", str(SNAPSHOT_FIXTURES["claude-usage"]),
                     str(ERRORS / "claude-token-expired.json"), "--connection", "claude-max")
    one_error(result, "claude-token-expired.json: error.type")
    assert not (fleet / "quota.json").exists()


@pytest.mark.parametrize(("document", "expected"), [
    ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     ("error.type", "overloaded_error", '"Overloaded"')),
    ({"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}},
     ("error.status", "429 RESOURCE_EXHAUSTED", '"Quota exceeded."')),
    ({"error": {"message": "Incorrect API key", "type": "invalid_request_error",
                "code": "invalid_api_key"}},
     ("error.type", "invalid_request_error", '"Incorrect API key"')),
    ({"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
     ("error", "invalid_grant", '"Token has been expired or revoked."')),
    ({"type": "error"}, ("type", "error", None)),
    ({"errors": [{"message": "Bad credentials"}]}, ("errors[0].message", "Bad credentials", None)),
    ({"error": {"detail": "x"}}, ("error", "error", None)),
], ids=["anthropic-type", "google-code-status", "openai-style", "oauth-string", "bare-type",
        "errors-list", "error-object-without-names"])
def test_SPEC6_each_error_body_shape_is_recognised(document: dict[str, Any],
                                                   expected: tuple[str, str, str | None]) -> None:
    found = fit.error_body(document)
    assert found is not None
    assert (found.field, found.kind, found.message) == expected


@pytest.mark.parametrize("document", [
    {"five_hour": None, "error": None}, {"buckets": [], "error": ""},
    {"message": "hello"}, {"errors": []}, {"type": "event_msg"}, [], [1], "error", 401,
])
def test_SPEC6_a_document_that_only_looks_close_is_no_error_body(document: Any) -> None:
    assert fit.error_body(document) is None


def test_SPEC6_an_error_message_is_quoted_and_cut_never_echoed_whole() -> None:
    long = "x" * 500
    found = fit.error_body({"error": {"type": "authentication_error", "message": long}})
    assert found is not None
    assert found.message is not None
    assert len(found.message) < 90
    assert found.message.endswith('…"')
    odd = fit.error_body({"error": {"type": "weird\ntype with; token=abc " + "y" * 80}})
    assert odd is not None
    assert odd.kind.startswith('"')
    assert len(odd.kind) <= 42


@pytest.mark.parametrize(("source", "given", "other", "keys"), [
    ("copilot-user", "claude-usage", "claude-usage", "extra_usage, five_hour, seven_day"),
    ("gemini-quota", "copilot-user", "copilot-user", "access_type_sku, copilot_plan"),
    ("claude-usage", "gemini-quota", "gemini-quota", "buckets"),
], ids=["claude-to-copilot", "copilot-to-gemini", "gemini-to-claude"])
def test_SPEC6_another_sources_document_is_exit_2_named_as_what_it_is(
        fleet: Path, source: str, given: str, other: str, keys: str) -> None:
    result = _import(fleet, source, str(SNAPSHOT_FIXTURES[given]),
                     "--connection", FITTING[source])
    one_error(result, f"the top level: a {other} document ({keys}", f"not a {source} one",
               f"import it with `omniladder import {other}`")
    assert not (fleet / "quota.json").exists()


@pytest.mark.parametrize(("document", "said"), [
    ({"plan": "pro", "quota": 3}, "its keys: plan, quota"),
    ({}, "it is an empty object"),
])
def test_SPEC6_a_document_with_none_of_the_sources_keys_is_exit_2(
        fleet: Path, document: dict[str, Any], said: str) -> None:
    (fleet / "odd.json").write_text(json.dumps(document), encoding="utf-8")
    result = _import(fleet, "gemini-quota", str(fleet / "odd.json"), "--connection", "gemini-cli")
    one_error(result, "odd.json: the top level: not a gemini-quota document: it has none of "
               "its keys (buckets)", said)


@pytest.mark.parametrize(("text", "fragments"), [
    (json.dumps(json.loads((FIXTURES / "claude" / "usage.json").read_text()), indent=2),
     ("rollout-2026-11-29.jsonl: the top level: a claude-usage document",)),
    ((ERRORS / "claude-token-expired.json").read_text(),
     ("rollout-2026-11-29.jsonl: error.type: an error response, not a codex-sessions document",)),
    (json.dumps({"error": {"message": "Rate limited.", "type": "rate_limit_error"}}) + "\n",
     ("error.type: an error response", "rate_limit_error")),
], ids=["pretty-printed-claude-body", "pretty-printed-error", "one-line-error"])
def test_SPEC6_a_rollout_file_that_is_no_rollout_is_exit_2(
        fleet: Path, text: str, fragments: tuple[str, ...]) -> None:
    folder = fleet / "sessions"
    folder.mkdir()
    (folder / "rollout-2026-11-29.jsonl").write_text(text, encoding="utf-8")
    result = _import(fleet, "codex-sessions", str(folder), "--connection", "codex-pro")
    one_error(result, *fragments)
    assert not (fleet / "quota.json").exists()


@pytest.mark.parametrize("text", ["", "\n\n  \n"], ids=["empty", "blank-lines"])
def test_SPEC6_an_empty_rollout_fits_and_holds_no_reading(fleet: Path, text: str) -> None:
    rollout = fleet / "rollout-empty.jsonl"
    rollout.write_text(text, encoding="utf-8")
    result = _import(fleet, "codex-sessions", str(rollout), "--connection", "codex-pro")
    assert result.exit_code == 0, result.output
    assert "the codex-sessions input held no quota reading" in result.stderr


def test_SPEC6_a_rollout_whose_first_line_is_a_session_meta_fits(fleet: Path) -> None:
    rollout = fleet / "rollout-a.jsonl"
    rollout.write_text("\n" + json.dumps({"timestamp": "2026-11-29T10:00:00Z",
                                          "type": "session_meta", "payload": {}}) + "\n"
                       + _codex_line("2026-11-29T10:01:00Z") + "\n", encoding="utf-8")
    result = _import(fleet, "codex-sessions", str(rollout), "--connection", "codex-pro")
    assert result.exit_code == 0, result.output
    assert len(json.loads((fleet / "quota.json").read_text())["readings"]) == 1


# --- the instants ---------------------------------------------------------------------------


def _later(delta: timedelta) -> str:
    return timefmt.iso(CLOCK + delta)


@pytest.mark.parametrize(("delta", "fits"), [
    (timedelta(minutes=5), True), (timedelta(minutes=5, seconds=1), False),
    (timedelta(0), True), (-timedelta(days=30), True),
], ids=["exactly-5-minutes", "5-minutes-and-1-second", "at-the-clock", "a-month-old"])
def test_SPEC6_a_snapshot_later_than_the_clock_by_more_than_5_minutes_is_exit_2(
        fleet: Path, delta: timedelta, fits: bool) -> None:
    at = _later(delta)
    result = _import(fleet, "claude-usage", str(SNAPSHOT_FIXTURES["claude-usage"]),
                     "--connection", "claude-max", at=at)
    if fits:
        assert result.exit_code == 0, result.output
        assert json.loads((fleet / "quota.json").read_text())["taken_at"] == at
        return
    one_error(result, f"--at: a reading at {at} is later than the clock "
               f"({timefmt.iso(CLOCK)}) by more than 5 minutes", "taken_at")
    assert not (fleet / "quota.json").exists()


def test_SPEC6_a_file_modified_in_the_future_is_exit_2_naming_the_file(fleet: Path) -> None:
    usage = fleet / "usage.json"
    usage.write_bytes(SNAPSHOT_FIXTURES["claude-usage"].read_bytes())
    future = (CLOCK + timedelta(days=365)).timestamp()
    os.utime(usage, (future, future))
    result = _import(fleet, "claude-usage", str(usage), "--connection", "claude-max", at=None)
    one_error(result, "usage.json: modification time: a reading at 2027-11-29T12:30:00Z")
    assert not (fleet / "quota.json").exists()


@pytest.mark.parametrize(("delta", "fits"), [
    (timedelta(minutes=5), True), (timedelta(minutes=5, seconds=1), False),
])
def test_SPEC6_a_rollout_line_later_than_the_clock_is_exit_2_and_leaves_the_file(
        fleet: Path, delta: timedelta, fits: bool) -> None:
    before = _seed_quota(fleet)
    rollout = fleet / "rollout-b.jsonl"
    rollout.write_text(_codex_line("2026-11-29T10:00:00Z") + "\n"
                       + _codex_line(_later(delta)) + "\n", encoding="utf-8")
    result = _import(fleet, "codex-sessions", str(rollout), "--connection", "codex-pro")
    if fits:
        assert result.exit_code == 0, result.output
        assert json.loads((fleet / "quota.json").read_text())["taken_at"] == _later(delta)
        return
    one_error(result, f"rollout-b.jsonl: timestamp: a reading at {_later(delta)}")
    assert (fleet / "quota.json").read_bytes() == before


def test_SPEC6_a_reading_dated_2030_never_moves_taken_at(fleet: Path) -> None:
    before = _seed_quota(fleet)
    result = _import(fleet, "claude-usage", str(SNAPSHOT_FIXTURES["claude-usage"]),
                     "--connection", "claude-max", at="2030-01-01T00:00:00Z")
    one_error(result, "2030-01-01T00:00:00Z")
    assert (fleet / "quota.json").read_bytes() == before


@pytest.mark.parametrize(("source", "connection", "fitting"), [
    ("claude-usage", "claude-key", "claude-max"),
    ("codex-sessions", "codex-key", "codex-pro"),
    ("gemini-quota", "gemini-key", "gemini-cli, gemini-free"),
])
def test_SPEC6_plan_telemetry_onto_an_api_key_of_a_served_provider_is_exit_2(
        fleet: Path, source: str, connection: str, fitting: str) -> None:
    """Claude's OAuth usage fitted a claude connection of auth_type apikey, and why then
    showed a plan window on a key: the fit check reads the auth type too."""
    given = FIXTURES / "codex" if source == "codex-sessions" else SNAPSHOT_FIXTURES[source]
    result = _import(fleet, source, str(given), "--connection", connection)
    one_error(result, f"--connection: connection {connection!r} is auth_type 'apikey', whose "
               f"connections carry no {source} telemetry (it describes",
               "of auth_type oauth: <shipped>/quota-windows.toml [[sources]])",
               f"that fit: {fitting};", "--force")
    assert not (fleet / "quota.json").exists()
    forced = _import(fleet, source, str(given), "--connection", connection, "--force")
    assert forced.exit_code == 0, forced.output
    assert f"connection {connection!r} is auth_type 'apikey'" in forced.stderr
    assert "imported anyway (--force)" in forced.stderr


def test_SPEC6_a_copilot_seat_token_still_fits(fleet: Path) -> None:
    """copilot-web is reached with the seat's token (auth_type apikey, billed per seat):
    the catalog lists both auth types for copilot-user."""
    result = _import(fleet, "copilot-user", str(SNAPSHOT_FIXTURES["copilot-user"]),
                     "--connection", "copilot-web")
    assert result.exit_code == 0, result.output
    assert "auth_type" not in result.stderr
