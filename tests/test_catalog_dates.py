"""`catalog check`: the shipped catalogs' review dates never fail a user's check; a user's own
stale overlay still does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from tests.conftest import ROOT

runner = CliRunner()


# --- 2. catalog check: shipped review dates never fail a user's check ----------------------


def _catalog_check(*args: str) -> Any:
    return runner.invoke(app, ["catalog", "check", *args])


@pytest.mark.parametrize("today", ["2027-02-18", "2027-02-19", "2099-01-01"])
def test_shipped_catalogs_never_turn_a_users_check_red_on_a_date(today: str) -> None:
    """The oldest shipped reviews are dated 2026-08-22: from 2027-02-19 on they are more than
    180 days old, and every user's CI used to fail on entries no user can edit."""
    result = _catalog_check("--today", today, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["ok"], document["problems"]) == (True, [])
    assert document["released"] == "2026-12-06"
    assert {n["code"] for n in document["notes"]} <= {"release-age"}


@pytest.mark.parametrize(("today", "noted"), [("2027-06-04", False), ("2027-06-05", True)])
def test_an_old_release_is_a_note_past_the_max_age(today: str, noted: bool) -> None:
    """Released 2026-12-06: 180 days later the release is still within --max-age-days; one
    day more and the check says the shipped facts are old (and still passes)."""
    result = _catalog_check("--today", today)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    notes = [line for line in lines if line.startswith("note: <shipped>: release-age: ")]
    assert len(notes) == (1 if noted else 0)
    if noted:
        assert "omniladder 0.1.0 was released on 2026-12-06, 181 days before 2027-06-05" \
            in notes[0]
        assert lines[-1] == ("catalog check: ok, no problems in 3 catalog file(s); 1 note on "
                             "the shipped catalogs (never a failure)")
    else:
        assert lines == ["catalog check: ok, no problems in 3 catalog file(s)"]


def test_a_users_own_stale_overlay_still_fails_beside_the_shipped_ones(tmp_path: Path) -> None:
    """Only the files the user owns fail: the overlay's review date is judged against today."""
    overlay = tmp_path / "overlay.toml"
    overlay.write_text('[[entries]]\nprovider = "acme"\nauth_type = "oauth"\n'
                       'billing = "subscription"\noverage = "hard-stop"\nreason = "r"\n'
                       'source = "s"\nreviewed = 2027-01-01\n', encoding="utf-8")
    result = _catalog_check("--today", "2099-01-01", "--catalog", str(overlay), "--json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert [(p["file"], p["code"]) for p in document["problems"]] == [
        (str(overlay), "review-stale")]
    assert [n["code"] for n in document["notes"]] == ["release-age"]


def test_a_baseline_written_far_in_the_future_accepts_nothing_shipped(tmp_path: Path) -> None:
    """Notes never fail, so they are never written to a baseline either."""
    baseline = tmp_path / "accepted.toml"
    result = _catalog_check("--today", "2099-01-01", "--write-baseline", str(baseline))
    assert result.exit_code == 0, result.output
    assert "[[accepted]]" not in baseline.read_text(encoding="utf-8")


def test_the_release_date_is_not_older_than_any_shipped_review() -> None:
    """The packaging gate that replaces the user's: RELEASED is at or after every shipped
    `reviewed` / `as_of`, and at the release the shipped catalogs lint clean, notes included."""
    import tomllib
    from datetime import date

    from omniladder import RELEASED

    released = date.fromisoformat(RELEASED)
    newest = date.min
    for path in (ROOT / "catalogs").glob("*.toml"):
        for table in tomllib.loads(path.read_text(encoding="utf-8")).values():
            for entry in table:
                for key in ("reviewed", "as_of"):
                    if key in entry:
                        newest = max(newest, entry[key])
    assert newest > date(2026, 1, 1)
    assert released >= newest, f"bump omniladder.RELEASED to at least {newest}"
    result = _catalog_check("--today", RELEASED, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["problems"], document["notes"]) == ([], [])
