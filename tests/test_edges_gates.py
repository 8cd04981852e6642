"""Gates that say no when they should: the cases where a command used to pass by accident.

Each test names the behaviour an operator would notice and the SPEC rule (or the
decision in docs/) behind it: an audit of rows the plan has never seen, shipped catalog dates, an
empty connections file, a connection's own doubtful status, a WAL database in a folder the
importer cannot write, the committed CI plan, unverified connections in a diff, and a
provider name one letter away from a curated one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.check import Expectation, judge
from omniladder.cli import app
from tests.builders import at, conn, fleet, reading, window
from tests.builders import plan as make_plan
from tests.conftest import ROOT

runner = CliRunner()

CANDIDATES = ROOT / "tests" / "fixtures" / "sources" / "omniroute-candidates"
FLEET = CANDIDATES / "fleet" / "omniladder.toml"


def _row(cid: str, model: str, provider: str = "claude") -> dict[str, Any]:
    """A candidate row in OmniRoute's documented naming that the gateway uses."""
    return {"provider": provider, "connectionId": cid, "model": model,
            "modelStr": f"{provider}/{model}", "excluded": False, "reachable": True,
            "breakerState": "CLOSED", "connectionCooldown": False, "modelLocked": False,
            "freeAccessExclusion": None}


def _candidates(tmp_path: Path, channel: str, *rows: dict[str, Any]) -> str:
    path = tmp_path / "candidates.json"
    path.write_text(json.dumps({"channel": channel, "candidates": list(rows)}),
                    encoding="utf-8")
    return str(path)


def _audit(path: str, *args: str) -> Any:
    return runner.invoke(app, ["audit", "omniroute", path, "--config", str(FLEET), *args])


# --- 1. audit: rows the plan cannot vouch for ----------------------------------------------

_GHOSTS = (_row("ghost-1", "claude-sonnet-4-5"), _row("ghost-2", "claude-opus-4-1"))
"""Every request to connections the fleet file has never seen (an import older than the
gateway's accounts)."""


