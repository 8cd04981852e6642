"""`audit omniroute` and `check`'s audit gate on rows the plan cannot vouch for: a connection
or a model the plan has never seen fails closed under a subscription id (R10) and under
`--strict`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
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
