"""What `audit traffic` makes of a ledger as `import litellm-spend` writes it (SPEC §7.1, §7.4).

The ledgers are written by the import itself from spend-log rows as LiteLLM writes them
(``tests.test_litellm_spend.row``), joined through the ids ``export litellm`` writes for the
example fleet; the fleet is the example's, with one reading that puts ``claude-max-extra``
(overage ``meters-to-paid``) past its 5h quota at 12:00.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.test_litellm_spend import (
    EXAMPLES,
    FIXTURES,
    exported_ids,
    lines,
    row,
    write_rows,
)

runner = CliRunner()
EXTRA_SPENT = "2026-11-29T12:00:00Z"
SONNET_USD_PER_MTOK = (3.0, 15.0)
MINI_USD_PER_MTOK = (0.25, 2.0)
"""The shipped model catalog's prices of claude/claude-sonnet-4-5 and openai/gpt-5-mini."""


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    return past_quota_fleet(tmp_path / "fleet")


def past_quota_fleet(folder: Path) -> Path:
    """The example inputs in ``folder``, claude-max-extra past its 5h quota from
    EXTRA_SPENT on; the settings file."""
    shutil.copytree(EXAMPLES, folder)
    quota = json.loads((folder / "quota.json").read_text(encoding="utf-8"))
    quota["readings"].append({"connection": "claude-max-extra", "checked_at": EXTRA_SPENT,
                              "windows": [{"name": "5h", "remaining_percent": 0,
                                           "reset_at": "2026-11-29T16:00:00Z"}]})
    (folder / "quota.json").write_text(json.dumps(quota), encoding="utf-8")
    return folder / "omniladder.toml"


def imported(rows: list[dict[str, Any]], settings: Path) -> Path:
    """The ledger ``import litellm-spend`` writes from ``rows``."""
    folder = settings.parent
    ledger = folder / "litellm.jsonl"
    result = runner.invoke(app, ["import", "litellm-spend",
                                 str(write_rows(folder / "logs.json", rows)), "--traffic",
                                 str(ledger), "--since", "all", "--config", str(settings)])
    assert result.exit_code == 0, result.output
    return ledger


def audited(ledger: Path, settings: Path) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["audit", "traffic", "auto/thrifty", "--traffic", str(ledger),
                                 "--config", str(settings), "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def priced(tokens_in: int, tokens_out: int, prices: tuple[float, float]) -> float:
    return (tokens_in * prices[0] + tokens_out * prices[1]) / 1_000_000


# --- a recorded spend of 0 (SPEC §7.4 v1.4) -------------------------------------------------


def test_a_spend_of_0_on_a_paid_or_metered_pair_is_priced_from_its_tokens(
        fleet: Path) -> None:
    ids = exported_ids()
    rows = [
        # LiteLLM's price map lacks a model routed through a subscription proxy: spend 0
        row(f"extra-{n}", model="claude-sonnet-4-5", spend=0.0, prompt_tokens=1000,
            completion_tokens=200, model_id=ids[("claude-max-extra", "claude-sonnet-4-5")],
            model_group="omniladder-thrifty", startTime=f"2026-11-29T12:0{n}:00")
        for n in (1, 2)] + [
        row("mini", model="gpt-5-mini", spend=0.0, prompt_tokens=250000,
            completion_tokens=30000, model_id=ids[("openai-key", "gpt-5-mini")],
            model_group="omniladder-thrifty", startTime="2026-11-29T11:33:05")]
    ledger = imported(rows, fleet)
    assert {event["cost_usd"] for event in lines(ledger)} == {0.0}  # written as recorded
    code, document = audited(ledger, fleet)
    early = priced(250000, 30000, MINI_USD_PER_MTOK)
    overage = 2 * priced(1000, 200, SONNET_USD_PER_MTOK)
    assert document["counts"]["early-paid"] == 1
    assert document["counts"]["served-excluded"] == 2  # past quota, overage metered
    assert document["leak_usd"] == pytest.approx(early)
    assert document["cost_usd"] == pytest.approx(early + overage)
    extra = {item["connection"]: item for item in document["by_connection"]}[
        "claude-max-extra"]
    assert extra["cost_usd"] == pytest.approx(overage)
    assert [leak["price_source"] for leak in document["top_leaks"]] == ["catalog"]
    assert code == 1


def test_a_spend_of_0_without_tokens_is_unpriced_never_0(fleet: Path) -> None:
    ids = exported_ids()
    bare = row("mini", model="gpt-5-mini", spend=0.0,
               model_id=ids[("openai-key", "gpt-5-mini")], model_group="omniladder-thrifty",
               startTime="2026-11-29T11:33:05")
    del bare["prompt_tokens"], bare["completion_tokens"]
    code, document = audited(imported([bare], fleet), fleet)
    assert document["counts"]["early-paid"] == 1
    assert document["unpriced"]["count"] == 1
    assert document["unpriced"]["leak"] == 1
    assert document["leak_usd"] == 0
    assert code == 1  # a leak of unknown size cannot be shown to be within the allowance


def test_a_spend_of_0_within_quota_stays_0(fleet: Path) -> None:
    ids = exported_ids()
    code, document = audited(imported([
        row("work", model="claude-sonnet-4-5", spend=0.0, prompt_tokens=1000,
            completion_tokens=200, model_id=ids[("claude-max-work", "claude-sonnet-4-5")],
            model_group="omniladder-thrifty", startTime="2026-11-29T09:41:03")], fleet),
        fleet)
    assert document["counts"]["on-plan"] == 1
    assert document["cost_usd"] == 0
    assert document["unpriced"]["count"] == 0
    assert code == 0


def test_the_published_row_of_a_model_absent_from_litellm_s_price_map_is_priced(
        fleet: Path) -> None:
    """tests/fixtures/sources/litellm/spend-logs-unmapped-model.json: LiteLLM's spend 0
    for a route its price map lacks, served by claude-max-extra past its quota."""
    (published,) = json.loads((FIXTURES / "spend-logs-unmapped-model.json").read_text(
        encoding="utf-8"))
    assert published["model_id"] == exported_ids()[("claude-max-extra",
                                                    "claude-sonnet-4-5")]
    ledger = imported([published], fleet)
    (event,) = lines(ledger)
    assert event["cost_usd"] == 0.0
    code, document = audited(ledger, fleet)
    assert document["counts"]["served-excluded"] == 1
    assert document["cost_usd"] == pytest.approx(priced(10, 20, SONNET_USD_PER_MTOK))
    assert document["unpriced"]["count"] == 0
    assert code == 0  # past quota and metered, but no leak (§7.3): served-excluded


# --- a group the export did not write (SPEC §7.1 v1.4) -------------------------------------


def test_a_group_the_export_did_not_write_is_another_id(fleet: Path) -> None:
    ids = exported_ids()
    rows = [row(f"manual-{n}", model="gpt-5-mini", spend=0.00037, prompt_tokens=1000,
                completion_tokens=60, model_id=ids[("openai-key", "gpt-5-mini")],
                model_group="manual-mini", startTime=f"2026-11-29T11:3{n}:00")
            for n in (1, 2)]
    ledger = imported(rows, fleet)
    assert {event["requested"] for event in lines(ledger)} == {"manual-mini"}  # as it is
    code, document = audited(ledger, fleet)
    assert document["events"]["not_audited"]["other-request"] == 2
    assert document["counts"]["early-paid"] == 0
    assert document["leak_usd"] == 0
    assert code == 0


def test_a_spend_of_0_is_no_paid_spend_when_the_ledger_is_the_spend_ledger(
        fleet: Path) -> None:
    """SPEC §7.1: the ledger as ``--spend``; a recorded 0 on a paid rung is no spend of $0
    (§7.4 v1.4), so the forecast does not read the rung's cost per hour as $0."""
    ids = exported_ids()
    ledger = imported([row("mini", model="gpt-5-mini", spend=0.0, prompt_tokens=250000,
                           completion_tokens=30000, model_id=ids[("openai-key", "gpt-5-mini")],
                           model_group="omniladder-thrifty",
                           startTime="2026-11-29T11:33:05")], fleet)
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", str(fleet),
                                 "--spend", str(ledger), "--now", "2026-11-29T12:05:00Z",
                                 "--json"])
    assert result.exit_code == 0, result.output
    cheap = {item["rung"]: item for item in json.loads(result.stdout)["paid_estimate"]}["cheap"]
    assert cheap["usd_per_hour"] is None
    assert cheap["basis"].startswith("no cheap spend")


