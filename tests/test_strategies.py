"""The shared input-set strategy covers every input field: a new field is taught there once.

The input models are walked from the files the loader reads (connections, quota, spend,
settings); every field of every model or record reached must take a value other than its
default in some drawn input set, and every value of a field with a closed set of values
(a status, a billing kind, a period) must be drawn.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import BaseModel

from omniladder.engine.inputs import LoadedInputs
from omniladder.models import (
    CatalogSettings,
    ConnectionsFile,
    InputsSettings,
    QuotaFile,
    Record,
    Settings,
    SpendFile,
    field_types,
)
from tests.strategies import input_sets

NOT_DRAWN: dict[type[Any], str] = {
    InputsSettings: "file paths: the loader reads them before a plan; a drawn set is in memory",
    CatalogSettings: "catalog file paths: the strategy is given its catalogs, loaded once",
}
"""Settings tables that name files; the loader has read them by the time a plan is made."""

ROOTS: tuple[type[Any], ...] = (ConnectionsFile, QuotaFile, SpendFile, Settings)


def _inner(annotation: Any) -> tuple[list[type[Any]], tuple[Any, ...]]:
    """The model and record classes inside a type, and the values of a Literal in it."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _inner(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return [], typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType, tuple):
        classes: list[type[Any]] = []
        values: tuple[Any, ...] = ()
        for arg in typing.get_args(annotation):
            if arg is Ellipsis:
                continue
            found, literal = _inner(arg)
            classes += found
            values += literal
        return classes, values
    if isinstance(annotation, type) and issubclass(annotation, BaseModel | Record):
        return [annotation], ()
    return [], ()


def input_fields() -> dict[tuple[type[Any], str], tuple[Any, ...]]:
    """(class, field) -> the field's closed set of values (empty when it is open)."""
    found: dict[tuple[type[Any], str], tuple[Any, ...]] = {}
    todo = list(ROOTS)
    while todo:
        kind = todo.pop()
        if kind in NOT_DRAWN or any(k is kind for k, _ in found):
            continue
        for name, annotation in field_types(kind).items():
            classes, values = _inner(annotation)
            if classes and all(c in NOT_DRAWN for c in classes):
                continue
            found[(kind, name)] = values
            todo += classes
    return found


def _default(obj: Any, name: str) -> tuple[bool, Any]:
    """(has a default, the default) of one field."""
    if isinstance(obj, BaseModel):
        info = type(obj).model_fields[name]
        return (not info.is_required(), info.default)
    for item in dataclasses.fields(obj):
        if item.name == name:
            missing = item.default is dataclasses.MISSING
            return (not missing, None if missing else item.default)
    raise AssertionError(name)


def _walk(obj: Any, seen: set[tuple[type[Any], str, Any]]) -> None:
    if isinstance(obj, tuple):
        for item in obj:
            _walk(item, seen)
        return
    if not isinstance(obj, BaseModel | Record) or type(obj) in NOT_DRAWN:
        return
    for name in field_types(type(obj)):
        value = getattr(obj, name)
        optional, default = _default(obj, name)
        if not optional or value != default:
            seen.add((type(obj), name, None))
        if isinstance(value, str | bool):
            seen.add((type(obj), name, value))
        _walk(value, seen)


def drawn_fields(inputs: LoadedInputs, seen: set[tuple[type[Any], str, Any]]) -> None:
    roots: list[Any] = [ConnectionsFile(connections=inputs.connections), inputs.settings]
    if inputs.quota is not None:
        roots.append(inputs.quota)
    if inputs.spend is not None:
        roots.append(SpendFile(events=inputs.spend))
    for root in roots:
        _walk(root, seen)


def test_the_input_models_are_found_from_the_files() -> None:
    """The walk reaches the records inside the files and the settings tables (so the
    coverage test below is not vacuous)."""
    kinds = {kind.__name__ for kind, _ in input_fields()}
    assert {"Connection", "Reading", "Window", "SpendEvent", "LadderSettings",
            "BudgetSettings", "RungBudgets", "TierSettings"} <= kinds
    assert ("Connection", "rate_limited_until") in {(k.__name__, n) for k, n in input_fields()}


@pytest.mark.slow
def test_every_input_field_and_value_is_drawn() -> None:
    """A field the loader accepts and the strategy never draws fails here, by name."""
    seen: set[tuple[type[Any], str, Any]] = set()

    @settings(max_examples=300, deadline=None)
    @given(input_sets(seat_order=True))
    def collect(inputs: LoadedInputs) -> None:
        drawn_fields(inputs, seen)

    collect()
    missing = sorted(f"{kind.__name__}.{name}" for (kind, name) in input_fields()
                     if (kind, name, None) not in seen)
    assert missing == [], f"never drawn by tests/strategies.py: {missing}"
    values = sorted(f"{kind.__name__}.{name} = {value!r}"
                    for (kind, name), closed in input_fields().items()
                    for value in closed if (kind, name, value) not in seen)
    assert values == [], f"values never drawn by tests/strategies.py: {values}"
