"""Promises at the process edges (docs/contract.md#edges, SPEC §4.3: exit 2 is "the
question could not be answered", with one clear message naming the file and the field):

* an output option never replaces an input of the same run, nor another output;
* a closed stdout, stdout on a full disk and a closed stderr keep the exit codes honest;
* a lone surrogate in any JSON input, and a control character in any identifier, are
  refused at load; control characters in free text and in saved plans are escaped in every
  human and markdown view;
* only regular files (and ``-`` where a command takes it) are read, up to a cap.

tests/test_fuzz.py runs the same classes over every command path; these are the cases
operators reported, one test each.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
from typer.testing import CliRunner

from omniladder.cli import app
from omniladder.errors import InputError
from omniladder.inputs import catalogs, credentials
from omniladder.inputs import files as input_files
from tests.conftest import EXAMPLES, ROOT
from tests.errors import one_error

runner = CliRunner()
SOURCES = ROOT / "tests" / "fixtures" / "sources"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
EVIL_ID = "evil\u001b[2J\u001b]0;pwned\u0007"


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the examples as the working directory."""
    for item in EXAMPLES.iterdir():
        if item.is_file():
            shutil.copy(item, tmp_path / item.name)
    shutil.copytree(EXAMPLES / "ci", tmp_path / "ci")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def digests(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and not path.is_symlink()}


# --- 1. an output never replaces an input --------------------------------------------------

SIMULATE = ["simulate", "auto/thrifty", "--config", "omniladder.toml", "--from",
            "2026-11-29T11:00:00Z", "--to", "2026-11-29T12:00:00Z"]
FORECAST = ["forecast", "auto/thrifty", "--config", "omniladder.toml", "--now",
            "2026-11-29T11:00:00Z", "--horizon", "1h"]


@pytest.mark.parametrize(("args", "option", "target", "what"), [
    (["plan", "auto/thrifty", "--config", "omniladder.toml"], "--out", "quota.json",
     "the quota file"),
    (["plan", "auto/thrifty", "--config", "omniladder.toml"], "--out", "omniladder.toml",
     "the settings file"),
    (["plan", "auto/thrifty", "--config", "omniladder.toml"], "--out", "spend.json",
     "the spend ledger"),
    (["check", "policy.toml"], "--junit", "connections.toml", "the connections file"),
    (["check", "policy.toml"], "--junit", "policy.toml", "the policy"),
    (["check", "policy-gateway.toml"], "--junit", "omniroute-candidates.json",
     "a gateway candidate list the policy names"),
    (SIMULATE, "--svg", "quota.json", "the quota file"),
    (FORECAST, "--svg", "spend.json", "the spend ledger"),
    (["catalog", "check", "--config", "omniladder.toml"], "--write-baseline",
     "billing-overlay.toml", "a billing catalog"),
], ids=["plan-out-quota", "plan-out-settings", "plan-out-spend", "check-junit-connections",
        "check-junit-policy", "check-junit-candidates", "simulate-svg-quota",
        "forecast-svg-spend",
        "catalog-baseline-overlay"])
def test_an_output_onto_an_input_is_exit_2_before_anything_is_written(
        fleet: Path, args: list[str], option: str, target: str, what: str) -> None:
    """Each of these exited 0 having replaced the input (the quota history, the fleet)."""
    before = digests(fleet)
    result = runner.invoke(app, [*args, option, target])
    one_error(result, f"{target}: {option}: this run reads it as {what};",
              "an output never replaces an input")
    assert digests(fleet) == before


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_an_output_reaching_an_input_through_a_link_is_refused(fleet: Path, link: str) -> None:
    alias = fleet / "alias.json"
    if link == "symlink":
        alias.symlink_to("quota.json")
    else:
        os.link(fleet / "quota.json", alias)
    before = digests(fleet)
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                 "--out", "alias.json"])
    one_error(result, "alias.json: --out: this run reads it as the quota file (quota.json, "
              "the same file through a link)")
    assert digests(fleet) == before


def test_an_output_onto_a_shipped_catalog_is_refused(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = fleet / "shipped"
    shutil.copytree(catalogs.shipped_catalog_dir(), shipped)
    monkeypatch.setattr(catalogs, "shipped_catalog_dir", lambda: shipped)
    before = digests(fleet)
    for name, what in (("models.toml", "a model catalog"),
                       ("connection-billing.toml", "a billing catalog")):
        result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                     "--out", f"shipped/{name}"])
        one_error(result, f"shipped/{name}: --out: this run reads it as {what}")
    result = runner.invoke(app, ["catalog", "check", "--write-baseline",
                                 "shipped/quota-windows.toml"])
    one_error(result, "this run reads it as a window-scope catalog")
    assert digests(fleet) == before


