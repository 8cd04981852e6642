"""`omniladder who PROVIDER/MODEL [AUTO_ID]`: the inverse question."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.analyses.who import check_target, split_target, who
from omniladder.engine.autoid import all_auto_ids, parse_auto_id
from omniladder.engine.plan import make_plan
from omniladder.errors import UsageError
from tests.builders import NOW, at, conn, fleet, plan, reading, window
from tests.conftest import ROOT

CONFIG = str(ROOT / "examples" / "omniladder.toml")
runner = CliRunner()

FRESH = window("5h", 50, at(hours=4))


def _who(*args: str, code: int = 0) -> Any:
    from omniladder.cli import app

    done = runner.invoke(app, ["who", *args, "--config", CONFIG])
    assert done.exit_code == code, done.output
    return done


def _json(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_who(*args, "--json").stdout)
    return document


def test_who_lists_every_connection_of_the_model_with_its_verdict() -> None:
    document = _json("claude/claude-sonnet-4-5")
    assert document["target"] == "claude/claude-sonnet-4-5"
    assert document["in_model_catalog"] is True
    assert [a["auto_id"] for a in document["auto_ids"]] == ["auto/subscription",
                                                            "auto/thrifty"]
    subscription, thrifty = document["auto_ids"]
    rows = {r["connection_id"]: r for r in subscription["connections"]}
    assert list(rows) == ["claude-max-work", "claude-pro-personal", "claude-max-extra",
                          "claude-api"]
    assert (rows["claude-max-work"]["state"], rows["claude-max-work"]["position"]) == ("in", 1)
    assert rows["claude-pro-personal"]["state"] == "out"
    assert rows["claude-pro-personal"]["reason"] == "quota-below-reentry"
    assert rows["claude-api"]["reason"] == "billing-uncurated"
    assert "[[entries]]" in rows["claude-api"]["fix"]
    assert subscription["served"] is True
    assert [e["position"] for e in subscription["pool"]] == [1]
    # under auto/thrifty the split candidate is served on two rungs
    assert [(e["position"], e["rung"]) for e in thrifty["pool"]] == [(1, "subscription"),
                                                                     (11, "premium")]
    thrifty_rows = {r["connection_id"]: r for r in thrifty["connections"]}
    assert (thrifty_rows["claude-api"]["state"], thrifty_rows["claude-api"]["rung"],
            thrifty_rows["claude-api"]["position"]) == ("in", "premium", 11)


def test_who_agrees_with_the_plan_for_every_id() -> None:
    """The answer is the plan's: each row's state, rung, position and reason."""
    from omniladder.cli import app

    for auto_id in all_auto_ids():
        planned = json.loads(runner.invoke(app, ["plan", auto_id, "--config", CONFIG,
                                                 "--json"]).stdout)
        answer = _json("codex/gpt-5.1-codex", auto_id)
        (for_id,) = answer["auto_ids"]
        entries = [e for e in planned["pool"]
                   if (e["provider"], e["model"]) == ("codex", "gpt-5.1-codex")]
        assert [e["position"] for e in entries] == [e["position"] for e in for_id["pool"]]
        for row in for_id["connections"]:
            if row["state"] == "in":
                entry = next(e for e in entries if e["position"] == row["position"])
                assert row["connection_id"] in entry["allowed_connection_ids"]
            else:
                excluded = [x for x in planned["excluded"]
                            if x["connection_id"] == row["connection_id"]
                            and x["model"] in (None, "gpt-5.1-codex")]
                assert [x["reason"] for x in excluded] == [row["reason"]], auto_id


def test_the_unverified_reason_is_on_the_row() -> None:
    (thrifty,) = _json("codex/gpt-5.1-codex", "auto/thrifty")["auto_ids"]
    team = next(r for r in thrifty["connections"] if r["connection_id"] == "codex-team")
    assert team["state"] == "in"
    assert team["unverified"]["reason"] == "quota-reset-since-reading"


def test_all_ids_judges_under_the_twelve() -> None:
    document = _json("claude/claude-sonnet-4-5", "--all-ids")
    assert [a["auto_id"] for a in document["auto_ids"]] == list(all_auto_ids())


def test_a_provider_connection_without_the_model_is_shown_as_not_serving() -> None:
    inputs = fleet([conn("has", models=["sonnet"]), conn("lacks", models=["opus"]),
                    conn("other", "codex", models=["gpt-codex"])],
                   [reading("has", FRESH), reading("lacks", FRESH)])
    plans = [plan(inputs, "auto/subscription")]
    provider, model, in_catalog = check_target("claude/sonnet", plans[0],
                                               inputs.catalogs.models)
    answer = who(plans, provider, model, in_catalog)
    (for_id,) = answer.answers
    assert [(r.connection_id, r.state) for r in for_id.rows] == [("has", "in"),
                                                                 ("lacks", "not-serving")]
    lacks = for_id.rows[1]
    assert lacks.rung is None
    assert lacks.fix is not None
    assert 'add "sonnet" to models' in lacks.fix


def test_a_catalog_model_nobody_serves_is_an_answer_not_an_error() -> None:
    inputs = fleet([conn("has", models=["sonnet"])], [reading("has", FRESH)])
    first = plan(inputs, "auto/thrifty")
    provider, model, in_catalog = check_target("claude/opus", first, inputs.catalogs.models)
    answer = who([first], provider, model, in_catalog)
    assert in_catalog
    (for_id,) = answer.answers
    assert not for_id.served
    assert [(r.connection_id, r.state) for r in for_id.rows] == [("has", "not-serving")]


def test_an_uncatalogued_model_a_connection_lists_is_known() -> None:
    inputs = fleet([conn("has", models=["custom-x"])], [reading("has", FRESH)])
    first = make_plan(inputs, parse_auto_id("auto/thrifty"), NOW, "flag")
    assert check_target("claude/custom-x", first, inputs.catalogs.models) == (
        "claude", "custom-x", False)


@pytest.mark.parametrize("text", ["claude", "/sonnet", "claude/", " /x", ""])
def test_a_target_without_provider_and_model_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="is not PROVIDER/MODEL"):
        split_target(text)


def test_a_model_id_may_hold_slashes() -> None:
    assert split_target("openrouter/deepseek/deepseek-chat-v3.1:free") == (
        "openrouter", "deepseek/deepseek-chat-v3.1:free")
    document = _json("openrouter/deepseek/deepseek-chat-v3.1:free", "auto/thrifty")
    (for_id,) = document["auto_ids"]
    assert [r["connection_id"] for r in for_id["connections"]] == ["openrouter-free"]


@pytest.mark.parametrize(("args", "fragment"), [
    (["claude/claude-opus-4"], "did you mean claude/claude-opus-4-5, claude/claude-opus-4-1"),
    (["nobody/nothing-at-all"], "the fleet's providers: antigravity, claude"),
    (["claude"], "'claude' is not PROVIDER/MODEL"),
    (["claude/claude-sonnet-4-5", "auto/Coding:thrifty"], "unknown category"),
    (["claude/claude-sonnet-4-5", "auto/thrifty", "--all-ids"], "not both"),
    (["claude/claude-sonnet-4-5", "--now", "2026-11-29T12:00:00"], "has no offset"),
])
def test_bad_input_exits_2_with_one_clear_message(args: list[str], fragment: str) -> None:
    done = _who(*args, code=2)
    assert fragment in done.output
    assert "Traceback" not in done.output


def test_the_tree_says_in_out_and_what_to_change() -> None:
    text = _who("claude/claude-sonnet-4-5", "auto/subscription").stdout
    assert text.startswith("omniladder who claude/claude-sonnet-4-5\n")
    assert "auto/subscription: served at #1 (subscription) by 1 of 4 connections" in text
    assert "claude-max-work (subscription): in at #1" in text
    assert "claude-pro-personal (subscription): out — quota-below-reentry" in text
    assert "to change this" in text
    assert 'provider = "claude"' in text


def test_the_tree_says_not_served() -> None:
    text = _who("devin-desktop/swe-1.5", "auto/subscription").stdout
    assert "auto/subscription: not served — 0 of 1 connection" in text
    assert "devin-team (subscription): out — overage-not-hard-stop" in text

