"""`audit omniroute`: a gateway's candidate list held against the plan of the same fleet.

The fixtures under tests/fixtures/sources/omniroute-candidates/ are OmniRoute's documented
shapes (their README says where each comes from); the engine cases build fleets with the
test builders and cite the SPEC rule behind the plan's side of each finding.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.analyses.audit import (
    AUDIT_REASONS,
    FAILING_KINDS,
    KINDS,
    CandidatesDocument,
    audit_auto_id,
    audit_plan,
    kind_of_reason,
    parse_candidates,
)
from omniladder.cli import app
from omniladder.engine.records import REASON_CODES
from omniladder.errors import InputError, UsageError
from omniladder.rendering import Format
from omniladder.rendering.audit_view import RENDERERS, render_audit
from tests.builders import at, conn, fleet, reading, window
from tests.builders import plan as make_plan
from tests.conftest import EXAMPLES, ROOT
from tests.depth import deep
from tests.strategies import input_sets

runner = CliRunner()
FIXTURES = ROOT / "tests" / "fixtures" / "sources" / "omniroute-candidates"
FLEET = FIXTURES / "fleet" / "omniladder.toml"


def row(cid: str, model: str, provider: str = "claude", **flags: Any) -> dict[str, Any]:
    """One candidate row in the documented naming; every flag says "use it" by default."""
    data: dict[str, Any] = {
        "provider": provider, "connectionId": cid, "model": model,
        "modelStr": f"{provider}/{model}", "excluded": False, "reachable": True,
        "breakerState": "CLOSED", "connectionCooldown": False, "modelLocked": False,
        "freeAccessExclusion": None}
    data.update(flags)
    return data


def document(*rows: dict[str, Any], channel: str | None = "auto/thrifty") -> CandidatesDocument:
    body: dict[str, Any] = {"candidates": list(rows)}
    if channel is not None:
        body["channel"] = channel
    return parse_candidates(json.dumps(body).encode(), "candidates.json")


def findings(doc: CandidatesDocument, auto_id: str = "auto/thrifty",
             **fleet_args: Any) -> list[tuple[str, str, str, str]]:
    """(kind, connection, model, reason) of every finding, in the audit's order."""
    inputs = fleet_args.pop("inputs")
    result = audit_plan(doc, make_plan(inputs, auto_id))
    return [(f.kind, f.connection_id, f.model, f.reason) for f in result.findings]


def run(*args: str) -> Any:
    return runner.invoke(app, ["audit", "omniroute", *args])


def run_fixture(name: str, *extra: str) -> Any:
    return run(str(FIXTURES / name), "--config", str(FLEET), "--json", *extra)