# --- key-shaped values (inputs/credentials.py) ----------------------------------------------

KEY = "sk-proj-" + "Zq7" * 12
"""Shaped as an OpenAI project key (never a real one): pasted where an id goes."""
GROUP_KEY = "gsk_" + "4xR" * 10


def test_a_key_shaped_id_is_written_and_listed_redacted_never_as_itself(
        tmp_path: Path) -> None:
    rows = [row("r-1", model="gpt-5-mini", model_id=KEY, model_group=GROUP_KEY, spend=0.01,
                prompt_tokens=10, completion_tokens=5),
            row(KEY, model=KEY, startTime="2026-11-29T09:31:00")]
    ledger = tmp_path / "traffic.jsonl"
    result = runner.invoke(app, ["import", "litellm-spend",
                                 str(write_rows(tmp_path / "logs.json", rows)), "--traffic",
                                 str(ledger), "--since", "all"])
    assert result.exit_code == 0, result.output
    for text in (result.stdout, result.stderr, ledger.read_text(encoding="utf-8")):
        assert KEY not in text
        assert GROUP_KEY not in text
        assert "Zq7Zq7" not in text
    first, second = lines(ledger)
    assert first["connection"].startswith("litellm:redacted-key-")
    assert first["requested"].startswith("redacted-key-")
    assert second["request_id"].startswith("redacted-key-")
    assert second["model"].startswith("redacted-key-")
    assert "4 values of the spend logs looked like a key" in result.stderr
    assert "model (1), model_group (1), model_id (1), request_id (1)" in result.stderr
    again = runner.invoke(app, ["import", "litellm-spend", str(tmp_path / "logs.json"),
                                "--traffic", str(ledger), "--since", "all"])
    assert "0 events added, 2 already in the ledger" in again.stderr  # the same markers


def test_a_key_in_a_refused_column_is_not_quoted(tmp_path: Path) -> None:
    from tests.errors import one_error

    result = runner.invoke(app, ["import", "litellm-spend",
                                 str(write_rows(tmp_path / "logs.json",
                                                [row("r-1", status=KEY)])),
                                 "--traffic", str(tmp_path / "t.jsonl"), "--since", "all"])
    line = one_error(result, "[0].status", "must be success or failure",
                     "an OpenAI project key")
    assert KEY not in line
