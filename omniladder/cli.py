"""The command line: it only wires commands; each lives in omniladder/commands/."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Annotated, Any, NoReturn, TextIO

import typer

from omniladder import __version__
from omniladder.commands.help import HELP_OPTION_NAMES, ROOT_EPILOG, epilog

_COMMANDS: dict[str, tuple[str, str, bool]] = {
    # name: (module under omniladder.commands, attribute, a sub-application)
    "plan": ("plan_cmd", "plan", False),
    "ids": ("ids_cmd", "ids", False),
    "import": ("import_cmd", "import_app", True),
    "quota": ("quota_cmd", "quota_app", True),
    "catalog": ("catalog_cmd", "catalog_app", True),
    "audit": ("audit_cmd", "audit_app", True),
    "init": ("init_cmd", "init", False),
    "schema": ("schema_cmd", "schema", False),
    "why": ("why_cmd", "why", False),
    "who": ("who_cmd", "who", False),
    "simulate": ("simulate_cmd", "simulate", False),
    "forecast": ("forecast_cmd", "forecast", False),
    "check": ("check_cmd", "check", False),
    "diff": ("diff_cmd", "diff", False),
    "show": ("show_cmd", "show", False),
    "completion": ("completion_cmd", "completion", False),
    "export": ("export_cmd", "export", False),
}
"""Every command in the order ``--help`` lists them, and where it lives."""


COMPLETE_VAR = "_OMNILADDER_COMPLETE"
"""The variable a completion script sets when it calls omniladder back (click's name for a
program called omniladder)."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"omniladder {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")]
    = False,
) -> None:
    """Routing planner for LLM gateways."""


def build_app(only: str | None = None) -> typer.Typer:
    """The application with every command, or with only the one named ``only``.

    typer turns each registered command's signature into click options when it runs, and
    importing a command imports its options; a command line that names its command needs
    no other (lazy command registration).
    """
    built = typer.Typer(
        name="omniladder",
        help="Routing planner for LLM gateways: which subscription, keyless and paid "
        "connections an auto id may use, in what order, and why the rest is out.",
        no_args_is_help=True,
        # Completion is `omniladder completion SHELL` (a lazy command), not typer's
        # --install-completion, which would import its completion module on every run.
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        # click passes these on to every command and sub-command's context.
        context_settings={"help_option_names": HELP_OPTION_NAMES},
        epilog=ROOT_EPILOG,
    )
    built.callback(epilog=ROOT_EPILOG)(_root)
    for name, (module, attribute, group) in _COMMANDS.items():
        if only is not None and name != only:
            continue
        found = getattr(importlib.import_module(f"omniladder.commands.{module}"), attribute)
        if group:
            for sub in found.registered_commands:
                sub.epilog = epilog(f"{name} {sub.name}")
            built.add_typer(found, name=name)
        else:
            built.command(name, epilog=epilog(name))(found)
    return built


def __getattr__(name: str) -> Any:
    """``omniladder.cli.app``: the whole application, built when first asked for."""
    if name == "app":
        whole = build_app()
        globals()["app"] = whole
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _named_command(argv: list[str]) -> str | None:
    """The command the command line names first, when it is one; None otherwise (no
    command, a root option first, a typo): those get the whole application, as before."""
    first = argv[1] if len(argv) > 1 else None
    return first if first in _COMMANDS else None


class _ClosedPipeGuard:
    """Standard output that a reader may close early (``omniladder check … | head -1``).

    The first write or flush that meets a closed pipe points file descriptor 1 at
    /dev/null, and every later one goes there: the command finishes its work (a --junit
    or --out file is still written) and exits with the code its answer has, quietly, as
    ripgrep does. Nothing else in omniladder handles EPIPE.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def run() -> NoReturn:
    """The console script: ``main``, then the fast exit of omniladder.commands.lifetime."""
    from omniladder.commands import lifetime

    lifetime.keep_until_exit()
    try:
        main()
    except SystemExit as stop:
        status = lifetime.exit_status(stop.code)
    else:
        status = 0
    lifetime.hard_exit(status)


def main() -> None:
    # A plan builds millions of small acyclic objects (validated inputs, verdicts,
    # decisions) that reference counting frees. The cyclic collector would scan each of
    # them at least once, and the loaded fleet again and again: a third of the run time at
    # 10,000 connections, and still a sixth with thresholds raised 100-fold, for no memory
    # back (peak 1,327 MB at 100,000 connections with or without it; see benchmarks/).
    # The process is short-lived, so it runs without it.
    gc.disable()
    if COMPLETE_VAR in os.environ:
        # A completion script asking for completions (`omniladder completion SHELL`): typer's
        # shell classes are registered only now, so no other run pays for importing them.
        # The command line is bare then, so the whole application (every command) is built.
        from typer._completion_classes import completion_init

        completion_init()
    guard = _ClosedPipeGuard(sys.stdout)
    sys.stdout = guard  # a TextIO in all but name (its __getattr__ passes the rest on)
    try:
        build_app(_named_command(sys.argv))()
    finally:
        guard.flush()
