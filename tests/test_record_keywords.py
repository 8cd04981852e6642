"""Records built by keyword (docs/architecture.md#records).

Every record of six fields or more in ``analyses/``, ``rendering/`` and ``sources/``, and every
record the map calls a result, cannot be built with two fields swapped: a dataclass is
``kw_only``; a NamedTuple (which cannot be) or a dataclass kept positional is on
``KEYWORD_BUILT`` and every construction of it, in the package, the tests and the benchmarks,
passes keywords only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import ROOT
from tests.source_trees import parsed, tree_of

PACKAGE = ROOT / "omniladder"
SCANNED = ("analyses", "rendering", "sources")
"""The directories whose records are held here."""

MANY_FIELDS = 6
"""From this many fields on, a record is built by keyword."""

RESULTS = frozenset({
    # check's findings
    "analyses/check.py:LoadedPolicy", "analyses/check.py:CheckResult",
    "analyses/check.py:ExpectationResult", "analyses/check.py:PolicyResult",
    # catalog check's
    "analyses/catalog_check.py:Problem", "analyses/catalog_check.py:LintResult",
    "analyses/catalog_check.py:Judged", "analyses/catalog_check.py:CatalogCheck",
    # what an import did
    "sources/run.py:ImportOutcome", "sources/omniroute/importer.py:ImportResult",
    "sources/merge.py:PruneOutcome", "sources/merge.py:MergeOutcome",
    "sources/omniroute_traffic.py:TrafficImport", "sources/litellm_spend.py:SpendImport",
})
"""Records the map calls results, whatever their number of fields."""

KEYWORD_BUILT = frozenset({
    # NamedTuples of six fields or more: read as tuples nowhere, but cheap to build
    "Export", "Fidelity", "ExportEntry", "ExportPlan", "_Walk", "PlanView",
    # analyses/traffic.py's tallies: dataclasses built empty and filled in the audit's loop
    "ConnectionTally",
})
"""Records not keyword-only by declaration, built by keyword at every call instead."""


class Found(NamedTuple):
    record: str  # its file under omniladder/ and its name: "sources/run.py:Target"
    name: str
    where: str
    fields: int
    named_tuple: bool
    kw_only: bool


def _name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _is_class_var(annotation: ast.expr) -> bool:
    return "ClassVar" in ast.unparse(annotation)


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def records_in(path: Path) -> list[Found]:
    """The dataclasses and NamedTuples ``path`` declares, with their number of fields."""
    found = []
    for node in ast.walk(tree_of(path)):
        if not isinstance(node, ast.ClassDef):
            continue
        named_tuple = any(_name(base) == "NamedTuple" for base in node.bases)
        decorators = [d for d in node.decorator_list if _name(d) == "dataclass"]
        if not (named_tuple or decorators):
            continue
        kw_only = any(isinstance(d, ast.Call) and any(
            k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in d.keywords) for d in decorators)
        fields = sum(1 for s in node.body
                     if isinstance(s, ast.AnnAssign) and not _is_class_var(s.annotation))
        found.append(Found(f"{shown(path).removeprefix('omniladder/')}:{node.name}", node.name,
                           f"{shown(path)}:{node.lineno}", fields,
                           named_tuple, kw_only))
    return found


def held_records() -> list[Found]:
    return [record for directory in SCANNED
            for path in sorted((PACKAGE / directory).rglob("*.py"))
            for record in records_in(path)
            if record.fields >= MANY_FIELDS or record.record in RESULTS]


def positional_builds(path: Path, names: frozenset[str]) -> list[str]:
    """Each call in ``path`` of one of ``names`` that passes an argument by position. A
    call names its record in the text, so a file whose text names none is not parsed."""
    text = path.read_text(encoding="utf-8")
    if not re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\b", text):
        return []
    return [f"{shown(path)}:{node.lineno} {_name(node)}"
            for node in ast.walk(parsed(text))
            if isinstance(node, ast.Call) and _name(node) in names and node.args]


def scanned_sources() -> list[Path]:
    return [path for folder in ("omniladder", "tests", "benchmarks")
            for path in sorted((ROOT / folder).rglob("*.py"))]


def test_records_of_many_fields_and_results_are_keyword_only() -> None:
    loose = [f"{r.where} {r.name} ({r.fields} fields)" for r in held_records()
             if not r.kw_only and r.name not in KEYWORD_BUILT]
    assert not loose, ("declare these dataclass(kw_only=True), or add the name to "
                       f"KEYWORD_BUILT and build it by keyword: {loose}")


def test_the_keyword_built_records_are_built_by_keyword() -> None:
    wrong = [call for path in scanned_sources() for call in positional_builds(path, KEYWORD_BUILT)]
    assert not wrong, f"build these by keyword: {wrong}"


def test_the_lists_name_real_records() -> None:
    declared = [r for directory in SCANNED
                for path in (PACKAGE / directory).rglob("*.py") for r in records_in(path)]
    assert {r.record for r in declared} >= RESULTS
    assert {r.name for r in declared} >= KEYWORD_BUILT


WIDE = "".join(f"    f{n}: int\n" for n in range(MANY_FIELDS))
FEW = "".join(f"    f{n}: int\n" for n in range(MANY_FIELDS - 1))


@pytest.mark.parametrize(("source", "loose"), [
    ("@dataclass(frozen=True)\nclass Wide:\n" + WIDE, [True]),
    ("@dataclass(frozen=True, kw_only=True)\nclass Wide:\n" + WIDE, [False]),
    ("class Wide(NamedTuple):\n    k: ClassVar[int] = 1\n" + WIDE, [True]),
    ("class Few(NamedTuple):\n    k: ClassVar[int] = 1\n" + FEW, []),
])
def test_the_scan_sees_a_record_built_by_position(source: str, loose: list[bool],
                                                  tmp_path: Path) -> None:
    """The checks can fail: a wide record that is not keyword-only is found, a ClassVar is
    no field, and a positional call of a keyword-built record is found."""
    path = tmp_path / "records.py"
    path.write_text(source + "x = Wide(1, f1=2)\ny = Wide(f0=1)\n", encoding="utf-8")
    assert [not r.kw_only for r in records_in(path) if r.fields >= MANY_FIELDS] == loose
    assert positional_builds(path, frozenset({"Wide"})) == ["records.py:" + str(
        source.count("\n") + 1) + " Wide"]