def doc_of(result: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def kinds_of(result: Any) -> list[tuple[str, str, str, str]]:
    return [(f["kind"], f["connection_id"], f"{f['provider']}/{f['model']}", f["reason"])
            for f in doc_of(result)["findings"]]


# --- the fixtures: OmniRoute's documented shapes --------------------------------------------


def test_a_flat_subscription_channel_reaching_paid_keys_would_bill() -> None:
    """The reference failure: auto/subscription dispatching the full pool (SPEC §5)."""
    result = run_fixture("subscription-full-pool.json")
    assert result.exit_code == 1, result.output
    assert kinds_of(result) == [
        ("would-bill", "claude-key", "claude/claude-sonnet-4-5", "billing-uncurated"),
        ("would-bill", "openai-key", "openai/gpt-5-mini", "billing-uncurated"),
        ("would-dispatch-exhausted", "codex-plus", "codex/gpt-5.1-codex",
         "quota-below-cutoff"),
    ]
    doc = doc_of(result)
    assert doc["auto_id"] == "auto/subscription"
    assert doc["channel"] == "auto/subscription"
    assert doc["counts"] == {"rows": 5, "used": 4, "would-bill": 2,
                             "would-dispatch-exhausted": 1, "would-dispatch-unknown": 0,
                             "unknown-to-plan": 0, "missed-capacity": 0}
    assert doc["passed"] is False
    exhausted = doc["findings"][2]
    assert exhausted["detail"] == "session window at 0% (cutoff 2%), resets 13:00Z"
    assert exhausted["plan_rung"] == "subscription"
    assert exhausted["gateway"] == {
        "row": 3, "excluded": False, "reachable": True, "breakerState": "CLOSED",
        "connectionCooldown": False, "modelLocked": False, "freeAccessExclusion": None,
        "used": True}
    assert ("omniladder: exit 1: the gateway's auto/subscription candidates against "
            "auto/subscription: 2 would-bill, 1 would-dispatch-exhausted, 0 "
            "would-dispatch-unknown") in result.stderr


def test_a_mixed_allowlist_keeps_the_key_beside_the_plan() -> None:
    """The other reference failure, in the newer field naming: R11 splits the candidate by
    rung; the gateway holds the plan and the key in one allowlist."""
    result = run_fixture("thrifty-mixed-allowlist.json")
    assert result.exit_code == 1, result.output
    assert kinds_of(result) == [
        ("would-bill", "claude-key", "claude/claude-sonnet-4-5", "mixed-allowlist")]
    (finding,) = doc_of(result)["findings"]
    assert finding["plan_rung"] == "premium"
    assert "apart from claude-max (subscription)" in finding["detail"]


def test_a_gateway_that_agrees_with_the_plan_exits_0() -> None:
    result = run_fixture("subscription-clean.json")
    assert result.exit_code == 0, result.output
    doc = doc_of(result)
    assert doc["findings"] == []
    assert doc["passed"] is True
    assert doc["counts"]["used"] == 1
    assert doc["summary"] == (
        "audit auto/subscription: 1 of 4 gateway rows in use — 0 would-bill, 0 "
        "would-dispatch-exhausted, 0 would-dispatch-unknown, 0 unknown-to-plan, 0 "
        "missed-capacity; the gateway dispatches nothing the plan keeps out")


def test_a_stale_import_fails_closed_under_auto_subscription_R10() -> None:
    """Rows the plan's inputs do not have are rows it cannot vouch for: under the fail-closed
    id they are a "no", not a pass."""
    result = run_fixture("subscription-stale-import.json")
    assert result.exit_code == 1, result.output
    assert kinds_of(result) == [
        ("would-dispatch-unknown", "claude-max-2", "claude/claude-sonnet-4-5",
         "unknown-connection"),
        ("would-dispatch-unknown", "claude-max", "claude/claude-sonnet-5", "unknown-model"),
    ]
    details = [f["detail"] for f in doc_of(result)["findings"]]
    assert "connections.toml; import the gateway again" in details[0]
    assert "(claude-sonnet-4-5, claude-opus-4-1)" in details[1]


def test_missed_capacity_names_the_gateway_flag_that_skipped_it() -> None:
    result = run_fixture("thrifty-missed-capacity.json")
    assert result.exit_code == 0, result.output
    assert kinds_of(result) == [
        ("missed-capacity", "claude-max", "claude/claude-sonnet-4-5", "breaker-open"),
        ("missed-capacity", "ollama-local", "ollama/qwen2.5-coder:32b", "model-locked"),
        ("missed-capacity", "openai-key", "openai/gpt-5-mini", "free-access-exclusion"),
        ("missed-capacity", "claude-key", "claude/claude-sonnet-4-5", "not-listed"),
    ]
    found = doc_of(result)["findings"]
    assert found[0]["detail"] == ("the plan admits it at #1 on the subscription rung; the "
                                  "gateway skips it")
    assert found[0]["gateway"]["breakerState"] == "OPEN"
    assert found[3]["gateway"] is None


def test_both_field_namings_read_the_same() -> None:
    older = json.dumps({"channel": "auto/thrifty", "candidates": [row("c", "sonnet")]})
    newer = json.dumps({"channel": "auto/thrifty", "candidates": [{
        "providerId": "claude", "connectionId": "c", "modelId": "sonnet",
        "modelReference": "claude/sonnet", "excluded": False, "reachable": True,
        "breakerState": "closed", "connectionCooldown": False, "modelLocked": False,
        "freeAccessExclusion": None}]})
    a = parse_candidates(older.encode(), "a.json").rows[0]
    b = parse_candidates(newer.encode(), "b.json").rows[0]
    assert (a.provider, a.connection_id, a.model, a.model_ref, a.used) == (
        b.provider, b.connection_id, b.model, b.model_ref, b.used) == (
        "claude", "c", "sonnet", "claude/sonnet", True)


# --- the engine: each kind, both sides of each boundary ------------------------------------


def _two_claude(quota_remaining: float = 50) -> Any:
    return fleet(
        [conn("plan", models=["sonnet"]),
         conn("key", auth_type="apikey", models=["sonnet"])],
        [reading("plan", window("5h", quota_remaining, at(hours=1)))])


@pytest.mark.parametrize(("model", "ref"), [
    ("sonnet", "claude/sonnet"), ("claude/sonnet", "claude/sonnet"), ("sonnet", None),
    ("claude/sonnet", None), ("cc/sonnet", None)])
def test_a_model_is_matched_with_or_without_its_provider_prefix(model: str,
                                                                ref: str | None) -> None:
    doc = document(row("plan", model, modelStr=ref), row("key", "sonnet", excluded=True))
    assert findings(doc, "auto/subscription", inputs=_two_claude()) == []


def test_a_model_under_another_name_is_unknown_to_plan() -> None:
    doc = document(row("plan", "sonnet-2", modelStr="claude/sonnet-2"),
                   row("plan", "sonnet", reachable=False, modelLocked=True))
    assert findings(doc, inputs=_two_claude()) == [
        ("unknown-to-plan", "plan", "sonnet-2", "unknown-model"),
        ("missed-capacity", "plan", "sonnet", "model-locked"),
        ("missed-capacity", "key", "sonnet", "not-listed")]
    assert findings(doc, "auto/subscription", inputs=_two_claude()) == [
        ("would-dispatch-unknown", "plan", "sonnet-2", "unknown-model"),
        ("missed-capacity", "plan", "sonnet", "model-locked")]


def test_a_provider_the_import_does_not_agree_with_is_unknown_to_plan() -> None:
    doc = document(row("plan", "sonnet", provider="anthropic"),
                   row("plan", "sonnet"), row("key", "sonnet", excluded=True))
    assert findings(doc, "auto/subscription", inputs=_two_claude()) == [
        ("would-dispatch-unknown", "plan", "sonnet", "provider-mismatch")]
    assert findings(doc, inputs=_two_claude()) == [
        ("unknown-to-plan", "plan", "sonnet", "provider-mismatch"),
        ("missed-capacity", "key", "sonnet", "excluded")]


@pytest.mark.parametrize(("remaining", "expected"), [
    (2, [("would-dispatch-exhausted", "plan", "sonnet", "quota-below-cutoff")]),
    (2.5, []),
])
def test_the_cutoff_decides_would_dispatch_exhausted_R6(remaining: float,
                                                       expected: list[Any]) -> None:
    """At the exit cutoff the plan drops the plan connection; just above it, they agree."""
    doc = document(row("plan", "sonnet"), row("key", "sonnet", excluded=True))
    assert findings(doc, "auto/subscription", inputs=_two_claude(remaining)) == expected


def test_a_key_the_gateway_excludes_is_missed_capacity_under_thrifty_R11() -> None:
    doc = document(row("plan", "sonnet"), row("key", "sonnet", excluded=True))
    assert findings(doc, inputs=_two_claude()) == [
        ("missed-capacity", "key", "sonnet", "excluded")]


def test_a_paid_key_alone_in_its_candidate_is_not_a_leak_R11() -> None:
    inputs = fleet([conn("key", auth_type="apikey", models=["sonnet"])], [])
    assert findings(document(row("key", "sonnet")), inputs=inputs) == []


def test_a_paid_key_beside_a_skipped_plan_connection_is_not_a_leak_R11() -> None:
    doc = document(row("plan", "sonnet", breakerState="OPEN", reachable=False),
                   row("key", "sonnet"))
    assert findings(doc, inputs=_two_claude()) == [
        ("missed-capacity", "plan", "sonnet", "breaker-open")]


def test_a_paid_key_beside_a_used_plan_connection_is_a_leak_R11() -> None:
    doc = document(row("plan", "sonnet"), row("key", "sonnet"))
    assert findings(doc, inputs=_two_claude()) == [
        ("would-bill", "key", "sonnet", "mixed-allowlist")]


def test_the_key_in_auto_subscription_would_bill_R10() -> None:
    doc = document(row("plan", "sonnet"), row("key", "sonnet"), channel="auto/subscription")
    assert findings(doc, "auto/subscription", inputs=_two_claude()) == [
        ("would-bill", "key", "sonnet", "billing-uncurated")]


@pytest.mark.parametrize(("flags", "skipped_by"), [
    ({}, ()),
    ({"breakerState": "HALF_OPEN"}, ()),
    ({"breakerState": "DEGRADED"}, ()),
    ({"breakerState": "open", "reachable": False}, ("breaker-open",)),
    ({"breakerState": "OPEN"}, ("breaker-open",)),
    ({"reachable": False}, ("unreachable",)),
    ({"excluded": True}, ("excluded",)),
    ({"connectionCooldown": True, "reachable": False}, ("connection-cooldown",)),
    ({"modelLocked": True, "reachable": False}, ("model-locked",)),
    ({"freeAccessExclusion": "no-hard-stop"}, ("free-access-exclusion",)),
    ({"excluded": True, "modelLocked": True}, ("excluded", "model-locked")),
])
def test_which_rows_the_gateway_would_use(flags: dict[str, Any],
                                          skipped_by: tuple[str, ...]) -> None:
    (parsed,) = document(row("c", "sonnet", **flags)).rows
    assert parsed.skipped_by == skipped_by
    assert parsed.used is (skipped_by == ())


def test_absent_flags_mean_the_gateway_uses_the_row() -> None:
    body = {"channel": "auto/thrifty",
            "candidates": [{"provider": "claude", "connectionId": "c", "model": "sonnet"}]}
    (parsed,) = parse_candidates(json.dumps(body).encode(), "c.json").rows
    assert parsed.used is True
    assert parsed.model_ref is None


@pytest.mark.parametrize("reason", [r for r in REASON_CODES if r != "no-models"])
def test_every_plan_reason_makes_a_finding_kind(reason: str) -> None:
    kind = kind_of_reason(reason)
    assert kind in KINDS
    if reason.startswith(("quota-",)) or reason in ("inactive", "terminal-status", "cooldown",
                                                    "connection-status-unknown"):
        assert kind == "would-dispatch-exhausted"
    elif reason.startswith(("billing-", "overage-", "budget-")) \
            or reason == "keyless-not-subscription":
        assert kind == "would-bill"
    else:
        assert (reason, kind) == ("not-in-category", "unknown-to-plan")


def test_audit_reasons_do_not_collide_with_plan_reasons() -> None:
    assert not set(AUDIT_REASONS) & set(REASON_CODES)
    assert FAILING_KINDS == ("would-bill", "would-dispatch-exhausted",
                             "would-dispatch-unknown")


# --- the auto id ---------------------------------------------------------------------------


def test_the_auto_id_defaults_to_the_channel() -> None:
    chosen, warning = audit_auto_id(document(channel="auto/coding:subscription"), None)
    assert (chosen.text, warning) == ("auto/coding:subscription", None)


def test_a_given_auto_id_wins_and_a_different_channel_warns() -> None:
    chosen, warning = audit_auto_id(document(channel="auto/thrifty"), "auto/subscription")
    assert chosen.text == "auto/subscription"
    assert warning == ("candidates.json: channel 'auto/thrifty' is not auto/subscription; the "
                       "rows are held against the plan of auto/subscription")
    same, none = audit_auto_id(document(channel="auto/thrifty"), "auto/thrifty")
    assert (same.text, none) == ("auto/thrifty", None)


def test_a_gateway_only_channel_needs_an_auto_id() -> None:
    doc = document(channel="auto/best-coding")
    with pytest.raises(InputError) as caught:
        audit_auto_id(doc, None)
    assert str(caught.value).startswith(
        "candidates.json: channel: 'auto/best-coding' is not an omniladder auto id")
    assert audit_auto_id(doc, "auto/thrifty") == (audit_auto_id(document(), None)[0], None)
    with pytest.raises(UsageError):
        audit_auto_id(doc, "auto/coding")


def test_a_document_without_a_channel_needs_an_auto_id() -> None:
    with pytest.raises(InputError) as caught:
        audit_auto_id(document(channel=None), None)
    assert "channel: missing: give AUTO_ID" in str(caught.value)


# --- the command line ----------------------------------------------------------------------


def test_the_human_view_has_a_table_per_kind_and_a_verdict() -> None:
    result = run(str(FIXTURES / "subscription-full-pool.json"), "--config", str(FLEET))
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert out.startswith("omniladder audit omniroute ")
    assert "auto/subscription at 2026-11-29T12:00:00Z (from the quota snapshot) · channel " \
        "auto/subscription · 5 rows, 4 in use" in out
    assert "would-bill — the gateway uses what the plan keeps out to avoid billing (2)" in out
    assert "would-dispatch-exhausted — the gateway uses what the plan finds exhausted, " \
        "cooling down or gated (1)" in out
    assert "unknown-to-plan —" not in out
    assert out.rstrip().endswith("the gateway does not do what the plan says")
    (line,) = [line for line in out.splitlines() if line.startswith(" codex-plus ")]
    assert line.split()[:7] == ["codex-plus", "codex/gpt-5.1-codex", "subscription",
                                "quota-below-cutoff", "in", "use", "session"]


def test_an_explicit_auto_id_and_standard_input() -> None:
    text = (FIXTURES / "subscription-clean.json").read_text(encoding="utf-8")
    result = runner.invoke(app, ["audit", "omniroute", "-", "auto/thrifty", "--config",
                                 str(FLEET), "--json"], input=text)
    assert result.exit_code == 0, result.output
    doc = doc_of(result)
    assert doc["auto_id"] == "auto/thrifty"
    assert doc["candidates_file"] == "<stdin>"
    # under thrifty the plan also admits the key, which this gateway excludes
    assert ("missed-capacity", "claude-key", "claude/claude-sonnet-4-5", "excluded") in \
        kinds_of(result)
    assert any("channel 'auto/subscription' is not auto/thrifty" in w for w in doc["warnings"])


def test_now_plans_the_same_fleet_at_another_instant() -> None:
    """An hour on, the 11:59Z readings are stale (R6.5): auto/subscription fails closed, so
    the plan connection the gateway still uses is now would-dispatch-exhausted too."""
    result = run_fixture("subscription-full-pool.json", "--now", "2026-11-29T13:00:01Z")
    assert result.exit_code == 1, result.output
    assert kinds_of(result)[2:] == [
        ("would-dispatch-exhausted", "claude-max", "claude/claude-sonnet-4-5", "quota-stale"),
        ("would-dispatch-exhausted", "codex-plus", "codex/gpt-5.1-codex", "quota-stale")]
    assert doc_of(result)["now"] == "2026-11-29T13:00:01Z"
    assert doc_of(result)["now_source"] == "flag"


BAD: list[tuple[str, str, str]] = [
    ("not-json", "{", "bad.json:1"),
    ("top-array", "[]", "bad.json: the top level: expected an object, got []"),
    ("no-candidates", '{"channel": "auto/thrifty"}',
     "bad.json: candidates: missing: the gateway's candidate rows"),
    ("candidates-object", '{"channel": "auto/thrifty", "candidates": {}}',
     "bad.json: candidates: expected an array, got {}"),
    ("row-not-object", '{"channel": "auto/thrifty", "candidates": [3]}',
     "bad.json: candidates[0]: expected an object, got 3"),
    ("no-connection", '{"channel": "auto/thrifty", "candidates": [{"provider": "claude", '
     '"model": "m"}]}', "bad.json: candidates[0].connectionId: missing"),
    ("blank-connection", '{"channel": "auto/thrifty", "candidates": [{"provider": "claude", '
     '"connectionId": " ", "model": "m"}]}',
     "bad.json: candidates[0].connectionId: expected a non-empty string"),
    ("no-provider", '{"channel": "auto/thrifty", "candidates": [{"connectionId": "c", '
     '"model": "m"}]}', "bad.json: candidates[0].provider: missing (provider or providerId)"),
    ("no-model", '{"channel": "auto/thrifty", "candidates": [{"connectionId": "c", '
     '"provider": "claude"}]}', "bad.json: candidates[0].model: missing"),
    ("flag-type", '{"channel": "auto/thrifty", "candidates": [{"connectionId": "c", '
     '"provider": "claude", "model": "m", "reachable": "yes"}]}',
     'bad.json: candidates[0].reachable: expected true or false, got "yes"'),
    ("breaker-type", '{"channel": "auto/thrifty", "candidates": [{"connectionId": "c", '
     '"provider": "claude", "model": "m", "breakerState": 1}]}',
     "bad.json: candidates[0].breakerState: expected a string, got 1"),
    ("names-disagree", '{"channel": "auto/thrifty", "candidates": [{"connectionId": "c", '
     '"provider": "claude", "providerId": "codex", "model": "m"}]}',
     "bad.json: candidates[0].provider: provider 'claude' and providerId 'codex' disagree"),
    ("channel-type", '{"channel": 5, "candidates": []}',
     "bad.json: channel: expected a non-empty string, got 5"),
    ("gateway-channel", '{"channel": "auto/best-coding", "candidates": []}',
     "bad.json: channel: 'auto/best-coding' is not an omniladder auto id"),
]


@pytest.mark.parametrize(("text", "message"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_a_bad_candidate_document_is_one_exit_2_line(tmp_path: Path, text: str,
                                                     message: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(text, encoding="utf-8")
    result = run("bad.json", "--config", str(FLEET))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"omniladder: error: {message}"), line
    assert (tmp_path / "bad.json").read_text(encoding="utf-8") == text


def test_a_missing_file_and_a_bad_auto_id_are_exit_2(tmp_path: Path) -> None:
    missing = run(str(tmp_path / "none.json"), "--config", str(FLEET))
    assert missing.exit_code == 2
    assert "none.json: file not found" in missing.stderr
    bad_id = run(str(FIXTURES / "subscription-clean.json"), "auto/coding", "--config",
                 str(FLEET))
    assert bad_id.exit_code == 2
    assert "auto/coding" in bad_id.stderr


def test_every_format_has_an_audit_renderer() -> None:
    assert set(RENDERERS) == set(Format)
    doc = document(row("plan", "sonnet"), row("key", "sonnet"))
    result = audit_plan(doc, make_plan(_two_claude(), "auto/thrifty"))
    for fmt in Format:
        out = io.StringIO()
        render_audit(result, fmt, out)
        assert "mixed-allowlist" in out.getvalue()


# --- the example and check -----------------------------------------------------------------


def test_the_example_candidates_show_the_reference_failures() -> None:
    result = run(str(EXAMPLES / "omniroute-candidates.json"), "--config",
                 str(EXAMPLES / "omniladder.toml"), "--json")
    assert result.exit_code == 1, result.output
    assert kinds_of(result) == [
        ("would-bill", "claude-max-extra", "claude/claude-sonnet-4-5",
         "overage-not-hard-stop"),
        ("would-bill", "claude-api", "claude/claude-sonnet-4-5", "billing-uncurated"),
        ("would-bill", "openai-key", "openai/gpt-5-mini", "billing-not-subscription"),
        ("would-dispatch-exhausted", "claude-pro-personal", "claude/claude-sonnet-4-5",
         "quota-below-reentry"),
    ]


def test_check_fails_on_an_audit_with_junit_evidence(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = runner.invoke(app, ["check", str(EXAMPLES / "policy-gateway.toml"), "--junit",
                                 str(report)])
    assert result.exit_code == 1, result.output
    assert ("    - would-bill claude-api claude/claude-sonnet-4-5: billing-uncurated — "
            "provider 'claude' with auth_type 'apikey' is not in the billing catalog; "
            "treated as metered (gateway: in use)") in result.stdout
    (case,) = ET.parse(report).getroot().iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "1 of 1 checks failed: audit"
    text = failure.text or ""
    assert ("found 3 would-bill, 1 would-dispatch-exhausted, 0 would-dispatch-unknown (5 of 7 "
            "gateway rows in use)") in text
    assert text.count("\n  - ") == 4
    assert "would-dispatch-exhausted claude-pro-personal" in text


def _policy(tmp_path: Path, audit: str, auto_id: str = "auto/subscription") -> Path:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'config = "{(EXAMPLES / "omniladder.toml").as_posix()}"\n\n[[expect]]\n'
        f'name = "gateway"\nauto_id = "{auto_id}"\naudit = "{audit}"\n', encoding="utf-8")
    return policy


def test_check_passes_on_a_clean_audit_relative_to_the_policy(tmp_path: Path) -> None:
    (tmp_path / "gw").mkdir()
    (tmp_path / "gw" / "c.json").write_bytes(
        (FIXTURES / "example-fleet-clean.json").read_bytes())
    result = runner.invoke(app, ["check", str(_policy(tmp_path, "gw/c.json")), "--json"])
    assert result.exit_code == 0, result.output
    (expectation,) = json.loads(result.stdout)["expectations"]
    (check,) = expectation["checks"]
    assert check["check"] == "audit"
    assert check["passed"] is True
    assert check["actual"] == ("0 would-bill, 0 would-dispatch-exhausted, 0 "
                               "would-dispatch-unknown (1 of 3 gateway rows "
                               "in use)")


def test_check_warns_when_the_channel_is_another_id(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_bytes((FIXTURES / "example-fleet-clean.json").read_bytes())
    result = runner.invoke(app, ["check", str(_policy(tmp_path, "c.json", "auto/thrifty")),
                                 "--json"])
    warnings = json.loads(result.stdout)["warnings"]
    assert any(w.startswith("expect[0].audit: ") and "is not auto/thrifty" in w
               for w in warnings), warnings


def test_check_with_a_missing_or_bad_audit_file_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(_policy(tmp_path, "none.json"))])
    assert result.exit_code == 2, result.output
    assert "none.json: file not found" in result.stderr
    (tmp_path / "bad.json").write_text('{"candidates": [{}]}', encoding="utf-8")
    result = runner.invoke(app, ["check", str(_policy(tmp_path, "bad.json"))])
    assert result.exit_code == 2, result.output
    assert "bad.json: candidates[0].connectionId: missing" in result.stderr


def test_the_docs_section_shows_the_example_verdict_and_every_code() -> None:
    """docs/gateways.md#audit shows what the command prints for the example, and every kind."""
    page = (ROOT / "docs" / "gateways.md").read_text(encoding="utf-8")
    section = page.split("## Is my gateway doing what the plan says?", 1)[1].split("\n## ", 1)[0]
    result = run(str(EXAMPLES / "omniroute-candidates.json"), "--config",
                 str(EXAMPLES / "omniladder.toml"))
    verdict = result.stdout.rstrip().splitlines()[-1]
    assert f"\n{verdict}\n" in section
    table = section.split("| finding | when | exit |", 1)[1]
    for kind in KINDS:
        assert f"| `{kind}` |" in table, kind
    for code in AUDIT_REASONS:
        assert f"`{code}`" in table, code
    assert "/api/v1/auto-combo/subscription/candidates" in section


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_no_unknown_field_of_the_document_reaches_any_output(name: str) -> None:
    """The fixtures carry a canary in a field the audit does not read; neither view, nor
    stderr, nor check's JUnit evidence may echo it. The file stays byte-identical."""
    path = FIXTURES / name
    before = path.read_bytes()
    assert b"CANARY-" in before
    config = str(EXAMPLES / "omniladder.toml") if name.startswith("example") else str(FLEET)
    for extra in ([], ["--json"]):
        result = run(str(path), "--config", config, *extra)
        assert result.exit_code in (0, 1), result.output
        assert "CANARY-" not in result.output
    assert path.read_bytes() == before


def test_a_model_outside_the_ids_category_is_unknown_to_plan_R13() -> None:
    """opus carries no `vision`: the plan leaves it out of auto/vision:subscription; the
    gateway's own categories may differ, so it is reported, not failed."""
    inputs = fleet([conn("plan", models=["sonnet", "opus"])],
                   [reading("plan", window("5h", 50, at(hours=1)))])
    doc = document(row("plan", "sonnet"), row("plan", "opus"),
                   channel="auto/vision:subscription")
    assert findings(doc, "auto/vision:subscription", inputs=inputs) == [
        ("unknown-to-plan", "plan", "opus", "not-in-category")]
    inside = document(row("plan", "sonnet"), channel="auto/vision:subscription")
    assert findings(inside, "auto/vision:subscription", inputs=inputs) == []


# --- invariants over generated fleets ------------------------------------------------------


def _listing(result: Any, used: Any) -> CandidatesDocument:
    """A gateway list of every pair of the plan, each used or excluded as ``used`` says."""
    rows = [row(d.connection_id, d.model, provider=d.provider, excluded=not used(d))
            for d in result.decisions]
    return document(*rows, channel=result.auto_id.text)


def _cheaper_mate(result: Any, decision: Any) -> bool:
    from omniladder.models import RUNGS

    return any(o.admitted and o.provider == decision.provider and o.model == decision.model
               and RUNGS.index(o.rung) < RUNGS.index(decision.rung) for o in result.decisions)


@deep(60, quick=12)
def test_a_gateway_using_every_pair_gets_one_finding_per_plan_exclusion(examples: settings) -> None:
    @examples
    @given(inputs=input_sets(), auto_id=st.sampled_from(["auto/subscription", "auto/thrifty",
                                                     "auto/coding:thrifty"]))
    def holds(inputs: Any,
              auto_id: str) -> None:
        result = make_plan(inputs, auto_id)
        audit = audit_plan(_listing(result, lambda d: True), result)
        got = sorted((f.connection_id, f.model, f.reason) for f in audit.findings
                     if f.reason != "mixed-allowlist")
        assert got == sorted((d.connection_id, d.model, d.reason) for d in result.decisions
                             if not d.admitted)
        for f in audit.findings:
            if f.reason != "mixed-allowlist":
                assert f.kind == kind_of_reason(f.reason)
        mixed = sorted((f.connection_id, f.model) for f in audit.findings
                       if f.reason == "mixed-allowlist")
        assert mixed == sorted((d.connection_id, d.model) for d in result.decisions
                               if d.admitted and d.rung in ("cheap", "premium")
                               and _cheaper_mate(result, d))
        assert audit.counts["missed-capacity"] == 0

    holds()


@deep(60, quick=12)
def test_a_gateway_using_only_what_the_plan_admits_can_only_mix(examples: settings) -> None:
    @examples
    @given(inputs=input_sets(), auto_id=st.sampled_from(["auto/subscription", "auto/thrifty"]))
    def holds(inputs: Any,
             auto_id: str) -> None:
        result = make_plan(inputs, auto_id)
        audit = audit_plan(_listing(result, lambda d: d.admitted), result)
        assert {f.reason for f in audit.findings} <= {"mixed-allowlist"}
        assert audit.used == sum(1 for d in result.decisions if d.admitted)

    holds()


@deep(40, quick=8)
def test_an_empty_gateway_list_misses_every_admitted_pair(examples: settings) -> None:
    @examples
    @given(inputs=input_sets(), auto_id=st.sampled_from(["auto/subscription", "auto/thrifty"]))
    def holds(inputs: Any, auto_id: str) -> None:
        result = make_plan(inputs, auto_id)
        audit = audit_plan(document(channel=auto_id), result)
        assert audit.passed
        assert [(f.kind, f.reason) for f in audit.findings] == [
            ("missed-capacity", "not-listed")] * sum(len(e.allowed_connection_ids)
                                                     for e in result.pool)

    holds()
