"""The record of equivalent mutants cannot rot: it names no mutant by mutmut's running number,
which shifts with every edit of a function (docs/development.md#mutation-testing)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NUMBERED = re.compile(r"__mutmut_\d+")


def numbered_names(text: str) -> list[str]:
    return NUMBERED.findall(text)


@pytest.mark.parametrize("page", ["tests/EQUIVALENT_MUTANTS.md", "docs/development.md"])
def test_the_mutation_record_names_no_mutant_number(page: str) -> None:
    found = numbered_names((ROOT / page).read_text(encoding="utf-8"))
    assert found == [], f"{page} names mutants by number: {found}; mark them in the code"


@pytest.mark.parametrize(("text", "found"), [
    ("| `quota.x__verdict__mutmut_95` | why |", ["__mutmut_95"]),
    ("see `budgets.x_budget_positions__mutmut_7`", ["__mutmut_7"]),
    ("| `plan.x_decide__mutmut_3` | why |", ["__mutmut_3"]),
    ("`x_budget_positions__mutmut` names a function, not a mutant", []),
])
def test_a_numbered_name_is_found(text: str, found: list[str]) -> None:
    assert numbered_names(text) == found
