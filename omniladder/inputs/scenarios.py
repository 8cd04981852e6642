"""``whatif --scenario FILE`` (SPEC §10.5): several named scenarios in one TOML (or JSON)
file, each what the scenario options build, validated as every input is."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from omniladder.inputs.documents import load_model
from omniladder.models import (
    CapacityWeight,
    Identifier,
    Percent,
    StrictModel,
    WithinRungOrder,
)


def _not_as_is(name: str) -> str:
    if name == "as-is":
        raise ValueError("'as-is' is the fleet as given, always first: name the scenario "
                         "otherwise")
    return name


class ScenarioEntry(StrictModel):
    """One alternative to the fleet as it is."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=80,
                                           pattern=r"^[^\x00-\x1f\x7f]+$"),
                    AfterValidator(_not_as_is)]
    order: WithinRungOrder | None = None
    """R15's ``within_rung_order`` for this scenario; none: the settings file's."""
    remove: tuple[Identifier, ...] = ()
    add: tuple[Identifier, ...] = ()
    """``LIKE`` or ``LIKE:NEW_ID``: a copy of connection LIKE (named NEW_ID)."""
    reserve: dict[Identifier, Percent] = Field(default_factory=dict)
    """Per connection, its ``reserve_percent`` (R16) in this scenario."""
    weight: dict[Identifier, CapacityWeight] = Field(default_factory=dict)
    """Per connection (an added one too), its ``capacity_weight``."""


class ScenarioFile(StrictModel):
    scenarios: tuple[ScenarioEntry, ...] = ()

    @model_validator(mode="after")
    def _some(self) -> ScenarioFile:
        if not self.scenarios:
            raise ValueError("names no scenario: give at least one [[scenarios]] entry")
        return self


def load_scenarios(path: Path) -> tuple[ScenarioEntry, ...]:
    """The scenarios of ``path``; one InputError naming the file and the field otherwise."""
    return load_model(ScenarioFile, path).scenarios