def test_a_new_output_file_and_the_documented_rewrites_still_work(fleet: Path) -> None:
    """The other side of the boundary: a file no input is, a baseline rewritten in place
    (docs/sources.md#baseline) and a quota file an import merges into."""
    assert runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                               "--out", "saved.json"]).exit_code == 0
    assert json.loads((fleet / "saved.json").read_text())["auto_id"] == "auto/thrifty"
    first = runner.invoke(app, ["catalog", "check", "--config", "omniladder.toml",
                                "--write-baseline", "accepted.toml"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["catalog", "check", "--config", "omniladder.toml", "--baseline",
                                "accepted.toml", "--write-baseline", "accepted.toml"])
    assert again.exit_code == 0, again.output
    merged = runner.invoke(app, ["import", "claude-usage", str(SOURCES / "claude" / "usage.json"),
                                 "--connection", "claude-max-work", "--config",
                                 "omniladder.toml", "--at", "2026-11-29T11:59:30Z"])
    assert merged.exit_code == 0, merged.output
    assert merged.stdout.strip() == "quota.json"


@pytest.mark.parametrize(("quota", "what"), [
    ("usage.json", "a FILE argument"),
    ("connections.toml", "the connections file"),
    ("omniladder.toml", "the settings file"),
])
def test_an_import_never_merges_into_a_file_it_reads(fleet: Path, quota: str,
                                                    what: str) -> None:
    shutil.copy(SOURCES / "claude" / "usage.json", fleet / "usage.json")
    before = digests(fleet)
    result = runner.invoke(app, ["import", "claude-usage", "usage.json", "--connection",
                                 "claude-max-work", "--config", "omniladder.toml", "--quota",
                                 quota])
    one_error(result, f"{quota}: --quota: this run reads it as {what}")
    assert digests(fleet) == before


def test_an_export_never_writes_over_its_map_and_may_replace_what_it_compared(
        fleet: Path) -> None:
    """--out onto --map is refused; --current F --out F is the documented cron update
    (docs/gateways.md): compared with the old file, then replaced."""
    export = ["export", "litellm", "auto/thrifty", "--config", "omniladder.toml", "--map",
              "litellm-map.toml"]
    before = digests(fleet)
    one_error(runner.invoke(app, [*export, "--out", "litellm-map.toml"]),
              "litellm-map.toml: --out: this run reads it as the route map of --map")
    one_error(runner.invoke(app, [*export, "--out", "spend.json"]),
              "spend.json: --out: this run reads it as the spend ledger")
    assert digests(fleet) == before
    assert runner.invoke(app, [*export, "--out", "deployed.yaml"]).exit_code == 0
    again = runner.invoke(app, [*export, "--current", "deployed.yaml", "--out",
                                "deployed.yaml"])
    assert again.exit_code == 0, again.output


def test_quota_prune_never_rewrites_the_settings_file(fleet: Path) -> None:
    settings = (fleet / "omniladder.toml").read_text()
    (fleet / "omniladder.toml").write_text(
        settings.replace('quota = "quota.json"', 'quota = "omniladder.toml"'))
    before = digests(fleet)
    one_error(runner.invoke(app, ["quota", "prune", "--before", "2026-11-29T00:00:00Z"]),
              "omniladder.toml: --quota: this run reads it as the settings file")
    assert digests(fleet) == before


def test_a_codex_rollout_is_never_the_quota_file(fleet: Path) -> None:
    logs = fleet / "logs"
    shutil.copytree(SOURCES / "codex" / "sessions", logs)
    rollout = next(logs.rglob("rollout-*.jsonl"))
    os.link(rollout, fleet / "q.json")
    before = digests(fleet)
    result = runner.invoke(app, ["import", "codex-sessions", "logs", "--connection",
                                 "codex-plus", "--config", "omniladder.toml", "--quota", "q.json"])
    one_error(result, "q.json: --quota: this run reads it as a Codex rollout")
    assert digests(fleet) == before


def test_import_omniroute_outputs_never_meet_an_input_or_each_other(fleet: Path) -> None:
    from tests.omniroute_db import build_db

    db = build_db(fleet / "omniroute.db")
    out = fleet / "out"
    out.mkdir()
    os.link(db, out / "quota.json")
    before = digests(fleet)
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", "out", "--force"])
    one_error(result, "out/quota.json: --out: this run reads it as the OmniRoute database "
              "(omniroute.db, the same file through a link)")
    (out / "quota.json").unlink()
    (out / "quota.json").symlink_to("connections.toml")
    (out / "connections.toml").write_text("# an earlier import\n")
    before = digests(fleet)
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", "out", "--force"])
    one_error(result, "out/quota.json: --out: is the same file as --out out/connections.toml")
    assert digests(fleet) == before


# --- 2. closed and failing standard streams ------------------------------------------------


def _python_m(*args: str, close: tuple[int, ...] = (),
              stdout: int | IO[Any] | None = subprocess.PIPE,
              cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``python -m omniladder`` as a shell runs it, with ``close`` descriptors closed first
    (``>&-``, ``2>&-``): Python then starts with that stream set to None."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "omniladder", *args], env=env, cwd=cwd,
                          stdout=stdout if 1 not in close else None,
                          stderr=subprocess.PIPE if 2 not in close else None,
                          preexec_fn=closing, text=True, check=False)


CONFIG = str(EXAMPLES / "omniladder.toml")
EMPTY_POOL = ["plan", "auto/subscription", "--config", CONFIG, "--no-shipped-catalogs",
              "--fail-on-empty"]


def test_a_closed_stdout_is_a_reader_gone_not_a_traceback() -> None:
    """`omniladder ids >&-` was a traceback and exit 120."""
    for args, code in ((["ids"], 0), (["plan", "auto/thrifty", "--config", CONFIG], 0),
                       (EMPTY_POOL, 1), (["plan", "auto/nope"], 2)):
        done = _python_m(*args, close=(1,))
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
        assert ("error" in done.stderr) == (code == 2)


def test_a_closed_stdout_still_writes_the_saved_plan(tmp_path: Path) -> None:
    done = _python_m("plan", "auto/thrifty", "--config", CONFIG, "--out",
                     str(tmp_path / "p.json"), close=(1,))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "p.json").read_text())["auto_id"] == "auto/thrifty"


def test_stdout_on_a_full_disk_is_one_error_line_and_exit_2() -> None:
    """`omniladder ids > /dev/full` was a traceback and exit 1."""
    with open("/dev/full", "w") as full:
        done = _python_m("ids", stdout=full)
    assert done.returncode == 2
    assert done.stderr == "omniladder: error: standard output: No space left on device\n"


def test_a_full_stdout_outranks_the_answer_no(tmp_path: Path) -> None:
    """The answer never arrived: exit 2, not the 1 the answer would have been; the saved
    plan is still written whole."""
    with open("/dev/full", "w") as full:
        done = _python_m(*EMPTY_POOL, "--json", "--out", str(tmp_path / "p.json"),
                         stdout=full)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("omniladder: error: standard output: No space "
                                            "left on device")
    assert json.loads((tmp_path / "p.json").read_text())["pool"] == []


@pytest.mark.parametrize(("args", "code"), [
    (["--version"], 0),
    (["plan", "auto/thrifty", "--config", CONFIG], 0),
    (EMPTY_POOL, 1),
    (["plan", "auto/nope"], 2),
    (["no-such-command"], 2),
], ids=["version", "plan", "answer-no", "usage-error", "unknown-command"])
def test_a_closed_stderr_keeps_every_exit_code(args: list[str], code: int) -> None:
    """`2>&-` turned every exit code into 1, --version and good plans included."""
    done = _python_m(*args, close=(2,), stdout=subprocess.DEVNULL)
    assert done.returncode == code