@pytest.mark.parametrize("channel", ["auto/subscription", "auto/coding:subscription"])
def test_audit_of_unknown_connections_fails_closed_under_a_subscription_id_R10(
        tmp_path: Path, channel: str) -> None:
    result = _audit(_candidates(tmp_path, channel, *_GHOSTS), "--json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["passed"] is False
    assert [(f["kind"], f["connection_id"], f["reason"]) for f in document["findings"]
            if f["kind"] != "missed-capacity"] == [
        ("would-dispatch-unknown", "ghost-1", "unknown-connection"),
        ("would-dispatch-unknown", "ghost-2", "unknown-connection")]
    assert document["counts"]["would-dispatch-unknown"] == 2
    assert "dispatches nothing the plan keeps out" not in document["summary"]
    assert "0 would-bill, 0 would-dispatch-exhausted, 2 would-dispatch-unknown" in \
        result.stderr


def test_audit_of_unknown_connections_is_reported_under_thrifty_and_fails_with_strict(
        tmp_path: Path) -> None:
    """R11 fails open, so the rows are reported, not failed; the verdict line no longer
    claims agreement; --strict turns them into a "no"."""
    path = _candidates(tmp_path, "auto/thrifty", *_GHOSTS)
    result = _audit(path)
    assert result.exit_code == 0, result.output
    verdict = result.stdout.rstrip().splitlines()[-1]
    assert "2 unknown-to-plan" in verdict
    assert verdict.endswith("the plan cannot vouch for 2 rows in use (unknown to its inputs: "
                            "import the gateway again, or --strict to fail on them)")
    assert "dispatches nothing the plan keeps out" not in verdict

    strict = _audit(path, "--strict", "--json")
    assert strict.exit_code == 1, strict.output
    document = json.loads(strict.stdout)
    assert document["strict"] is True
    assert [f["kind"] for f in document["findings"] if f["connection_id"].startswith("ghost")
            ] == ["would-dispatch-unknown", "would-dispatch-unknown"]


@pytest.mark.parametrize(("strict", "code", "kind"), [
    (False, 0, "unknown-to-plan"), (True, 1, "would-dispatch-unknown")])
def test_the_unknown_fleet_fixture_under_thrifty(strict: bool, code: int, kind: str) -> None:
    """tests/fixtures/sources/omniroute-candidates/thrifty-unknown-fleet.json: every request
    to a connection the fleet file has never seen."""
    path = str(CANDIDATES / "thrifty-unknown-fleet.json")
    result = _audit(path, "--json", *(["--strict"] if strict else []))
    assert result.exit_code == code, result.output
    document = json.loads(result.stdout)
    used = [f for f in document["findings"] if f["kind"] != "missed-capacity"]
    assert [(f["kind"], f["reason"]) for f in used] == [(kind, "unknown-connection")] * 3
    assert ("the plan cannot vouch for 3 rows in use" in document["summary"]) is not strict


def test_audit_verdict_counts_one_unvouched_row_in_the_singular(tmp_path: Path) -> None:
    result = _audit(_candidates(tmp_path, "auto/thrifty", _GHOSTS[0]))
    assert result.exit_code == 0, result.output
    assert "the plan cannot vouch for 1 row in use" in result.stdout


@pytest.mark.parametrize(("strict", "code"), [(False, 0), (True, 1)])
def test_audit_strict_on_a_model_unknown_to_the_plan_under_thrifty(
        tmp_path: Path, strict: bool, code: int) -> None:
    """An unknown model of a known connection is as unvouched as an unknown connection."""
    path = _candidates(tmp_path, "auto/thrifty", _row("claude-max", "claude-sonnet-9"))
    result = _audit(path, "--json", *(["--strict"] if strict else []))
    assert result.exit_code == code, result.output
    kinds = {(f["kind"], f["reason"]) for f in json.loads(result.stdout)["findings"]}
    expected = "would-dispatch-unknown" if strict else "unknown-to-plan"
    assert (expected, "unknown-model") in kinds


def test_audit_of_a_fully_known_gateway_still_says_it_agrees(tmp_path: Path) -> None:
    """The agreeing wording is kept for the case it is true (no unknown row in use)."""
    result = _audit(str(CANDIDATES / "subscription-clean.json"))
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip().endswith("the gateway dispatches nothing the plan keeps out")


def test_check_audit_fails_on_unknown_connections_under_a_subscription_id(
        tmp_path: Path) -> None:
    """A policy's `audit` expectation is held to the same fail-closed rule."""
    _candidates(tmp_path, "auto/subscription", *_GHOSTS)
    policy = tmp_path / "policy.toml"
    policy.write_text(f'config = "{FLEET.as_posix()}"\n\n[[expect]]\n'
                      'name = "gateway never bills"\nauto_id = "auto/subscription"\n'
                      'audit = "candidates.json"\n', encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy), "--json"])
    assert result.exit_code == 1, result.output
    (check,) = json.loads(result.stdout)["expectations"][0]["checks"]
    assert check["passed"] is False
    assert check["actual"].startswith("0 would-bill, 0 would-dispatch-exhausted, 2 "
                                      "would-dispatch-unknown")
    assert any(line.startswith("would-dispatch-unknown ghost-1 ") for line in check["evidence"])


# --- 2. catalog check: shipped review dates never fail a user's check ----------------------


def _catalog_check(*args: str) -> Any:
    return runner.invoke(app, ["catalog", "check", *args])


@pytest.mark.parametrize("today", ["2027-02-18", "2027-02-19", "2099-01-01"])
def test_shipped_catalogs_never_turn_a_users_check_red_on_a_date(today: str) -> None:
    """The oldest shipped reviews are dated 2026-08-22: from 2027-02-19 on they are more than
    180 days old, and every user's CI used to fail on entries no user can edit."""
    result = _catalog_check("--today", today, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["ok"], document["problems"]) == (True, [])
    assert document["released"] == "2026-12-04"
    assert {n["code"] for n in document["notes"]} <= {"release-age"}


@pytest.mark.parametrize(("today", "noted"), [("2027-06-02", False), ("2027-06-03", True)])
def test_an_old_release_is_a_note_past_the_max_age(today: str, noted: bool) -> None:
    """Released 2026-12-04: 180 days later the release is still within --max-age-days; one
    day more and the check says the shipped facts are old (and still passes)."""
    result = _catalog_check("--today", today)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    notes = [line for line in lines if line.startswith("note: <shipped>: release-age: ")]
    assert len(notes) == (1 if noted else 0)
    if noted:
        assert "omniladder 0.1.0 was released on 2026-12-04, 181 days before 2027-06-03" \
            in notes[0]
        assert lines[-1] == ("catalog check: ok, no problems in 3 catalog file(s); 1 note on "
                             "the shipped catalogs (never a failure)")
    else:
        assert lines == ["catalog check: ok, no problems in 3 catalog file(s)"]


