"""The plan document has one shape: ``PlanDocument`` (``omniladder/inputs/plan_document.py``).

The writer (``rendering/json_view.py``) writes exactly its fields, in its order, on every
golden plan and on generated fleets; what it writes validates; and the committed schema
(``schemas/plan.schema.json``) is the model's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.inputs import LoadedInputs
from omniladder.engine.plan import make_plan
from omniladder.inputs.documents import as_tuples
from omniladder.inputs.plan_document import PlanDocument, parse_saved_plan
from omniladder.rendering.json_view import plan_json
from tests.builders import NOW
from tests.conftest import EXAMPLES, ROOT
from tests.strategies import input_sets

GOLDEN_PLANS = ["thrifty.json", "subscription.json", "coding-thrifty.json",
                "tight-thrifty.json"]


def _model_of(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The document model a field holds (itself, or the items of a tuple of them)."""
    annotation = model.model_fields[name].annotation
    for arg in (annotation, *getattr(annotation, "__args__", ())):
        for inner in (arg, *getattr(arg, "__args__", ())):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def shape_problems(document: Any, model: type[BaseModel], where: str = "") -> list[str]:
    """Keys the writer writes that the model lacks, or fields it lacks that are required,
    or keys in another order than the model's, at every level."""
    if not isinstance(document, dict):
        return [f"{where or 'the document'} is not an object"]
    fields = list(model.model_fields)
    problems = [f"{where}{key}: written, not in {model.__name__}"
                for key in document if key not in fields]
    problems += [f"{where}{name}: required by {model.__name__}, not written"
                 for name, field in model.model_fields.items()
                 if field.is_required() and name not in document]
    order = [key for key in fields if key in document]
    if [key for key in document if key in fields] != order:
        problems.append(f"{where}: keys not in {model.__name__}'s order")
    for key, value in document.items():
        inner = _model_of(model, key) if key in fields else None
        if inner is None or value is None:
            continue
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            at = f"{where}{key}[{index}]." if isinstance(value, list) else f"{where}{key}."
            problems += shape_problems(item, inner, at)
    return problems


@pytest.mark.parametrize("name", GOLDEN_PLANS)
def test_the_golden_plans_are_documents_field_for_field(name: str) -> None:
    document = json.loads((ROOT / "tests" / "golden" / name).read_text("utf-8"))
    assert shape_problems(document, PlanDocument) == []
    parse_saved_plan(document, name)


def test_a_saved_plan_is_a_document_too() -> None:
    """``plan --out`` adds its stamp (version and inputs), which the document holds."""
    document = json.loads((EXAMPLES / "ci" / "plan-thrifty.json").read_text("utf-8"))
    assert "inputs" in document
    assert shape_problems(document, PlanDocument) == []


def test_the_check_finds_a_key_the_document_lacks() -> None:
    document = json.loads((ROOT / "tests" / "golden" / "thrifty.json").read_text("utf-8"))
    document["pool"][0]["weight"] = 1
    del document["rungs"][0]["state"]
    assert sorted(shape_problems(document, PlanDocument)) == [
        "pool[0].weight: written, not in DocumentEntry",
        "rungs[0].state: required by DocumentRung, not written"]


@settings(max_examples=40, deadline=None)
@given(inputs=input_sets(), auto_id=st.sampled_from(["auto/thrifty", "auto/subscription",
                                                     "auto/coding:thrifty"]))
def test_every_plan_the_writer_writes_is_a_document(inputs: LoadedInputs, auto_id: str) -> None:
    plan = make_plan(inputs, parse_auto_id(auto_id), NOW, "flag")
    document = json.loads(plan_json(plan))
    assert shape_problems(document, PlanDocument) == []
    read = PlanDocument.model_validate(as_tuples(document))
    assert [e.allowed_connection_ids for e in read.pool] == [
        e.allowed_connection_ids for e in plan.pool]
