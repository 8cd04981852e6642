"""`omniladder audit traffic` on the command line: the worked example of docs/traffic.md,
the formats and their schema, and the exits of SPEC §7.6."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniladder import timefmt
from omniladder.cli import app
from tests.conftest import EXAMPLES, ROOT
from tests.test_init_schema import _valid

runner = CliRunner()
DOC = ROOT / "docs" / "traffic.md"


def audit(*args: str, exit_code: int | None = None) -> Any:
    result = runner.invoke(app, ["audit", "traffic", *args])
    if exit_code is not None:
        assert result.exit_code == exit_code, result.output
    return result


@pytest.fixture
def in_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)


def worked_example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split('<a id="worked-example"></a>', 1)[1]
    found = re.search(r"```text\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


@pytest.mark.usefixtures("in_examples")
def test_the_worked_example_is_what_the_command_prints() -> None:
    result = audit("auto/thrifty", "--traffic", "traffic.jsonl", exit_code=1)
    assert result.stdout == worked_example()
    assert "exit 1: $3.00 paid on cheap/premium while the subscription rung had quota" \
        in result.stderr


@pytest.mark.usefixtures("in_examples")
def test_the_example_json_fits_its_schema_and_carries_the_figures() -> None:
    schema = json.loads((ROOT / "schemas" / "audit-traffic.schema.json").read_text())
    result = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--json", exit_code=1)
    document = json.loads(result.stdout)
    assert _valid(document, schema, schema)
    assert document["counts"] == {"unknown-connection": 1, "off-plan-billed": 0,
                                  "served-excluded": 2, "early-paid": 5, "above-head": 1,
                                  "on-plan": 8}
    assert document["leak_usd"] == pytest.approx(3.0, abs=0.01)
    assert document["expired_unused"] == [{
        "connection": "claude-pro-personal", "window": "5h", "models": None,
        "reset_at": "2026-11-29T09:30:00Z", "percent": 30.0,
        "checked_at": "2026-11-29T09:00:00Z"}]
    assert document["events"]["duplicates"] == 1
    assert document["unattributed"] == [{"connection": "anthropic-old-key", "events": 1}]
    assert [leak["cost_usd"] for leak in document["top_leaks"]] == sorted(
        (leak["cost_usd"] for leak in document["top_leaks"]), reverse=True)
    assert set(schema["required"]) == set(document)


@pytest.mark.usefixtures("in_examples")
def test_markdown_and_openmetrics_carry_the_same_figures() -> None:
    markdown = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--format", "markdown",
                     exit_code=1).stdout
    assert markdown.startswith("**$3.00 paid on cheap/premium")
    assert "| `early-paid` | 5 | $3.00 |" in markdown
    metrics = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--format", "openmetrics",
                    exit_code=1).stdout
    assert 'omniladder_traffic_events{auto_id="auto/thrifty",finding="early-paid"} 5\n' \
        in metrics
    assert 'omniladder_traffic_passed{auto_id="auto/thrifty"} 0\n' in metrics
    assert metrics.endswith("# EOF\n")
    for line in metrics.splitlines():
        if line.startswith("omniladder_"):
            assert re.fullmatch(r'omniladder_traffic_[a-z_]+\{[^}]*\} \S+', line), line


@pytest.mark.usefixtures("in_examples")
def test_the_allowance_and_the_span() -> None:
    audit("auto/thrifty", "--traffic", "traffic.jsonl", "--max-leak-usd", "5", exit_code=0)
    morning = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--to",
                    "2026-11-29T09:50:00Z", "--json", exit_code=0)
    document = json.loads(morning.stdout)
    assert document["to"] == "2026-11-29T09:50:00Z"
    assert document["counts"]["early-paid"] == 0


@pytest.mark.usefixtures("in_examples")
@pytest.mark.parametrize(("args", "words"), [
    (["--from", "2026-11-29T12:00:00Z", "--to", "2026-11-29T09:00:00Z"], "--from"),
    (["--from", "2026-11-29T12:00:00"], "no offset"),
    (["--max-leak-usd", "-1"], "--max-leak-usd"),
    (["--max-leak-usd", "nan"], "--max-leak-usd"),
])
def test_usage_errors_are_exit_2(args: list[str], words: str) -> None:
    result = audit("auto/thrifty", "--traffic", "traffic.jsonl", *args, exit_code=2)
    assert words in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("in_examples")
def test_the_span_takes_now_as_forecast_and_simulate_do() -> None:
    """--from and --to read the instant words every span option reads (the shared
    span_instants): `now` is the clock, here after the whole ledger."""
    whole = json.loads(audit("auto/thrifty", "--traffic", "traffic.jsonl", "--json").stdout)
    to_now = json.loads(audit("auto/thrifty", "--traffic", "traffic.jsonl", "--to", "now",
                              "--json").stdout)
    assert to_now["counts"] == whole["counts"]
    assert to_now["leak_usd"] == whole["leak_usd"]
    assert to_now["to"] > whole["to"]
    from_now = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--from", "now",
                     exit_code=2)
    assert "is after the ledger's last event" in from_now.stderr
    both = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--from", "now", "--to", "now",
                 "--json", exit_code=0)
    assert sum(json.loads(both.stdout)["counts"].values()) == 0


@pytest.mark.usefixtures("in_examples")
@pytest.mark.parametrize(("args", "words"), [
    (["--from", "2026-11-29T13:00:00+01:00"],
     "--from 2026-11-29T13:00:00+01:00 is after the ledger's last event "
     "(2026-11-29T11:59:30Z)"),
    (["--to", "2026-11-29T09:00:00Z"],
     "--to 2026-11-29T09:00:00Z is before the ledger's first event (2026-11-29T09:05:12Z)"),
])
def test_a_span_past_the_ledger_on_one_side_is_a_usage_error(args: list[str],
                                                              words: str) -> None:
    """--from after the ledger's last event with no --to would end the span before it
    starts: no silent audit of no events, but the two instants named (likewise --to before
    its first); with both given, a span outside the ledger is audited: nothing served."""
    result = audit("auto/thrifty", "--traffic", "traffic.jsonl", *args, exit_code=2)
    assert words in result.stderr
    assert result.stdout == ""
    both = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--from",
                 "2026-11-29T13:00:00Z", "--to", "2026-11-29T14:00:00Z", "--json", exit_code=0)
    document = json.loads(both.stdout)
    assert sum(document["counts"].values()) == 0
    assert document["from"] == "2026-11-29T13:00:00Z"


def test_a_bad_line_is_exit_2_naming_file_line_and_field(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_text('{"at": "2026-11-29T11:00:00Z", "connection": "a", "model": "m"}\n'
                      '{"at": "2026-11-29T11:00:00Z", "connection": "a", "model": "m", '
                      '"status": "done"}\n')
    result = audit("auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"),
                   "--traffic", str(ledger), exit_code=2)
    assert result.stdout == ""
    assert re.search(r"traffic\.jsonl:2: status: must be served or failed", result.stderr)


def test_no_ledger_is_a_usage_error(tmp_path: Path) -> None:
    result = audit("auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"),
                   exit_code=2)
    assert "--traffic" in result.stderr


def test_the_ledger_is_never_modified(tmp_path: Path) -> None:
    ledger = tmp_path / "traffic.jsonl"
    original = (EXAMPLES / "traffic.jsonl").read_bytes()
    ledger.write_bytes(original)
    audit("auto/thrifty", "--config", str(EXAMPLES / "omniladder.toml"), "--traffic",
          str(ledger), exit_code=1)
    assert ledger.read_bytes() == original


# --- quota that expired unused: the figure the plan used (§7.5, R6.4) ---------------------


def held_window_fleet(tmp_path: Path) -> Path:
    """One Claude login whose 5h window read 1.5% (below the 2% exit cutoff), then 4% before
    the same 11:00Z reset (a regain before reset that R6.4 holds at 1.5%), then a new
    cycle; a ledger of two events spanning the reset."""
    window = {"name": "5h", "reset_at": "2026-11-30T11:00:00Z"}
    readings = [
        {"connection": "c", "checked_at": "2026-11-30T09:00:00Z",
         "windows": [{**window, "remaining_percent": 1.5}]},
        {"connection": "c", "checked_at": "2026-11-30T10:00:00Z",
         "windows": [{**window, "remaining_percent": 4}]},
        {"connection": "c", "checked_at": "2026-11-30T11:30:00Z",
         "windows": [{"name": "5h", "remaining_percent": 100,
                      "reset_at": "2026-11-30T16:00:00Z"}]}]
    (tmp_path / "connections.toml").write_text(
        '[[connections]]\nid = "c"\nprovider = "claude"\nauth_type = "oauth"\n'
        'models = ["claude-sonnet-4-5"]\n', encoding="utf-8")
    (tmp_path / "quota.json").write_text(json.dumps({"readings": readings}), encoding="utf-8")
    (tmp_path / "traffic.jsonl").write_text("".join(
        json.dumps({"at": when, "connection": "c", "model": "claude-sonnet-4-5",
                    "requested": "auto/subscription"}) + "\n"
        for when in ("2026-11-30T08:00:00Z", "2026-11-30T12:00:00Z")), encoding="utf-8")
    config = tmp_path / "omniladder.toml"
    config.write_text('[inputs]\nconnections = "connections.toml"\nquota = "quota.json"\n'
                      'traffic = "traffic.jsonl"\n', encoding="utf-8")
    return config


def test_expired_unused_is_the_figure_the_plan_held(tmp_path: Path) -> None:
    """The plan held the window at 1.5% until its reset (R6.4: `plan --now` at 10:30Z
    excludes c, its 5h window at 1.5%), so 1.5% expired unused, not the 4% the last reading
    showed."""
    config = str(held_window_fleet(tmp_path))
    plan = json.loads(runner.invoke(app, ["plan", "auto/subscription", "--config", config,
                                          "--now", "2026-11-30T10:30:00Z", "--json"]).stdout)
    [excluded] = [x for x in plan["excluded"] if x["connection_id"] == "c"]
    assert excluded["detail"].startswith("5h window at 1.5%")
    document = json.loads(audit("auto/subscription", "--config", config, "--json").stdout)
    assert document["expired_unused"] == [{
        "connection": "c", "window": "5h", "models": None, "reset_at": "2026-11-30T11:00:00Z",
        "percent": 1.5, "checked_at": "2026-11-30T10:00:00Z"}]
    verdict = audit("auto/subscription", "--config", config).stdout.splitlines()[0]
    assert verdict.endswith("; 1.5% of c's 5h window expired unused")


# --- the verdict's money, visibly true --------------------------------------------------------


def dollars(line: str) -> list[float]:
    return [float(figure.replace(",", "")) for figure in re.findall(r"\$([\d,]+\.\d+)", line)]


@pytest.mark.usefixtures("in_examples")
@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_leak_just_over_the_allowance_shows_the_decimals_that_tell_them_apart(
        fmt: str) -> None:
    """The example leaks $3.0025: against --max-leak-usd 3.00 the failed line shows the
    leak with the decimals that make it more than the allowance, never "$3.00 is more than
    $3.00"."""
    result = audit("auto/thrifty", "--traffic", "traffic.jsonl", "--max-leak-usd", "3.00",
                   "--format", fmt, exit_code=1)
    last = result.stdout.splitlines()[-1].strip("*")
    assert last == "failed: leak $3.002 is more than $3.00"
    leak, allowance = dollars(last)
    assert leak > allowance