def test_a_users_own_stale_overlay_still_fails_beside_the_shipped_ones(tmp_path: Path) -> None:
    """Only the files the user owns fail: the overlay's review date is judged against today."""
    overlay = tmp_path / "overlay.toml"
    overlay.write_text('[[entries]]\nprovider = "acme"\nauth_type = "oauth"\n'
                       'billing = "subscription"\noverage = "hard-stop"\nreason = "r"\n'
                       'source = "s"\nreviewed = 2027-01-01\n', encoding="utf-8")
    result = _catalog_check("--today", "2099-01-01", "--catalog", str(overlay), "--json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert [(p["file"], p["code"]) for p in document["problems"]] == [
        (str(overlay), "review-stale")]
    assert [n["code"] for n in document["notes"]] == ["release-age"]


def test_a_baseline_written_far_in_the_future_accepts_nothing_shipped(tmp_path: Path) -> None:
    """Notes never fail, so they are never written to a baseline either."""
    baseline = tmp_path / "accepted.toml"
    result = _catalog_check("--today", "2099-01-01", "--write-baseline", str(baseline))
    assert result.exit_code == 0, result.output
    assert "[[accepted]]" not in baseline.read_text(encoding="utf-8")


def test_the_release_date_is_not_older_than_any_shipped_review() -> None:
    """The packaging gate that replaces the user's: RELEASED is at or after every shipped
    `reviewed` / `as_of`, and at the release the shipped catalogs lint clean, notes included."""
    import tomllib
    from datetime import date

    from omniladder import RELEASED

    released = date.fromisoformat(RELEASED)
    newest = date.min
    for path in (ROOT / "catalogs").glob("*.toml"):
        for table in tomllib.loads(path.read_text(encoding="utf-8")).values():
            for entry in table:
                for key in ("reviewed", "as_of"):
                    if key in entry:
                        newest = max(newest, entry[key])
    assert newest > date(2026, 1, 1)
    assert released >= newest, f"bump omniladder.RELEASED to at least {newest}"
    result = _catalog_check("--today", RELEASED, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["problems"], document["notes"]) == ([], [])


# --- 3. an empty connections file is never a green check -----------------------------------

_EMPTY = [("connections.toml", b""), ("connections.toml", b"\xef\xbb\xbf"),
          ("connections.json", b"{}")]
_EMPTY_IDS = ["zero-bytes", "bom-only", "empty-object"]
_NOW = ("--now", "2026-11-29T12:00:00Z")


def _policy(tmp_path: Path, extra: str = "max_unverified = 0\n") -> Path:
    policy = tmp_path / "policy.toml"
    policy.write_text('[[expect]]\nname = "nothing unverified"\nauto_id = "auto/thrifty"\n'
                      + extra, encoding="utf-8")
    return policy


@pytest.mark.parametrize(("name", "content"), _EMPTY, ids=_EMPTY_IDS)
def test_plan_warns_about_an_empty_connections_file(tmp_path: Path, name: str,
                                                    content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW,
                                 "--json"])
    assert result.exit_code == 0, result.output
    warning = (f"{path} lists no connection (empty, or a truncated export?): the plan has "
               "nothing to route, and `check` fails on it")
    assert json.loads(result.stdout)["warnings"][0] == warning
    table = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert f"omniladder: warning: {warning}" in table.stderr
    assert path.read_bytes() == content


@pytest.mark.parametrize(("name", "content"), _EMPTY, ids=_EMPTY_IDS)
def test_check_answers_no_on_an_empty_connections_file(tmp_path: Path, name: str,
                                                       content: bytes) -> None:
    """SPEC §4.3: a check whose expectations would all pass on nothing is a "no" (exit 1),
    with the reason as a failed item in every output format."""
    path = tmp_path / name
    path.write_bytes(content)
    junit = tmp_path / "junit.xml"
    args = ["check", str(_policy(tmp_path)), "--connections", str(path), *_NOW]
    result = runner.invoke(app, [*args, "--json", "--junit", str(junit)])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["passed"] is False
    first, second = document["expectations"]
    assert (first["name"], first["passed"], second["passed"]) == (
        "the connections file lists connections", False, True)
    (check,) = first["checks"]
    assert (check["check"], check["actual"]) == ("connections", "0 connections")
    assert f"{path} lists no connection" in check["evidence"][0]
    assert "1 of 2 expectations failed: the connections file lists connections" in \
        result.stderr
    xml = junit.read_text(encoding="utf-8")
    assert 'failures="1"' in xml
    assert 'name="the connections file lists connections"' in xml
    markdown = runner.invoke(app, [*args, "--format", "markdown"])
    assert markdown.exit_code == 1
    assert ("| ❌ **FAIL** | the connections file lists connections | `inputs` | "
            "`connections` |") in markdown.stdout


