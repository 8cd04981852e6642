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


# --- what the configuration tells mutmut to skip -------------------------------------------


def mutmut_config() -> dict[str, list[str]]:
    import tomllib

    config: dict[str, list[str]] = tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    return config


def mutated_lines() -> list[tuple[str, int, str]]:
    """Every line of the modules mutmut mutates: (file, line number, text)."""
    return [(name, number, text)
            for name in mutmut_config()["only_mutate"]
            for number, text in enumerate(
                (ROOT / name).read_text(encoding="utf-8").splitlines(), start=1)]


def test_every_skip_pattern_skips_some_line_and_no_marker_repeats_one() -> None:
    """Each of do_not_mutate_patterns matches a line of the mutated modules (a pattern that
    no longer matches anything is stale), and no line a pattern skips carries the pragma too."""
    patterns = [re.compile(pattern) for pattern in mutmut_config()["do_not_mutate_patterns"]]
    lines = mutated_lines()
    for pattern in patterns:
        assert any(pattern.search(text) for _, _, text in lines), pattern.pattern
    doubled = [f"{name}:{number}" for name, number, text in lines
               if "pragma: no mutate" in text and any(p.search(text) for p in patterns)]
    assert doubled == []


def test_a_zip_strict_is_written_where_the_pattern_sees_it() -> None:
    """strict=True is skipped by a pattern over one line: a zip call split before its
    strict=True would be mutated after all."""
    split = [f"{name}:{number}" for name, number, text in mutated_lines()
             if "strict=True" in text and "zip(" not in text]
    assert split == []


MARKED = re.compile(r"# pragma: no mutate(?: start| block)? \(\S[^)]*\)?")
"""A marker with its reason right after it, in brackets (a range's start may go on to the
next comment line); a range's end needs none."""


def test_every_marker_says_why_after_it() -> None:
    """Each `# pragma: no mutate` in the mutated modules carries its reason on the line, as
    `# pragma: no mutate (why)`: a marker without one cannot be told from a forgotten test."""
    bare = [f"{name}:{number}" for name, number, text in mutated_lines()
            if "pragma: no mutate" in text and not MARKED.search(text)
            and not text.rstrip().endswith("# pragma: no mutate end")]
    assert bare == []
