"""The rulebook in docs/ is the contract the code cites: every citation resolves.

Code, tests, catalogs and docs cite rules as ``R6.4`` or ``R2a``, spec sections as
``SPEC §2.2`` or ``§6``, and pages as ``docs/sources.md#codex-sessions``. Each must land on
an explicit anchor (``<a id="r6-4"></a>``) in docs/, so a maintainer who clones the
repository can read the rule a line of code is written against. A citation of a document
that is not in the repository (the research notes ``SOURCES.md``, ``SPEC.md``,
``GATEWAYS.md``) fails too: cite the docs page that restates the fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniladder.engine.records import REASON_CODES
from omniladder.errors import EXIT_MEANINGS
from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = ("rules", "inputs", "contract", "sources", "performance", "architecture", "explain",
         "ci", "gateways", "development")
"""The rulebook's pages (CONVENTIONS, "Layout and docs"); each must exist."""

ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
RULE = re.compile(r"(?<![\w.])R(\d+)([a-z]?)(?:\.(\d+))?(?!\w)")
SECTION = re.compile(r"§ ?(\d+(?:\.\d+)*)")
PAGE_LINK = re.compile(r"docs/([a-z-]+)\.md(?:#([a-z0-9-]+))?")
RELATIVE_LINK = re.compile(r"\]\((?!https?:|docs/)([a-z-]+\.md)?(?:#([a-z0-9-]+))?\)")
OUTSIDE = re.compile(r"\b(?:SOURCES|SPEC|GATEWAYS|CONVENTIONS)\.md\b")

RULE_ANCHORS = (
    "r1", "r1-1", "r1-2", "r1-3", "r1-4", "r2", "r2a", "r3", "r4", "r5",
    "r6", "r6-1", "r6-2", "r6-3", "r6-4", "r6-5", "r6-6", "r6-7", "r6-8", "r6-9",
    "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "r16",
)
"""Every rule and numbered step, in full: dropping one fails (CONVENTIONS 12b)."""

SECTION_ANCHORS = {
    "s1": "rules", "s2": "inputs", "s2-1": "inputs", "s2-2": "inputs", "s2-3": "inputs",
    "s2-4": "inputs", "s2-5": "inputs", "s3": "rules", "s4": "contract", "s4-1": "contract",
    "s4-2": "contract", "s4-3": "contract", "s5": "rules", "s6": "sources",
    "s7": "traffic", "s7-1": "traffic", "s7-2": "traffic", "s7-3": "traffic",
    "s7-4": "traffic", "s7-5": "traffic", "s7-6": "traffic", "s9": "rules",
    "s10": "whatif", "s10-1": "whatif", "s10-2": "whatif", "s10-3": "whatif",
    "s10-4": "whatif", "s10-5": "whatif", "s10-6": "whatif", "s10-7": "whatif",
}
"""Each spec section and the page that restates it."""


def anchors_of(page: str) -> list[str]:
    return ANCHOR.findall((DOCS / f"{page}.md").read_text(encoding="utf-8"))


def all_anchors() -> dict[str, str]:
    """Anchor → the page holding it, over every page in docs/."""
    found: dict[str, str] = {}
    for path in sorted(DOCS.glob("*.md")):
        for anchor in ANCHOR.findall(path.read_text(encoding="utf-8")):
            found.setdefault(anchor, path.stem)
    return found


def cited_files() -> Iterator[Path]:
    """Every file that may cite the rulebook: code, tests, benchmarks, catalogs, docs."""
    for folder, suffixes in (("omniladder", {".py"}), ("benchmarks", {".py"}),
                             ("tests", {".py", ".md"}), ("catalogs", {".toml"}),
                             ("docs", {".md"})):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.is_file():
                yield path
    yield ROOT / "README.md"
    yield ROOT / "pyproject.toml"


def citing_files() -> list[Path]:
    """The files above but this one, whose examples of bad citations are meant to fail."""
    return [path for path in cited_files() if path != Path(__file__)]


def rule_anchor(number: str, letter: str, step: str | None) -> str:
    return f"r{number}{letter}" + (f"-{step}" if step else "")


def section_anchor(number: str) -> str:
    return "s" + number.replace(".", "-")


def unresolved(text: str, anchors: dict[str, str]) -> list[str]:
    """The citations in ``text`` that land on no anchor, as written."""
    missing = []
    for match in RULE.finditer(text):
        if rule_anchor(*match.groups()) not in anchors:
            missing.append(match.group(0))
    for match in SECTION.finditer(text):
        if section_anchor(match.group(1)) not in anchors:
            missing.append(match.group(0))
    for match in PAGE_LINK.finditer(text):
        page, anchor = match.groups()
        if not (DOCS / f"{page}.md").is_file() or (anchor and anchors.get(anchor) != page):
            missing.append(match.group(0))
    missing += OUTSIDE.findall(text)
    return missing


@pytest.fixture(scope="module")
def anchors() -> dict[str, str]:
    return all_anchors()


def test_every_page_of_the_rulebook_exists() -> None:
    assert all((DOCS / f"{page}.md").is_file() for page in PAGES)


def test_every_rule_and_step_has_its_anchor_in_the_rules_page() -> None:
    assert [a for a in anchors_of("rules") if a.startswith("r")] == list(RULE_ANCHORS)


def test_every_spec_section_has_its_anchor_on_its_page(anchors: dict[str, str]) -> None:
    assert {anchor: anchors.get(anchor) for anchor in SECTION_ANCHORS} == SECTION_ANCHORS