def test_check_of_an_empty_file_is_a_no_even_when_the_policy_names_connections(
        tmp_path: Path) -> None:
    """Every id a policy names would be unknown in an empty file; the empty file is the
    answer (exit 1), not an unknown-id error (exit 2)."""
    path = tmp_path / "connections.toml"
    path.write_bytes(b"")
    policy = _policy(tmp_path, 'must_include = ["claude-max"]\n')
    result = runner.invoke(app, ["check", str(policy), "--connections", str(path), *_NOW])
    assert result.exit_code == 1, result.output
    assert "✗ FAIL the connections file lists connections" in result.stdout


def test_one_connection_is_not_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "k"\nprovider = "ollama"\nauth_type = "none"\n'
                    'models = ["qwen"]\n', encoding="utf-8")
    policy = _policy(tmp_path, "min_pool = 1\n")
    result = runner.invoke(app, ["check", str(policy), "--connections", str(path), *_NOW,
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [e["name"] for e in document["expectations"]] == ["nothing unverified"]
    assert not any("lists no connection" in w for w in document["warnings"])


# --- 4. a connection's own status of error / unknown ---------------------------------------

_FRESH = window("5h", 60, at(hours=3))


def _doubt_fleet(status: str | None, **fields: Any) -> Any:
    extra = {} if status is None else {"status": status}
    return fleet([conn("c", models=["sonnet"], **extra, **fields),
                  conn("k", "openai", "apikey", models=["gpt-mini"], **extra)],
                 [reading("c", _FRESH)])


@pytest.mark.parametrize(("status", "reason"), [
    (None, None), ("ok", None), ("error", "connection-status-unknown"),
    ("unknown", "connection-status-unknown")])
def test_auto_subscription_excludes_a_connection_whose_own_status_is_in_doubt_R10(
        status: str | None, reason: str | None) -> None:
    """A fresh, usable reading does not vouch for a connection the gateway reports failing:
    auto/subscription promises anything uncertain is excluded."""
    result = make_plan(_doubt_fleet(status), "auto/subscription")
    decision = next(d for d in result.decisions if d.connection_id == "c")
    assert decision.reason == reason
    assert [e.allowed_connection_ids for e in result.pool] == ([] if reason else [("c",)])
    if reason:
        (excluded,) = [x for x in result.excluded if x.connection_id == "c"]
        assert excluded.detail.startswith(f"connection status {status}: ")
        assert 'status = "ok"' in (excluded.fix or "")
        assert "1 status in doubt" in result.summary


@pytest.mark.parametrize("status", ["error", "unknown"])
def test_auto_thrifty_admits_it_unverified_on_every_rung_R11(status: str) -> None:
    result = make_plan(_doubt_fleet(status))
    marks = {(e.rung, m.connection_id): (m.reason, m.detail)
             for e in result.pool for m in e.unverified}
    assert set(marks) == {("subscription", "c"), ("cheap", "k")}
    assert {reason for reason, _ in marks.values()} == {"connection-status-unknown"}
    assert result.unverified_connection_ids == ("c", "k")
    assert "(2 unverified)" in result.summary


def test_an_ok_status_on_thrifty_is_verified_by_its_reading() -> None:
    result = make_plan(_doubt_fleet("ok"))
    assert result.unverified_connection_ids == ()


def test_an_unknown_quota_is_added_to_the_status_mark() -> None:
    inputs = fleet([conn("c", models=["sonnet"], status="error")], [])
    (entry,) = make_plan(inputs).pool
    (mark,) = entry.unverified
    assert mark.reason == "connection-status-unknown"
    assert mark.detail.startswith("connection status error: ")
    assert "; also quota-missing: " in mark.detail


@pytest.mark.parametrize(("fields", "reason"), [
    ({"active": False}, "inactive"),
    ({"status": "banned"}, "terminal-status"),
    ({"overage": "meters-to-paid"}, "overage-not-hard-stop"),
])
def test_the_earlier_checks_of_R10_still_come_first(fields: dict[str, Any],
                                                    reason: str) -> None:
    status = fields.pop("status", "error")
    result = make_plan(_doubt_fleet(status, **fields), "auto/subscription")
    assert next(d.reason for d in result.decisions if d.connection_id == "c") == reason


def test_a_doubtful_status_fails_max_unverified_with_its_reason() -> None:
    """check's evidence names the status, not a quota code it does not have."""
    expectation = Expectation(name="n", auto_id="auto/thrifty", max_unverified=0)
    (result,) = judge(expectation, make_plan(_doubt_fleet("error")))
    assert not result.passed
    assert result.evidence[0] == ("c is admitted unverified: connection-status-unknown: "
                                  "connection status error: the gateway does not report it "
                                  "healthy")


def _doubt_files(tmp_path: Path) -> list[str]:
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "claude-err"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\nstatus = "error"\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({
        "taken_at": "2026-11-29T12:00:00Z", "readings": [{
            "connection": "claude-err", "checked_at": "2026-11-29T11:59:50Z",
            "windows": [{"name": "5h", "remaining_percent": 60,
                         "reset_at": "2026-11-29T15:00:00Z"}]}]}), encoding="utf-8")
    # now is the snapshot's taken_at (R14), for every command alike
    return ["--connections", str(tmp_path / "connections.toml"), "--quota",
            str(tmp_path / "quota.json")]


def test_why_who_and_simulate_agree_with_plan_on_a_doubtful_status(tmp_path: Path) -> None:
    """One model, many schedules: every view reads the same decision."""
    args = _doubt_files(tmp_path)

    def run_json(*command: str) -> Any:
        result = runner.invoke(app, [*command, *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    subscription = run_json("plan", "auto/subscription")
    assert [x["reason"] for x in subscription["excluded"]] == ["connection-status-unknown"]
    thrifty = run_json("plan", "auto/thrifty")
    assert thrifty["pool"][0]["unverified"][0]["reason"] == "connection-status-unknown"

    why = runner.invoke(app, ["why", "claude-err", *args])
    assert why.exit_code == 0, why.output
    assert "gates (R5): pass; connection-status-unknown — connection status error" in \
        " ".join(why.stdout.split())
    who = run_json("who", "claude/claude-sonnet-4-5")
    states = {entry["auto_id"]: entry["connections"][0] for entry in who["auto_ids"]}
    assert (states["auto/subscription"]["state"], states["auto/subscription"]["reason"]) == (
        "out", "connection-status-unknown")
    assert states["auto/thrifty"]["unverified"]["reason"] == "connection-status-unknown"
    for auto_id, unverified in (("auto/thrifty", ["claude-err"]), ("auto/subscription", [])):
        series = run_json("simulate", auto_id, "--from", "2026-11-29T12:00:00Z",
                          "--to", "2026-11-29T12:10:00Z")
        assert {tuple(step["unverified_connection_ids"]) for step in series["steps"]} == {
            tuple(unverified)}


# --- 8. a provider one letter or one case away from a curated one --------------------------


@pytest.mark.parametrize(("provider", "auth_type", "near"), [
    ("Claude", "oauth", "provider 'claude'"),
    ("claud", "oauth", "provider 'claude'"),
    ("claude", "oauht", "auth_type 'oauth'"),
])
@pytest.mark.parametrize("auto_id", ["auto/thrifty", "auto/subscription", "auto/chat:thrifty"])
def test_every_plan_asks_did_you_mean_for_a_near_miss_R1(provider: str, auth_type: str,
                                                         near: str, auto_id: str) -> None:
    """R1.4 treats the typo as metered under every id; before, only auto/subscription's
    exclusion detail said "did you mean", and auto/thrifty quietly priced it as premium."""
    inputs = fleet([conn("typo-1", provider, auth_type, models=["sonnet"]),
                    conn("typo-2", provider, auth_type, models=["sonnet"])], [])
    result = make_plan(inputs, auto_id)
    assert (f"provider {provider!r} with auth_type {auth_type!r} is not in the billing catalog "
            f"(did you mean {near}?): typo-1, typo-2 are treated as metered (R1)"
            ) in result.warnings


def test_an_uncurated_provider_nowhere_near_a_curated_one_gets_no_guess() -> None:
    result = make_plan(fleet([conn("m", "mystery", "apikey", models=["m1"])], []))
    assert not any("did you mean" in w for w in result.warnings)


def test_the_near_miss_warning_is_on_stderr_and_in_the_json(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "x"\nprovider = "Claude"\nauth_type = "oauth"\n'
                    'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    warning = ("provider 'Claude' with auth_type 'oauth' is not in the billing catalog (did "
               "you mean provider 'claude'?): x is treated as metered (R1)")
    table = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert table.exit_code == 0, table.output
    assert f"omniladder: warning: {warning}" in table.stderr
    document = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW,
                                   "--json"])
    assert warning in json.loads(document.stdout)["warnings"]


# --- 7. diff says when an added connection is unverified -----------------------------------


def _saved(entries: list[tuple[list[str], list[str]]]) -> dict[str, Any]:
    """A minimal saved plan: one pool entry per (allowlist, unverified) pair."""
    return {
        "format_version": "1", "auto_id": "auto/thrifty", "now": "2026-11-29T12:00:00Z",
        "rungs": [{"rung": "subscription", "state": "serving", "candidates": len(entries),
                   "connections": 1}],
        "pool": [{"position": i + 1, "rung": "subscription", "provider": "codex",
                  "model": f"m{i}", "allowed_connection_ids": ids,
                  "unverified_connection_ids": unverified}
                 for i, (ids, unverified) in enumerate(entries)],
        "excluded": [], "connections": []}


def _diff(tmp_path: Path, old: dict[str, Any], new: dict[str, Any], *args: str) -> Any:
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    return runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                               *args])