def test_the_exit_status_needs_no_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ends the process reads SystemExit as the interpreter does, stderr or not."""
    from omniladder.commands import lifetime

    monkeypatch.setattr(sys, "stderr", None)
    assert lifetime.exit_status("stopped") == 1
    assert lifetime.exit_status(2) == 2


def test_a_closed_stdin_is_empty_input() -> None:
    done = _python_m("audit", "omniroute", "-", "--config", CONFIG, close=(0,))
    assert done.returncode == 2
    assert done.stderr.startswith("omniladder: error: <stdin>:1: invalid JSON")


# --- 3. lone surrogates in JSON ------------------------------------------------------------

SURROGATE = "\\ud800"  # as JSON text: a \u escape of half a surrogate pair


def _json_with(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("make", "args", "fragments"), [
    (lambda f: (f / "quota.json").write_text(_json_with(
        (f / "quota.json").read_text(), '"claude-max-work"', f'"claude-max{SURROGATE}"')),
     ["plan", "auto/thrifty", "--config", "omniladder.toml"],
     ("quota.json: readings[0].connection: contains a lone surrogate (\\ud800)",)),
    (lambda f: (f / "spend.json").write_text(_json_with(
        (f / "spend.json").read_text(), '"gpt-5-mini"', f'"gpt{SURROGATE}"')),
     ["plan", "auto/thrifty", "--config", "omniladder.toml"],
     ("spend.json: events[2].model: contains a lone surrogate (\\ud800)",)),
    (lambda f: (f / "p.json").write_text(_json_with(
        (f / "ci" / "plan-thrifty.json").read_text(), '"summary": "',
        f'"summary": "{SURROGATE}')),
     ["show", "p.json"], ("p.json: summary: contains a lone surrogate (\\ud800)",)),
    (lambda f: (f / "p.json").write_text(_json_with(
        (f / "ci" / "plan-thrifty.json").read_text(), '"summary": "',
        f'"summary": "{SURROGATE}')),
     ["diff", "ci/plan-thrifty.json", "p.json"], ("p.json: summary: contains a lone",)),
    (lambda f: (f / "p.json").write_text(_json_with(
        (f / "ci" / "plan-thrifty.json").read_text(), '"summary": "',
        f'"summary": "{SURROGATE}')),
     ["plan", "auto/thrifty", "--config", "omniladder.toml", "--compare", "p.json"],
     ("p.json: summary: contains a lone",)),
    (lambda f: (f / "c.json").write_text(_json_with(
        (f / "omniroute-candidates.json").read_text(), '"claude-max-work"',
        f'"x{SURROGATE}"')),
     ["audit", "omniroute", "c.json", "--config", "omniladder.toml"],
     ("c.json: candidates[0].connectionId: contains a lone surrogate",)),
    (lambda f: (f / "u.json").write_text(_json_with(
        (SOURCES / "claude" / "usage.json").read_text(), '"resets_at": "',
        f'"resets_at": "{SURROGATE}')),
     ["import", "claude-usage", "u.json", "--connection", "claude-max-work", "--config",
      "omniladder.toml", "--quota", "new.json"], ("u.json: five_hour.resets_at: contains",)),
    (lambda f: (f / "policy.json").write_text(json.dumps(
        {"config": "omniladder.toml", "expect": [{"name": "n", "auto_id": "auto/thrifty",
                                                  "min_pool": 1}]}).replace(
        '"n"', f'"n{SURROGATE}"')),
     ["check", "policy.json"], ("policy.json: expect[0].name: contains a lone surrogate",)),
    (lambda f: (f / "rollout-1.jsonl").write_text(json.dumps(
        {"timestamp": "2026-11-29T11:00:00Z", "type": "event_msg", "payload": {
            "type": "token_count", "rate_limits": {"limit_id": "x"}}}).replace(
        '"x"', f'"x{SURROGATE}"') + "\n"),
     ["import", "codex-sessions", "rollout-1.jsonl", "--connection", "codex-plus", "--config",
      "omniladder.toml", "--quota", "new.json"],
     ("rollout-1.jsonl:1: payload.rate_limits.limit_id: contains a lone surrogate",)),
], ids=["quota", "spend", "show", "diff", "compare", "audit", "claude-usage", "policy",
        "codex-line"])
def test_a_lone_surrogate_is_refused_at_load_naming_file_and_field(
        fleet: Path, make: Callable[[Path], object], args: list[str],
        fragments: tuple[str, ...]) -> None:
    """Each loaded, then every view crashed with UnicodeEncodeError (exit 1)."""
    make(fleet)
    before = digests(fleet)
    one_error(runner.invoke(app, args), *fragments)
    assert digests(fleet) == before


def test_a_surrogate_pair_is_a_character_not_a_surrogate(fleet: Path) -> None:
    connections = fleet / "connections.json"
    connections.write_text(json.dumps({"connections": [
        {"id": "a\ud83d\ude00", "provider": "claude", "auth_type": "oauth",
         "label": "\\ud83d\\ude00"}]}, ensure_ascii=True).replace("\\\\", "\\"))
    result = runner.invoke(app, ["plan", "auto/thrifty", "--connections", "connections.json"])
    assert result.exit_code == 0, result.output
    assert "a\U0001f600" in result.stdout


def test_a_key_holding_a_lone_surrogate_is_named_by_its_table(fleet: Path) -> None:
    (fleet / "quota.json").write_text('{"readings": [{"x\\udc00": 1}]}')
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
              "quota.json: readings[0]: key 'x\\udc00' holds a lone surrogate (\\udc00)")


# --- 4. control characters -----------------------------------------------------------------


def test_the_reported_escape_sequence_id_is_refused_at_load(fleet: Path) -> None:
    text = (fleet / "connections.toml").read_text()
    (fleet / "connections.toml").write_text(text.replace(
        'id = "claude-max-work"', 'id = "evil\\u001b[2J\\u001b]0;pwned\\u0007"', 1))
    line = one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
                     "connections.toml:", "connections[0].id: contains a control character "
                     "(\\x1b at character 5)")
    assert "\x1b" not in line


@pytest.mark.parametrize(("file", "old", "new", "field"), [
    ("connections.toml", 'provider = "claude"', 'provider = "cla\\tude"',
     "connections[0].provider"),
    ("connections.toml", 'auth_type = "oauth"', 'auth_type = "oa\\u0085uth"',
     "connections[0].auth_type"),
    ("connections.toml", '"claude-sonnet-4-5"', '"claude\\u007f"', "connections[0].models[0]"),
    ("quota.json", '"name": "5h"', '"name": "5h\\r"', "readings[0].windows[0].name"),
    ("quota.json", '"connection": "claude-max-work"', '"connection": "c\\u009b"',
     "readings[0].connection"),
    ("spend.json", '"connection": "openai-key"', '"connection": "o\\u0000"',
     "events[0].connection"),
    ("billing-overlay.toml", 'provider = "openai"', 'provider = "open\\nai"',
     "entries[0].provider"),
    ("omniladder.toml", 'free_providers = ["gemini"]', 'free_providers = ["gem\\u001bini"]',
     "tiers.free_providers[0]"),
    ("billing-overlay.toml", 'provider = "openai"', 'provider = "openai"\nauth_type = "a\\u0007"',
     "entries[0].auth_type"),
], ids=["provider", "auth_type", "model", "window", "reading", "spend", "catalog", "settings",
        "catalog-auth-type"])
def test_a_control_character_in_an_identifier_is_refused(
        fleet: Path, file: str, old: str, new: str, field: str) -> None:
    path = fleet / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    line = one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
                     file, f"{field}: contains a control character")
    assert not CONTROL.search(line)


@pytest.mark.parametrize(("key", "field"), [("provider", "windows[0].provider"),
                                          ("window", "windows[0].window"),
                                          ("models", "windows[0].models[0]")])
def test_a_control_character_in_a_window_scope_is_refused(fleet: Path, key: str,
                                                          field: str) -> None:
    values = {"provider": '"acme"', "window": '"x"', "models": '["*"]'}
    values[key] = '["a\\u001b"]' if key == "models" else '"a\\u001b"'
    (fleet / "w.toml").write_text("[[windows]]\n" + "".join(
        f"{name} = {value}\n" for name, value in values.items()))
    one_error(runner.invoke(app, ["catalog", "show", "--windows-catalog", "w.toml"]),
              "w.toml:", f"{field}: contains a control character (\\x1b at character 2)")


@pytest.mark.parametrize(("table", "field"), [
    ('[[aliases]]\nprovider = "gemini"\nwindow = "g\\u009b"\nmodels = ["m"]\n',
     "aliases[0].window"),
    ('[[aliases]]\nprovider = "gemini"\nwindow = "g"\nmodels = ["m\\u009b"]\n',
     "aliases[0].models[0]"),
    ('[[sources]]\nimporter = "claude-usage"\nproviders = ["claude", "cl\\u009baude"]\n',
     "sources[0].providers[1]"),
], ids=["alias-window", "alias-models", "source-providers"])
def test_a_control_character_in_a_window_alias_or_source_is_refused(
        fleet: Path, table: str, field: str) -> None:
    (fleet / "w.toml").write_text(table)
    one_error(runner.invoke(app, ["catalog", "show", "--windows-catalog", "w.toml"]),
              f"{field}: contains a control character (\\x9b")


def test_a_printable_identifier_with_spaces_and_unicode_still_loads(fleet: Path) -> None:
    """The other side: only control characters are refused."""
    text = (fleet / "connections.toml").read_text()
    (fleet / "connections.toml").write_text(
        text.replace('id = "claude-max-work"', 'id = "claude max wörk\u00a0✓"', 1))
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"])
    assert result.exit_code == 0, result.output
    assert "claude max wörk\u00a0✓" in result.stdout


@pytest.mark.parametrize(("source", "connection", "document", "field"), [
    ("claude-usage", "claude-max-work",
     {"five_hour": {"utilization": 10}, "bad\x1b[2Jkey": {"utilization": 5}},
     "bad\\x1b[2Jkey: the window name \"bad\\u001b[2Jkey\" contains a control character"),
    ("claude-usage", "claude-max-work",
     {"limits": [{"kind": "weekly\nall", "percent": 5}]},
     'limits[0].kind: the window name "weekly\\nall" contains a control character'),
    ("copilot-user", "copilot-seat",
     {"quota_snapshots": {"pre\u0007mium": {"percent_remaining": 5}}},
     "quota_snapshots.pre\\x07mium: the window name"),
    ("copilot-user", "copilot-seat",
     {"limited_user_quotas": {"chat\x1f": 5}, "monthly_quotas": {"chat\x1f": 50}},
     "limited_user_quotas.chat\\x1f: the window name"),
    ("gemini-quota", "gemini-free",
     {"buckets": [{"modelId": "gemini\u009b-pro", "remainingFraction": 0.5}]},
     "buckets[0].modelId: the window name"),
], ids=["claude-key", "claude-limit-kind", "copilot-key", "copilot-free-key", "gemini-model"])
def test_a_control_character_in_a_payload_key_or_name_is_one_error_line(
        fleet: Path, source: str, connection: str, document: dict[str, Any],
        field: str) -> None:
    """A key (or a value) an importer turns into a window name was a 40-line traceback,
    exit 1, when it held a control character: it is exit 2 naming the file and the field,
    the name escaped, and nothing is written."""
    (fleet / "payload.json").write_text(json.dumps(document))
    result = runner.invoke(app, ["import", source, "payload.json", "--connection", connection,
                                 "--config", "omniladder.toml", "--quota", "fresh.json",
                                 "--at", "2026-11-29T11:59:30Z", "--force"])
    line = one_error(result, f"payload.json: {field}")
    assert not CONTROL.search(line)
    assert "\u2028" not in line
    assert not (fleet / "fresh.json").exists()


def shows(output: str, markdown: bool, expected: str) -> bool:
    """Whether a reader sees ``expected``: in markdown, a code span shows its text as it is
    and other text with its backslash escapes undone; a table view has no escapes."""
    return expected in output or (markdown and expected in re.sub(r"\\(.)", r"\1", output))


def _hostile_saved_plan(fleet: Path) -> Path:
    plan = json.loads((fleet / "ci" / "plan-thrifty.json").read_text())
    plan["pool"][0]["allowed_connection_ids"][0] = EVIL_ID
    plan["excluded"][0]["detail"] = "held \u009b31m here"
    plan["summary"] = "summary \u001b]0;pwned\u0007 end"
    path = fleet / "hostile.json"
    path.write_text(json.dumps(plan))
    return path


@pytest.mark.parametrize("view", [["show"], ["show", "--format", "markdown"],
                                  ["show", "--detail"]])
def test_a_saved_plan_shows_control_characters_escaped(fleet: Path, view: list[str]) -> None:
    saved = _hostile_saved_plan(fleet)
    result = runner.invoke(app, [*view, str(saved)])
    assert result.exit_code == 0, result.output
    assert not CONTROL.search(result.output)
    markdown = "markdown" in view
    assert shows(result.stdout, markdown, "evil\\x1b[2J\\x1b]0;pwned")
    assert shows(result.stdout, markdown, "held \\x9b31m here")


def test_show_json_passes_the_document_through_unchanged(fleet: Path) -> None:
    saved = _hostile_saved_plan(fleet)
    result = runner.invoke(app, ["show", str(saved), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["pool"][0]["allowed_connection_ids"][0] == EVIL_ID


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_diff_and_audit_views_escape_control_characters(fleet: Path, fmt: str) -> None:
    saved = _hostile_saved_plan(fleet)
    result = runner.invoke(app, ["diff", "ci/plan-thrifty.json", str(saved), "--format", fmt])
    assert result.exit_code == 1, result.output
    assert not CONTROL.search(result.output)
    assert shows(result.stdout, fmt == "markdown", "evil\\x1b[2J")
    candidates = json.loads((fleet / "omniroute-candidates.json").read_text())
    candidates["candidates"][0]["connectionId"] = EVIL_ID
    (fleet / "c.json").write_text(json.dumps(candidates))
    audit = runner.invoke(app, ["audit", "omniroute", "c.json", "--config", "omniladder.toml",
                                "--format", fmt])
    assert audit.exit_code in (0, 1), audit.output
    assert not CONTROL.search(audit.output)
    assert shows(audit.stdout, fmt == "markdown", "evil\\x1b[2J")


def test_free_text_loads_and_is_escaped_where_it_is_shown(fleet: Path) -> None:
    """A label (an OmniRoute display_name) and a catalog reason are free text: they load, and
    no view prints their control characters."""
    text = (fleet / "connections.toml").read_text()
    (fleet / "connections.toml").write_text(
        text.replace('label = "Max plan, work"', 'label = "Max \\u001b[31mred"', 1))
    overlay = (fleet / "billing-overlay.toml").read_text()
    (fleet / "billing-overlay.toml").write_text(re.sub(
        r'reason = "', 'reason = "\\\\u001b[2J', overlay, count=1).replace("\\\\u", "\\u"))
    for args in (["plan", "auto/thrifty", "--config", "omniladder.toml", "--detail"],
                 ["why", "claude-max-work", "--config", "omniladder.toml"],
                 ["catalog", "show", "--config", "omniladder.toml"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert not CONTROL.search(result.output), args
    as_json = runner.invoke(app, ["why", "claude-max-work", "--config", "omniladder.toml",
                                  "--json"])
    assert json.loads(as_json.stdout)["connection"]["label"] == "Max \u001b[31mred"


def test_a_file_name_with_an_escape_is_escaped_in_messages(fleet: Path) -> None:
    result = runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                 "--quota", "\x1b[2Jgone.json"])
    one_error(result, "\\x1b[2Jgone.json: file not found")


def test_a_file_name_that_is_not_utf8_is_escaped_where_it_is_shown(fleet: Path) -> None:
    """A name the file system gives as bytes (Python holds it as lone surrogates) reaches
    the human view escaped, where it crashed the encoder before."""
    name = os.fsencode(fleet) + b"/\xffquota.json"
    shutil.copy(fleet / "quota.json", os.fsdecode(name))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run([sys.executable.encode(), b"-m", b"omniladder", b"plan",
                           b"auto/thrifty", b"--config", b"omniladder.toml", b"--quota",
                           name], cwd=fleet, env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert b"quota \\udcffquota.json" in done.stdout
    gone = subprocess.run([sys.executable.encode(), b"-m", b"omniladder", b"plan",
                           b"auto/thrifty", b"--config", b"omniladder.toml", b"--quota",
                           b"\xffgone.json"], cwd=fleet, env=env, capture_output=True,
                          check=False)
    assert gone.returncode == 2
    assert gone.stderr == b"omniladder: error: \\udcffgone.json: file not found\n"


# --- 5. only regular files, and not endless ones --------------------------------------------


def test_a_device_or_a_named_pipe_is_refused_without_reading_it(fleet: Path) -> None:
    """/dev/zero as the quota file ran until memory was gone; a FIFO waited forever for a
    writer. (In forked children with an alarm and a memory limit: a regression ends the
    test, not the machine.)"""
    from tests.forked import Case, run_cases

    os.mkfifo(fleet / "pipe.json")
    plan = ["plan", "auto/thrifty", "--config", "omniladder.toml", "--quota"]
    zero, pipe = run_cases([Case([*plan, "/dev/zero"], cwd=str(fleet), timeout=20),
                            Case([*plan, "pipe.json"], cwd=str(fleet), timeout=20)])
    assert (zero.code, zero.stdout) == (2, ""), zero
    assert zero.stderr == ("omniladder: error: /dev/zero: is a character device, not a "
                           "regular file; omniladder reads only regular files\n")
    assert (pipe.code, pipe.stdout) == (2, ""), pipe
    assert pipe.stderr == ("omniladder: error: pipe.json: is a named pipe (FIFO), not a "
                           "regular file; omniladder reads only regular files\n")


def test_a_socket_is_refused(fleet: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind("sock.json")
        one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                      "--quota", "sock.json"]),
                  "sock.json: is a socket, not a regular file")


def test_a_link_without_an_extension_is_named_as_given(fleet: Path) -> None:
    """`--config /dev/stdin < omniladder.toml` (or any link whose own name has no .toml or
    .json) said "omniladder.toml: unsupported file type; use a .toml or .json file": the
    message named the link's target, whose extension is fine, not the name the type is read
    from (docs/inputs.md#s2: chosen by its extension)."""
    (fleet / "settings").symlink_to("omniladder.toml")
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "settings"]),
              "omniladder.toml: unsupported file type; use a .toml or .json file (the type is "
              "read from the name given, 'settings')")
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.yaml"]),
              "omniladder.yaml: unsupported file type; use a .toml or .json file")


