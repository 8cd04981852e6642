"""Saved plans and their diff: each kind of difference, the identity of entries, and the
validation of saved files."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.analyses.diff import PlanDiff, diff_plans
from omniladder.engine.autoid import parse_auto_id, parse_instant
from omniladder.engine.plan import make_plan
from omniladder.errors import InputError
from omniladder.inputs.input_set import load_inputs
from omniladder.inputs.plan_document import load_saved_plan, parse_saved_plan
from omniladder.rendering.json_view import plan_document
from tests.conftest import EXAMPLES
from tests.depth import deep


@cache
def _document(config: str = "omniladder.toml", auto_id: str = "auto/thrifty") -> str:
    inputs = load_inputs(EXAMPLES / config)
    plan = make_plan(inputs, parse_auto_id(auto_id), parse_instant("2026-11-29T12:00:00Z"),
                     "flag")
    return json.dumps(plan_document(plan))


def document(config: str = "omniladder.toml", auto_id: str = "auto/thrifty") -> dict[str, Any]:
    """A fresh, mutable copy of an example plan document."""
    loaded: dict[str, Any] = json.loads(_document(config, auto_id))
    return loaded


def diff(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    return diff_plans(parse_saved_plan(old, "old.json"), parse_saved_plan(new, "new.json"),
                      "old.json", "new.json")


def renumber(doc: dict[str, Any]) -> dict[str, Any]:
    for index, entry in enumerate(doc["pool"], start=1):
        entry["position"] = index
    return doc


def test_a_plan_equals_itself() -> None:
    result = diff(document(), document())
    assert result.equal
    assert result.total == 0
    assert result.summary == "no differences: the two plans route the same way"


def test_detail_and_instant_alone_are_not_differences() -> None:
    new = document()
    new["now"] = "2026-11-29T12:00:05Z"
    new["excluded"][0]["detail"] = "weekly-opus window at 0% (cutoff 2%), resets later"
    new["summary"] = "reworded"
    assert diff(document(), new).equal


def test_pool_entry_added() -> None:
    old = document()
    new = document()
    old["pool"] = [e for e in old["pool"] if e["model"] != "gpt-5.1-codex"]
    result = diff(renumber(old), new)
    assert [(e.rung, e.provider, e.model, e.position) for e in result.pool_added] == [
        ("subscription", "codex", "gpt-5.1-codex", 2)]
    assert result.pool_added[0].allowed_connection_ids == ("codex-team",)
    assert result.pool_moved == ()  # the entries below shifted, none changed order
    assert not result.equal


def test_pool_entry_removed() -> None:
    new = document()
    new["pool"] = [e for e in new["pool"] if e["rung"] != "premium"]
    result = diff(document(), renumber(new))
    assert [(e.rung, e.provider, e.model) for e in result.pool_removed] == [
        ("premium", "claude", "claude-sonnet-4-5"), ("premium", "openai", "gpt-5.1")]
    assert result.counts()["pool_removed"] == 2


def test_entries_are_identified_by_rung_provider_and_model_R11() -> None:
    """The same candidate on another rung is a different entry (a split candidate)."""
    new = document()
    sonnet = next(e for e in new["pool"] if e["provider"] == "claude")
    sonnet["rung"] = "keyless"
    result = diff(document(), new)
    assert [(e.rung, e.provider, e.model) for e in result.pool_removed] == [
        ("subscription", "claude", "claude-sonnet-4-5")]
    assert [(e.rung, e.provider, e.model) for e in result.pool_added] == [
        ("keyless", "claude", "claude-sonnet-4-5")]


def test_pool_entry_moved() -> None:
    new = document()
    new["pool"][1], new["pool"][2] = new["pool"][2], new["pool"][1]
    result = diff(document(), renumber(new))
    # Of two swapped neighbours one keeps its order relative to the rest; the other moved.
    assert [(m.rung, m.provider, m.model, m.old_position, m.new_position)
            for m in result.pool_moved] == [
        ("subscription", "codex", "gpt-5.1-codex", 2, 3)]
    assert result.pool_added == result.pool_removed == ()
    assert result.summary == "1 difference: 1 pool entry moved"


def test_a_swap_moves_the_swapped_entries_not_a_bystander() -> None:
    new = document()
    new["pool"][1], new["pool"][3] = new["pool"][3], new["pool"][1]
    result = diff(document(), renumber(new))
    assert sorted((m.model, m.old_position, m.new_position) for m in result.pool_moved) == [
        ("claude-sonnet-4-5", 4, 2), ("gpt-5.1-codex", 2, 4)]


def test_allowlist_changes_per_entry() -> None:
    new = document()
    head = new["pool"][0]
    head["allowed_connection_ids"] = ["claude-max-work", "claude-pro-personal"]
    head["unverified_connection_ids"] = ["claude-max-work"]
    copilot = new["pool"][2]
    copilot["unverified_connection_ids"] = []
    result = diff(document(), new)
    changes = {(a.provider, a.model): a for a in result.allowlists}
    sonnet = changes[("claude", "claude-sonnet-4-5")]
    assert sonnet.added == ("claude-pro-personal",)
    assert sonnet.removed == ("claude-max-extra",)
    assert sonnet.now_unverified == ("claude-max-work",)
    assert changes[("copilot-web", "gpt-4.1")].now_verified == ("copilot-seat",)
    assert len(result.allowlists) == 2


def test_rung_state_changes() -> None:
    result = diff(document(), document("omniladder-tight.toml"))
    assert [(r.rung, r.old_state, r.new_state) for r in result.rungs] == [
        ("cheap", "serving", "budget-spent"), ("premium", "serving", "disabled")]
    assert "premium rung disabled" in result.rungs[1].note


def test_new_and_cleared_exclusions() -> None:
    old, new = document(), document("omniladder-tight.toml")
    result = diff(old, new)
    assert {(x.connection_id, x.model, x.reason) for x in result.exclusions_added} == {
        ("claude-api", None, "budget-disabled"), ("openai-key", "gpt-5-mini", "budget-spent"),
        ("openai-key", "gpt-5.1", "budget-disabled"), ("deepseek-key", None, "budget-spent")}
    back = diff(new, old)
    assert {(x.connection_id, x.model) for x in back.exclusions_removed} == {
        (x.connection_id, x.model) for x in result.exclusions_added}
    assert back.summary.startswith("10 differences: 4 pool entries added")


def test_exclusions_are_identified_by_connection_and_model() -> None:
    """One connection excluded for every model, then for one model only: two keys."""
    new = document()
    gemini = next(x for x in new["excluded"] if x["connection_id"] == "gemini-free")
    gemini["model"] = "gemini-2.5-flash"
    result = diff(document(), new)
    assert [(x.connection_id, x.model) for x in result.exclusions_removed] == [
        ("gemini-free", None)]
    assert [(x.connection_id, x.model) for x in result.exclusions_added] == [
        ("gemini-free", "gemini-2.5-flash")]


def test_changed_reasons() -> None:
    new = document()
    groq = next(x for x in new["excluded"] if x["connection_id"] == "groq-key")
    groq["reason"], groq["detail"] = "inactive", "switched off (active = false)"
    result = diff(document(), new)
    assert [(r.connection_id, r.model, r.old_reason, r.new_reason, r.detail)
            for r in result.reasons] == [
        ("groq-key", None, "terminal-status", "inactive", "switched off (active = false)")]
    assert result.summary == "1 difference: 1 reason changed"


def test_billing_class_changes() -> None:
    new = document()
    api = next(c for c in new["connections"] if c["id"] == "claude-api")
    api["billing"], api["overage"] = "metered", "meters-to-paid"
    result = diff(document(), new)
    assert [(b.connection_id, b.old_billing, b.new_billing, b.old_overage, b.new_overage)
            for b in result.billing] == [
        ("claude-api", "unknown", "metered", "unknown", "meters-to-paid")]


def test_keys_added_to_format_1_later_are_ignored() -> None:
    new = document()
    new["explanations"] = {"anything": 1}
    new["pool"][0]["weight"] = 3
    assert diff(document(), new).equal


# --- property: what the diff reports about pools is exactly the set difference -----------


@deep(150, deadline=None)
def test_pool_diff_matches_sets_and_order(examples: settings) -> None:
    @examples
    @given(st.data())
    def holds(data: st.DataObject) -> None:
        base = document()
        entries = base["pool"]
        old_pick = data.draw(st.permutations(entries).flatmap(
            lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
        new_pick = data.draw(st.permutations(entries).flatmap(
            lambda p: st.integers(0, len(p)).map(lambda n: p[:n])))
        old, new = copy.deepcopy(base), copy.deepcopy(base)
        old["pool"], new["pool"] = copy.deepcopy(old_pick), copy.deepcopy(new_pick)
        result = diff(renumber(old), renumber(new))

        def key(e: Any) -> tuple[str, str, str]:
            return (e["rung"], e["provider"], e["model"])

        old_keys = [key(e) for e in old_pick]
        new_keys = [key(e) for e in new_pick]
        assert {(e.rung, e.provider, e.model) for e in result.pool_added} == (
            set(new_keys) - set(old_keys))
        assert {(e.rung, e.provider, e.model) for e in result.pool_removed} == (
            set(old_keys) - set(new_keys))
        shared_old = [k for k in old_keys if k in new_keys]
        shared_new = [k for k in new_keys if k in old_keys]
        assert (result.pool_moved == ()) == (shared_old == shared_new)
        # what stays unmoved keeps its relative order in both plans
        moved = {(m.rung, m.provider, m.model) for m in result.pool_moved}
        assert [k for k in shared_old if k not in moved] == [k for k in shared_new
                                                             if k not in moved]
        assert result.equal == (old_keys == new_keys)

    holds()


# --- reading saved plans -------------------------------------------------------------------


def _saved(tmp_path: Path, text: str) -> str:
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_saved_plan(path)
    return str(caught.value)


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    doc = document()
    doc["format_version"] = "2"
    error = _saved(tmp_path, json.dumps(doc))
    assert "format_version: plan format_version '2' is not supported; this omniladder reads " \
        "format_version '1'" in error


@pytest.mark.parametrize(("text", "message"), [
    ('{"auto_id": "auto/thrifty"}', "format_version: not a saved omniladder plan"),
    ("[1, 2]", "not a saved omniladder plan: the top level must be an object"),
    ('{"format_version": "1",\n "pool": [', "plan.json:2: invalid JSON"),
    ("", "plan.json:1: invalid JSON"),
], ids=["no-version", "array", "truncated", "empty"])
def test_unreadable_saved_plans(tmp_path: Path, text: str, message: str) -> None:
    error = _saved(tmp_path, text)
    assert message in error, error


def test_a_bad_field_is_named_with_its_path(tmp_path: Path) -> None:
    doc = document()
    doc["pool"][3]["position"] = "4"
    error = _saved(tmp_path, json.dumps(doc))
    assert "plan.json: pool[3].position: must be a valid integer, got a string" in error


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    doc = document()
    del doc["excluded"][0]["reason"]
    assert "excluded[0].reason: required field is missing" in _saved(tmp_path, json.dumps(doc))


def test_a_repeated_entry_is_refused(tmp_path: Path) -> None:
    doc = document()
    doc["pool"].append(dict(doc["pool"][0], position=13))
    assert "pool[12] repeats pool[0]: subscription claude/claude-sonnet-4-5" in _saved(
        tmp_path, json.dumps(doc))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_saved_plan(tmp_path / "nope.json")


def test_the_committed_example_plan_reads() -> None:
    saved = load_saved_plan(EXAMPLES / "ci" / "plan-thrifty.json")
    assert saved.auto_id == "auto/thrifty"
    assert len(saved.pool) == 12