def test_diff_marks_an_added_connection_unverified_and_a_verified_one_not(
        tmp_path: Path) -> None:
    old = _saved([(["plan"], []), (["plan"], [])])
    new = _saved([(["plan", "codex-plus", "codex-team"], ["codex-plus"]),
                  (["plan"], []), (["codex-plus"], ["codex-plus"])])
    table = _diff(tmp_path, old, new)
    assert table.exit_code == 1, table.output
    assert ("  ~ #1 subscription codex/m0 allowlist: +codex-plus (unverified), +codex-team"
            in table.stdout)
    assert "  + #3 subscription codex/m2 [codex-plus (unverified)]" in table.stdout
    document = json.loads(_diff(tmp_path, old, new, "--json").stdout)
    (change,) = document["pool"]["allowlist_changed"]
    assert (change["added"], change["added_unverified"]) == (
        ["codex-plus", "codex-team"], ["codex-plus"])
    markdown = _diff(tmp_path, old, new, "--format", "markdown").stdout
    assert "+codex-plus (unverified), +codex-team" in markdown


def test_diff_of_a_connection_already_unverified_stays_as_it_was(tmp_path: Path) -> None:
    """Only a newly added connection is marked on its `+`; one that stays is reported by
    `now unverified` / `now verified` as before."""
    old = _saved([(["a", "b"], ["b"])])
    new = _saved([(["a", "b"], ["a"])])
    out = _diff(tmp_path, old, new).stdout
    assert "allowlist: a now unverified, b now verified" in out
    assert "(unverified)" not in out