@pytest.mark.parametrize(("option", "command"), [
    ("--out", ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
    ("--metrics-out", ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
    ("--junit", ["check", "policy.toml"]),
    ("--svg", SIMULATE),
    ("--out", ["export", "omniroute", "ci/plan-thrifty.json"]),
], ids=["plan-out", "plan-metrics-out", "check-junit", "simulate-svg", "export-out"])
@pytest.mark.parametrize("kind", ["fifo", "socket", "directory", "working-directory"])
def test_an_output_that_is_not_a_regular_file_is_refused_and_kept(
        fleet: Path, option: str, command: list[str], kind: str) -> None:
    """An output is replaced whole by renaming a new file over it (docs/contract.md#s4-3),
    which over a device, a named pipe or a socket replaces the node itself: `--out
    /dev/null` run as root turned /dev/null into a regular file holding the plan. (A FIFO
    and a socket stand in for the device here, so a regression cannot break the machine.)
    Each is refused before anything is written, naming the option, the file and what it
    is, as an input of that kind is (docs/contract.md#edges); a directory is named as one
    (the working directory said "Device or resource busy")."""
    import socket

    target = {"fifo": "out.fifo", "socket": "out.sock", "directory": "ci",
              "working-directory": "."}[kind]
    with socket.socket(socket.AF_UNIX) as listening:
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "socket":
            listening.bind(target)
        before = digests(fleet)
        what = {"fifo": "is a named pipe (FIFO), not a regular file",
                "socket": "is a socket, not a regular file",
                "directory": "is a directory, not a file",
                "working-directory": "is a directory, not a file"}[kind]
        one_error(runner.invoke(app, [*command, option, target]), f"{option}: {what}")
        assert digests(fleet) == before
        mode = os.lstat(target).st_mode
        assert {"fifo": stat.S_ISFIFO, "socket": stat.S_ISSOCK, "directory": stat.S_ISDIR,
                "working-directory": stat.S_ISDIR}[kind](mode)
        assert not [name for name in os.listdir() if name.endswith(".tmp")]


def test_a_file_past_the_cap_is_refused_without_reading_it(fleet: Path) -> None:
    """A sparse 300 MiB file: refused by its size before a byte is read."""
    with open(fleet / "huge.json", "wb") as huge:
        huge.truncate(300 * 1024 * 1024)
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                  "--quota", "huge.json"]),
              "huge.json: larger than 256 MiB, the most omniladder reads from one input")


