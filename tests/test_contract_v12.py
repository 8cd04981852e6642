"""SPEC v1.2: what real payloads taught the contract.

§2.2: a reading with no window, no top-level figure and no status carries no quota
information; a reset at the epoch is absent and one at or before its own reading is
unusable; one reading per connection and instant; instants ahead of the clock are warned
about. R6.4: a later reading cannot lift a low window before its reset (regain before
reset). And `omniladder quota prune`, the way out after a real early reset.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.engine.quota import HeldWindow, _walk_holds, readings_until, verdict, with_holds
from omniladder.inputs import input_set
from omniladder.models import Reading, Window
from tests.builders import NOW, at, conn, fleet, history, ladder, plan, reading, window
from tests.builders import decision as pair
from tests.depth import deep
from tests.strategies import ONE_PLAN, input_sets

runner = CliRunner()
LADDER = ladder()  # cutoff 2 %, re-entry floor 5 %, max age 180 s
SONNET = "claude-sonnet-4-5"


# --- §2.2: a reading that carries no quota information -------------------------------------


def test_an_empty_reading_after_a_hit_limit_does_not_hide_it() -> None:
    """R6/R7 skip it: the 0 % reading before it stays the reading."""
    found = verdict(history(reading("c", at(minutes=-1), window("5h", 0, at(hours=2))),
                            reading("c", at(seconds=-10))), SONNET, NOW, LADDER)
    assert (found.kind, found.reason) == ("exhausted", "quota-below-cutoff")
    assert found.reading is not None
    assert found.reading.checked_at == NOW - timedelta(minutes=1)


def test_an_empty_reading_alone_is_no_reading() -> None:
    found = verdict(history(reading("c", at(seconds=-10))), SONNET, NOW, LADDER)
    assert found.reason == "quota-missing"
    assert "the 1 there is empty" in found.detail


def test_an_empty_reading_still_carries_its_overage_for_R2a() -> None:
    inputs = fleet([conn("c", models=[SONNET])], [
        reading("c", at(minutes=-1), window("5h", 50, at(hours=2))),
        reading("c", at(seconds=-10), overage="meters-to-paid")])
    result = plan(inputs, "auto/subscription")
    assert pair(result, "c", SONNET).reason == "overage-not-hard-stop"
    assert plan(inputs, "auto/thrifty").pool  # the quota verdict is the 50 % reading's


def test_an_empty_reading_does_not_cut_the_cooldown_clamp() -> None:
    """R9 reads the latest reading that carries quota: its exhausted window's reset."""
    inputs = fleet([conn("c", models=[SONNET], rate_limited_until=at(hours=5))], [
        reading("c", at(minutes=-1), window("5h", 0, at(hours=1))),
        reading("c", at(seconds=-10))], settings={"ladder": {"max_reading_age_seconds": 600}})
    later = plan(inputs, "auto/thrifty", NOW + timedelta(hours=1, seconds=1))
    assert pair(later, "c", SONNET).reason != "cooldown"


# --- R6.4 (v1.2): regain before reset ------------------------------------------------------


@pytest.mark.parametrize(("later", "shown"), [
    pytest.param(window("5h", 100, at(hours=5)), "shows 100%", id="zero-placeholder"),
    pytest.param(window("weekly", 80, at(days=2)), "leaves it out", id="window-left-out"),
    pytest.param(window("5h", 40, at(hours=2)), "shows 40%", id="same-reset-higher"),
])
def test_a_later_reading_cannot_lift_a_low_window_before_its_reset(
        later: dict[str, Any], shown: str) -> None:
    found = verdict(history(reading("c", at(minutes=-1), window("5h", 1, at(hours=2))),
                            reading("c", at(seconds=-10), later)), SONNET, NOW, LADDER)
    assert (found.kind, found.reason, found.figure) == ("exhausted", "quota-below-reentry", 1)
    assert isinstance(found.window, HeldWindow)
    # why names both readings
    assert "held from the reading at 11:59Z" in found.detail
    assert f"(the one at 11:59:50Z {shown})" in found.detail