# --- 5. a WAL-mode OmniRoute database in a folder the importer cannot write ----------------

_WAL_FIGURE = 33.0
"""A remaining_percentage only the -wal file holds (a row not yet checkpointed)."""


def _wal_database(folder: Path, *, pending_row: bool) -> Path:
    """OmniRoute's storage.sqlite in WAL mode (OmniRoute opens it with journal_mode=WAL), in
    ``folder``; with ``pending_row`` its -wal file holds one more snapshot row."""
    import shutil
    import sqlite3

    from tests.omniroute_db import build_db

    staging = folder.parent / f"{folder.name}-staging"
    staging.mkdir()
    source = build_db(staging / "storage.sqlite")
    db = sqlite3.connect(source)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()  # the last connection checkpoints and removes -wal and -shm
    writer = sqlite3.connect(source)
    if pending_row:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO quota_snapshots (provider, connection_id, window_key, "
                       "remaining_percentage, is_exhausted, next_reset_at, created_at) VALUES "
                       "('claude', 'conn-claude-work', '5h', ?, 0, '2026-11-29T15:00:00Z', "
                       "'2026-11-29T11:59:50Z')", (_WAL_FIGURE,))
        writer.commit()
    folder.mkdir()
    # what a backup of a live gateway's folder holds: the database and its log, no -shm
    for name in ("storage.sqlite", "storage.sqlite-wal"):
        if (staging / name).exists():
            shutil.copy(staging / name, folder / name)
    writer.close()
    return folder / "storage.sqlite"


def _figures(out: Path) -> set[float]:
    quota = json.loads((out / "quota.json").read_text(encoding="utf-8"))
    return {w["remaining_percent"] for r in quota["readings"]
            if r["connection"] == "conn-claude-work" for w in r.get("windows", ())}