def one_leak(tmp_path: Path, cost: float) -> str:
    """The example's costliest early-paid event (premium gpt-5.1 while the subscription rung
    had quota), alone in a ledger, with the cost given."""
    line = next(json.loads(text) for text in (EXAMPLES / "traffic.jsonl").read_text(
        encoding="utf-8").splitlines() if '"req-203"' in text)
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_text(json.dumps({**line, "cost_usd": cost}) + "\n", encoding="utf-8")
    return str(ledger)


@pytest.mark.usefixtures("in_examples")
def test_a_sub_cent_leak_is_shown_by_its_digits_not_as_nothing(tmp_path: Path) -> None:
    result = audit("auto/thrifty", "--traffic", one_leak(tmp_path, 0.0036), exit_code=1)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("$0.0036 paid on premium while the subscription rung had quota")
    assert lines[-1] == "failed: leak $0.0036 is more than $0.00"
    assert "$0.00 paid" not in result.stdout + result.stderr
    within = audit("auto/thrifty", "--traffic", one_leak(tmp_path, 0.0036), "--max-leak-usd",
                   "0.004", exit_code=0)
    assert within.stdout.splitlines()[-1] == "passed: leak $0.0036 within $0.004"


@pytest.mark.usefixtures("in_examples")
def test_a_sum_of_leaks_is_held_to_the_allowance_as_printed(tmp_path: Path) -> None:
    """$0.10 and $0.20 of leak sum to 0.30000000000000004 in floating point: within an
    allowance of $0.30, as the JSON's leak_usd (0.3) and the printed $0.30 say."""
    first = json.loads(Path(one_leak(tmp_path, 0.1)).read_text(encoding="utf-8"))
    ledger = tmp_path / "two.jsonl"
    ledger.write_text("".join(json.dumps(event) + "\n" for event in (
        first, {**first, "cost_usd": 0.2, "request_id": "req-203b"})), encoding="utf-8")
    result = audit("auto/thrifty", "--traffic", str(ledger), "--max-leak-usd", "0.3",
                   exit_code=0)
    assert result.stdout.splitlines()[-1] == "passed: leak $0.30 within $0.30"


