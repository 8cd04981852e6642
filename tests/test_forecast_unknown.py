"""docs/forecast.md#unknown: a window whose burn cannot be projected makes every answer it
could move unknown from now, in the summary, the JSON, the metrics and a `check` gate; a
burn rate needs two readings of one cycle and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()
README_FLEET = str(EXAMPLES / "omniladder.toml")
DAY = str(EXAMPLES / "day" / "omniladder.toml")
TWO_DAYS_ON = "2026-12-01T13:00:00Z"
"""Two days after the day example's readings: every one of them is stale."""


def forecast_json(config: str, auto_id: str, *args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["forecast", auto_id, "--config", config, "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_readme_fleet_is_no_longer_subscription_throughout() -> None:
    """The Max plan's plain 5h window read 81% at 10:00 and 37.5% at 11:59: with the
    catalog's 5h length it burns 21.9%/h and reaches the cutoff near 13:36, and the windows
    that cannot be projected make the answers unknown rather than green."""
    document = forecast_json(README_FLEET, "auto/subscription")
    pace = next(p for p in document["pace"]
                if (p["connection_id"], p["window"]) == ("claude-max-work", "5h"))
    assert pace["burn_percent_per_hour"] == 21.902
    assert pace["cutoff_at"].startswith("2026-11-29T13:36")
    assert pace["length_source"] == "catalog <shipped>/quota-windows.toml"
    assert document["answers_known"] is False
    assert document["first_paid_at"] is None
    assert document["summary"].startswith("auto/subscription over 24h00m: first paid: "
                                          "unknown — ")
    listed = {(u["connection"], u["window"]) for u in document["unprojected_windows"]}
    assert ("antigravity-main", "daily") in listed  # a stale reading
    assert ("copilot-seat", None) in listed  # a reading whose status is unknown
    table = runner.invoke(app, ["forecast", "auto/subscription", "--config", README_FLEET],
                          env={"COLUMNS": "100"})
    assert "throughout" not in table.stdout
    lines = [line for line in table.stdout.splitlines() if line]
    assert lines[2].startswith("auto/subscription over 24h00m: first paid: unknown")


def test_stale_readings_at_now_are_unknown_not_throughout() -> None:
    document = forecast_json(DAY, "auto/subscription", "--now", TWO_DAYS_ON)
    assert document["answers_known"] is False
    assert document["pool_empty_at"] is None
    reasons = {u["connection"]: u["reason"] for u in document["unprojected_windows"]}
    assert "stale" in reasons["claude-max-work"]
    table = runner.invoke(app, ["forecast", "auto/subscription", "--config", DAY,
                                "--now", TWO_DAYS_ON])
    assert "throughout" not in table.stdout
    assert "first paid: unknown — claude-max-work 5h has no burn rate (reading at" in " ".join(
        table.stdout.split())


def test_the_metrics_count_the_unprojected_windows() -> None:
    known = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                "2026-11-29T13:00:00Z", "--format", "openmetrics"])
    assert 'omniladder_forecast_unprojected_windows{auto_id="auto/thrifty"} 0' in known.stdout
    stale = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now",
                                TWO_DAYS_ON, "--format", "openmetrics"])
    assert 'omniladder_forecast_unprojected_windows{auto_id="auto/thrifty"} 0' not in (
        stale.stdout)
    assert ('omniladder_forecast_first_paid_timestamp_seconds{auto_id="auto/thrifty"} NaN'
            in stale.stdout)


def test_a_check_gate_on_an_unknown_answer_fails_saying_why(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[[expect]]\nname = "ahead"\nauto_id = "auto/thrifty"\n'
                      f'now = "{TWO_DAYS_ON}"\nno_paid_within = "1h"\n', encoding="utf-8")
    result = runner.invoke(app, ["check", str(policy), "--config", DAY, "--json"])
    assert result.exit_code == 1, result.output
    (item,) = json.loads(result.stdout)["expectations"]
    (check,) = item["checks"]
    assert check["passed"] is False
    assert check["actual"] == "unknown"
    assert "cannot be projected" in check["evidence"][0]
    assert any(line.startswith("claude-max-work 5h: reading at") for line in check["evidence"])


def one_login(tmp_path: Path, readings: list[dict], active: bool = True  # type: ignore[type-arg]
              ) -> str:
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        f'models = ["claude-sonnet-4-5"]\nactive = {str(active).lower()}\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n',
                      encoding="utf-8")
    return str(config)


ONE_READING = [{"connection": "c", "checked_at": "2026-11-30T12:00:00Z", "windows": [
    {"name": "custom", "remaining_percent": 60, "reset_at": "2026-11-30T15:00:00Z"}]}]


def test_a_window_with_one_reading_makes_the_answers_unknown(tmp_path: Path) -> None:
    document = forecast_json(one_login(tmp_path, ONE_READING), "auto/subscription", "--now",
                             "2026-11-30T12:00:00Z", "--horizon", "2h")
    assert document["answers_known"] is False
    ((unknown),) = document["unprojected_windows"]
    assert unknown == {"connection_id": "c", "connection": "c", "window": "custom",
                       "reason": "1 reading in this cycle: no burn rate before 2"}


def test_a_connection_excluded_for_good_moves_no_answer(tmp_path: Path) -> None:
    document = forecast_json(one_login(tmp_path, ONE_READING, active=False),
                             "auto/subscription", "--now", "2026-11-30T12:00:00Z",
                             "--horizon", "2h")
    assert document["answers_known"] is True
    assert document["unprojected_windows"] == []


def test_two_readings_burn_without_a_length_and_say_the_assumption(tmp_path: Path) -> None:
    """A window no catalog knows, without window_seconds: 80% then 60% an hour later burns
    20%/h and reaches the 2% cutoff 2h54m after the latest reading."""
    readings = [{"connection": "c", "checked_at": at, "windows": [
        {"name": "custom", "remaining_percent": figure, "reset_at": "2026-11-30T18:00:00Z"}]}
        for at, figure in (("2026-11-30T11:00:00Z", 80), ("2026-11-30T12:00:00Z", 60))]
    document = forecast_json(one_login(tmp_path, readings), "auto/subscription", "--now",
                             "2026-11-30T12:00:00Z", "--horizon", "4h")
    assert document["answers_known"] is True
    (pace,) = document["pace"]
    assert pace["burn_percent_per_hour"] == 20.0
    assert pace["cutoff_at"] == "2026-11-30T14:54:00Z"
    assert "without the early-cycle guardrail" in pace["note"]
    assert document["pool_empty_at"] == "2026-11-30T14:54:00Z"