def _import_args(db: Path, out: Path) -> list[str]:
    return ["import", "omniroute", str(db), "--out", str(out), "--now",
            "2026-11-29T12:00:00Z"]


def _without_dac_override() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set (prctl PR_CAPBSET_DROP), so a root process honours directory permissions
    after exec, as any user does. Needs CAP_SETPCAP, which root has."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.parametrize("pending_row", [False, True])
def test_a_wal_database_in_a_read_only_folder_is_read_immutable_with_a_note(
        tmp_path: Path, pending_row: bool) -> None:
    """The real failure, reproduced: SQLite cannot create the -shm of a WAL database in a
    folder the user cannot write ("attempt to write a readonly database"). Root ignores
    directory permissions, so as root the import runs in a child process without
    CAP_DAC_OVERRIDE: the folder is then really read-only to it. Proves: the import succeeds
    from the main file, says the snapshot may be torn, and says (truthfully) that rows in the
    -wal file are missing."""
    import os
    import subprocess
    import sys

    db = _wal_database(tmp_path / "gateway", pending_row=pending_row)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "omniladder", *_import_args(db, out)]
    as_root = os.geteuid() == 0
    (tmp_path / "gateway").chmod(0o555)
    try:
        result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                                check=False,
                                preexec_fn=_without_dac_override if as_root else None)
    except subprocess.SubprocessError as exc:
        pytest.skip(f"cannot drop CAP_DAC_OVERRIDE in a child process here ({exc})")
    finally:
        (tmp_path / "gateway").chmod(0o755)
    assert result.returncode == 0, result.stderr
    assert "attempt to write a readonly database" not in result.stderr
    note = next(line for line in result.stderr.splitlines()
                if "read it as an immutable snapshot instead" in line)
    assert note.startswith("omniladder: note: gateway/storage.sqlite: its folder is not "
                           "writable")
    assert "which may be torn if the gateway is writing" in note
    assert "copy the database with its -wal file to a folder you can write" in note
    assert ("-byte storage.sqlite-wal is not read" in note) is pending_row
    assert _WAL_FIGURE not in _figures(out)
    assert not (tmp_path / "gateway" / "storage.sqlite-shm").exists()
    if pending_row:
        # the remedy the note gives: a writable folder reads the pending row
        copy = runner.invoke(app, _import_args(db, tmp_path / "copy"))
        assert copy.exit_code == 0, copy.output
        assert _WAL_FIGURE in _figures(tmp_path / "copy")


