"""``omniladder whatif`` end to end (SPEC §10): the worked example's figures as
docs/whatif.md prints them, a generated week the replay reproduces, the bound below every
scenario, and one clear line (exit 2) for every question it cannot answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import benchmark_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "whatif"
CONFIG = EXAMPLE / "omniladder.toml"
SCENARIOS = EXAMPLE / "scenarios.toml"


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["whatif", "auto/thrifty", "--config", str(CONFIG), *args])


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    result = _run("--scenario", str(SCENARIOS), "--json")
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _doc_table() -> dict[str, list[str]]:
    """docs/whatif.md's worked-example table: scenario → its cells."""
    text = (ROOT / "docs" / "whatif.md").read_text(encoding="utf-8")
    section = text.split('<a id="whatif-example"></a>', 1)[1]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] not in ("scenario",) and not cells[0].startswith(
                "---"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def _usd(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_the_worked_example_is_the_one_the_docs_print(example: dict[str, Any]) -> None:
    rows = _doc_table()
    scenarios = {s["name"]: s for s in example["scenarios"]}
    assert list(rows) == list(scenarios)
    for name, (paid, bound, regret, head, _) in rows.items():
        found = scenarios[name]
        assert _usd(paid) == pytest.approx(found["paid_usd"], abs=0.005), name
        assert _usd(bound) == pytest.approx(found["bound_usd"], abs=0.005), name
        assert _usd(regret) == pytest.approx(found["regret_usd"], abs=0.005), name
        assert float(head.split()[0]) == pytest.approx(found["paid_hours"], abs=0.05), name


def test_the_example_replay_stands_behind_its_history(example: dict[str, Any]) -> None:
    fidelity = example["fidelity"]
    recorded, replayed = fidelity["paid_usd_recorded"], fidelity["paid_usd_replayed"]
    assert abs(replayed - recorded) <= 0.03 * recorded
    assert fidelity["readings_mae_points"] < 1.0
    assert fidelity["warning"] is None
    assert example["demand"]["requests"] == sum(fidelity["served_by_rung_recorded"].values())


def test_no_scenario_pays_less_than_its_bound(example: dict[str, Any]) -> None:
    for scenario in example["scenarios"]:
        assert scenario["bound_usd"] is not None
        assert scenario["bound_usd"] <= scenario["paid_usd"] + 1e-6, scenario["name"]
        assert scenario["regret_usd"] >= -1e-6


def test_the_added_seat_is_priced_against_its_break_even(example: dict[str, Any]) -> None:
    [added] = [s for s in example["scenarios"] if s["added"]]
    [seat] = added["added"]
    assert seat["connection"] == "claude-seat-extra"
    assert seat["like"] == "claude-seat-00000"
    assert seat["seat_price_usd"] == 20.0
    saved = example["scenarios"][0]["paid_usd"] - added["paid_usd"]
    span = (_instant(example["to"]) - _instant(example["from"])).total_seconds()
    assert seat["break_even_usd"] == pytest.approx(saved * 365.25 / 12 * 86400 / span, rel=1e-3)


def _instant(text: str) -> Any:
    from omniladder.timefmt import from_rfc3339

    return from_rfc3339(text)


def test_options_build_a_scenario_named_after_them() -> None:
    result = _run("--order", "expiring-first", "--reserve", "claude-seat-00002=20",
                  "--no-bound", "--json")
    assert result.exit_code == 0, result.output
    names = [s["name"] for s in json.loads(result.stdout)["scenarios"]]
    assert names == ["as-is", "--order expiring-first --reserve claude-seat-00002=20"]


def test_the_svg_draws_every_scenario(tmp_path: Path) -> None:
    picture = tmp_path / "paid.svg"
    result = _run("--order", "expiring-first", "--no-bound", "--svg", str(picture))
    assert result.exit_code == 0, result.output
    text = picture.read_text(encoding="utf-8")
    assert text.startswith("<svg")
    assert "as-is" in text
    assert "expiring-first" in text


@pytest.mark.parametrize(("args", "words"), [
    (["--remove", "nobody"], "--remove: 'nobody' is not a connection of the fleet"),
    (["--add", "nobody"], "--add: 'nobody' names no connection of the fleet to copy"),
    (["--add", "claude-seat-00000:codex-seat-00001"], "'codex-seat-00001' is already a"),
    (["--reserve", "claude-seat-00000=120"], "--reserve: 'claude-seat-00000=120': PERCENT "
     "must be 0 to 100"),
    (["--reserve", "claude-seat-00000"], "is not ID=PERCENT"),
    (["--weight", "claude-seat-00000=0"], "W must be more than 0"),
    (["--order", "sideways"], "'sideways' is not an order"),
    (["--bound-bucket", "0"], "--bound-bucket: must be 1 to 1440 minutes"),
    (["--from", "2027-01-01T00:00:00Z", "--to", "2027-01-02T00:00:00Z"],
     "no request of auto/thrifty in the span between 2027-01-01T00:00:00Z and"),
])
def test_a_question_it_cannot_answer_is_one_line(args: list[str], words: str) -> None:
    result = _run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    assert words in line, line


@pytest.mark.parametrize(("body", "words"), [
    ('[[scenarios]]\nname = "as-is"\n', "'as-is' is the fleet as given"),
    ('[[scenarios]]\nname = "x"\nspeed = 3\n', "speed"),
    ('[[scenarios]]\nname = "x"\nremove = ["nobody"]\n', "scenarios[1] (x): --remove: "
     "'nobody' is not a connection"),
    ('[[scenarios]]\nname = "x"\n[[scenarios]]\nname = "x"\n', "name 'x' is given twice"),
    ("scenarios = []\n", "names no scenario"),
])
def test_a_bad_scenario_file_names_the_file_and_the_field(tmp_path: Path, body: str,
                                                          words: str) -> None:
    path = tmp_path / "scenarios.toml"
    path.write_text(body, encoding="utf-8")
    result = _run("--scenario", str(path), "--no-bound")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    assert "scenarios.toml" in line, line
    assert words in line, line


def test_no_quota_history_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "quota.json").write_text('{"readings": []}', encoding="utf-8")
    result = _run("--quota", str(tmp_path / "quota.json"))
    assert result.exit_code == 2, result.output
    assert "no quota history to fit" in result.stderr


def test_the_check_gates_judge_the_replay(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'config = "{CONFIG}"\n'
        '[[expect]]\nname = "regret"\nauto_id = "auto/thrifty"\nmax_regret_usd = 5\n'
        '[[expect]]\nname = "tight"\nauto_id = "auto/thrifty"\nmax_regret_usd = 1\n'
        f'[[expect]]\nname = "seat"\nauto_id = "auto/thrifty"\nadded_seat_pays = true\n'
        f'scenario = "{SCENARIOS}"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(policy), "--json"])
    assert result.exit_code == 1, result.output
    passed = {e["name"]: e["passed"] for e in json.loads(result.stdout)["expectations"]}
    # as-is regret $3.67: within $5, not within $1; the added seat's $20.01 a month ≥ $20
    assert passed == {"regret": True, "tight": False, "seat": True}


def _week(out: Path) -> Path:
    script = ROOT / "benchmarks" / "fleet.py"
    done = subprocess.run([sys.executable, str(script), str(out), "--connections", "8",
                           "--whatif-week", "2", "--seed", "11", "--weights", "1,5",
                           "--demand-scale", "1.6"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return out / "omniladder.toml"


def test_a_generated_week_is_reproduced_by_its_as_is_replay(tmp_path: Path) -> None:
    """The week one replay of the declared policy wrote (benchmarks/week.py): the fit
    recovers its truth from the rounded telemetry, and the as-is replay its paid dollars."""
    config = _week(tmp_path / "week")
    truth = json.loads((tmp_path / "week" / "truth.json").read_text(encoding="utf-8"))
    result = CliRunner().invoke(app, ["whatif", "auto/thrifty", "--config", str(config),
                                      "--no-bound", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    fidelity = document["fidelity"]
    assert truth["paid_usd"] > 1.0
    assert fidelity["paid_usd_recorded"] == pytest.approx(truth["paid_usd"], rel=1e-6)
    assert fidelity["paid_usd_replayed"] == pytest.approx(truth["paid_usd"], rel=0.05)
    # two days of whole-percent telemetry: the rounding alone is a quarter point
    assert fidelity["readings_mae_points"] < 1.5
    for row in document["consumption"]:
        expected = truth["seats"][row["connection"]][row["window"]]["percent_per_unit"]
        assert row["percent_per_unit"] == pytest.approx(expected, rel=0.1), row


def test_the_help_names_the_scenario_options() -> None:
    result = CliRunner().invoke(app, ["whatif", "--help"])
    assert result.exit_code == 0
    text = re.sub(r"\s+", " ", result.output)
    for option in ("--order", "--remove", "--add", "--reserve", "--weight", "--scenario",
                   "--svg", "--no-bound"):
        assert option in text


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(1, 10_000), scale=st.floats(1.0, 3.0))
def test_the_bound_is_below_every_replayed_scenario(seed: int, scale: float) -> None:
    """On generated days of four connections (a seat of each provider and two keys), the
    bound of each scenario's own fleet is at most what its replay paid."""
    week = benchmark_module("week")
    from omniladder.analyses.whatif.run import catalog_of, whatif
    from omniladder.analyses.whatif.scenario import ScenarioSpec
    from omniladder.engine.autoid import parse_auto_id
    from omniladder.inputs.input_set import load_inputs
    from omniladder.inputs.ledger.read import Ledger
    from omniladder.inputs.scopes import load_window_scopes

    with tempfile.TemporaryDirectory() as scratch:
        settings_path = week.write_week(Path(scratch), 4, seed=seed, days=1, demand_scale=scale,
                                   weights=(1.0,))
        report = whatif(load_inputs(settings_path), parse_auto_id("auto/thrifty"),
                        Ledger(Path(scratch) / "traffic.jsonl"),
                        scenarios=[ScenarioSpec(name="ordered", order="expiring-first"),
                                   ScenarioSpec(name="fewer", remove=("claude-seat-00000",))],
                        catalog=catalog_of(load_window_scopes()))
    for scenario in report.scenarios:
        assert scenario.bound_usd is not None, report.bound_note
        assert scenario.bound_usd <= scenario.paid_usd + 1e-6, scenario.name