def test_the_hold_ends_at_the_reset_exactly() -> None:
    readings = history(reading("c", at(minutes=-10), window("5h", 1, at(minutes=30))),
                       reading("c", at(minutes=-5), window("5h", 90, at(hours=5))))
    calm = ladder(max_reading_age_seconds=7200)
    before = verdict(readings, SONNET, NOW + timedelta(minutes=30) - timedelta(seconds=1), calm)
    assert before.kind == "exhausted"
    at_reset = verdict(readings, SONNET, NOW + timedelta(minutes=30), calm)
    assert (at_reset.kind, at_reset.figure) == ("usable", 90)


def test_a_lower_later_figure_is_its_own_word() -> None:
    found = verdict(history(reading("c", at(minutes=-1), window("5h", 2, at(hours=2))),
                            reading("c", at(seconds=-10), window("5h", 0.5, at(hours=2)))),
                    SONNET, NOW, LADDER)
    assert found.figure == 0.5
    assert not isinstance(found.window, HeldWindow)


def test_only_a_low_window_with_a_known_reset_holds() -> None:
    """At the cutoff holds, just above does not; no reset instant, no hold."""
    def judged(figure: float, reset: str | None) -> str:
        return verdict(history(reading("c", at(minutes=-1), window("5h", figure, reset)),
                               reading("c", at(seconds=-10), window("5h", 90, at(hours=5)))),
                       SONNET, NOW, LADDER).kind
    assert judged(2, at(hours=2)) == "exhausted"
    assert judged(2.01, at(hours=2)) == "usable"
    assert judged(0, None) == "usable"  # a rolling window without a reset may regain


def test_a_hold_is_per_window_and_per_model() -> None:
    """A held weekly-opus window keeps only opus out; sonnet reads the later reading."""
    readings = history(
        reading("c", at(minutes=-1), window("weekly-opus", 0, at(days=2), models=["opus"]),
                window("5h", 60, at(hours=2))),
        reading("c", at(seconds=-10), window("5h", 55, at(hours=2))))
    assert verdict(readings, "opus", NOW, LADDER).kind == "exhausted"
    assert verdict(readings, SONNET, NOW, LADDER).kind == "usable"


def test_the_R7_replay_keeps_the_held_figure() -> None:
    """R6.4 in R7: a middle reading that shows the window higher stays out."""
    found = verdict(history(reading("c", at(minutes=-2), window("5h", 1, at(hours=2))),
                            reading("c", at(minutes=-1), window("5h", 50, at(hours=2))),
                            reading("c", at(seconds=-10), window("5h", 4, at(hours=2)))),
                    SONNET, NOW, LADDER)
    assert [(step.figure, step.in_play_after) for step in found.replay] == [
        (1, False), (1, False)]
    assert found.reason == "quota-below-reentry"


def test_nothing_is_rewritten_when_nothing_holds() -> None:
    readings = history(reading("c", at(minutes=-1), window("5h", 50, at(hours=2))),
                       reading("c", at(seconds=-10), window("5h", 40, at(hours=2))))
    assert with_holds(readings, NOW, 2) is readings


def test_the_remedy_of_a_held_window_names_quota_prune() -> None:
    inputs = fleet([conn("c", models=[SONNET])], [
        reading("c", at(minutes=-1), window("5h", 0, at(hours=2))),
        reading("c", at(seconds=-10), window("5h", 100, at(hours=5)))])
    result = plan(inputs, "auto/subscription")
    (excluded,) = [x for x in result.excluded if x.connection_id == "c"]
    assert excluded.fix is not None
    assert ("`omniladder quota prune --connection c --before 2026-11-29T11:59:50Z --quota "
            "QUOTA_FILE`") in excluded.fix