def test_the_read_only_fallback_in_process(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path on any machine: SQLite's refusal is simulated at the first read of a
    `mode=ro` connection (what SQLITE_READONLY_DIRECTORY looks like to Python), so this proves
    the fallback and its note, not SQLite's behaviour (the test above proves that)."""
    import sqlite3

    db = _wal_database(tmp_path / "gateway", pending_row=False)
    opened: list[str] = []
    real_connect = sqlite3.connect

    class Refusing(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA schema_version"):
                raise sqlite3.OperationalError("attempt to write a readonly database")
            return super().execute(sql, *args)

    def connect(database: str, **kwargs: Any) -> sqlite3.Connection:
        opened.append(database)
        factory = sqlite3.Connection if "immutable=1" in database else Refusing
        return real_connect(database, factory=factory, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    result = runner.invoke(app, _import_args(db, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert [uri.split("?", 1)[1] for uri in opened] == ["mode=ro", "mode=ro&immutable=1"]
    assert f"omniladder: note: {db}: its folder is not writable" in result.stderr
    assert _figures(tmp_path / "out")


# --- 6. the committed CI plan is what `plan --out` writes today ----------------------------

SAVED_PLAN = ROOT / "examples" / "ci" / "plan-thrifty.json"


def test_the_shipped_ci_plan_is_the_current_plan_out(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/ci/plan-thrifty.json is made with `omniladder plan auto/thrifty --config
    examples/omniladder.toml --out examples/ci/plan-thrifty.json` from the repository root;
    it must be byte for byte what that writes now, but for the version stamp (which changes
    with every release). When the output changes on purpose, regenerate it that way."""
    monkeypatch.chdir(ROOT)
    fresh = tmp_path / "plan.json"
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 "examples/omniladder.toml", "--out", str(fresh)])
    assert result.exit_code == 0, result.output
    saved = json.loads(SAVED_PLAN.read_text(encoding="utf-8"))
    current = json.loads(fresh.read_text(encoding="utf-8"))
    assert saved.pop("omniladder_version")
    current.pop("omniladder_version")
    assert saved == current, ("examples/ci/plan-thrifty.json is stale: regenerate it with "
                              "the command in this test's docstring")


def test_the_shipped_ci_plan_shows_every_section_and_compares_equal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`show` on it has the sections today's plans have, and `.ci/run`'s `--compare` on it
    finds no difference."""
    monkeypatch.chdir(ROOT)
    document = json.loads(SAVED_PLAN.read_text(encoding="utf-8"))
    assert {"omniladder_version", "inputs"} <= set(document)
    assert all("unverified" in entry for entry in document["pool"])
    assert all("fix" in x for x in document["excluded"])
    assert all("overage_source" in c for c in document["connections"])
    shown = runner.invoke(app, ["show", str(SAVED_PLAN)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert any(line.startswith("Unverified") for line in lines)
    assert "To change this" in lines
    compare = runner.invoke(app, ["plan", "auto/thrifty", "--config", "examples/omniladder.toml",
                                  "--compare", "examples/ci/plan-thrifty.json"])
    assert compare.exit_code == 0, compare.output
    assert compare.stdout.rstrip().endswith("no differences: the two plans route the same way")


# --- 9. small things an operator reads -----------------------------------------------------


def test_one_connection_and_one_candidate_are_singular(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "k"\nprovider = "ollama"\nauth_type = "none"\n'
                    'models = ["qwen"]\n', encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert result.exit_code == 0, result.output
    assert "(from --now) · 1 connection · 1 candidate\n" in result.stdout
    two = path.read_text(encoding="utf-8") + path.read_text(encoding="utf-8").replace(
        '"k"', '"k2"')
    path.write_text(two, encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert "(from --now) · 2 connections · 1 candidate\n" in result.stdout


def test_an_import_of_one_of_each_is_singular(tmp_path: Path) -> None:
    from tests.omniroute_db import CONNECTIONS, SNAPSHOTS, build_db

    db = build_db(tmp_path / "storage.sqlite", connections=CONNECTIONS[1:2],
                  snapshots=SNAPSHOTS[3:4])
    result = runner.invoke(app, _import_args(db, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert ("omniladder: imported 1 connection and 1 reading (1 connection with quota history, "
            "from 1 snapshot row)") in result.stderr


def test_an_audit_of_one_row_is_singular(tmp_path: Path) -> None:
    result = _audit(_candidates(tmp_path, "auto/thrifty", _GHOSTS[0]))
    assert "· channel auto/thrifty · 1 row, 1 in use" in result.stdout


@pytest.mark.parametrize(("typed", "hint"), [
    ("auto/thrify", "did you mean 'auto/thrifty'?"),
    ("Auto/subscription", "did you mean 'auto/subscription'?"),
    ("auto/coding", "did you mean 'auto/coding:thrifty'?"),
    ("auto/codng:thrifty", "did you mean 'coding'?"),
    ("auto/chat:thrify", "did you mean 'thrifty'?"),
    ("auto/xyzzy", None),
])
def test_a_mistyped_auto_id_gets_the_closest_valid_one_R13(typed: str,
                                                           hint: str | None) -> None:
    result = runner.invoke(app, ["plan", typed, "--connections", str(CANDIDATES / "fleet" /
                                                                     "connections.toml")])
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("omniladder: error: AUTO_ID: ")
    if hint is None:
        assert "did you mean" not in line
    else:
        assert line.endswith(hint)


@pytest.mark.parametrize(("typed", "hint"), [
    ("quota-stael", "; did you mean 'quota-stale'?"),
    ("conection-status-unknown", "; did you mean 'connection-status-unknown'?"),
    ("nonsense", ""),
])
def test_a_mistyped_reason_code_in_a_policy_gets_the_closest_one(
        tmp_path: Path, typed: str, hint: str) -> None:
    policy = _policy(tmp_path, f'expect_reason = {{ claude-max = "{typed}" }}\n')
    result = runner.invoke(app, ["check", str(policy), "--config", str(FLEET)])
    assert result.exit_code == 2, result.output
    assert f"unknown reason code {typed!r}{hint}; reason codes: inactive, " in result.stderr


def test_the_license_is_the_mit_license_pyproject_names() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT"
    assert text.startswith("MIT License\n\nCopyright (c) 2026 omniladder contributors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
