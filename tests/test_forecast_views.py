"""The forecast's views and `check`'s forecast gates, as an operator reads them (the third
outside audit's forecast items): identifiers whole at any width, markdown escaped, the same
hours in both commands, errors naming the file and field, help that matches the options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()
DAY = str(EXAMPLES / "day" / "omniladder.toml")
NOW = "2026-11-29T13:00:00Z"


def fleet(tmp_path: Path, ids: list[str], window: str = "5h",
          reset: str = "2026-11-30T15:00:00Z") -> Path:
    """Claude plan logins burning one window from 80% to 60% between 11:00 and 12:00."""
    (tmp_path / "connections.toml").write_text("".join(
        f'[[connections]]\nid = "{cid}"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\n' for cid in ids), encoding="utf-8")
    readings = [{"connection": cid, "checked_at": at, "windows": [
        {"name": window, "remaining_percent": figure, "reset_at": reset,
         "window_seconds": 18000}]}
        for cid in ids for at, figure in (("2026-11-30T11:00:00Z", 80),
                                          ("2026-11-30T12:00:00Z", 60))]
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n',
                      encoding="utf-8")
    return config


def forecast_out(config: Path, *args: str, columns: str = "80",
                 now: str = "2026-11-30T12:00:00Z") -> str:
    result = runner.invoke(app, ["forecast", "auto/subscription", "--config", str(config),
                                 "--now", now, "--horizon", "2h", *args],
                           env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    return result.stdout


LONG = ["claude-max-work-team-alpha-1", "claude-max-work-team-alpha-2"]
"""Two ids alike in their first 18 characters (and more)."""


@pytest.mark.parametrize("columns", ["50", "80", "200"])
def test_the_pace_table_prints_every_id_whole_at_the_width_given(tmp_path: Path,
                                                                 columns: str) -> None:
    out = forecast_out(fleet(tmp_path, LONG, window="five-hour-window"), columns=columns)
    for cid in LONG:
        assert re.search(rf"^  {cid} +five-hour-window\b", out, re.MULTILINE), out
    assert max(len(line) for line in out.splitlines()) <= int(columns)
    if columns == "200":  # room for the table: one row per window, the figures beside
        assert re.search(rf"^  {LONG[0]} +five-hour-window +60\.0%.*20\.0%/h", out,
                         re.MULTILINE), out


def test_markdown_escapes_what_a_window_name_carries(tmp_path: Path) -> None:
    out = forecast_out(fleet(tmp_path, ["c"], window="a|b<b>x</b>"), "--format", "markdown")
    (row,) = [line for line in out.splitlines() if line.startswith("| `c`")]
    assert "`a\\|b<b>x</b>`" in row  # in a code span, where nothing renders
    assert "<b>" not in re.sub(r"`[^`]*`", "", out)
    unescaped = re.findall(r"(?<!\\)\|", row)
    assert len(unescaped) == 8, row  # seven cells: eight pipes that are table syntax


def test_markdown_carries_the_hours_and_the_paid_estimate() -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "- Hours heading the pool: subscription 21.02h, cheap 2.98h" in result.stdout
    assert "- Paid estimate cheap: 2.98h, $0.12" in result.stdout


def policy(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(f'[[expect]]\nname = "ahead"\nauto_id = "auto/thrifty"\n'
                    f'now = "{NOW}"\n{body}', encoding="utf-8")
    return path


def check(path: Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", str(path), "--config", DAY])
    return result.exit_code, result.stdout, result.stderr


def test_a_check_horizon_too_long_for_its_steps_names_the_file_and_field(
        tmp_path: Path) -> None:
    code, _, err = check(policy(tmp_path, 'horizon = "400d"\nmax_paid_hours = 1\n'))
    assert code == 2, err
    assert "policy.toml" in err
    assert "expect[0].horizon" in err
    assert "--step" not in err
    assert "Traceback" not in err


def test_forecast_blames_a_too_long_horizon_on_the_horizon() -> None:
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW,
                                 "--horizon", "1000d", "--step", "1m"])
    assert result.exit_code == 2
    assert "error: --horizon:" in result.stderr
    assert "shorten --horizon" in result.stderr


def test_forecast_and_check_word_the_paid_hours_alike(tmp_path: Path) -> None:
    forecast = runner.invoke(app, ["forecast", "auto/thrifty", "--config", DAY, "--now", NOW])
    assert "Hours heading the pool: subscription 21.02h, cheap 2.98h" in forecast.stdout
    assert "Paid estimate cheap: 2.98h," in forecast.stdout
    code, out, _ = check(policy(tmp_path, 'max_paid_hours = 2\npercentile = "p50"\n'))
    assert code == 1
    assert "2.98h paid at p50" in out


@pytest.mark.parametrize(("now", "passes"), [(NOW, True), ("2026-11-29T14:30:00Z", False)])
def test_no_paid_within_zero_is_a_duration(tmp_path: Path, now: str, passes: bool) -> None:
    """0s asks that no paid rung heads the pool at now (cheap heads it from 14:01:15, and
    no earlier than 13:30 at the band's p10)."""
    path = tmp_path / "policy.toml"
    path.write_text(f'[[expect]]\nname = "now"\nauto_id = "auto/thrifty"\nnow = "{now}"\n'
                    'no_paid_within = "0s"\n', encoding="utf-8")
    code, out, err = check(path)
    assert code == (0 if passes else 1), out + err


def test_forecast_warns_of_an_empty_fleet_as_plan_does(tmp_path: Path) -> None:
    (tmp_path / "connections.toml").write_text("", encoding="utf-8")
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--connections",
                                 str(tmp_path / "connections.toml"), "--now", NOW])
    assert result.exit_code == 0, result.output
    assert "lists no connection" in result.stderr


def test_a_window_that_reset_days_ago_is_marked_past(tmp_path: Path) -> None:
    config = fleet(tmp_path, ["c"], reset="2026-11-30T13:00:00Z")
    out = forecast_out(config, now="2026-12-02T12:00:00Z")
    (row,) = [line for line in out.splitlines() if line.startswith("  c ")]
    assert row.endswith("reset"), row
    assert "-  " in row  # no elapsed part or even pace of a finished cycle
    assert "c 5h: reading at 2026-11-30 12:00Z is" in out
    assert "reset at 2026-11-30 13:00Z, 47h00m before now" in " ".join(out.split())


def test_the_help_names_only_options_there_are() -> None:
    forecast = runner.invoke(app, ["forecast", "-h"], env={"COLUMNS": "200"})
    assert "--out " not in forecast.stdout
    assert "--out." not in forecast.stdout
    checked = runner.invoke(app, ["check", "-h"], env={"COLUMNS": "200"})
    assert "no_paid_within" in checked.stdout
    assert "max_paid_hours" in checked.stdout