def test_simulate_steps_at_a_held_windows_reset(tmp_path: Path) -> None:
    """The stepping schedule knows that an earlier reading's low window decides until its
    reset, even though a later reading arrived: simulate and a fresh plan agree."""
    config = _write(tmp_path, [
        reading("c", "2026-11-29T10:00:00Z", window("5h", 0, "2026-11-29T11:00:00Z")),
        reading("c", "2026-11-29T10:05:00Z", window("5h", 100, "2026-11-29T15:05:00Z")),
    ], max_age=86400)
    result = runner.invoke(app, ["simulate", "auto/subscription", "--config", str(config),
                                 "--from", "2026-11-29T10:05:00Z",
                                 "--to", "2026-11-29T12:00:00Z", "--step", "10m", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    back = [t["at"] for t in document["transitions"]]
    assert back == ["2026-11-29T11:05:00Z"]  # the first step at or after the 11:00 reset


HISTORIES = input_sets(catalog=ONE_PLAN, connections=(1, 1), readings=(0, 5),
                       readings_between=(-300, -1), resets_between=(-200, 600),
                       spend=False).map(lambda inputs: inputs.readings.get("c0", ()))
"""One connection's quota history, every reading before NOW."""


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parsed=HISTORIES, cutoff=st.sampled_from([0, 2, 5]))
def test_a_placeholder_never_reopens_a_spent_window(parsed: tuple[Reading, ...],
                                                    cutoff: float) -> None:
    """R6.4, derived afresh: when any earlier reading showed a window at or below the cutoff
    with a reset still ahead, a placeholder at now showing every window at 100 % leaves the
    pair exhausted."""
    rules = ladder(exit_cutoff_percent=cutoff, reentry_min_remaining_percent=cutoff)
    spent = any(w.applies_to(SONNET) and not w.unlimited and w.figure <= cutoff
                and w.reset_at is not None and w.reset_at > NOW
                for r in parsed for w in r.all_windows())
    names = {(w.name, w.models) for r in parsed for w in r.all_windows()}
    placeholder = Reading(connection="c0", checked_at=NOW, windows=tuple(
        Window(name=name, remaining_percent=100, reset_at=NOW + timedelta(hours=5),
               models=models) for name, models in sorted(names, key=str)) or None,
        status="ok")
    found = verdict((*parsed, placeholder), SONNET, NOW, rules)
    if spent:
        assert found.kind == "exhausted", found
    else:
        # R6.8: a placeholder with no window for the model (none at all, or only windows
        # scoped to other models) says nothing about it: unknown, never usable.
        applies = any(models is None or SONNET in models for _, models in names)
        assert found.kind == ("usable" if applies else "unknown"), found



LONG_HISTORIES = input_sets(catalog=ONE_PLAN, connections=(1, 1), readings=(2, 5),
                            readings_between=(-300, -1), resets_between=(-60, 600),
                            spend=False).map(lambda inputs: inputs.readings.get("c0", ()))
"""One connection's history of at least two readings, most resets still ahead."""


@deep(150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_holding_from_the_first_reading_with_a_window_to_hold_is_the_whole_rule(
        examples: settings) -> None:
    """R6.4: ``with_holds`` skips the readings before the first one with a window to hold
    (all of them when none has one); the walk over every reading gives the same readings,
    and the very sequence given when it holds nothing."""
    @examples
    @given(parsed=LONG_HISTORIES, cutoff=st.sampled_from([2, 5, 50, 100]),
           back=st.sampled_from([0, 0, 0, 60, 240]))
    def holds(parsed: tuple[Reading, ...], cutoff: float, back: int) -> None:
        now = NOW - timedelta(minutes=back)
        readings = readings_until(parsed, now)
        found = with_holds(readings, now, cutoff)
        whole = _walk_holds(readings, 0, now, cutoff)
        assert found == whole
        assert (found is readings) == (whole is readings)

    holds()


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(readings=HISTORIES, extra=st.lists(st.integers(-300, 0), max_size=3))
def test_empty_readings_change_no_verdict(readings: tuple[Reading, ...],
                                          extra: list[int]) -> None:
    """§2.2 (v1.2), derived afresh: inserting readings with no window, figure or status at
    any instant changes no verdict (kind, reason, figure)."""
    taken = {r.checked_at for r in readings}
    empties = [r for r in history(*(reading("c0", at(minutes=m, seconds=30)) for m in extra))
               if r.checked_at not in taken]
    before = verdict(readings, SONNET, NOW, LADDER)
    after = verdict(tuple(sorted((*readings, *empties), key=lambda r: r.checked_at)), SONNET,
                    NOW, LADDER)
    if before.reason == "quota-missing":
        assert after.reason == "quota-missing"
    else:
        assert (after.kind, after.reason, after.figure) == (
            before.kind, before.reason, before.figure)


# --- §2.2 (v1.2) at load: resets, one reading per instant, instants ahead of the clock ----


def _write(tmp_path: Path, readings: list[dict[str, Any]], *, taken_at: str | None = None,
           max_age: int = 180) -> Path:
    (tmp_path / "connections.toml").write_text(
        f'[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        f'models = ["{SONNET}"]\n', encoding="utf-8")
    document: dict[str, Any] = {"readings": readings}
    if taken_at is not None:
        document["taken_at"] = taken_at
    (tmp_path / "quota.json").write_text(json.dumps(document), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
                      f"[ladder]\nmax_reading_age_seconds = {max_age}\n", encoding="utf-8")
    return config


def _plan(config: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(config),
                                 "--now", "2026-11-29T12:00:00Z", "--json", *args])
    document = json.loads(result.stdout) if result.exit_code == 0 else {}
    return result.exit_code, document, result.output


def test_an_epoch_reset_is_absent_and_not_warned(tmp_path: Path) -> None:
    """Copilot's quota_reset_at 0: not a reset in 1970, so a healthy window is usable."""
    config = _write(tmp_path, [reading("c", window("chat", 80, "1970-01-01T00:00:00Z"))])
    code, document, _ = _plan(config)
    assert code == 0
    assert [e["allowed_connection_ids"] for e in document["pool"]] == [["c"]]
    assert not any("reset_at" in w for w in document["warnings"])


def test_an_epoch_taken_at_is_absent_and_now_is_the_clock(tmp_path: Path) -> None:
    """§2.2 (v1.2): an instant at or before the epoch is no instant, so a taken_at of 0 is
    no snapshot instant and R14 falls through to the clock, instead of planning for 1970
    with every reading "after now"."""
    config = _write(tmp_path, [reading("c", window("5h", 80))],
                    taken_at="1970-01-01T00:00:00Z")
    result = runner.invoke(app, ["plan", "auto/subscription", "--config", str(config),
                                 "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["now_source"] == "clock"
    assert not document["now"].startswith("1970")
    assert "quota-missing" not in [x["reason"] for x in document["excluded"]]


def test_a_reset_at_or_before_its_reading_is_unusable_and_warned(tmp_path: Path) -> None:
    config = _write(tmp_path, [
        reading("c", "2026-11-29T11:59:50Z", window("5h", 0, "2026-11-29T11:59:50Z"))])
    code, document, _ = _plan(config)
    assert code == 0
    (warned,) = [w for w in document["warnings"] if "unusable" in w]
    assert ("readings[0] (c at 2026-11-29T11:59:50Z): window '5h' reset_at "
            "2026-11-29T11:59:50Z") in warned
    # read as absent: a 0 % window without a reset, not "reset since the reading"
    assert [x["reason"] for x in document["excluded"]] == ["quota-below-cutoff"]


def test_a_reset_one_second_after_its_reading_is_kept(tmp_path: Path) -> None:
    config = _write(tmp_path, [
        reading("c", "2026-11-29T11:59:50Z", window("5h", 0, "2026-11-29T11:59:51Z"))])
    _, document, _ = _plan(config)
    assert not any("unusable" in w for w in document["warnings"])
    assert [x["reason"] for x in document["excluded"]] == ["quota-reset-since-reading"]


def test_identical_readings_at_one_instant_are_one(tmp_path: Path) -> None:
    one = reading("c", window("5h", 50, at(hours=2)))
    code, document, output = _plan(_write(tmp_path, [one, dict(one)]))
    assert code == 0, output
    assert document["pool"]


def test_different_readings_at_one_instant_are_exit_2_naming_both(tmp_path: Path) -> None:
    config = _write(tmp_path, [reading("c", window("5h", 50, at(hours=2))),
                               reading("c", window("5h", 40, at(hours=2)))])
    before = (tmp_path / "quota.json").read_bytes()
    code, _, output = _plan(config)
    assert code == 2
    assert "quota.json: readings[1]: readings[0] and readings[1] are different readings" in (
        output.replace("\n", " "))
    assert "Traceback" not in output
    assert (tmp_path / "quota.json").read_bytes() == before


@pytest.mark.parametrize(("ahead", "warned"), [(300, False), (301, True)])
def test_an_instant_ahead_of_the_clock_is_warned(tmp_path: Path, ahead: int, warned: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    clock = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(input_set, "clock", lambda: clock)
    future = (clock + timedelta(seconds=ahead)).isoformat().replace("+00:00", "Z")
    config = _write(tmp_path, [reading("c", future, window("5h", 50, at(hours=2)))],
                    taken_at=future)
    _, document, _ = _plan(config)
    found = [w for w in document["warnings"] if "ahead of the clock" in w]
    assert len(found) == (2 if warned else 0)  # taken_at and the latest checked_at


# --- quota prune -----------------------------------------------------------------------------


def _quota(tmp_path: Path) -> Path:
    path = tmp_path / "quota.json"
    path.write_text(json.dumps({"taken_at": "2030-01-01T00:00:00Z", "readings": [
        reading("a", "2026-11-29T10:00:00Z", window("5h", 0, at(hours=2))),
        reading("a", "2026-11-29T11:00:00Z", window("5h", 90, at(hours=2))),
        reading("b", "2026-11-29T10:00:00Z", window("5h", 50, at(hours=2))),
        reading("a", "2030-01-01T00:00:00Z", window("5h", 90, at(hours=2))),
    ]}, indent=2), encoding="utf-8")
    return path


def test_prune_removes_one_connections_readings_before_an_instant(tmp_path: Path) -> None:
    path = _quota(tmp_path)
    result = runner.invoke(app, ["quota", "prune", "--connection", "a", "--before",
                                 "2026-11-29T11:00:00Z", "--quota", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "removed readings[0]: a at 2026-11-29T10:00:00Z\n"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert [(r["connection"], r["checked_at"]) for r in document["readings"]] == [
        ("a", "2026-11-29T11:00:00Z"), ("b", "2026-11-29T10:00:00Z"),
        ("a", "2030-01-01T00:00:00Z")]


def test_prune_after_takes_a_future_reading_and_taken_at_back(tmp_path: Path) -> None:
    path = _quota(tmp_path)
    result = runner.invoke(app, ["quota", "prune", "--after", "2027-01-01T00:00:00Z",
                                 "--quota", str(path)])
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["taken_at"] == "2026-11-29T11:00:00Z"
    assert len(document["readings"]) == 3


def test_prune_dry_run_and_no_match_write_nothing(tmp_path: Path) -> None:
    path = _quota(tmp_path)
    before = path.read_bytes()
    dry = runner.invoke(app, ["quota", "prune", "--before", "2026-11-29T11:00:00Z", "--all",
                              "--quota", str(path), "--dry-run"])
    assert dry.exit_code == 0
    assert dry.stdout.count("would remove") == 2
    none = runner.invoke(app, ["quota", "prune", "--before", "2020-01-01T00:00:00Z",
                               "--quota", str(path)])
    assert none.exit_code == 0
    assert "nothing written" in none.output
    assert path.read_bytes() == before


def _left(path: Path) -> list[tuple[str, str]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [(r["connection"], r["checked_at"]) for r in document["readings"]]


def test_prune_after_and_before_together_remove_the_readings_between(tmp_path: Path) -> None:
    """Together the two bounds are a span (the readings after T1 and before T2); OR-ed, as
    they were, --after T1 --before T2 removed every reading."""
    path = _quota(tmp_path)
    result = runner.invoke(app, ["quota", "prune", "--after", "2026-11-29T10:30:00Z",
                                 "--before", "2027-01-01T00:00:00Z", "--quota", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "removed readings[1]: a at 2026-11-29T11:00:00Z\n"
    assert _left(path) == [("a", "2026-11-29T10:00:00Z"), ("b", "2026-11-29T10:00:00Z"),
                           ("a", "2030-01-01T00:00:00Z")]


@pytest.mark.parametrize("bounds", [
    ["--after", "2026-11-29T11:00:00Z", "--before", "2026-11-29T11:00:00Z"],
    ["--after", "2026-11-29T12:00:00Z", "--before", "2026-11-29T11:00:00Z"],
], ids=["equal", "reversed"])
def test_prune_bounds_that_hold_no_span_are_a_usage_error(tmp_path: Path,
                                                          bounds: list[str]) -> None:
    path = _quota(tmp_path)
    before = path.read_bytes()
    result = runner.invoke(app, ["quota", "prune", *bounds, "--quota", str(path), "--all"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("omniladder: error: --after: ")
    assert "is not earlier than --before" in line
    assert path.read_bytes() == before


@pytest.mark.parametrize("dry", [[], ["--dry-run"]], ids=["write", "dry-run"])
def test_prune_that_empties_a_connection_needs_all_and_names_each(tmp_path: Path,
                                                                  dry: list[str]) -> None:
    path = _quota(tmp_path)
    before = path.read_bytes()
    prune = ["quota", "prune", "--quota", str(path), *dry]
    every = runner.invoke(app, [*prune, "--before", "2031-01-01T00:00:00Z"])
    assert every.exit_code == 2, every.output
    assert every.stdout == ""
    (line,) = every.stderr.splitlines()
    assert line == (f"omniladder: error: {path}: --all: the prune would remove every reading "
                    "of connections 'a' (3 readings), 'b' (1 reading), which would then plan "
                    "as quota unknown (quota-missing); pass --all to remove them all, or narrow "
                    "--before/--after/--connection; nothing written")
    one = runner.invoke(app, [*prune, "--before", "2026-11-29T10:30:00Z"])
    assert one.exit_code == 2, one.output
    assert "every reading of connection 'b' (1 reading), which" in one.stderr  # a keeps two
    assert path.read_bytes() == before
    allowed = runner.invoke(app, [*prune, "--before", "2026-11-29T10:30:00Z", "--all"])
    assert allowed.exit_code == 0, allowed.output
    assert allowed.stdout.count(" readings[") == 2
    if dry:
        assert path.read_bytes() == before
    else:
        assert _left(path) == [("a", "2026-11-29T11:00:00Z"), ("a", "2030-01-01T00:00:00Z")]


TOML_QUOTA = """# quota of the lab fleet, kept by hand
taken_at = 2026-11-29T13:00:00+01:00

[[readings]]
connection = "a"  # the work seat
checked_at = 2026-11-29T10:00:00Z
remaining_percent = 10

[[readings]]
connection = "a"
checked_at = "2026-11-29T11:00:00Z"
remaining_percent = 90
"""


def test_prune_of_a_toml_quota_file_it_would_respell_needs_force(tmp_path: Path) -> None:
    """The rewrite dropped the comments and respelled the instants silently; it now says
    what would be lost and writes nothing, unless --force."""
    path = tmp_path / "quota.toml"
    path.write_text(TOML_QUOTA, encoding="utf-8")
    prune = ["quota", "prune", "--before", "2026-11-29T10:30:00Z", "--quota", str(path)]
    for dry in ([], ["--dry-run"]):
        refused = runner.invoke(app, [*prune, *dry])
        assert refused.exit_code == 2, refused.output
        assert refused.stdout == ""
        (line,) = refused.stderr.splitlines()
        assert line == (f"omniladder: error: {path}: --force: the prune rewrites a TOML quota "
                        "file whole, losing its 2 comment lines and the spelling of what it "
                        "holds (instants in UTC, its layout and quoting); pass --force to "
                        "rewrite it anyway; nothing written")
        assert path.read_text(encoding="utf-8") == TOML_QUOTA
    forced = runner.invoke(app, [*prune, "--force"])
    assert forced.exit_code == 0, forced.output
    assert "#" not in path.read_text(encoding="utf-8")
    # written as omniladder writes TOML, the file loses nothing to the next prune
    again = runner.invoke(app, ["quota", "prune", "--before", "2026-11-29T11:30:00Z", "--all",
                                "--quota", str(path)])
    assert again.exit_code == 0, again.output


def test_prune_counts_only_real_comments() -> None:
    from omniladder.sources.merge import toml_comment_lines

    assert toml_comment_lines('a = "#x"\nb = \'#\'\nc = """\n# in a string\n"""\n') == 0
    assert toml_comment_lines('a = "\\"#" # one\n#two\n# three') == 3


def test_prune_never_replaces_a_read_only_quota_file(tmp_path: Path) -> None:
    path = _quota(tmp_path)
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        result = runner.invoke(app, ["quota", "prune", "--connection", "a", "--before",
                                     "2026-11-29T11:00:00Z", "--quota", str(path)])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line == (f"omniladder: error: {path}: is read-only; the prune would replace it "
                        "(make it writable first); nothing written")
        assert path.read_bytes() == before
        assert path.stat().st_mode & 0o777 == 0o444
    finally:
        path.chmod(0o644)


def test_prune_summaries_carry_the_prefix_of_every_note(tmp_path: Path) -> None:
    path = _quota(tmp_path)
    args = ["quota", "prune", "--connection", "a", "--before", "2026-11-29T11:00:00Z",
            "--quota", str(path)]
    for extra in (["--dry-run"], [], []):  # would remove; removed; nothing matched
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"omniladder: {path}: "), line


@pytest.mark.parametrize(("args", "message"), [
    (["--connection", "aa", "--before", "2026-11-29T11:00:00Z"],
     "holds no reading of connection 'aa'"),
    ([], "say which readings go"),
    (["--before", "yesterday"], "not an RFC 3339 timestamp"),
])
def test_prune_refuses_bad_requests_with_exit_2(tmp_path: Path, args: list[str],
                                                message: str) -> None:
    path = _quota(tmp_path)
    before = path.read_bytes()
    result = runner.invoke(app, ["quota", "prune", *args, "--quota", str(path)])
    assert result.exit_code == 2
    assert message in result.output
    assert path.read_bytes() == before


# --- a spend ledger whose total would overflow -----------------------------------------------


def test_a_ledger_that_would_sum_past_a_float_is_exit_2_naming_the_event(
        tmp_path: Path) -> None:
    """Each cost finite, their sum not: refused at the first event past the bound a traffic
    ledger's events are held to (docs/traffic.md), which keeps every sum finite."""
    config = _write(tmp_path, [reading("c", window("5h", 50, at(hours=2)))])
    (tmp_path / "spend.json").write_text(json.dumps({"events": [
        {"at": at(hours=-1), "rung": "cheap", "cost_usd": 2.5},
        {"at": at(hours=-1), "rung": "cheap", "cost_usd": 1e308},
        {"at": at(hours=-1), "rung": "cheap", "cost_usd": 1e308}]}), encoding="utf-8")
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", str(config),
                                 "--spend", str(tmp_path / "spend.json")])
    assert result.exit_code == 2
    assert ("spend.json: events[1].cost_usd: must be at most 1,000,000 US dollars an event"
            in result.output)
    assert "Traceback" not in result.output