def test_the_cap_itself_is_readable_and_one_byte_more_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_files, "INPUT_LIMIT", 1000)
    path = tmp_path / "q.json"
    path.write_bytes(b" " * 1000)
    assert len(input_files.read_bytes(path, "q.json")) == 1000
    path.write_bytes(b" " * 1001)
    with pytest.raises(InputError) as refused:
        input_files.read_bytes(path, "q.json")
    assert str(refused.value) == ("q.json: larger than 1,000 bytes, the most omniladder reads "
                                  "from one input; is it the right file?")


def test_standard_input_is_capped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import types

    monkeypatch.setattr(input_files, "INPUT_LIMIT", 3 * 1024 * 1024)
    for size, fits in ((3 * 1024 * 1024, True), (3 * 1024 * 1024 + 1, False)):
        stdin = types.SimpleNamespace(buffer=io.BytesIO(b"x" * size))
        monkeypatch.setattr(sys, "stdin", stdin)
        if fits:
            assert len(input_files.read_stdin()) == size
        else:
            with pytest.raises(InputError, match=r"^<stdin>: larger than 3 MiB"):
                input_files.read_stdin()


def test_a_rollout_is_read_a_line_at_a_time_within_its_caps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "rollout-1.jsonl"
    monkeypatch.setattr(input_files, "INPUT_LIMIT", 10)
    monkeypatch.setattr(input_files, "STREAMED_LIMIT", 25)
    path.write_bytes(b"123456789\n" * 2 + b"12345")  # a line at the cap; 25 bytes in all
    assert [line for _, line in input_files.input_lines(path, "r")] == [
        b"123456789\n", b"123456789\n", b"12345"]
    path.write_bytes(b"123456789\n" * 2 + b"123456")
    with pytest.raises(InputError, match=r"^r: larger than 25 bytes"):
        list(input_files.input_lines(path, "r"))
    path.write_bytes(b"1234567890\n")
    with pytest.raises(InputError, match=r"^r:1: a line longer than 10 bytes"):
        list(input_files.input_lines(path, "r"))


@pytest.mark.parametrize("hostile", ["\x1b[2J", "x\ny", "\x9b"], ids=["esc", "newline", "csi"])
@pytest.mark.parametrize(("column", "field"), [
    ("id", "provider_connections[id=conn-claude-work{h}].id"),
    ("provider", "provider_connections[id=conn-claude-work].provider"),
    ("auth_type", "provider_connections[id=conn-claude-work].auth_type"),
    ("default_model", "provider_connections[id=conn-claude-work].default_model"),
    ("window_key", "quota_snapshots[id=1].window_key"),
])
def test_an_omniroute_row_whose_identifier_holds_a_control_character_is_refused(
        tmp_path: Path, column: str, field: str, hostile: str) -> None:
    """The import exited 0 and wrote a fleet every later command refused; it is exit 2
    naming the table, the row and the column, and nothing is written."""
    from tests.omniroute_db import CONNECTIONS, SNAPSHOTS, build_db

    names = ("id", "provider", "auth_type", "name", "display_name", "is_active", "test_status",
             "rate_limited_until", "default_model", "priority")
    connections = list(CONNECTIONS)
    snapshots = list(SNAPSHOTS)
    if column == "window_key":
        snapshots[0] = (snapshots[0][0], f"5h{hostile}", *snapshots[0][2:])
    else:
        row = list(connections[1])
        row[names.index(column)] = f"{row[names.index(column)] or 'model'}{hostile}"
        connections[1] = tuple(row)
        if column == "id":
            snapshots = [(f"conn-claude-work{hostile}", *snapshot[1:])
                         if snapshot[0] == "conn-claude-work" else snapshot
                         for snapshot in snapshots]
    db = build_db(tmp_path / "o.db", connections=connections, snapshots=snapshots)
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(tmp_path / "f"),
                                 "--now", "2026-11-29T12:00:00Z", "--since", "all"])
    shown = repr(hostile)[1:-1]
    line = one_error(result, f"o.db: {field.format(h=shown)}: contains a control character",
                     "nothing was written")
    assert not CONTROL.search(line)
    assert not (tmp_path / "f").exists()


