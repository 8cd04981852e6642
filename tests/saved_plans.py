"""The example plan saved with ``plan --out``, as the tests of ``show``, ``diff`` and the
output formats read it; their modules run at the repository's root (``at_the_root``), so
the paths a saved plan records are the ones the README shows."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES

CONFIG = EXAMPLES / "omniladder.toml"


def save(tmp_path: Path, name: str = "plan.json", *extra: str) -> Path:
    """``plan auto/thrifty --out tmp_path/name`` of the example fleet; the file written."""
    out = tmp_path / name
    result = CliRunner().invoke(app, ["plan", "auto/thrifty", "--config", str(CONFIG),
                                      "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out
