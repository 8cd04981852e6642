"""The command line: it only wires commands; each lives in omniladder/commands/."""

from __future__ import annotations

import gc
import os
import sys
from typing import Annotated, Any, TextIO

import typer

from omniladder import __version__
from omniladder.commands.catalog_cmd import catalog_app
from omniladder.commands.check_cmd import check
from omniladder.commands.diff_cmd import diff
from omniladder.commands.ids_cmd import ids
from omniladder.commands.import_cmd import import_app
from omniladder.commands.init_cmd import init
from omniladder.commands.plan_cmd import plan
from omniladder.commands.schema_cmd import schema
from omniladder.commands.simulate_cmd import simulate
from omniladder.commands.why_cmd import why

app = typer.Typer(
    name="omniladder",
    help="Routing planner for LLM gateways: which subscription, keyless and paid "
    "connections an auto id may use, in what order, and why the rest is out.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"omniladder {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")]
    = False,
) -> None:
    """Routing planner for LLM gateways."""


app.command("plan")(plan)
app.command("ids")(ids)
app.add_typer(import_app, name="import")
app.add_typer(catalog_app, name="catalog")
app.command("init")(init)
app.command("schema")(schema)
app.command("why")(why)
app.command("simulate")(simulate)
app.command("check")(check)
app.command("diff")(diff)


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


def main() -> None:
    # A plan builds millions of small acyclic objects (validated inputs, verdicts,
    # decisions) that reference counting frees. The cyclic collector would scan each of
    # them at least once, and the loaded fleet again and again: a third of the run time at
    # 10,000 connections, and still a sixth with thresholds raised 100-fold, for no memory
    # back (peak 1,327 MB at 100,000 connections with or without it; see benchmarks/).
    # The process is short-lived, so it runs without it.
    gc.disable()
    guard = _ClosedPipeGuard(sys.stdout)
    sys.stdout = guard  # a TextIO in all but name (its __getattr__ passes the rest on)
    try:
        app()
    finally:
        guard.flush()