def test_no_anchor_is_defined_twice() -> None:
    found = [a for path in sorted(DOCS.glob("*.md"))
             for a in ANCHOR.findall(path.read_text(encoding="utf-8"))]
    assert sorted(a for a in set(found) if found.count(a) > 1) == []


def test_every_citation_in_code_tests_and_docs_resolves(anchors: dict[str, str]) -> None:
    problems = []
    cited = 0
    for path in citing_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            cited += len(RULE.findall(line)) + len(SECTION.findall(line))
            problems += [f"{path.relative_to(ROOT)}:{number}: {miss}"
                         for miss in unresolved(line, anchors)]
    assert problems == []
    assert cited > 500  # the scan reads the tree: hundreds of rules are cited in code and tests


def test_links_between_docs_pages_resolve(anchors: dict[str, str]) -> None:
    problems = []
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for target, anchor in RELATIVE_LINK.findall(text):
            page = Path(target).stem if target else path.stem
            if not (DOCS / f"{page}.md").is_file() or (anchor and anchors.get(anchor) != page):
                problems.append(f"{path.name}: ({target}#{anchor})")
    assert problems == []


def test_readme_section_citations_name_a_readme_heading() -> None:
    """A citation ``README "Section"`` must still find its section; moved text is cited by its
    docs page instead."""
    headings = set(re.findall(r"^#{2,3} (.+?)\s*$",
                              (ROOT / "README.md").read_text(encoding="utf-8"), re.M))
    problems = []
    for path in citing_files():
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r'README \(?"([^"]+)"', text):
            name = " ".join(match.group(1).split())
            if not any(heading.startswith(name) for heading in headings):
                problems.append(f"{path.relative_to(ROOT)}: README \"{name}\"")
    assert problems == []


@pytest.mark.parametrize(("text", "missing"), [
    ("R6.4 and R2a hold; SPEC §2.2 and §6 too", []),
    ("R19 is no rule", ["R19"]),
    ("R6.10 is no step", ["R6.10"]),
    ("R2b is no rule", ["R2b"]),
    ("SPEC §12 is no section", ["§12"]),
    ("see docs/rules.md#r6-4 and docs/sources.md#claude-usage", []),
    ("see docs/rules.md#r6-10", ["docs/rules.md#r6-10"]),
    ("see docs/sources.md#r6-4 (an anchor of another page)", ["docs/sources.md#r6-4"]),
    ("see docs/nowhere.md", ["docs/nowhere.md"]),
    ("facts in SOURCES.md, Claude", ["SOURCES.md"]),
    ("HR10, ER6.4 and v1.R2 are no citations", []),
])
def test_the_resolver_finds_what_has_no_anchor(text: str, missing: list[str],
                                               anchors: dict[str, str]) -> None:
    """The check above cannot pass by reading nothing: each kind of bad citation is caught."""
    assert unresolved(text, anchors) == missing


# --- the contract page holds the closed lists -----------------------------------------------


def page_section(page: str, anchor: str) -> str:
    """The text of a docs page from an anchor to the next one."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    start = text.index(f'<a id="{anchor}"></a>')
    following = ANCHOR.search(text, start + 1)
    return text[start:following.start() if following else len(text)]


def table(text: str) -> list[list[str]]:
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]
    return [row for row in rows[1:] if not re.fullmatch(r"[\s:-]*", "".join(row))]


def test_the_exit_code_table_in_docs_is_the_one_the_help_prints() -> None:
    """SPEC §4.3: docs/contract.md's table holds exactly EXIT_MEANINGS, as the README's does."""
    rows = table(page_section("contract", "s4-3"))
    assert {int(row[0]): row[1] for row in rows} == {
        int(code): meaning for code, meaning in EXIT_MEANINGS.items()}


def test_every_reason_code_is_documented_in_the_contract() -> None:
    """SPEC §4.2: every code the engine can give has a row, and every row is a code."""
    rows = table(page_section("contract", "reason-codes"))
    assert [row[0].strip("`") for row in rows] == list(REASON_CODES)


# --- the map of the code ---------------------------------------------------------------------

MODULE_NAME = re.compile(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`")
"""A module or a package as docs/architecture.md names it: ``inputs/files.py``, ``export/``."""

LAYER_DIRECTORIES = ("engine", "inputs", "sources", "analyses", "rendering", "commands")


def unresolved_modules(text: str) -> list[str]:
    """The module and package names of ``text`` that are in no layer of the package: each is
    read from the package root or from one of its layer directories."""
    package = ROOT / "omniladder"
    bases = [package, *(package / name for name in LAYER_DIRECTORIES)]
    missing = []
    for name in MODULE_NAME.findall(text):
        if name.startswith(("tests/", "benchmarks/", "schemas/", "docs/", "catalogs/")):
            continue
        if not any((base / name).exists() for base in bases):
            missing.append(name)
    return missing


def test_every_module_the_architecture_map_names_exists() -> None:
    """docs/architecture.md names each module where it lives: a module moved or renamed
    without the map fails here."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert len(MODULE_NAME.findall(text)) > 40
    assert unresolved_modules(text) == []


def test_the_map_check_sees_a_stale_name() -> None:
    assert unresolved_modules("`loading.py`, `explain.py`, `inputs/files.py`, `engine/`") == [
        "loading.py", "explain.py"]


README_MAX_LINES = 350


def test_the_readme_stays_a_front_door() -> None:
    """The README opens the project: what it does, the commands, where to read on. Detail
    belongs on the docs/ page of its subject, linked from the README."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
