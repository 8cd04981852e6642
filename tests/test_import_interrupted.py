"""An import interrupted by Ctrl-C (SIGINT) says so in one line, says what it left of the
files it writes, and ends with the shell's status 130; every file it writes is replaced
whole or left as it was (``inputs.writing.write_atomic``), and no temporary file is left.

The subprocess test sends a real SIGINT from inside the import, after its first thousand
rows, so the interruption falls mid-import on every run without any timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.test_litellm_spend import row, write_rows
from tests.test_omniroute_traffic import BUILT, build
from tests.test_sources_cli import CONNECTIONS, FIXTURES

runner = CliRunner()
LEDGER_LINE = ('{"at": "2026-11-29T09:00:00.000Z", "connection": "c", "model": "m", '
               '"status": "served", "request_id": "kept"}\n')

INTERRUPTING = """
import os, signal, sys
from omniladder.sources import litellm_spend

real = litellm_spend.row_event
seen = [0]

def row_event(*args, **kwargs):
    seen[0] += 1
    if seen[0] == 1000:  # mid-import: a real SIGINT, delivered to this process
        os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)

litellm_spend.row_event = row_event
sys.argv = ["omniladder", *sys.argv[1:]]
from omniladder.cli import run
run()
"""


def test_sigint_mid_import_says_so_and_leaves_the_ledger_as_it_was(tmp_path: Path) -> None:
    rows = [row(f"r-{n}", model="gpt-4o", spend=0.001, prompt_tokens=10,
                completion_tokens=5) for n in range(3000)]
    source = write_rows(tmp_path / "logs.json", rows)
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_text(LEDGER_LINE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPTING, "import", "litellm-spend", str(source),
         "--traffic", str(ledger), "--since", "all"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert result.returncode == 130, result.stderr
    assert result.stdout == ""
    assert result.stderr == ("omniladder: litellm-spend: import interrupted; traffic.jsonl "
                             "was left as it was (a file is only ever replaced whole)\n")
    assert ledger.read_text(encoding="utf-8") == LEDGER_LINE
    assert sorted(path.name for path in tmp_path.iterdir()) == ["logs.json", "traffic.jsonl"]


def interrupt(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


def test_an_interrupted_ledger_that_did_not_exist_is_not_created(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omniladder.inputs.ledger import merge

    monkeypatch.setattr(merge, "merge_into", interrupt)
    source = write_rows(tmp_path / "logs.json", [row("r-1")])
    result = runner.invoke(app, ["import", "litellm-spend", str(source), "--traffic",
                                 str(tmp_path / "new.jsonl"), "--since", "all"])
    assert result.exit_code == 130
    assert result.stderr.endswith("import interrupted; " + str(tmp_path / "new.jsonl")
                                  + " was not created (a file is only ever replaced whole)\n")
    assert not (tmp_path / "new.jsonl").exists()


def test_an_interrupted_quota_import_leaves_the_quota_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omniladder.sources import run

    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    quota = tmp_path / "quota.json"
    quota.write_text(json.dumps({"readings": []}), encoding="utf-8")
    before = quota.read_bytes()
    monkeypatch.setattr(run, "import_readings", interrupt)
    result = runner.invoke(app, ["import", "claude-usage", str(FIXTURES / "claude/usage.json"),
                                 "--connection", "claude-max", "--quota", str(quota),
                                 "--connections", str(tmp_path / "connections.toml"),
                                 "--at", "2026-11-29T12:00:00Z"])
    assert result.exit_code == 130
    assert result.stderr == (f"omniladder: claude-usage: import interrupted; {quota} was left "
                             "as it was (a file is only ever replaced whole)\n")
    assert quota.read_bytes() == before


def test_an_interrupted_omniroute_import_names_what_it_had_written_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omniladder.inputs import writing

    real = writing.write_atomic
    written: list[Path] = []

    def second_interrupted(target: Path, text: Any) -> None:
        if written:
            raise KeyboardInterrupt
        real(target, text)
        written.append(target)

    monkeypatch.setattr(writing, "write_atomic", second_interrupted)
    out = tmp_path / "fleet"
    result = runner.invoke(app, ["import", "omniroute", str(build(tmp_path / "o.db", BUILT)),
                                 "--out", str(out), "--now", "2026-11-29T12:00:00Z"])
    assert result.exit_code == 130
    (line,) = result.stderr.splitlines()
    assert line.startswith("omniladder: omniroute: import interrupted; ")
    assert f"{written[0]} had already been written whole" in line
    assert "were not created" in line
    assert sorted(path.name for path in out.iterdir()) == [written[0].name]


def test_sigterm_is_said_as_an_interruption_with_its_own_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cli.py's SIGTERM handler raises SystemExit(143) where the signal lands."""
    from omniladder.inputs.ledger import merge

    def terminated(*args: Any, **kwargs: Any) -> Any:
        raise SystemExit(143)

    monkeypatch.setattr(merge, "merge_into", terminated)
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_text(LEDGER_LINE, encoding="utf-8")
    result = runner.invoke(app, ["import", "litellm-spend",
                                 str(write_rows(tmp_path / "logs.json", [row("r-1")])),
                                 "--traffic", str(ledger), "--since", "all"])
    assert result.exit_code == 143
    assert result.stderr == (f"omniladder: litellm-spend: import interrupted; {ledger} was "
                             "left as it was (a file is only ever replaced whole)\n")
    assert ledger.read_text(encoding="utf-8") == LEDGER_LINE