_OLD_ROLLOUT = ('{"timestamp": "1970-01-01T00:00:00Z", "type": "event_msg", "payload": '
                '{"type": "token_count", "rate_limits": {"primary": {"used_percent": 10, '
                '"window_minutes": 300, "resets_at": 1796047200}}}}\n')


@pytest.mark.parametrize(("source", "connection", "payload", "extra", "said"), [
    ("claude-usage", "claude-max-work", SOURCES / "claude" / "usage.json",
     ["--at", "0001-01-01T00:00:00Z"], "--at: a reading at 0001-01-01T00:00:00Z is before 2000"),
    ("claude-usage", "claude-max-work", SOURCES / "claude" / "usage.json",
     ["--at", "1970-01-01T00:00:00Z"], "--at: a reading at 1970-01-01T00:00:00Z is before 2000"),
    ("copilot-user", "copilot-seat", SOURCES / "copilot" / "user.json", ["--mtime-zero"],
     "payload.json: modification time: a reading at 1970-01-01T00:00:00Z is before 2000"),
    ("gemini-quota", "gemini-free", SOURCES / "gemini" / "quota.json",
     ["--at", "1999-12-31T23:59:59Z", "--force"], "--at: a reading at 1999-12-31T23:59:59Z"),
    ("codex-sessions", "codex-plus", None, [],
     "rollout-1.jsonl: timestamp: a reading at 1970-01-01T00:00:00Z is before 2000"),
], ids=["claude-year-1", "claude-epoch", "copilot-mtime-epoch", "gemini-1999", "codex-epoch"])
def test_a_reading_from_before_2000_is_refused_by_every_importer(
        fleet: Path, source: str, connection: str, payload: Path | None, extra: list[str],
        said: str) -> None:
    """A reading at year 1 or at the epoch whose windows reset in 2026 was imported, and read
    as observed decades ago."""
    if payload is None:
        target = fleet / "rollout-1.jsonl"
        target.write_text(_OLD_ROLLOUT)
    else:
        target = fleet / "payload.json"
        shutil.copy(payload, target)
    if "--mtime-zero" in extra:
        os.utime(target, (0, 0))
        extra = []
    result = runner.invoke(app, ["import", source, target.name, "--connection", connection,
                                 "--config", "omniladder.toml", "--quota", "fresh.json",
                                 *extra])
    one_error(result, said, "nothing was written")
    assert not (fleet / "fresh.json").exists()


def test_an_omniroute_row_from_before_2000_is_refused_naming_it(tmp_path: Path) -> None:
    from tests.omniroute_db import SNAPSHOTS, build_db

    row = (*SNAPSHOTS[0][:5], 0)
    db = build_db(tmp_path / "o.db", snapshots=[row, *SNAPSHOTS[1:]])
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(tmp_path / "f"),
                                 "--now", "2026-11-29T12:00:00Z", "--since", "all"])
    one_error(result, "o.db: quota_snapshots[id=1].created_at: 1970-01-01T00:00:00Z is before "
              "2000")
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("command", [
    ["plan", "auto/thrifty", "--config", "b/omniladder.toml"],
    ["import", "claude-usage", "usage.json", "--connection", "claude-max-work", "--config",
     "b/omniladder.toml", "--at", "2026-11-29T11:59:30Z"],
], ids=["plan", "import"])
def test_inputs_through_a_linked_settings_file_name_the_file_and_the_key(
        fleet: Path, command: list[str]) -> None:
    """[inputs] paths are relative to the folder of the settings file as named (a link's own
    folder): the error named only b/connections.toml, neither the settings file nor the key
    that led there."""
    (fleet / "b").mkdir()
    (fleet / "b" / "omniladder.toml").symlink_to(fleet / "omniladder.toml")
    shutil.copy(SOURCES / "claude" / "usage.json", fleet / "usage.json")
    one_error(runner.invoke(app, command),
              "b/omniladder.toml: [inputs] connections: b/connections.toml: file not found; "
              "paths in [inputs] are relative to the folder of the settings file as named, b "
              "(a link: not the folder it leads to)")


@pytest.mark.parametrize(("key", "table", "line"), [
    ("quota", "inputs", 'quota = "quota.json"'),
    ("spend", "inputs", 'spend = "spend.json"'),
    ("billing", "catalogs", 'billing = ["billing-overlay.toml"]'),
])
def test_a_missing_file_the_settings_name_names_the_key(fleet: Path, key: str, table: str,
                                                       line: str) -> None:
    text = (fleet / "omniladder.toml").read_text()
    assert line in text
    (fleet / "omniladder.toml").write_text(text.replace(line, line.replace(".", "-gone."), 1))
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
              f"omniladder.toml: [{table}] {key}: ", "-gone.", ": file not found; paths in "
              f"[{table}] are relative to the folder of the settings file as named, .")


def test_a_flag_keeps_its_own_error(fleet: Path) -> None:
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml",
                                  "--quota", "gone.json"]), "omniladder: error: gone.json: file "
              "not found")


# --- 5b. a key given twice ------------------------------------------------------------------

_MAP_JSON = json.dumps(tomllib.loads((EXAMPLES / "litellm-map.toml").read_text()))


@pytest.mark.parametrize(("make", "args", "fragment"), [
    # one reading written with its keys in either order planned two ways
    (lambda f: (f / "quota.json").write_text(_json_with(
        (f / "quota.json").read_text(), '"remaining_percent": 81',
        '"remaining_percent": 0, "remaining_percent": 81')),
     ["plan", "auto/thrifty", "--config", "omniladder.toml"],
     "quota.json: readings[0].windows[0].remaining_percent: key 'remaining_percent' is given "
     "twice in one object"),
    (lambda f: (f / "map.json").write_text(_json_with(
        _MAP_JSON, '"model_prefix": "openai/"', '"model_prefix": "x/", "model_prefix": "openai/"')),
     ["export", "litellm", "auto/thrifty", "--config", "omniladder.toml", "--map", "map.json"],
     "map.json: connections[0].model_prefix: key 'model_prefix' is given twice"),
    (lambda f: (f / "c.json").write_text(_json_with(
        (f / "omniroute-candidates.json").read_text(), '"excluded": false',
        '"excluded": true, "excluded": false')),
     ["audit", "omniroute", "c.json", "--config", "omniladder.toml"],
     "c.json: candidates[0].excluded: key 'excluded' is given twice"),
    (lambda f: (f / "p.json").write_text(_json_with(
        (f / "ci" / "plan-thrifty.json").read_text(), '"format_version"',
        '"format_version": 0, "format_version"')),
     ["show", "p.json"], "p.json:2: format_version: key 'format_version' is given twice"),
    (lambda f: (f / "combo.json").write_text('{"name": "auto/thrifty", "name": "other"}'),
     ["export", "omniroute", "auto/thrifty", "--config", "omniladder.toml", "--current",
      "combo.json"], "combo.json:1: name: key 'name' is given twice"),
    (lambda f: (f / "deployed.yaml").write_text('# written by omniladder\n'
                                                '{"model_list": [], "model_list": []}'),
     ["export", "litellm", "auto/thrifty", "--config", "omniladder.toml", "--map",
      "litellm-map.toml", "--current", "deployed.yaml"],
     "deployed.yaml:2: model_list: key 'model_list' is given twice"),
    (lambda f: (f / "u.json").write_text(
        '{"five_hour": {"utilization": 90, "utilization": 10}}'),
     ["import", "claude-usage", "u.json", "--connection", "claude-max-work", "--config",
      "omniladder.toml", "--quota", "new.json", "--at", "2026-11-29T11:59:30Z"],
     "u.json:1: five_hour.utilization: key 'utilization' is given twice"),
    (lambda f: (f / "rollout-1.jsonl").write_text(
        '{"timestamp": "2026-11-29T11:00:00Z", "type": "event_msg", "payload": {"type": '
        '"token_count", "rate_limits": {"primary": {"used_percent": 90, "used_percent": 10}'
        '}}}\n'),
     ["import", "codex-sessions", "rollout-1.jsonl", "--connection", "codex-plus", "--config",
      "omniladder.toml", "--quota", "new.json"],
     "rollout-1.jsonl:1: payload.rate_limits.primary.used_percent: key 'used_percent' is "
     "given twice"),
], ids=["quota", "map", "candidates", "saved-plan", "export-omniroute-current",
        "export-litellm-current", "claude-snapshot", "codex-line"])
