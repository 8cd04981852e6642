"""A standard output declared in an encoding other than UTF-8 (docs/contract.md#encodings).

``PYTHONIOENCODING=latin-1 omniladder plan … --json > plan.json`` left an empty file with
exit 0, and ``check`` printed 175 of its 3,082 bytes: the encoding error was taken for a
reader gone. A machine format (JSON, markdown, OpenMetrics, a gateway document, a schema, a
completion script) is now written as UTF-8 bytes whatever the stream declares; a human view
is spelled in the declared encoding (``omniladder.rendering.escape.for_encoding``), its
symbols in ASCII and any other character it lacks as an escape. Either way the whole answer
arrives, with the exit code it has under UTF-8.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from omniladder.rendering.escape import for_encoding
from tests.conftest import EXAMPLES, ROOT, click_tree

ENCODINGS = ("latin-1", "cp1252", "ascii")
CONFIG = str(EXAMPLES / "omniladder.toml")
MACHINE_FORMATS = ("json", "markdown", "openmetrics")


def _run(args: list[str], encoding: str,
         cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1",
           "PYTHONIOENCODING": encoding}
    return subprocess.run([sys.executable, "-m", "omniladder", *args], env=env, cwd=cwd,
                          capture_output=True, check=False)


# --- the reported cases, one process each ----------------------------------------------------


@pytest.fixture(scope="module")
def unicode_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples with a connection id no 8-bit code page holds whole."""
    folder = tmp_path_factory.mktemp("unicode")
    for item in EXAMPLES.iterdir():
        if item.is_file():
            text = item.read_text(encoding="utf-8")
            (folder / item.name).write_text(text.replace("claude-max-work", UNICODE_ID),
                                            encoding="utf-8")
    return folder


UNICODE_ID = "claude-max-w\u00f6rk-\u4e2d"


PLAN_JSON = ["plan", "auto/thrifty", "--config", "omniladder.toml", "--json"]
PLAN_METRICS = ["plan", "auto/thrifty", "--config", "omniladder.toml", "--format",
                "openmetrics"]
CHECK_MARKDOWN = ["check", "policy.toml", "--format", "markdown"]
_PLAIN: dict[tuple[str, ...], subprocess.CompletedProcess[bytes]] = {}


@pytest.mark.parametrize(("args", "encoding"), [
    (PLAN_JSON, "latin-1"), (PLAN_JSON, "cp1252"), (PLAN_JSON, "ascii"),
    (PLAN_METRICS, "latin-1"), (CHECK_MARKDOWN, "cp1252"),
], ids=["plan-json-latin-1", "plan-json-cp1252", "plan-json-ascii", "plan-openmetrics-latin-1",
        "check-markdown-cp1252"])
def test_a_machine_format_is_utf8_whatever_stdout_declares(
        args: list[str], encoding: str, unicode_fleet: Path) -> None:
    """(Every command and format under all three: the slow class test below.)"""
    plain = _PLAIN.get(tuple(args))
    if plain is None:
        plain = _PLAIN[tuple(args)] = _run(args, "utf-8", unicode_fleet)
    declared = _run(args, encoding, unicode_fleet)
    assert UNICODE_ID.encode("utf-8") in plain.stdout
    assert declared.returncode == plain.returncode, declared.stderr
    assert declared.stdout == plain.stdout


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_a_human_view_is_whole_in_the_declared_encoding(encoding: str) -> None:
    args = ["check", str(EXAMPLES / "policy.toml")]
    plain = _run(args, "utf-8")
    declared = _run(args, encoding)
    assert declared.returncode == plain.returncode == 0, declared.stderr
    text = plain.stdout.decode("utf-8")
    assert not text.isascii()  # "✓ pass … — …": what was lost before
    shown = declared.stdout.decode(encoding)
    assert shown == for_encoding(text, encoding)
    assert len(shown.splitlines()) == len(text.splitlines())
    assert "\u2713" not in shown
    assert "v pass auto/subscription never bills " in shown


def test_catalog_checks_plain_text_view_is_spelled_too(tmp_path: Path) -> None:
    """catalog check's findings are lines, not a rich table: a human view all the same."""
    (tmp_path / "m.toml").write_text(
        '[[models]]\nprovider = "acm\u00e9"\nmodel = "acm\u00e9-1"\ninput_usd_per_mtok = 0.5\n'
        'output_usd_per_mtok = 1.5\ncategories = ["coding"]\nas_of = "2020-01-01"\n',
        encoding="utf-8")
    args = ["catalog", "check", "--models-catalog", "m.toml", "--today", "2026-11-29"]
    plain = _run(args, "utf-8", tmp_path)
    declared = _run(args, "ascii", tmp_path)
    assert declared.returncode == plain.returncode == 1
    text = plain.stdout.decode("utf-8")
    assert "acm\u00e9/acm\u00e9-1" in text
    assert declared.stdout.decode("ascii") == for_encoding(text, "ascii")
    assert "acm\\xe9/acm\\xe9-1" in declared.stdout.decode("ascii")


