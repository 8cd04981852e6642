"""R1.4: a provider or auth type one letter or one case away from a curated one is asked
'did you mean' in every plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.builders import conn, fleet
from tests.builders import plan as make_plan

runner = CliRunner()

_NOW = ("--now", "2026-11-29T12:00:00Z")


# --- 8. a provider one letter or one case away from a curated one --------------------------


@pytest.mark.parametrize(("provider", "auth_type", "near"), [
    ("Claude", "oauth", "provider 'claude'"),
    ("claud", "oauth", "provider 'claude'"),
    ("claude", "oauht", "auth_type 'oauth'"),
])
@pytest.mark.parametrize("auto_id", ["auto/thrifty", "auto/subscription", "auto/chat:thrifty"])
def test_every_plan_asks_did_you_mean_for_a_near_miss_R1(provider: str, auth_type: str,
                                                         near: str, auto_id: str) -> None:
    """R1.4 treats the typo as metered under every id; before, only auto/subscription's
    exclusion detail said "did you mean", and auto/thrifty quietly priced it as premium."""
    inputs = fleet([conn("typo-1", provider, auth_type, models=["sonnet"]),
                    conn("typo-2", provider, auth_type, models=["sonnet"])], [])
    result = make_plan(inputs, auto_id)
    assert (f"provider {provider!r} with auth_type {auth_type!r} is not in the billing catalog "
            f"(did you mean {near}?): typo-1, typo-2 are treated as metered (R1)"
            ) in result.warnings


def test_an_uncurated_provider_nowhere_near_a_curated_one_gets_no_guess() -> None:
    result = make_plan(fleet([conn("m", "mystery", "apikey", models=["m1"])], []))
    assert not any("did you mean" in w for w in result.warnings)


def test_the_near_miss_warning_is_on_stderr_and_in_the_json(tmp_path: Path) -> None:
    path = tmp_path / "connections.toml"
    path.write_text('[[connections]]\nid = "x"\nprovider = "Claude"\nauth_type = "oauth"\n'
                    'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    warning = ("provider 'Claude' with auth_type 'oauth' is not in the billing catalog (did "
               "you mean provider 'claude'?): x is treated as metered (R1)")
    table = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW])
    assert table.exit_code == 0, table.output
    assert f"omniladder: warning: {warning}" in table.stderr
    document = runner.invoke(app, ["plan", "auto/thrifty", "--connections", str(path), *_NOW,
                                   "--json"])
    assert warning in json.loads(document.stdout)["warnings"]
