"""The command line: it only wires commands; each lives in omniladder/commands/."""

# No `from __future__ import annotations`: typer reads the root callback's annotations when it
# runs, and as values they need no compiling from text first (docs/performance.md#start-up).

import codecs
import contextlib
import gc
import os
import signal
import sys
import types
from typing import Annotated, Any, NoReturn, TextIO

import typer

from omniladder import __version__
from omniladder.commands import (
    COMMANDS,
    COMPLETE_VAR,
    load_command,
    named_command,
    start_completion,
    without_pydantic_plugins,
)
from omniladder.commands.help import HELP_OPTION_NAMES, ROOT_EPILOG, epilog


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
    for name, (_, _, group) in COMMANDS.items():
        if only is not None and name != only:
            continue
        found = load_command(name)
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


class _GuardedStdout:
    """Standard output that a reader may close early, or that may fail.

    A closed pipe (``omniladder check … | head -1``): the first write or flush that meets it
    points file descriptor 1 at /dev/null, and every later one goes there; the command
    finishes its work (a --junit or --out file is still written) and exits with the code its
    answer has, quietly, as ripgrep does.

    Any other write error (``> /dev/full``, a disk gone): the same, and the error is kept in
    ``failure``; ``main`` then says it in one line and exits 2, as the answer never arrived.

    A stream declared in an encoding other than UTF-8 (``PYTHONIOENCODING=latin-1``, a
    Windows code page on a redirect) gets the answer whole: a machine format as UTF-8 bytes,
    a human view (``human_view``) spelled in the declared encoding (docs/contract.md).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.failure: OSError | None = None
        declared = getattr(stream, "encoding", None) or "utf-8"
        self._bytes = getattr(stream, "buffer", None)
        self._declared: str | None = None  # None: UTF-8, or no byte layer to write to
        if self._bytes is not None and codecs.lookup(declared).name != "utf-8":
            self._declared = declared
        self._human = False

    @property
    def encoding(self) -> str:
        """What the views may write: any text. A stream declared otherwise still gets the
        answer whole (``write``), so rich draws the same table whatever the locale."""
        return "utf-8"

    def human_view(self) -> None:
        """The answer from now on is a human view: on a stream declared in an encoding other
        than UTF-8 it is spelled in that encoding (omniladder.rendering.escape.for_encoding)
        instead of written as UTF-8 bytes."""
        self._human = True

    def write(self, text: str) -> int:
        try:
            if self._declared is None:
                return self._stream.write(text)
            if self._human:
                from omniladder.rendering.escape import for_encoding

                return self._stream.write(for_encoding(text, self._declared))
            # A machine format (JSON, markdown, OpenMetrics, a gateway document) is UTF-8
            # whatever the stream declares (PYTHONIOENCODING, a Windows code page): written
            # in another encoding it would fail part-way, or be respelled.
            self._stream.flush()
            assert self._bytes is not None
            self._bytes.write(text.encode("utf-8", "backslashreplace"))
            return len(text)
        except (OSError, ValueError) as exc:
            self._discard(exc)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            self._discard(exc)

    def _discard(self, exc: OSError | ValueError) -> None:
        if self.failure is None and isinstance(exc, UnicodeEncodeError):
            # not a reader gone: the answer would be cut where the character was
            self.failure = OSError(f"its encoding {exc.encoding} cannot hold "
                                   f"{exc.object[exc.start:exc.end]!r}; set "
                                   "PYTHONIOENCODING=utf-8")
        if (self.failure is None and isinstance(exc, OSError)
                and not isinstance(exc, BrokenPipeError)):
            self.failure = exc
        with contextlib.suppress(OSError, ValueError):
            _to_devnull(self._stream.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _QuietStderr:
    """Standard error that never raises: when it cannot be written (closed, full), there is
    no one left to tell, and the exit code must stay the one the answer has."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with contextlib.suppress(OSError, ValueError):
            return self._stream.write(text)
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _to_devnull(fd: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    if devnull != fd:
        os.dup2(devnull, fd)
        os.close(devnull)


def _standard_streams() -> None:
    """Give every standard stream that was closed (``>&-``, ``2>&-``, ``<&-``) /dev/null.

    Python starts with ``sys.stdout`` (or stdin, stderr) set to None when its descriptor is
    closed, and anything opened later would take the descriptor's number: a message meant
    for stderr could land in a file being written. With /dev/null in its place, a closed
    stdout is a reader that went away (the answer's exit code, as with a closed pipe), a
    closed stderr changes no exit code, and a closed stdin is empty.
    """
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            closed = True
        else:
            closed = False
        stream = getattr(sys, name)
        if not closed and stream is not None:
            continue  # as it should be
        try:
            if closed:
                _to_devnull(fd)  # the stream Python made for it, if any, now writes there
                target = fd
            else:  # closed at start-up, and its number taken since: a descriptor of its own
                target = os.open(os.devnull, os.O_RDWR)
            if stream is None:
                setattr(sys, name, open(target, mode, encoding="utf-8",  # noqa: SIM115
                                        errors="backslashreplace", closefd=target != fd))
        except OSError:
            continue


def run() -> NoReturn:
    """The console script: ``main``, then the fast exit of omniladder.commands.lifetime."""
    from omniladder.commands import lifetime

    _standard_streams()
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
    signal.signal(signal.SIGTERM, _terminated)
    without_pydantic_plugins()
    if COMPLETE_VAR in os.environ:
        # A completion script asking for completions (`omniladder completion SHELL`). The
        # command line is bare then, so the whole application (every command) is built.
        start_completion()
    guard = _GuardedStdout(sys.stdout)
    sys.stdout = guard  # a TextIO in all but name (its __getattr__ passes the rest on)
    sys.stderr = _QuietStderr(sys.stderr)
    try:
        build_app(named_command(sys.argv))()
    finally:
        guard.flush()
        if guard.failure is not None:
            _stdout_failed(guard.failure)


def _terminated(signum: int, frame: types.FrameType | None) -> NoReturn:
    """SIGTERM (a service manager stopping a job, ``timeout``, a cancelled CI run) ends the
    run as Ctrl-C does: an output being written is removed, not left as a temporary file
    beside its target, and the status is the shell's for a terminated process (143)."""
    raise SystemExit(128 + signum)


def _stdout_failed(failure: OSError) -> NoReturn:
    """Standard output could not take the answer: one line on stderr, and exit 2."""
    from omniladder.commands.common import say

    say(f"omniladder: error: standard output: {failure.strerror or failure}")
    raise SystemExit(2)
