"""The import benchmark's database builder writes a database the importer reads
(benchmarks/import_bench.py)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import ROOT

runner = CliRunner()


def bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_bench",
                                                  ROOT / "benchmarks" / "import_bench.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_bench", module)
    spec.loader.exec_module(module)
    return module


def test_built_database_imports_with_since(tmp_path: Path) -> None:
    bench = bench_module()
    db = bench.build(tmp_path / "bench.sqlite", 3000, seed=3)
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(out), "--now",
                                 "2026-11-29T12:00:00Z", "--since", "1d"])
    assert result.exit_code == 0, result.output
    readings = json.loads((out / "quota.json").read_text())["readings"]
    assert len({r["connection"] for r in readings}) == bench.CONNECTIONS
    assert "fractionReported false" in result.output
