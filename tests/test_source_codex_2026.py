"""`import codex-sessions` on the rollout lines clients published in 2026 (SPEC §6 (v1.2),
docs/sources.md#codex-sessions): per-model limits (``limit_id`` / ``limit_name``), lines whose
windows are both ``null``, zero placeholders and a torn last line. Fixtures:
tests/fixtures/sources/codex/README.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.sources import codex_sessions
from omniladder.sources.codex_sessions import RolloutFile, RolloutReader, limit_key, parse_line
from omniladder.sources.common import SourceReading, SourceWindow
from tests.conftest import ROOT

CODEX = ROOT / "tests" / "fixtures" / "sources" / "codex"
PUBLISHED = CODEX / "published"
TRAPS = CODEX / "traps"
runner = CliRunner()

PLAN_MODELS = ["gpt-5.1-codex", "gpt-5.1"]
SPARK = "gpt-5.3-codex-spark"
CONNECTIONS = f"""\
[[connections]]
id = "codex-pro"
provider = "codex"
auth_type = "oauth"
models = {json.dumps([*PLAN_MODELS, SPARK])}
"""

def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _readings(path: Path, notes: list[str] | None = None) -> list[SourceReading]:
    return list(codex_sessions.read_file(RolloutFile(path, path.name), notes))


def _windows(reading: SourceReading) -> dict[str, SourceWindow]:
    return {window.name: window for window in reading.windows}


def _epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


# --- the published lines ----------------------------------------------------------------------


def test_current_shape_plan_line_reads_both_windows_and_its_credits() -> None:
    """monitor_ai_tools_budget's capture: limit_id "codex" is the plan's own limit."""
    (reading,) = _readings(PUBLISHED / "monitor-ai-tools-budget-current-shape.jsonl")
    assert reading.checked_at == datetime(2026, 8, 17, 7, 46, 51, 654000, tzinfo=UTC)
    assert _windows(reading) == {
        "session": SourceWindow("session", 76.5, reset_at=_epoch(1787552209),
                                window_seconds=18_000),
        "weekly": SourceWindow("weekly", 49.0, reset_at=_epoch(1788000000),
                               window_seconds=604_800),
    }
    assert reading.overage == "meters-to-paid"


def test_a_per_model_limit_gets_windows_of_its_own_name() -> None:
    """codex-hud's capture: the Spark line's windows never share a name with the plan's."""
    plan, spark = _readings(PUBLISHED / "codex-hud-plan-then-spark.jsonl")
    assert sorted(_windows(plan)) == ["session", "weekly"]
    assert _windows(spark) == {
        "gpt_5_3_codex_spark_session": SourceWindow(
            "gpt_5_3_codex_spark_session", 100.0, reset_at=_epoch(1769079999),
            window_seconds=18_000),
        "gpt_5_3_codex_spark_weekly": SourceWindow(
            "gpt_5_3_codex_spark_weekly", 100.0, reset_at=_epoch(1769416999),
            window_seconds=604_800),
    }


@pytest.mark.parametrize(("limit_id", "limit_name", "key"), [
    (None, None, None),
    ("codex", None, None),
    ("codex", "Codex", None),                      # the plan's own, whatever its name
    ("codex_bengalfox", "GPT-5.3-Codex-Spark", "gpt_5_3_codex_spark"),
    ("codex_bengalfox", None, "codex_bengalfox"),
    ("premium", None, "premium"),
    ("Codex", None, "codex"),                      # case matters: only "codex" is the plan
    ("codex_x", "!!!", "codex_x"),                 # a name of no letters: the id
])
def test_limit_key(limit_id: str | None, limit_name: str | None, key: str | None) -> None:
    assert limit_key(limit_id, limit_name) == key


# --- scoping and the plan ---------------------------------------------------------------------


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    (tmp_path / "connections.toml").write_text(CONNECTIONS, encoding="utf-8")
    return tmp_path


def _import(fleet: Path, *paths: Path) -> Any:
    return runner.invoke(app, ["import", "codex-sessions", *map(str, paths), "--connection",
                               "codex-pro", "--quota", str(fleet / "quota.json"),
                               "--connections", str(fleet / "connections.toml")])


def _written(fleet: Path) -> list[dict[str, Any]]:
    readings: list[dict[str, Any]] = json.loads(
        (fleet / "quota.json").read_text(encoding="utf-8"))["readings"]
    return readings


