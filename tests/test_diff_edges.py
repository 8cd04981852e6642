"""`omniladder diff` on small hand-made saved plans: what counts as a move (an entry shifted
only by one added or removed above it is not), reason changes of one model, and the exact
errors of a saved plan that cannot be read (file, field, message)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omniladder.analyses.diff import ReasonChange, diff_plans
from omniladder.errors import InputError
from omniladder.inputs.plan_document import load_saved_plan, parse_saved_plan


def _entry(position: int, model: str) -> dict[str, Any]:
    return {"position": position, "rung": "cheap", "provider": "openai", "model": model,
            "allowed_connection_ids": ["k"]}


def _doc(models: list[str], excluded: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"format_version": "1", "auto_id": "auto/thrifty", "now": "2026-11-29T12:00:00Z",
            "rungs": [], "pool": [_entry(p, m) for p, m in enumerate(models, start=1)],
            "excluded": excluded or [], "connections": []}


def _moves(old: list[str], new: list[str]) -> list[tuple[str, int, int]]:
    result = diff_plans(parse_saved_plan(_doc(old), "old.json"),
                        parse_saved_plan(_doc(new), "new.json"),
                        "old.json", "new.json")
    return [(m.model, m.old_position, m.new_position) for m in result.pool_moved]


@pytest.mark.parametrize(("old", "new", "moves"), [
    pytest.param(["a"], ["b", "a"], [], id="one-added-above-is-a-shift"),
    pytest.param(["a"], ["b", "c", "a"], [], id="two-added-above-is-a-shift"),
    pytest.param(["b", "a"], ["a"], [], id="one-removed-above-is-a-shift"),
    pytest.param(["a", "b"], ["c"], [], id="nothing-shared"),
    pytest.param(["a", "b"], ["b", "a"], [("a", 1, 2)], id="a-swap-moves-one"),
    pytest.param(["a", "b", "c"], ["c", "a", "b"], [("c", 3, 1)], id="the-last-to-the-top"),
])
def test_what_counts_as_a_move(old: list[str], new: list[str],
                               moves: list[tuple[str, int, int]]) -> None:
    assert _moves(old, new) == moves


def test_a_reason_change_of_one_model_names_the_model() -> None:
    def excluded(reason: str) -> list[dict[str, Any]]:
        return [{"connection_id": "k", "provider": "openai", "model": "gpt-big",
                 "rung": "premium", "reason": reason, "detail": f"{reason} detail"}]

    result = diff_plans(parse_saved_plan(_doc(["a"], excluded("quota-stale")), "old.json"),
                        parse_saved_plan(_doc(["a"], excluded("budget-spent")), "new.json"),
                        "old.json", "new.json")
    assert result.reasons == (
        ReasonChange(connection_id="k", model="gpt-big", old_reason="quota-stale",
                     new_reason="budget-spent", detail="budget-spent detail"),)
    assert result.pool_moved == ()


# --- unreadable saved plans ----------------------------------------------------------------


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in tmp_path so errors name the file as given: ``plan.json``."""
    monkeypatch.chdir(tmp_path)
    return Path("plan.json")


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("[1, 2]",
                 "plan.json: not a saved omniladder plan: the top level must be an object",
                 id="not-an-object"),
    pytest.param('{"auto_id": "auto/thrifty"}',
                 "plan.json: format_version: not a saved omniladder plan: no format_version "
                 "(write one with `omniladder plan AUTO_ID --out FILE`)", id="no-version"),
    pytest.param('{"format_version": "2"}',
                 "plan.json: format_version: plan format_version '2' is not supported; this "
                 "omniladder reads format_version '1' (save the plan again with this version's "
                 "`omniladder plan AUTO_ID --out FILE`)", id="another-version"),
    pytest.param('{"format_version": "1",\n "pool": [',
                 "plan.json:2: invalid JSON: Expecting value (column 11); a saved plan is the "
                 "JSON `omniladder plan --out` writes", id="truncated"),
    pytest.param("[" * 100_000 + "]" * 100_000, "plan.json: invalid JSON: nested too deeply",
                 id="nested-too-deeply"),
])
def test_an_unreadable_saved_plan_is_one_exact_error(here: Path, text: str,
                                                     message: str) -> None:
    here.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_saved_plan(here)
    assert str(caught.value) == message


def test_a_saved_plan_that_is_not_utf8_names_the_file(here: Path) -> None:
    here.write_bytes(b'{"format_version": "1", "auto_id": "\xff"}')
    with pytest.raises(InputError) as caught:
        load_saved_plan(here)
    assert caught.value.file == "plan.json"


def test_a_valid_document_round_trips(here: Path) -> None:
    here.write_text(json.dumps(_doc(["a", "b"])), encoding="utf-8")
    assert [e.model for e in load_saved_plan(here).pool] == ["a", "b"]


@pytest.mark.parametrize("positions", [[2, 1], [1, 1], [0, 1], [1, 3]])
def test_a_pool_out_of_its_positions_is_named_not_diffed(positions: list[int]) -> None:
    """A hand-edited pool whose positions are not 1, 2, ... in list order would diff as
    "moved #1 -> #1" (moves are judged by order, reported by position): it is an error
    naming the first entry out of place."""
    document = _doc(["a", "b"])
    for entry, position in zip(document["pool"], positions, strict=True):
        entry["position"] = position
    with pytest.raises(InputError) as caught:
        parse_saved_plan(document, "old.json")
    index = next(i for i, p in enumerate(positions) if p != i + 1)
    assert f"pool[{index}].position is {positions[index]}, expected {index + 1}" in str(
        caught.value)