def test_the_spelling_keeps_what_the_encoding_holds_and_escapes_the_rest() -> None:
    text = "café → ok — 中 ─│┼ \udcff"
    assert for_encoding(text, "utf-8") == "café → ok — 中 ─│┼ \\udcff"
    assert for_encoding(text, "latin-1") == "café -> ok -- \\u4e2d -|+ \\udcff"
    assert for_encoding(text, "ascii") == "caf\\xe9 -> ok -- \\u4e2d -|+ \\udcff"
    assert for_encoding(text, "cp1252") == "café -> ok — \\u4e2d -|+ \\udcff"


def test_an_encoding_error_left_is_exit_2_naming_the_encoding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a write still meet an encoding error (a stream with no byte layer), it is not
    a reader gone: one line naming the encoding, and exit 2."""
    import io

    from omniladder import cli

    class Narrow(io.StringIO):
        encoding = "ascii"

        def write(self, text: str) -> int:
            text.encode("ascii")
            return super().write(text)

    guard = cli._GuardedStdout(Narrow())
    guard.write("ok\n")
    guard.write("\u2014\n")
    assert guard.failure is not None
    assert str(guard.failure) == ("its encoding ascii cannot hold '\u2014'; set "
                                  "PYTHONIOENCODING=utf-8")


# --- the class: every command path and every format -----------------------------------------


def _format_choices() -> dict[str, tuple[list[str], bool]]:
    """Each command path's --format choices and whether it takes --json."""
    found: dict[str, tuple[list[str], bool]] = {}

    def walk(command: Any, path: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())
        if getattr(command, "commands", None):
            return
        choices: list[str] = []
        json_flag = False
        for parameter in command.params:
            if "--format" in parameter.opts:
                choices = list(parameter.type.choices)
            json_flag = json_flag or "--json" in parameter.opts
        found[path] = (choices, json_flag)

    walk(click_tree(), "")
    return found


def _path_of(args: list[str]) -> str:
    groups = {"catalog", "audit", "import", "quota"}
    return " ".join(args[:2]) if args[0] in groups else args[0]


def encoding_cases(tmp_path: Path) -> dict[str, list[str]]:
    """Every command path with each of its formats (taken from its own options)."""
    from tests.test_fuzz import CLOSED_STDOUT, writing_commands

    bases: dict[str, list[str]] = {}
    for args in CLOSED_STDOUT.values():
        if args[0].startswith("-"):
            continue
        bare = [a for a in args if a not in ("--json",)]
        if "--format" in bare:
            at = bare.index("--format")
            bare = bare[:at] + bare[at + 2:]
        bases.setdefault(_path_of(bare), bare)
    for name, (args, _) in writing_commands(tmp_path).items():
        bases.setdefault(name, args)
    cases: dict[str, list[str]] = {}
    choices = _format_choices()
    for path, args in bases.items():
        formats, json_flag = choices[path]
        cases[path] = args
        for fmt in formats:
            if fmt != "table":
                cases[f"{path} --format {fmt}"] = [*args, "--format", fmt]
        if json_flag and not formats:
            cases[f"{path} --json"] = [*args, "--json"]
    assert set(bases) == set(choices), sorted(set(choices) - set(bases))
    return cases


@pytest.mark.slow
def test_every_command_and_format_keeps_its_answer_whatever_stdout_declares(
        tmp_path: Path) -> None:
    from tests.forked import Case, run_cases

    runs = {}
    for encoding in ("utf-8", *ENCODINGS):
        folder = tmp_path / encoding
        folder.mkdir()
        cases = encoding_cases(folder)
        results = run_cases([Case(args) for args in cases.values()],
                            env={"PYTHONIOENCODING": encoding})
        runs[encoding] = {name: (result, str(folder))
                          for name, result in zip(cases, results, strict=True)}
    failures = []
    for encoding in ENCODINGS:
        for name, (plain, plain_dir) in runs["utf-8"].items():
            found, found_dir = runs[encoding][name]
            expected = bytes.fromhex(plain.stdout_bytes).replace(plain_dir.encode(), b"@")
            got = bytes.fromhex(found.stdout_bytes).replace(found_dir.encode(), b"@")
            machine = "--json" in name or any(f"--format {f}" in name
                                              for f in MACHINE_FORMATS)
            spelled = for_encoding(expected.decode("utf-8"), encoding).encode(encoding)
            if found.code != plain.code:
                failures.append(f"{encoding} {name}: exit {found.code}, not {plain.code}: "
                                f"{found.stderr}")
            elif got != expected and (machine or got != spelled):
                failures.append(f"{encoding} {name}: {len(got)} bytes, not the "
                                f"{len(expected)} of the answer"
                                + ("" if machine else f" or the {len(spelled)} spelled"))
            elif "Traceback" in found.stderr:
                failures.append(f"{encoding} {name}: {found.stderr}")
    assert not failures, "\n".join(failures)
