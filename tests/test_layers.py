"""The package graph (docs/architecture.md): imports run one way, down the layers.

A layer is a directory of the package (``engine/``, ``inputs/``, ``sources/``, ``analyses/``,
``rendering/``, ``commands/``); the package root holds only the ground (records, errors,
times, vocabularies) and the entry points. A module is placed by where it lives: a new module
in a layer's directory is in that layer, and a new directory or root module fails here until
the map is changed. The engine imports only the ground and itself; the analyses import no view
and no command; views import no command. Lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "omniladder"

DIRECTORIES: dict[str, str] = {
    "engine": "engine",
    "inputs": "inputs",
    "sources": "sources",
    "analyses": "analyses",
    "rendering": "views",
    "commands": "commands",
}
"""Each directory of the package, and the layer it is."""

ROOT_MODULES: dict[str, str] = {
    "omniladder": "ground",
    "omniladder.errors": "ground",
    "omniladder.timefmt": "ground",
    "omniladder.vocabulary": "ground",
    "omniladder.models": "ground",
    "omniladder.scope_models": "ground",
    "omniladder.quota_sources": "ground",
    "omniladder.findings": "ground",
    "omniladder.cli": "commands",
    "omniladder.__main__": "commands",
}
"""The modules at the package root: the ground and the entry points."""

LAYERS = ("ground", "engine", "inputs", "sources", "analyses", "views", "commands")

MAY_IMPORT: dict[str, frozenset[str]] = {
    "ground": frozenset({"ground"}),
    "engine": frozenset({"ground", "engine"}),
    "inputs": frozenset({"ground", "engine", "inputs"}),
    "sources": frozenset({"ground", "engine", "inputs", "sources"}),
    "analyses": frozenset({"ground", "engine", "inputs", "sources", "analyses"}),
    "views": frozenset({"ground", "engine", "inputs", "analyses", "views"}),
    "commands": frozenset(LAYERS),
}


def module_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()


def layer_of(module: str) -> str:
    """The layer holding ``module``: its directory's, or the root's entry for it; "" for a
    module the map does not place."""
    parts = module.split(".")
    if len(parts) >= 3 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return DIRECTORIES.get(parts[1], "")
    return ROOT_MODULES.get(module, "")


def imports_of(module: str, path: Path) -> set[str]:
    """The package's modules ``module`` imports, at the top or inside a function."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in out if name in MODULES and name != module}


def test_every_module_is_in_a_layer() -> None:
    unplaced = [module for module in MODULES if not layer_of(module)]
    assert not unplaced, ("a module lives in a layer's directory, or at the root only as the "
                          f"ground or an entry point: {unplaced}")


def test_every_directory_is_a_layer() -> None:
    found = {path.name for path in PACKAGE.iterdir()
             if path.is_dir() and (path / "__init__.py").is_file()}
    assert found == set(DIRECTORIES)


def test_the_root_map_names_real_modules() -> None:
    assert all(name in MODULES for name in ROOT_MODULES)


def test_a_module_is_placed_by_its_directory() -> None:
    """A module the map has never heard of is placed by where it lives; a new root module
    or directory is not placed."""
    assert layer_of("omniladder.engine.a_new_rule") == "engine"
    assert layer_of("omniladder.inputs.a_new_reader") == "inputs"
    assert layer_of("omniladder.sources.omniroute.a_new_table") == "sources"
    assert layer_of("omniladder.a_new_root_module") == ""
    assert layer_of("omniladder.a_new_directory.module") == ""


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_run_down_the_layers(module: str) -> None:
    layer = layer_of(module)
    wrong = sorted(f"{target} ({layer_of(target)})"
                   for target in imports_of(module, MODULES[module])
                   if layer_of(target) not in MAY_IMPORT[layer])
    assert not wrong, f"{module} ({layer}) may not import {wrong}"


def test_the_check_sees_a_wrong_import(tmp_path: Path) -> None:
    """A planted import from the engine to a view is caught (the check can fail)."""
    planted = tmp_path / "plan.py"
    planted.write_text("from omniladder.rendering.table import make_console\n"
                       "def f():\n    import omniladder.analyses.why\n", encoding="utf-8")
    found = imports_of("omniladder.engine.plan", planted)
    assert {"omniladder.rendering.table", "omniladder.analyses.why"} <= found
    assert {layer_of(name) for name in found} == {"views", "analyses"}
    assert not {layer_of(name) for name in found} <= MAY_IMPORT["engine"]
