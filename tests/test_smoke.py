"""The example plans answer, in both views."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import EXAMPLES

runner = CliRunner()


def test_example_thrifty_plan_serves_every_rung() -> None:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [r["state"] for r in document["rungs"]] == ["serving"] * 5
