"""The importer, linter and schema modules stay pure core; their commands are documented."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

CORE = ["omniladder.sources.omniroute", "omniladder.catalog_lint", "omniladder.schemas",
        "omniladder.starter", "omniladder.writing"]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_neither_typer_nor_rich(module: str) -> None:
    code = (f"import sys, {module}; "
            "bad = [m for m in ('typer', 'rich') if m in sys.modules]; "
            "print(','.join(bad))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert done.stdout.strip() == ""


@pytest.mark.parametrize("command", [
    "omniladder import omniroute DB --out DIR", "omniladder catalog show",
    "omniladder catalog check", "omniladder init [DIR]", "omniladder schema KIND"])
def test_command_is_in_the_readme_table(command: str) -> None:
    readme = (ROOT / "README.md").read_text()
    assert f"| `{command}` |" in readme
