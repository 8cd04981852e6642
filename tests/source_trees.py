"""Python source parsed once per test process: the scans of the package, the tests and the
benchmarks (tests/test_layers.py, tests/test_record_keywords.py, tests/test_meta.py,
tests/test_golden.py) read the same files, one parametrised test a module at a time."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def tree_of(path: Path) -> ast.Module:
    """The syntax tree of the file's text as it is now; read it, never change it (it is
    shared)."""
    return parsed(path.read_text(encoding="utf-8"))


@functools.cache
def parsed(text: str) -> ast.Module:
    """The syntax tree of ``text``, parsed once; read it, never change it."""
    return ast.parse(text)