def _plan(fleet: Path, auto_id: str, now: str = "2026-01-22T08:42:00Z") -> dict[str, Any]:
    result = runner.invoke(app, ["plan", auto_id, "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def _served(plan: dict[str, Any]) -> set[str]:
    return {e["model"] for e in plan["pool"] if "codex-pro" in e["allowed_connection_ids"]}


def _out(plan: dict[str, Any]) -> dict[str, str]:
    return {e["model"]: e["reason"] for e in plan["excluded"]
            if e["connection_id"] == "codex-pro"}


def test_spark_windows_limit_spark_and_plan_windows_the_rest(fleet: Path) -> None:
    """§6: the catalog scopes gpt_5_3_codex_spark_* to *spark*; the plan's windows exclude
    spark."""
    result = _import(fleet, PUBLISHED / "codex-hud-plan-then-spark.jsonl")
    assert result.exit_code == 0, result.output
    plan, spark = _written(fleet)
    assert {w["name"]: w["models"] for w in plan["windows"]} == {
        "session": PLAN_MODELS, "weekly": PLAN_MODELS}
    assert {w["name"]: w["models"] for w in spark["windows"]} == {
        "gpt_5_3_codex_spark_session": [SPARK], "gpt_5_3_codex_spark_weekly": [SPARK]}
    assert "note" not in result.stderr


def test_a_spark_line_naming_only_its_id_is_still_scoped_to_spark(fleet: Path,
                                                                  tmp_path: Path) -> None:
    line = _lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[1].replace(
        '"limit_name":"GPT-5.3-Codex-Spark"', '"limit_name":null')
    path = tmp_path / "rollout-id-only.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert _import(fleet, path).exit_code == 0
    (reading,) = _written(fleet)
    assert {w["name"]: w["models"] for w in reading["windows"]} == {
        "codex_bengalfox_session": [SPARK], "codex_bengalfox_weekly": [SPARK]}


def test_an_unknown_per_model_limit_limits_every_model_and_says_so(fleet: Path,
                                                                   tmp_path: Path) -> None:
    """SPEC §6: unmatched is every model (conservative), listed for the operator."""
    line = _lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[1].replace(
        '"limit_id":"codex_bengalfox","limit_name":"GPT-5.3-Codex-Spark"',
        '"limit_id":"codex_tigerfox","limit_name":"GPT-6-Nova"')
    path = tmp_path / "rollout-unknown.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = _import(fleet, path)
    assert result.exit_code == 0, result.output
    (reading,) = _written(fleet)
    assert [w["name"] for w in reading["windows"]] == ["gpt_6_nova_session", "gpt_6_nova_weekly"]
    assert all("models" not in w for w in reading["windows"])
    assert "'gpt_6_nova_session' ×1, 'gpt_6_nova_weekly' ×1" in result.stderr


def test_a_per_model_line_after_a_spent_plan_serves_spark_and_not_the_plan(
        fleet: Path) -> None:
    """§6 (v1.2), R10: the Spark line gives Spark a window of its own and does not reopen
    the plan's spent session window: under auto/subscription the plan's models stay out."""
    assert _import(fleet, TRAPS / "plan-spent-then-spark.jsonl").exit_code == 0
    plan = _plan(fleet, "auto/subscription")
    assert _served(plan) == {SPARK}
    assert set(_out(plan)) == set(PLAN_MODELS)


def test_a_per_model_line_after_a_spent_plan_keeps_the_plan_out_of_thrifty(
        fleet: Path) -> None:
    """R6.4 (v1.2), R11: a later reading that leaves the spent window out regains nothing
    before its reset, so thrifty does not admit the plan's models on an unknown verdict."""
    assert _import(fleet, TRAPS / "plan-spent-then-spark.jsonl").exit_code == 0
    plan = _plan(fleet, "auto/thrifty")
    assert _served(plan) == {SPARK}
    # R7: the spent reading took them out, so the latest is judged against the re-entry floor
    assert _out(plan) == dict.fromkeys(PLAN_MODELS, "quota-below-reentry")


# --- both windows null ------------------------------------------------------------------------


def test_a_line_with_both_windows_null_has_no_window_but_keeps_its_credits() -> None:
    """§6 (v1.2): it says nothing about the windows; its credits are still the overage."""
    spent, empty = _readings(TRAPS / "plan-spent-then-null-windows.jsonl")
    assert _windows(spent)["session"].remaining_percent == 0.0
    assert empty.windows == ()
    assert empty.overage == "hard-stop"


def test_a_line_with_nothing_at_all_is_not_written(fleet: Path, tmp_path: Path) -> None:
    line = ('{"timestamp":"2026-01-22T08:41:12.000Z","type":"event_msg","payload":{"type":'
            '"token_count","rate_limits":{"limit_id":"premium","primary":null,"secondary":null}}}')
    path = tmp_path / "rollout-nothing.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = _import(fleet, path)
    assert result.exit_code == 0, result.output
    assert _written(fleet) == []
    assert "1 reading kept no window and no overage after scoping" in result.stderr


def test_the_null_line_is_written_with_its_overage_only(fleet: Path) -> None:
    assert _import(fleet, TRAPS / "plan-spent-then-null-windows.jsonl").exit_code == 0
    assert _written(fleet)[1] == {"connection": "codex-pro",
                                  "checked_at": "2026-01-22T08:41:12Z", "overage": "hard-stop"}


@pytest.mark.parametrize("auto_id", ["auto/subscription", "auto/thrifty"])
def test_a_null_windows_line_does_not_hide_the_spent_plan(fleet: Path, auto_id: str) -> None:
    assert _import(fleet, TRAPS / "plan-spent-then-null-windows.jsonl").exit_code == 0
    plan = _plan(fleet, auto_id)
    assert _out(plan)["gpt-5.1-codex"] == "quota-below-cutoff"


# --- zero placeholders -------------------------------------------------------------------------


def test_a_zero_placeholder_after_a_real_reading_is_not_imported(fleet: Path) -> None:
    """A window cannot restart before its reset: the placeholder is left out, with a note
    that says where, and the spent plan stays out even without R6.4."""
    result = _import(fleet, TRAPS / "zero-placeholder.jsonl")
    assert result.exit_code == 0, result.output
    assert [r["checked_at"] for r in _written(fleet)] == ["2026-01-22T08:40:12Z"]
    assert ("omniladder: note: 1 zero placeholder line not imported (every window 0 % used, "
            "reset exactly one window after the line, while the previous reading showed the "
            "window running past it): first at ") in result.stderr
    assert "zero-placeholder.jsonl:2" in result.stderr
    for auto_id in ("auto/subscription", "auto/thrifty"):
        assert _out(_plan(fleet, auto_id))["gpt-5.1-codex"] == "quota-below-cutoff"


def _placeholder_pair(tmp_path: Path, *, gap: float, first_reset: int = 1769079957,
                      used: float = 0.0) -> Path:
    """The trap's two lines, the second's session reset ``gap`` seconds past one full
    window after its timestamp."""
    first, second = _lines(TRAPS / "zero-placeholder.jsonl")
    first = first.replace("1769079957", str(first_reset))
    stamp = datetime(2026, 1, 22, 8, 40, 17, tzinfo=UTC)
    reset = stamp + timedelta(minutes=300, seconds=gap)
    second = second.replace('"used_percent":0.0,"window_minutes":300,"resets_at":1769089217',
                            f'"used_percent":{used},"window_minutes":300,'
                            f'"resets_at":{int(reset.timestamp())}')
    path = tmp_path / "rollout-pair.jsonl"
    path.write_text(first + "\n" + second + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("gap", "dropped"), [(0, True), (1, True), (-1, True), (2, False),
                                              (-2, False)])
def test_the_placeholder_reset_is_one_full_window_after_the_line_to_the_second(
        tmp_path: Path, gap: float, dropped: bool) -> None:
    notes: list[str] = []
    readings = _readings(_placeholder_pair(tmp_path, gap=gap), notes)
    assert len(readings) == (1 if dropped else 2)
    assert bool(notes) is dropped


def test_a_line_with_some_use_is_no_placeholder(tmp_path: Path) -> None:
    assert len(_readings(_placeholder_pair(tmp_path, gap=0, used=1.0))) == 2


def test_a_zero_line_after_the_earlier_window_reset_is_a_real_new_window(
        tmp_path: Path) -> None:
    """The earlier session window reset before the line (08:40:16Z): both windows may
    genuinely restart only if none is still running; weekly still is, so the line stays a
    placeholder; with the weekly window gone too, it is a reading."""
    early = int(datetime(2026, 1, 22, 8, 40, 16, tzinfo=UTC).timestamp())
    assert len(_readings(_placeholder_pair(tmp_path, gap=0, first_reset=early))) == 1
    path = _placeholder_pair(tmp_path, gap=0, first_reset=early)
    first, second = _lines(path)
    path.write_text(first.replace("1769415994", str(early)) + "\n" + second + "\n",
                    encoding="utf-8")
    assert len(_readings(path)) == 2


def test_a_placeholder_shaped_first_line_is_imported_as_it_is(tmp_path: Path) -> None:
    """With no earlier reading of the limit there is nothing it contradicts."""
    _, second = _lines(TRAPS / "zero-placeholder.jsonl")
    path = tmp_path / "rollout-alone.jsonl"
    path.write_text(second + "\n", encoding="utf-8")
    (reading,) = _readings(path)
    assert {w.remaining_percent for w in reading.windows} == {100.0}


def test_another_limit_placeholder_shape_does_not_contradict_the_plan(tmp_path: Path) -> None:
    """A Spark line at 0 % after a plan line is Spark's own reading, not a placeholder."""
    first, second = _lines(TRAPS / "zero-placeholder.jsonl")
    second = second.replace('"limit_id":"codex"', '"limit_id":"codex_bengalfox"')
    path = tmp_path / "rollout-spark.jsonl"
    path.write_text(first + "\n" + second + "\n", encoding="utf-8")
    assert len(_readings(path)) == 2


def test_placeholders_are_found_across_files_read_in_order(tmp_path: Path) -> None:
    first, second = _lines(TRAPS / "zero-placeholder.jsonl")
    one, two = tmp_path / "rollout-1.jsonl", tmp_path / "rollout-2.jsonl"
    one.write_text(first + "\n", encoding="utf-8")
    two.write_text(second + "\n", encoding="utf-8")
    reader = RolloutReader()
    readings = list(reader.read_all([RolloutFile(one, "r1"), RolloutFile(two, "r2")]))
    assert len(readings) == 1
    assert reader.placeholders == ["r2:1"]


# --- window lengths ----------------------------------------------------------------------------


def _lengths(reading: dict[str, Any]) -> dict[str, float | None]:
    return {w["name"]: w.get("window_seconds") for w in reading["windows"]}


@pytest.mark.parametrize(("fixture", "expected"), [
    ("monitor-ai-tools-budget-current-shape.jsonl",
     [{"session": 18_000, "weekly": 604_800}]),
    ("codex-hud-plan-then-spark.jsonl",
     [{"session": 18_000, "weekly": 604_800},
      {"gpt_5_3_codex_spark_session": 18_000, "gpt_5_3_codex_spark_weekly": 604_800}]),
])
def test_the_written_windows_carry_the_source_s_own_length(
        fleet: Path, fixture: str, expected: list[dict[str, int]]) -> None:
    """§2.2 window_seconds from the line's window_minutes × 60 (300 → 5 h, 10080 → 7 d), on
    the published captures: what forecast reads the elapsed part of each window from."""
    result = _import(fleet, PUBLISHED / fixture)
    assert result.exit_code == 0, result.output
    assert [_lengths(r) for r in _written(fleet)] == expected


def test_a_window_without_window_minutes_gets_no_length(fleet: Path) -> None:
    """Never invented: the slot-named window has no window_seconds, its sibling keeps its own."""
    result = _import(fleet, TRAPS / "no-window-minutes.jsonl")
    assert result.exit_code == 0, result.output
    (reading,) = _written(fleet)
    assert _lengths(reading) == {"primary": None, "weekly": 604_800}
    assert "window_seconds" not in next(w for w in reading["windows"] if w["name"] == "primary")


@pytest.mark.parametrize(("minutes", "seconds"), [(527_040, 31_622_400), (527_041, None)])
def test_a_length_past_a_leap_year_is_not_written(fleet: Path, tmp_path: Path, minutes: int,
                                                  seconds: int | None) -> None:
    """window_seconds takes at most 366 days: a longer window_minutes is imported without a
    length (the quota file stays readable), one of exactly 366 days with it."""
    line = _lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[0].replace(
        '"window_minutes":10080', f'"window_minutes":{minutes}')
    path = tmp_path / "rollout-long.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = _import(fleet, path)
    assert result.exit_code == 0, result.output
    (reading,) = _written(fleet)
    assert _lengths(reading) == {"session": 18_000, f"{minutes}m": seconds}
    assert _plan(fleet, "auto/subscription")["format_version"]


def test_re_importing_into_a_file_written_without_lengths_changes_nothing(fleet: Path) -> None:
    """§6 re-import is idempotent across the upgrade: a file written before the importer read
    window_minutes holds the same observations, so nothing is added and nothing is written."""
    fixture = PUBLISHED / "codex-hud-plan-then-spark.jsonl"
    assert _import(fleet, fixture).exit_code == 0
    target = fleet / "quota.json"
    document = json.loads(target.read_text(encoding="utf-8"))
    for reading in document["readings"]:
        for window in reading["windows"]:
            del window["window_seconds"]
    target.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    before = target.read_bytes()
    result = _import(fleet, fixture)
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == before


def test_a_different_figure_with_a_length_is_still_a_conflict(fleet: Path,
                                                             tmp_path: Path) -> None:
    """The other side: the length is forgiven, a different observation is not."""
    fixture = PUBLISHED / "codex-hud-plan-then-spark.jsonl"
    assert _import(fleet, fixture).exit_code == 0
    line = _lines(fixture)[0].replace('"used_percent":74.0', '"used_percent":75.0')
    path = tmp_path / "rollout-other.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = _import(fleet, path)
    assert result.exit_code == 2, result.output
    assert "a different reading of connection 'codex-pro'" in result.stderr


def test_forecast_reads_the_imported_length(fleet: Path) -> None:
    """The pace's window length comes from the reading, not the window catalog."""
    result = _import(fleet, PUBLISHED / "monitor-ai-tools-budget-current-shape.jsonl")
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["forecast", "auto/subscription", "--connections",
                                 str(fleet / "connections.toml"), "--quota",
                                 str(fleet / "quota.json"), "--now", "2026-08-17T07:48:00Z",
                                 "--json"])
    assert result.exit_code == 0, result.output
    paces = {p["window"]: p for p in json.loads(result.stdout)["pace"]}
    assert (paces["session"]["window_seconds"], paces["session"]["length_source"]) == (
        18_000, "reading")
    assert (paces["weekly"]["window_seconds"], paces["weekly"]["length_source"]) == (
        604_800, "reading")


# --- a torn last line --------------------------------------------------------------------------


def test_a_torn_last_line_is_skipped_with_a_note(fleet: Path) -> None:
    """§6 (v1.2): the last line of a file still being written is skipped, the rest imported."""
    result = _import(fleet, TRAPS / "torn-final-line.jsonl")
    assert result.exit_code == 0, result.output
    assert [r["checked_at"] for r in _written(fleet)] == ["2026-01-22T08:40:12Z"]
    (note,) = [line for line in result.stderr.splitlines() if "note:" in line]
    assert note.startswith("omniladder: note: ")
    assert note.endswith("traps/torn-final-line.jsonl:2: the last line has no newline and is "
                         "not JSON (a line Codex is still writing): skipped")


def test_the_same_broken_line_anywhere_else_is_exit_2_naming_file_and_line(
        fleet: Path, tmp_path: Path) -> None:
    text = (TRAPS / "torn-final-line.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "rollout-middle.jsonl"
    path.write_text(text + "\n" + _lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[0]
                    + "\n", encoding="utf-8")
    result = _import(fleet, path)
    assert result.exit_code == 2
    assert f"{path}:2: not a JSON line" in result.stderr
    assert not (fleet / "quota.json").exists()


def test_a_broken_last_line_that_ends_in_a_newline_is_exit_2(tmp_path: Path) -> None:
    """A complete line that is not JSON is damage, not a write in progress."""
    path = tmp_path / "rollout-1.jsonl"
    path.write_text((TRAPS / "torn-final-line.jsonl").read_text(encoding="utf-8") + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        _readings(path)
    assert str(excinfo.value) == "rollout-1.jsonl:2: not a JSON line"


def test_a_whole_last_line_without_a_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rollout-1.jsonl"
    path.write_text("\n".join(_lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")),
                    encoding="utf-8")
    notes: list[str] = []
    assert len(_readings(path, notes)) == 2
    assert notes == []


def test_a_torn_line_that_is_not_utf8_is_skipped_too(tmp_path: Path) -> None:
    path = tmp_path / "rollout-1.jsonl"
    first = _lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[0]
    path.write_bytes(first.encode() + b"\n" + b'{"timestamp":"\xe2\x82')
    notes: list[str] = []
    assert len(_readings(path, notes)) == 1
    assert notes == ["rollout-1.jsonl:2: the last line has no newline and is not JSON (a line "
                     "Codex is still writing): skipped"]


def test_parse_line_still_reads_one_line() -> None:
    line = json.loads(_lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[1])
    reading = parse_line(line, "x:1")
    assert reading is not None
    assert sorted(_windows(reading)) == ["gpt_5_3_codex_spark_session",
                                         "gpt_5_3_codex_spark_weekly"]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("limit_id", 5, "x:1: payload.rate_limits.limit_id: expected a non-empty string, got 5"),
    ("limit_name", "", 'x:1: payload.rate_limits.limit_name: expected a non-empty string, '
                       'got ""'),
])
def test_unusable_limit_fields_name_the_line_and_field(field: str, value: Any,
                                                       message: str) -> None:
    line = json.loads(_lines(PUBLISHED / "codex-hud-plan-then-spark.jsonl")[1])
    line["payload"]["rate_limits"][field] = value
    with pytest.raises(InputError) as excinfo:
        parse_line(line, "x:1")
    assert str(excinfo.value) == message
