"""The package graph (docs/architecture.md): imports run one way, down the layers.

A layer is a directory of the package (``engine/``, ``inputs/``, ``sources/``, ``analyses/``,
``rendering/``, ``commands/``); the package root holds only the ground (records, errors,
times, vocabularies) and the entry points. A module is placed by where it lives: a new module
in a layer's directory (or in a package inside it, such as ``inputs/ledger/``) is in that
layer, and a new directory or root module at the package root fails here until the map is
changed. The engine imports only the ground and itself; the analyses import no view and no
command; views import no command; no command imports an entry point (``cli.py``,
``__main__.py``), which sit above them all. Lazy imports inside functions count too. No
module imports one that imports it back, however far round; an input module imports another
at its top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.source_trees import tree_of

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
    "omniladder.cli": "entry",
    "omniladder.__main__": "entry",
}
"""The modules at the package root: the ground and the entry points."""

LAYERS = ("ground", "engine", "inputs", "sources", "analyses", "views", "commands", "entry")

MAY_IMPORT: dict[str, frozenset[str]] = {
    "ground": frozenset({"ground"}),
    "engine": frozenset({"ground", "engine"}),
    "inputs": frozenset({"ground", "engine", "inputs"}),
    "sources": frozenset({"ground", "engine", "inputs", "sources"}),
    "analyses": frozenset({"ground", "engine", "inputs", "sources", "analyses"}),
    "views": frozenset({"ground", "engine", "inputs", "analyses", "views"}),
    "commands": frozenset(LAYERS) - {"entry"},
    "entry": frozenset(LAYERS),
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


def import_target(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from … import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[:len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, *, in_functions: bool = False) -> set[str]:
    """The package's modules ``module`` imports, at the top or inside a function (only
    inside a function with ``in_functions``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = tree_of(path)
    nodes = (ast.walk(tree) if not in_functions else
             (node for function in ast.walk(tree)
              if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
              for node in ast.walk(function)))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
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
    assert layer_of("omniladder.inputs.ledger.a_new_part") == "inputs"
    assert layer_of("omniladder.inputs.ledger") == "inputs"
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


def test_the_check_sees_a_command_importing_the_entry_point(tmp_path: Path) -> None:
    """A command reaching back up into cli.py is caught, even inside its function."""
    planted = tmp_path / "completion_cmd.py"
    planted.write_text("def completion():\n    from omniladder.cli import main\n",
                       encoding="utf-8")
    found = imports_of("omniladder.commands.completion_cmd", planted)
    assert found == {"omniladder.cli"}
    assert layer_of("omniladder.cli") not in MAY_IMPORT["commands"]


PRIVATE_IMPORTS_KEPT: dict[str, str] = {}
"""Private names still imported across modules, each with the reason it is kept."""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(module: str, path: Path) -> set[str]:
    """The private names (a leading underscore) of the package's other modules that ``module``
    imports, at the top or inside a function, or reads from a module it imported."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = tree_of(path)
    found: set[str] = set()
    modules: dict[str, str] = {}  # a name bound to one of the package's modules
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("omniladder."):
                    found.update(alias.name for part in alias.name.split(".")
                                 if _is_private(part))
                    if alias.asname:
                        modules[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
            if not (target == "omniladder" or target.startswith("omniladder.")):
                continue
            for alias in node.names:
                if f"{target}.{alias.name}" in MODULES:
                    modules[alias.asname or alias.name] = f"{target}.{alias.name}"
                elif _is_private(alias.name) and target != module:
                    found.add(f"{target}.{alias.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules
                and modules[node.value.id] != module):
            found.add(f"{modules[node.value.id]}.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_private_name_of_another(module: str) -> None:
    """A name with a leading underscore is its module's own: a name shared between modules is
    public, so renaming or removing a private one never breaks another module."""
    found = private_imports(module, MODULES[module]) - set(PRIVATE_IMPORTS_KEPT)
    assert not found, f"{module} imports private names of other modules: {sorted(found)}"


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    """Planted private imports are caught, however written (the check can fail); a module's
    own private names and the dunders (``__version__``) are not."""
    planted = tmp_path / "who_view.py"
    planted.write_text(
        "from omniladder import __version__\n"
        "from omniladder.rendering.why_view import Tree, _hidden\n"
        "from . import why_view\n"
        "import omniladder.rendering.table as table\n"
        "from omniladder.rendering.who_view import _mine\n"
        "def f():\n"
        "    from .why_view import _later\n"
        "    return why_view._peek, table._width, why_view.leaf\n", encoding="utf-8")
    assert private_imports("omniladder.rendering.who_view", planted) == {
        "omniladder.rendering.why_view._hidden", "omniladder.rendering.why_view._later",
        "omniladder.rendering.why_view._peek", "omniladder.rendering.table._width"}
def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each circle of ``graph`` once, as the modules round it from its least one."""
    found: list[list[str]] = []
    for start in sorted(graph):
        trail: list[str] = [start]
        seen = {start}

        def walk(module: str, start: str = start, trail: list[str] = trail,
                 seen: set[str] = seen) -> None:
            for target in sorted(graph.get(module, ())):
                if target == start:
                    found.append(list(trail))
                elif target not in seen and target > start:  # each circle from its least
                    seen.add(target)
                    trail.append(target)
                    walk(target)
                    trail.pop()

        walk(start)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    """An import circle, even through a lazy import, makes the order modules load in matter
    and splits one job over two files: what both need lives below both."""
    graph = {module: imports_of(module, path) for module, path in MODULES.items()}
    assert circles(graph) == []


def test_the_check_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"c"}}) == [["a", "b"], ["c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


DEFERRED: dict[str, tuple[str, frozenset[str]]] = {
    "omniladder.inputs.input_set": ("ledger-import", frozenset({
        "omniladder.inputs.ledger.events", "omniladder.inputs.ledger.read"})),
}
"""The imports between input modules made inside a function to spare start-up: per module,
the anchor of docs/performance.md that measures what it spares, and the modules."""


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) == "inputs"))
def test_an_input_module_imports_the_others_at_its_top(module: str) -> None:
    """Within inputs/, an import inside a function hides what a module needs and where it
    sits; the one kind allowed is a deferral for start-up's sake, measured in
    docs/performance.md and named in ``DEFERRED``."""
    inner = {target for target in imports_of(module, MODULES[module], in_functions=True)
             if layer_of(target) == "inputs"}
    anchor, deferred = DEFERRED.get(module, ("", frozenset()))
    assert sorted(inner - deferred) == [], f"{module} imports {inner} inside a function"
    if deferred:
        assert inner == deferred, f"{module}: DEFERRED names what it no longer defers"
        performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
        assert f'<a id="{anchor}"></a>' in performance


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    planted = tmp_path / "read.py"
    planted.write_text("from omniladder.inputs.files import display_path\n"
                       "def f():\n    from omniladder.inputs.documents import read_document\n",
                       encoding="utf-8")
    assert imports_of("omniladder.inputs.ledger.read", planted, in_functions=True) == {
        "omniladder.inputs.documents"}
