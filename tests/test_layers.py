"""The package graph (docs/architecture.md): imports run one way, down the layers.

Every module of the package is placed in exactly one layer; a new module fails here until it
is placed. The engine imports only the ground and itself; the analyses import no view and no
command; views import no command. Lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "omniladder"

LAYERS: dict[str, tuple[str, ...]] = {
    "ground": ("omniladder", "omniladder.errors", "omniladder.timefmt", "omniladder.vocabulary",
               "omniladder.models", "omniladder.scope_models"),
    "engine": ("omniladder.engine",),
    "io": ("omniladder.inputs.writing", "omniladder.inputs.schemas",
           "omniladder.inputs.starter", "omniladder.inputs.stamp", "omniladder.inputs.scopes",
           "omniladder.inputs.plan_document", "omniladder.inputs.credentials", "omniladder.inputs"),
    "sources": ("omniladder.sources",),
    "analyses": ("omniladder.forecast", "omniladder.analyses"),
    "views": ("omniladder.rendering",),
    "commands": ("omniladder.commands", "omniladder.cli", "omniladder.__main__"),
}
"""Each layer's modules, as module names or packages (a package holds its submodules)."""

MAY_IMPORT: dict[str, frozenset[str]] = {
    "ground": frozenset({"ground"}),
    "engine": frozenset({"ground", "engine"}),
    "io": frozenset({"ground", "engine", "io"}),
    "sources": frozenset({"ground", "engine", "io", "sources"}),
    "analyses": frozenset({"ground", "engine", "io", "sources", "analyses"}),
    "views": frozenset({"ground", "engine", "io", "analyses", "views"}),
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
    """The layer holding ``module``: the longest listed name that is it or its package."""
    best, length = "", -1
    for layer, names in LAYERS.items():
        for name in names:
            if (module == name or (module.startswith(name + ".") and name != "omniladder")) \
                    and len(name) > length:
                best, length = layer, len(name)
    return best


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
    assert not unplaced, f"place these modules in a layer of LAYERS: {unplaced}"


def test_the_layers_name_real_modules() -> None:
    for names in LAYERS.values():
        for name in names:
            assert name in MODULES, name


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
