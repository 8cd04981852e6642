"""`import claude-usage` on the payloads clients published in 2026 (SPEC §6 (v1.2),
docs/sources.md#claude-usage): ``limits[]`` per-model weekly windows, ``spend.enabled`` as overage
evidence, code-named windows and money caps. Fixtures: tests/fixtures/sources/claude/README.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.sources import claude_usage
from omniladder.sources.common import SourceReading, SourceWindow
from tests.conftest import ROOT

CLAUDE = ROOT / "tests" / "fixtures" / "sources" / "claude"
AT = datetime(2026, 9, 9, 21, 0, tzinfo=UTC)
runner = CliRunner()

MODELS = ["claude-sonnet-4-5", "claude-opus-4-1", "claude-fable-5"]
CONNECTIONS = f"""\
[[connections]]
id = "claude-max"
provider = "claude"
auth_type = "oauth"
models = {json.dumps(MODELS)}
"""


def _load(name: str) -> Any:
    return json.loads((CLAUDE / name).read_text(encoding="utf-8"))


def _parse(document: Any) -> SourceReading:
    return claude_usage.parse(document, "usage.json", AT)


def _windows(reading: SourceReading) -> dict[str, SourceWindow]:
    return {window.name: window for window in reading.windows}


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# --- the published payloads, read as an operator would expect ------------------------------


def test_agentsview_capture_limits_are_windows_and_the_scoped_one_is_named_after_its_model(
        ) -> None:
    """§6 (v1.2): limits[] percent is USED; weekly_scoped is named for the catalog to scope;
    session / weekly_all are the five_hour / seven_day windows, not two more."""
    reading = _parse(_load("agentsview-limits-array.json"))
    windows = _windows(reading)
    assert sorted(windows) == ["five_hour", "nimbus_quill", "seven_day", "weekly_scoped Fable"]
    assert windows["five_hour"] == SourceWindow(
        "five_hour", 94.0, reset_at=_at("2026-09-10T01:10:00.010657+00:00"))
    assert windows["seven_day"].remaining_percent == 94.0
    assert windows["weekly_scoped Fable"] == SourceWindow(
        "weekly_scoped Fable", 95.0, reset_at=_at("2026-09-16T22:00:00.010841+00:00"))
    # a code-named window without dollar figures is a window (0 % used, no reset)
    assert windows["nimbus_quill"] == SourceWindow("nimbus_quill", 100.0)
    assert reading.overage == "meters-to-paid"
    assert reading.notes == ()


def test_claudex_pro_capture_session_entry_without_reset_does_not_hide_the_reset() -> None:
    """A limits[] session entry with no resets_at, equal to five_hour, keeps five_hour's
    reset; extra_usage and spend both off → hard-stop."""
    reading = _parse(_load("claudex-lb-pro-subscription.json"))
    assert _windows(reading) == {
        "five_hour": SourceWindow("five_hour", 0.0,
                                  reset_at=_at("2026-08-05T12:50:00.124511+00:00")),
        "seven_day": SourceWindow("seven_day", 43.0,
                                  reset_at=_at("2026-08-06T10:00:00.124537+00:00")),
    }
    assert reading.overage == "hard-stop"


def test_claudex_enterprise_capture_money_cap_is_no_window_and_spend_is_the_overage() -> None:
    """A code-named window with limit_dollars / used_dollars is a money cap: no quota window
    (it would limit every model), a note instead."""
    reading = _parse(_load("claudex-lb-enterprise-budget.json"))
    assert reading.windows == ()
    assert reading.overage == "meters-to-paid"
    assert reading.notes == (
        "window 'cinder_cove' carries limit_dollars / used_dollars: a money cap, not a plan "
        "window; not read as a quota window",)


def test_smithers_spent_fable_entry_is_a_window_at_zero_with_its_reset() -> None:
    reading = _parse(_load("smithers-fable-spent-entry.json"))
    assert reading.windows == (SourceWindow(
        "weekly_scoped Fable", 0.0, reset_at=_at("2026-08-18T21:59:59.766338+00:00")),)
    assert reading.overage is None


# --- limits[] naming --------------------------------------------------------------------------


@pytest.mark.parametrize(("scope", "name"), [
    ({"model": {"id": "claude-fable-5", "display_name": "Fable"}, "surface": None},
     "weekly_scoped claude-fable-5"),                      # the id when given
    ({"model": {"id": None, "display_name": "Fable"}, "surface": None},
     "weekly_scoped Fable"),                               # else the display name
    ({"model": {"display_name": "  Claude   Opus 4.6 "}}, "weekly_scoped Claude Opus 4.6"),
    ({"model": {"id": None, "display_name": "  "}, "surface": "cowork"},
     "weekly_scoped cowork"),                              # a blank name names nothing
    ({"model": None, "surface": "cowork"}, "weekly_scoped cowork"),
    ({"model": None, "surface": None}, "weekly_scoped"),
    (None, "weekly_scoped"),
])
def test_a_scoped_limit_is_named_by_model_id_else_display_name_else_surface(
        scope: Any, name: str) -> None:
    """SPEC §6 (v1.2): scoped by scope.model.id, else display_name."""
    entry = {"kind": "weekly_scoped", "percent": 40, "scope": scope}
    (window,) = _parse({"limits": [entry]}).windows
    assert window.name == name
    assert window.remaining_percent == 60.0


@pytest.mark.parametrize(("kind", "name"), [
    ("session", "five_hour"), ("weekly_all", "seven_day"), ("monthly_thing", "monthly_thing"),
])
def test_unscoped_kinds_take_the_top_level_name_of_the_same_window(kind: str,
                                                                   name: str) -> None:
    (window,) = _parse({"limits": [{"kind": kind, "percent": 10, "scope": None}]}).windows
    assert window.name == name


@pytest.mark.parametrize(("top", "entry", "kept"), [
    (6, 97, (3.0, "entry")),      # the limits[] entry says more is used: it wins
    (97, 6, (3.0, "top")),        # the top-level key says more: it stands
    (40, 40, (60.0, "top")),      # a tie keeps the top-level window
    (None, 30, (70.0, "entry")),  # a figure beats no figure
    (30, None, (70.0, "top")),
])
def test_one_window_reported_twice_keeps_the_lower_remaining_figure(
        top: float | None, entry: float | None, kept: tuple[float, str]) -> None:
    """Where five_hour and a session entry disagree, the reading never invents quota: the
    lower remaining figure, with its own reset."""
    document = {"five_hour": {"utilization": top, "resets_at": "2026-09-10T01:00:00Z"},
                "limits": [{"kind": "session", "percent": entry,
                            "resets_at": "2026-09-10T02:00:00Z"}]}
    (window,) = _parse(document).windows
    reset = _at("2026-09-10T01:00:00+00:00" if kept[1] == "top" else "2026-09-10T02:00:00+00:00")
    assert (window.remaining_percent, window.reset_at) == (kept[0], reset)


def test_a_tie_takes_the_entry_reset_when_the_top_level_window_has_none() -> None:
    document = {"five_hour": {"utilization": 40, "resets_at": None},
                "limits": [{"kind": "session", "percent": 40,
                            "resets_at": "2026-09-10T02:00:00Z"}]}
    (window,) = _parse(document).windows
    assert window.reset_at == _at("2026-09-10T02:00:00+00:00")


def test_disagreeing_session_trap_reads_the_higher_use() -> None:
    windows = _windows(_parse(_load("trap-session-disagrees.json")))
    assert windows["five_hour"].remaining_percent == 3.0


def test_null_legacy_per_model_windows_stay_absent() -> None:
    """seven_day_opus / seven_day_sonnet are null on current accounts: absent, not 0."""
    windows = _windows(_parse({"seven_day_opus": None, "seven_day_sonnet": None,
                               "seven_day": {"utilization": 1, "resets_at": None}}))
    assert sorted(windows) == ["seven_day"]


# --- overage: extra_usage.is_enabled and spend.enabled --------------------------------------


@pytest.mark.parametrize(("extra", "spend", "overage"), [
    (None, {"enabled": True}, "meters-to-paid"),     # spend alone decides (Enterprise)
    (None, {"enabled": False}, "hard-stop"),
    ({"is_enabled": True}, None, "meters-to-paid"),
    ({"is_enabled": False}, None, "hard-stop"),
    ({"is_enabled": True}, {"enabled": False}, "meters-to-paid"),  # disagree: conservative
    ({"is_enabled": False}, {"enabled": True}, "meters-to-paid"),
    ({"is_enabled": False}, {"enabled": False}, "hard-stop"),
    ({"is_enabled": None}, {"percent": 21, "severity": "normal"}, None),
    (None, None, None),
])
def test_either_switch_on_meters_to_paid_and_both_off_is_a_hard_stop(
        extra: Any, spend: Any, overage: str | None) -> None:
    document: dict[str, Any] = {}
    if extra is not None:
        document["extra_usage"] = extra
    if spend is not None:
        document["spend"] = spend
    assert _parse(document).overage == overage


def test_spend_is_never_a_window() -> None:
    reading = _parse({"spend": {"enabled": False, "utilization": 5, "percent": 0}})
    assert reading.windows == ()


# --- money caps -------------------------------------------------------------------------------


@pytest.mark.parametrize(("dollars", "money"), [
    ({"limit_dollars": None, "used_dollars": None}, False),
    ({}, False),
    ({"limit_dollars": 25000}, True),
    ({"used_dollars": 0.0}, True),
    ({"limit_dollars": 1000, "used_dollars": 777.2}, True),
])
def test_a_window_with_a_dollar_figure_is_a_money_cap(dollars: dict[str, Any],
                                                      money: bool) -> None:
    document = {"amber_ladder": {"utilization": 100.0, "resets_at": None, **dollars}}
    reading = _parse(document)
    assert (reading.windows == ()) is money
    assert bool(reading.notes) is money


@pytest.mark.parametrize("value", ["25000", True, [1]])
def test_a_dollar_figure_that_is_no_number_is_an_error_naming_it(value: Any) -> None:
    with pytest.raises(InputError) as excinfo:
        _parse({"amber_ladder": {"utilization": 0, "limit_dollars": value}})
    assert (excinfo.value.file, excinfo.value.field) == ("usage.json",
                                                         "amber_ladder.limit_dollars")


# --- bad values: exact messages naming the field -----------------------------------------------


@pytest.mark.parametrize(("document", "message"), [
    ({"limits": {"kind": "session"}},
     'usage.json: limits: expected an array, got {"kind": "session"}'),
    ({"limits": [None, 5]}, "usage.json: limits[1]: expected an object, got 5"),
    ({"limits": [{"percent": 5}]},
     "usage.json: limits[0].kind: expected a non-empty string, got null"),
    ({"limits": [{"kind": "session", "percent": "x"}]},
     'usage.json: limits[0].percent: expected a number 0–100 (percent used), got "x"'),
    ({"limits": [{"kind": "session", "percent": 5, "resets_at": "soon"}]},
     'usage.json: limits[0].resets_at: expected an RFC 3339 timestamp, got "soon"'),
    ({"limits": [{"kind": "weekly_scoped", "percent": 5,
                  "scope": {"model": {"display_name": 5}}}]},
     "usage.json: limits[0].scope.model.display_name: expected a string, got 5"),
    ({"limits": [{"kind": "weekly_scoped", "percent": 5, "scope": "Fable"}]},
     'usage.json: limits[0].scope: expected an object, got "Fable"'),
    ({"spend": {"enabled": "yes"}}, 'usage.json: spend.enabled: expected true or false, got '
                                    '"yes"'),
    ({"spend": []}, "usage.json: spend: expected an object, got []"),
])
def test_unusable_2026_fields_name_file_and_field(document: Any, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        _parse(document)
    assert str(excinfo.value) == message


# --- end to end: import, scoping, notes, plan -------------------------------------------------


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, *files: Path, at: str = "2026-09-09T21:00:00Z") -> Any:
    return runner.invoke(app, ["import", "claude-usage", *map(str, files), "--connection",
                               "claude-max", "--quota", str(fleet / "quota.json"),
                               "--connections", str(fleet / "connections.toml"), "--at", at])


def _written(fleet: Path) -> dict[str, dict[str, Any]]:
    (reading,) = json.loads((fleet / "quota.json").read_text(encoding="utf-8"))["readings"]
    return {window["name"]: window for window in reading.get("windows", ())}


def _plan(fleet: Path, auto_id: str, now: str = "2026-09-09T21:01:00Z") -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def test_the_scoped_fable_window_limits_only_the_fable_model(fleet: Path) -> None:
    """§6: the catalog scopes 'weekly_scoped Fable' to *fable*; the plan windows and the
    code-named nimbus_quill (scope unpublished: every model) carry no models list."""
    result = _import(fleet, CLAUDE / "agentsview-limits-array.json")
    assert result.exit_code == 0, result.output
    windows = _written(fleet)
    assert windows["weekly_scoped Fable"]["models"] == ["claude-fable-5"]
    assert "models" not in windows["nimbus_quill"]
    assert "models" not in windows["five_hour"]
    assert "not in the window-scope catalog" not in result.stderr


@pytest.mark.parametrize(("key", "models"), [
    ("claude-opus-4-8", ["claude-opus-4-1"]),
    ("Claude Sonnet 4.5", ["claude-sonnet-4-5"]),
    ("FABLE", ["claude-fable-5"]),
])
def test_a_scoped_window_limits_its_family(fleet: Path, tmp_path: Path, key: str,
                                           models: list[str]) -> None:
    payload = tmp_path / "usage.json"
    payload.write_text(json.dumps({"limits": [
        {"kind": "weekly_scoped", "percent": 50, "scope": {"model": {"display_name": key}}}]}),
        encoding="utf-8")
    assert _import(fleet, payload).exit_code == 0
    assert _written(fleet)[f"weekly_scoped {key}"]["models"] == models


def test_an_unknown_scoped_model_limits_every_model_and_says_so(fleet: Path,
                                                                tmp_path: Path) -> None:
    """SPEC §6: a window no entry matches applies to every model (conservative), listed on
    stderr so the operator can curate it."""
    payload = tmp_path / "usage.json"
    payload.write_text(json.dumps({"limits": [
        {"kind": "weekly_scoped", "percent": 100,
         "scope": {"model": {"id": None, "display_name": "Mythos"}}}]}), encoding="utf-8")
    result = _import(fleet, payload)
    assert result.exit_code == 0, result.output
    assert "models" not in _written(fleet)["weekly_scoped Mythos"]
    assert ("omniladder: note: windows not in the window-scope catalog: read as limiting "
            "every model: 'weekly_scoped Mythos' ×1") in result.stderr


def test_a_money_cap_is_noted_on_stderr_and_the_reading_keeps_its_overage(fleet: Path) -> None:
    result = _import(fleet, CLAUDE / "claudex-lb-enterprise-budget.json")
    assert result.exit_code == 0, result.output
    assert ("omniladder: note: window 'cinder_cove' carries limit_dollars / used_dollars: a "
            "money cap, not a plan window; not read as a quota window") in result.stderr
    (reading,) = json.loads((fleet / "quota.json").read_text(encoding="utf-8"))["readings"]
    assert reading == {"connection": "claude-max", "checked_at": "2026-09-09T21:00:00Z",
                       "overage": "meters-to-paid"}


def test_the_same_note_from_several_files_is_said_once_with_a_count(fleet: Path,
                                                                    tmp_path: Path) -> None:
    copy = tmp_path / "again.json"
    copy.write_bytes((CLAUDE / "claudex-lb-enterprise-budget.json").read_bytes())
    result = runner.invoke(app, [
        "import", "claude-usage", str(CLAUDE / "claudex-lb-enterprise-budget.json"), str(copy),
        "--connection", "claude-max", "--quota", str(fleet / "quota.json"), "--connections",
        str(fleet / "connections.toml")])
    assert result.exit_code == 0, result.output
    assert "not read as a quota window (×2)" in result.stderr


@pytest.mark.parametrize("auto_id", ["auto/subscription", "auto/thrifty"])
def test_a_spent_scoped_limit_keeps_only_its_model_out(fleet: Path, auto_id: str) -> None:
    """R6 + §6 (v1.2): weekly_scoped Fable at 100 % excludes claude-fable-5 alone; Sonnet and
    Opus keep serving from the same connection."""
    assert _import(fleet, CLAUDE / "trap-fable-spent.json").exit_code == 0
    plan = _plan(fleet, auto_id)
    served = {e["model"] for e in plan["pool"] if "claude-max" in e["allowed_connection_ids"]}
    assert served == {"claude-sonnet-4-5", "claude-opus-4-1"}
    out = [(e["model"], e["reason"]) for e in plan["excluded"]
           if e["connection_id"] == "claude-max"]
    assert out == [("claude-fable-5", "quota-below-cutoff")]
    (fable,) = [e for e in plan["excluded"] if e["model"] == "claude-fable-5"]
    assert "weekly_scoped Fable" in fable["detail"]


def test_the_same_payload_with_the_fable_limit_below_full_serves_every_model(
        fleet: Path) -> None:
    """The other side of the boundary: the published payload (Fable at 5 % used) with both
    overage switches off serves all three models."""
    assert _import(fleet, CLAUDE / "trap-session-disagrees.json").exit_code == 0
    plan = _plan(fleet, "auto/subscription")
    served = {e["model"] for e in plan["pool"] if "claude-max" in e["allowed_connection_ids"]}
    assert served == set(MODELS)


def test_spend_enabled_without_extra_usage_keeps_the_seat_out_of_subscription(
        fleet: Path) -> None:
    """R2a + §6 (v1.2): spend.enabled true is observed meters-to-paid when extra_usage is
    absent: auto/subscription leaves the seat out (overage-not-hard-stop)."""
    assert _import(fleet, CLAUDE / "trap-spend-only.json").exit_code == 0
    plan = _plan(fleet, "auto/subscription")
    (record,) = plan["connections"]
    assert (record["overage"], record["overage_source"]) == ("meters-to-paid", "observed")
    assert plan["pool"] == []
    assert {e["reason"] for e in plan["excluded"]} == {"overage-not-hard-stop"}


def test_hermes_capture_utilization_one_is_one_percent_used_not_a_spent_fraction() -> None:
    """docs/sources.md#unit-traps: utilization is percent USED 0–100 even at 1.0 (its limits[]
    twin says percent 1); entries without resets_at keep the top-level resets; an
    extra_usage without is_enabled says nothing about overage, however spent its allowance."""
    reading = _parse(_load("hermes-utilization-one-percent.json"))
    assert _windows(reading) == {
        "five_hour": SourceWindow("five_hour", 99.0, reset_at=_at("2026-09-16T11:50:00Z")),
        "seven_day": SourceWindow("seven_day", 100.0, reset_at=_at("2026-09-23T05:00:00Z")),
    }
    assert reading.overage is None
    assert reading.notes == ()