def test_a_key_given_twice_in_a_json_input_is_refused(
        fleet: Path, make: Callable[[Path], Any], args: list[str], fragment: str) -> None:
    """JSON lets an object give a key twice and Python's parser keeps the last value, so a
    reading written with its keys in either order planned two ways; TOML refuses it, and
    now every JSON input does: exit 2 naming the file, the field and the key, nothing
    written."""
    make(fleet)
    before = digests(fleet)
    one_error(runner.invoke(app, args), fragment, "remove one")
    assert digests(fleet) == before


def test_a_key_given_twice_in_an_omniroute_raw_data_is_refused_naming_the_row(
        tmp_path: Path) -> None:
    """raw_data's fractionReported decides whether a row is a value or none: given twice,
    which one counts is not defined. Nothing of raw_data is shown."""
    from tests.omniroute_db import REAL_SNAPSHOTS_DDL, SNAPSHOTS, build_db

    row = (*SNAPSHOTS[0][:6], '{"fractionReported": false, "fractionReported": true}')
    db = build_db(tmp_path / "o.db", snapshots=[row, *SNAPSHOTS[1:]],
                  snapshots_ddl=REAL_SNAPSHOTS_DDL)
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(tmp_path / "f"),
                                 "--now", "2026-11-29T12:00:00Z", "--since", "all"])
    one_error(result, "o.db: quota_snapshots[id=1].raw_data: gives a key twice in one object")
    assert not (tmp_path / "f").exists()


# --- 5c. a key pasted where a name or a URL goes ---------------------------------------------

_TAIL = "Zq7Xw2Lr9Tb4Nc8Vd1Mf5Kg3Hj6Ps0Ay"


def _map_with(fleet: Path, field: str, value: str) -> list[str]:
    (fleet / "map.json").write_text(json.dumps({"connections": [
        {"id": "openai-key", "model_prefix": "openai/", field: value}]}))
    return ["export", "litellm", "auto/thrifty", "--config", "omniladder.toml", "--map",
            "map.json"]


@pytest.mark.parametrize("field", ["api_key_env", "model_prefix"])
@pytest.mark.parametrize(("prefix", "kind"), list(credentials.KEY_PREFIXES),
                         ids=[prefix for prefix, _ in credentials.KEY_PREFIXES])
def test_a_key_of_every_known_kind_in_a_map_field_is_refused_unseen(
        fleet: Path, field: str, prefix: str, kind: str) -> None:
    """``gsk_…``, ``ghp_…``, ``sk_live_…`` are valid variable names: pasted into api_key_env
    they were written to the export and printed in its report, exit 0."""
    value = prefix + _TAIL
    line = one_error(runner.invoke(app, _map_with(fleet, field, value)),
                     f"map.json: connections[0].{field}: {field} of connection 'openai-key' "
                     f"looks like {kind}", "(the value is never shown)")
    assert _TAIL not in line


@pytest.mark.parametrize("value", ["3f9a0c7e1b2d4f6a8c0e1f2a3b4c5d6e", "a8Fj29dkLq0Zm3nB7xYtPq"])
def test_a_long_random_value_in_api_key_env_is_refused_unseen(fleet: Path, value: str) -> None:
    line = one_error(runner.invoke(app, _map_with(fleet, "api_key_env", value)),
                     "api_key_env of connection 'openai-key' looks like a random string of "
                     f"{len(value)} letters and digits (a key)")
    assert value not in line


@pytest.mark.parametrize(("url", "where"), [
    (f"https://proxy.internal/v1;key={_TAIL}", "a path parameter (;…)"),
    (f"https://proxy.internal/v1?key={_TAIL}", "a query"),
    (f"https://proxy.internal/v1#{_TAIL}", "fragment"),
    (f"https://{_TAIL}@proxy.internal/v1", "a user or password"),
    (f"https://proxy.internal/gsk_{_TAIL}/v1", "a path segment that looks like a Groq API key"),
], ids=["path-parameter", "query", "fragment", "userinfo", "path-segment"])
def test_a_key_riding_in_api_base_is_refused_unseen(fleet: Path, url: str, where: str) -> None:
    line = one_error(runner.invoke(app, _map_with(fleet, "api_base", url)),
                     "map.json: connections[0].api_base: ", where)
    assert _TAIL not in line


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY_WORK_2", "OPENAI_API_KEY", "GROQ_API_KEY",
                                  "PROXY_CLAUDE_MAX_WORK_KEY", "SK_LIVE_KEY", "gh_token",
                                  "hf_token", "AZURE_OPENAI_API_KEY_EASTUS2"])
def test_real_variable_names_and_a_gateway_account_id_are_no_keys(fleet: Path,
                                                                  name: str) -> None:
    result = runner.invoke(app, _map_with(fleet, "api_key_env", name))
    assert result.exit_code in (0, 1), result.output
    url = "https://gateway.ai.cloudflare.com/v1/3f9a0c7e1b2d4f6a8c0e1f2a3b4c5d6e/gw/openai"
    result = runner.invoke(app, _map_with(fleet, "api_base", url))
    assert result.exit_code in (0, 1), result.output


def test_an_omniroute_name_that_is_a_key_is_no_label(tmp_path: Path) -> None:
    """A key pasted as a connection's name in the gateway is not written as its label, as an
    e-mail address is not."""
    from tests.omniroute_db import CONNECTIONS, build_db

    first = CONNECTIONS[1]
    row = (*first[:3], f"ghp_{_TAIL}", f"sk-ant-api03-{_TAIL}", *first[5:])
    db = build_db(tmp_path / "o.db", connections=[CONNECTIONS[0], row, *CONNECTIONS[2:]])
    result = runner.invoke(app, ["import", "omniroute", str(db), "--out", str(tmp_path / "f"),
                                 "--now", "2026-11-29T12:00:00Z"])
    assert result.exit_code == 0, result.output
    assert _TAIL not in result.output
    assert _TAIL not in (tmp_path / "f" / "connections.toml").read_text()


# --- 6. numbers Python refuses to read ------------------------------------------------------

LONG = "9" * 5000  # past Python's 4,300-digit limit on converting text to an integer