def test_the_gate_words_a_leak_just_over_its_allowance_visibly(tmp_path: Path) -> None:
    failed = check(policy(tmp_path, f'max_leak_usd = 3.0\ntraffic = "{LEDGER}"\n'), 1)
    [result] = json.loads(failed.stdout)["expectations"]
    [judged] = result["checks"]
    assert judged["expected"].startswith("at most $3.00 of leak")
    assert judged["actual"].startswith("$3.002 leaked over 17 audited events")


# --- the check gate ------------------------------------------------------------------------


def policy(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(f'config = "{EXAMPLES / "omniladder.toml"}"\n'
                    '[[expect]]\nname = "traffic"\nauto_id = "auto/thrifty"\n' + body)
    return path


def check(path: Path, exit_code: int) -> Any:
    result = runner.invoke(app, ["check", str(path), "--json"])
    assert result.exit_code == exit_code, result.output
    return result


LEDGER = str(EXAMPLES / "traffic.jsonl")


def test_the_gate_fails_on_the_leak_and_passes_within_it(tmp_path: Path) -> None:
    failed = check(policy(tmp_path, f'max_leak_usd = 2.5\ntraffic = "{LEDGER}"\n'), 1)
    [result] = json.loads(failed.stdout)["expectations"]
    [judged] = result["checks"]
    assert judged["check"] == "max_leak_usd"
    assert judged["actual"].startswith("$3.00 leaked over 17 audited events")
    check(policy(tmp_path, f'max_leak_usd = 3.5\ntraffic = "{LEDGER}"\n'), 0)


def test_outputs_never_replace_a_traffic_ledger(tmp_path: Path) -> None:
    """The ledger a policy or --traffic names is an input of the run: check's --junit and
    simulate's --svg refuse it (exit 2) and leave it as it was."""
    ledger = tmp_path / "traffic.jsonl"
    ledger.write_bytes((EXAMPLES / "traffic.jsonl").read_bytes())
    before = ledger.read_bytes()
    result = runner.invoke(app, ["check", str(policy(tmp_path, 'max_leak_usd = 9\n'
                                                     'traffic = "traffic.jsonl"\n')),
                                 "--junit", str(ledger)])
    assert result.exit_code == 2, result.output
    assert "traffic ledger" in result.stderr
    result = runner.invoke(app, ["simulate", "auto/thrifty", "--config",
                                 str(EXAMPLES / "omniladder.toml"), "--from",
                                 "2026-11-29T11:00:00Z", "--to", "2026-11-29T11:30:00Z",
                                 "--traffic", str(ledger), "--svg", str(ledger)])
    assert result.exit_code == 2, result.output
    assert ledger.read_bytes() == before


def test_the_gate_looks_back_over_its_span(tmp_path: Path) -> None:
    """From the expectation's instant (11:00) back 2h: only the 09:58 leak ($0.22) counts."""
    body = (f'now = 2026-11-29T10:00:00Z\nmax_leak_usd = 0.5\ntraffic = "{LEDGER}"\n'
            'traffic_span = "2h"\n')
    check(policy(tmp_path, body), 0)
    check(policy(tmp_path, body.replace("0.5", "0.2")), 1)


@pytest.mark.parametrize(("body", "words"), [
    ('max_pool = 30\ntraffic = "x.jsonl"\n', "traffic is read only by max_leak_usd"),
    ("max_leak_usd = 1\n", "needs a traffic ledger"),
    ("max_leak_usd = -1\n", "max_leak_usd"),
])
def test_the_gate_refuses_what_it_cannot_judge(tmp_path: Path, body: str, words: str) -> None:
    result = check(policy(tmp_path, body), 2)
    assert words in result.stderr


# --- why --traffic --------------------------------------------------------------------------


@pytest.mark.usefixtures("in_examples")
def test_why_says_what_a_connection_served_and_what_the_plan_held() -> None:
    result = runner.invoke(app, ["why", "claude-pro-personal", "auto/thrifty", "--traffic",
                                 "traffic.jsonl"])
    assert result.exit_code == 0, result.output
    assert ("traffic under auto/thrifty (traffic.jsonl): claude-pro-personal served 1 "
            "request(s) from 2026-11-29T10:41:17Z to 2026-11-29T10:41:17Z: "
            "served-excluded 1") in result.stdout
    assert "the plan in force held it: quota-below-cutoff 1" in result.stdout
    assert "1 failed attempt(s)" in result.stdout
    document = json.loads(runner.invoke(app, [
        "why", "claude-api", "--traffic", "traffic.jsonl", "--json"]).stdout)
    assert [(t["auto_id"], t["counts"]["off-plan-billed"], t["counts"]["early-paid"],
             t["held"]) for t in document["traffic"]] == [
        ("auto/subscription", 1, 0, {"billing-uncurated": 1}),
        ("auto/thrifty", 0, 2, {"in the pool on premium": 2})]


@pytest.mark.usefixtures("in_examples")
def test_why_without_traffic_keeps_its_document() -> None:
    document = json.loads(runner.invoke(app, ["why", "claude-api", "--json"]).stdout)
    assert "traffic" not in document


# --- simulate --traffic ---------------------------------------------------------------------


@pytest.mark.usefixtures("in_examples")
def test_simulate_marks_the_leak_events(tmp_path: Path) -> None:
    picture = tmp_path / "day.svg"
    args = ["simulate", "auto/thrifty", "--from", "2026-11-29T09:00:00Z", "--to",
            "2026-11-29T12:00:00Z", "--traffic", "traffic.jsonl"]
    result = runner.invoke(app, [*args, "--svg", str(picture)])
    assert result.exit_code == 0, result.output
    assert "Leak events (traffic.jsonl): $3.01 in 6 event(s) from 2026-11-29T09:00:00Z to " \
        "2026-11-29T12:00:00Z, the events that name no requested id included" in result.stdout
    assert ("2026-11-29T11:12:14Z openai-key gpt-5.1 early-paid $1.93: the pool's head rung "
            "was subscription, led by claude-max-work") in result.stdout
    svg = picture.read_text()
    assert svg.count(">$1.93 early-paid openai-key</text>") == 1
    document = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert [e["cost_usd"] for e in document["traffic"]["events"]][3] == 1.925
    plain = runner.invoke(app, args[:6])
    assert "Leak events" not in plain.stdout


@pytest.mark.usefixtures("in_examples")
def test_simulate_leak_figures_are_the_audit_it_names() -> None:
    """simulate audits its own span with the events that name no id; it says so, names the
    audit traffic command that prints the same figures, and that command does, to the
    cent and the sub-cent: the $0.0036 event is shown as such, not as $0.00."""
    import shlex

    result = runner.invoke(app, ["simulate", "auto/thrifty", "--from", "2026-11-29T09:00:00Z",
                                 "--to", "2026-11-29T12:00:00Z", "--traffic", "traffic.jsonl"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    head = next(line for line in lines if line.startswith("Leak events"))
    command = shlex.split(re.findall(r"`([^`]+)`", head)[-1])
    assert command[:3] == ["omniladder", "audit", "traffic"]
    assert "--all-requests" in command
    audited = runner.invoke(app, [*command[1:], "--json"])
    document = json.loads(audited.stdout)
    leak = re.search(r"\): (\$[\d.,]+) in (\d+) event", head)
    assert leak is not None
    assert leak.group(1) == timefmt.usd_exact(document["leak_usd"])
    assert int(leak.group(2)) == document["counts"]["early-paid"] + document["counts"][
        "off-plan-billed"]
    audit_view = runner.invoke(app, command[1:]).stdout.splitlines()[0]
    assert audit_view.startswith(leak.group(1) + " paid on cheap/premium")
    assert any(line.startswith("  2026-11-29T11:45:00Z deepseek-key deepseek-chat early-paid "
                               "$0.0036:") for line in lines)
