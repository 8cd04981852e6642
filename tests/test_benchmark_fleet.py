"""The benchmark's fleet generator writes a fleet omniladder plans (benchmarks/fleet.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import benchmark_module

runner = CliRunner()


def fleet_module() -> ModuleType:
    return benchmark_module("fleet")


def test_generated_fleet_plans_and_is_deterministic(tmp_path: Path) -> None:
    fleet = fleet_module()
    size = fleet.FleetSize(connections=10, models=3, readings=2, spend_events=4)
    settings = fleet.generate(tmp_path / "a", size, seed=7)
    fleet.generate(tmp_path / "b", size, seed=7)
    for name in ("connections.toml", "quota.json", "spend.json", "omniladder.toml"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(settings), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert len(document["connections"]) == 10
    assert document["pool"]


def test_connections_as_json_plan_exactly_as_toml(tmp_path: Path) -> None:
    """The benchmark's JSON fleets are the TOML fleets' connections, byte for byte in plans."""
    fleet = fleet_module()
    size = fleet.FleetSize(connections=30, models=3, readings=2, spend_events=6)
    as_toml = fleet.generate(tmp_path / "t", size, seed=3)
    as_json = fleet.generate(tmp_path / "j", size, seed=3, connections_format="json")
    assert not (tmp_path / "j" / "connections.toml").exists()
    assert (tmp_path / "t" / "quota.json").read_bytes() == (
        tmp_path / "j" / "quota.json").read_bytes()
    plans = []
    for settings in (as_toml, as_json):
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(settings),
                                     "--json"])
        assert result.exit_code == 0, result.output
        plans.append(result.stdout)
    assert plans[0] == plans[1]