@pytest.mark.parametrize(("make", "args", "fragments"), [
    (lambda f: (f / "quota.json").write_text(_json_with(
        (f / "quota.json").read_text(), '"remaining_percent": 81', f'"remaining_percent": {LONG}')),
     ["plan", "auto/thrifty", "--config", "omniladder.toml"],
     ("quota.json:6: invalid JSON: a number of more than 4300 digits",)),
    (lambda f: (f / "omniladder.toml").write_text(_json_with(
        (f / "omniladder.toml").read_text(), "max_reading_age_seconds = 180",
        f"max_reading_age_seconds = {LONG}")),
     ["plan", "auto/thrifty", "--config", "omniladder.toml"],
     ("omniladder.toml:11: invalid TOML: a number of more than 4300 digits",)),
    (lambda f: (f / "p.json").write_text(_json_with(
        (f / "ci" / "plan-thrifty.json").read_text(), '"format_version"',
        f'"x": {LONG}, "format_version"')),
     ["show", "p.json"], ("p.json:2: invalid JSON: a number of more than 4300 digits",)),
    (lambda f: (f / "combo.json").write_text(f'{{"name": "auto/thrifty", "x": {LONG}}}'),
     ["export", "omniroute", "auto/thrifty", "--config", "omniladder.toml", "--current",
      "combo.json"], ("combo.json:1: invalid JSON: a number of more than 4300 digits",)),
    (lambda f: (f / "deployed.yaml").write_text(f'# written by omniladder\n{{"x": {LONG}}}'),
     ["export", "litellm", "auto/thrifty", "--config", "omniladder.toml", "--map",
      "litellm-map.toml", "--current", "deployed.yaml"],
     ("deployed.yaml:2: invalid JSON: a number of more than 4300 digits",)),
    (lambda f: (f / "rollout-1.jsonl").write_text(
        '{"timestamp": "2026-11-29T11:00:00Z", "type": "event_msg", "payload": {"type": '
        f'"token_count", "rate_limits": {{"primary": {{"used_percent": {LONG}}}}}}}}}\n'),
     ["import", "codex-sessions", "rollout-1.jsonl", "--connection", "codex-plus", "--config",
      "omniladder.toml", "--quota", "new.json"],
     ("rollout-1.jsonl:1: invalid JSON: a number of more than 4300 digits",)),
], ids=["quota", "settings-toml", "show", "export-omniroute-current",
        "export-litellm-current", "codex-line"])
def test_an_integer_too_long_for_python_is_an_input_error(
        fleet: Path, make: Callable[[Path], object], args: list[str],
        fragments: tuple[str, ...]) -> None:
    """json and tomllib raise a bare ValueError for an integer of more than
    sys.get_int_max_str_digits() digits (a guard against quadratic conversion): it was a
    traceback. It is exit 2 naming the file and the line (docs/contract.md#s4-3)."""
    make(fleet)
    before = digests(fleet)
    one_error(runner.invoke(app, args), *fragments)
    assert digests(fleet) == before


@pytest.mark.parametrize(("args", "fragment"), [
    ([*SIMULATE, "--step", f"{LONG}s"], "--step: the step '9999"),
    (["forecast", "auto/thrifty", "--config", "omniladder.toml", "--horizon", f"{LONG}h"],
     "--horizon: the horizon '9999"),
], ids=["simulate-step", "forecast-horizon"])
def test_a_duration_too_long_for_python_is_longer_than_the_calendar(
        fleet: Path, args: list[str], fragment: str) -> None:
    """A count of 5,000 digits was a ValueError out of int(), a traceback; it is the usage
    error every duration beyond the calendar is (docs/contract.md#s4-3)."""
    line = one_error(runner.invoke(app, args), fragment)
    assert "is longer than the calendar" in line


def test_a_window_length_too_long_for_python_is_past_a_leap_year(fleet: Path) -> None:
    """The same count as a window catalog's `duration` said Python's own advice
    ("use sys.set_int_max_str_digits()") instead of what is wrong."""
    (fleet / "windows.toml").write_text(
        f'[[windows]]\nprovider = "claude"\nwindow = "5h"\nduration = "{LONG}h"\n')
    (fleet / "omniladder.toml").write_text((fleet / "omniladder.toml").read_text().replace(
        "models = []", 'models = []\nwindows = ["windows.toml"]'))
    result = runner.invoke(app, ["forecast", "auto/thrifty", "--config", "omniladder.toml",
                                 "--horizon", "1h"])
    assert result.exit_code == 2, result.output
    assert "at most 366d" in result.stderr, result.stderr
    assert "set_int_max_str_digits" not in result.stderr


@pytest.mark.parametrize(("args", "option"), [
    (["plan", "auto/thrifty", "--config", "omniladder.toml", "--metrics-out", "m.prom"],
     "--out"),
    (["check", "policy.toml"], "--junit"),
    (["export", "omniroute", "ci/plan-thrifty.json"], "--out"),
], ids=["plan-out", "check-junit", "export-out"])
def test_an_output_into_a_missing_directory_says_so_before_anything_is_written(
        fleet: Path, args: list[str], option: str) -> None:
    """`--out reports/plan.json` before `mkdir reports` said "cannot write file (No such
    file or directory)" about the file it was to create, and only once the plan was made:
    --metrics-out's file was already written then. The missing directory is named, before
    anything is written (docs/contract.md#edges)."""
    before = digests(fleet)
    one_error(runner.invoke(app, [*args, option, "reports/out.json"]),
              f"reports/out.json: {option}: the directory reports does not exist")
    assert digests(fleet) == before
    assert not (fleet / "reports").exists()


@pytest.mark.parametrize(("args", "option"), [
    (["plan", "auto/thrifty", "--config", "omniladder.toml"], "--out"),
    (["plan", "auto/thrifty", "--config", "omniladder.toml"], "--metrics-out"),
    (["check", "policy.toml"], "--junit"),
    (["export", "omniroute", "ci/plan-thrifty.json"], "--out"),
], ids=["plan-out", "plan-metrics-out", "check-junit", "export-out"])
def test_a_dash_as_an_output_is_not_standard_output(
        fleet: Path, args: list[str], option: str) -> None:
    """`--out -`, as many tools take it, wrote a file named "-" in the working directory
    and printed the table view on standard output. `-` is standard input where a command
    reads one (docs/contract.md#edges) and no output option writes standard output, so it
    is refused before anything is written."""
    before = digests(fleet)
    one_error(runner.invoke(app, [*args, option, "-"]),
              f"-: {option}: '-' is not standard output here")
    assert digests(fleet) == before


@pytest.mark.parametrize(("file", "old", "new", "field"), [
    ("quota.json", '"remaining_percent": 81', '"remaining_percent": NaN',
     "readings[0].windows[0].remaining_percent"),
    ("quota.json", '"remaining_percent": 81', '"remaining_percent": Infinity',
     "readings[0].windows[0].remaining_percent"),
    ("omniladder.toml", "exit_cutoff_percent = 2 ", "exit_cutoff_percent = nan ",
     "ladder.exit_cutoff_percent"),
], ids=["quota-nan", "quota-infinity", "settings-nan"])
def test_a_percent_that_is_no_number_says_so(fleet: Path, file: str, old: str, new: str,
                                             field: str) -> None:
    """NaN (which Python's JSON reader and TOML accept) as a percent said "must be less
    than or equal to 100, got nan", as if it were a figure too large; like every other
    number of the inputs (cost_usd, budgets, ages) it must be a finite number
    (docs/inputs.md#s2-2: remaining_percent is 0-100)."""
    (fleet / file).write_text(_json_with((fleet / file).read_text(), old, new))
    one_error(runner.invoke(app, ["plan", "auto/thrifty", "--config", "omniladder.toml"]),
              f"{file}: {field}: must be a finite number")
