"""What several commands share: the input options, loading them, and the one error edge."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, NoReturn

import typer

from omniladder.commands.lifetime import hold
from omniladder.errors import ExitCode, OmniladderError, UsageError
from omniladder.rendering import Format, PlanFormat

if TYPE_CHECKING:
    from omniladder.engine.autoid import NowSource
    from omniladder.engine.inputs import LoadedInputs

ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", "-c", help="Settings file (default: ./omniladder.toml when present).",
    show_default=False)]
ConnectionsOpt = Annotated[Path | None, typer.Option(
    "--connections", help="Connections file; overrides [inputs] connections.",
    show_default=False)]
QuotaOpt = Annotated[Path | None, typer.Option(
    "--quota", help="Quota snapshot with history; overrides [inputs] quota.",
    show_default=False)]
SpendOpt = Annotated[Path | None, typer.Option(
    "--spend", help="Spend ledger; overrides [inputs] spend.", show_default=False)]
CatalogOpt = Annotated[list[Path] | None, typer.Option(
    "--catalog", help="Billing catalog overlay, applied over the shipped one (repeatable).",
    show_default=False)]
ModelsCatalogOpt = Annotated[list[Path] | None, typer.Option(
    "--models-catalog", help="Model catalog overlay (repeatable).", show_default=False)]
WindowsCatalogOpt = Annotated[list[Path] | None, typer.Option(
    "--windows-catalog", help="Quota-window scope catalog overlay, tried before the shipped "
    "one (repeatable).", show_default=False)]
NoShippedOpt = Annotated[bool, typer.Option(
    "--no-shipped-catalogs", help="Use only the catalog files given, not the shipped ones.")]
NowOpt = Annotated[str | None, typer.Option(
    "--now", help="Plan for this instant (RFC 3339 with offset, or 'now' for the current "
    "time); default: the snapshot's taken_at, else the current time.", show_default=False)]


FormatOpt = Annotated[Format | None, typer.Option(
    "--format", case_sensitive=False, show_default=False,
    help="Output format: table (the default), json (the same as --json) or markdown "
    "(GitHub-flavoured, for a pull request comment or $GITHUB_STEP_SUMMARY).")]
"""The --format option; a command taking it names its renderers in
omniladder.rendering.FORMAT_RENDERERS and picks one with ``output_format``."""


PlanFormatOpt = Annotated[PlanFormat | None, typer.Option(
    "--format", case_sensitive=False, show_default=False,
    help="Output format: table (the default), json (the same as --json), markdown "
    "(GitHub-flavoured, for a pull request comment or $GITHUB_STEP_SUMMARY) or openmetrics "
    "(for a Prometheus textfile collector; docs/metrics.md).")]
"""The --format option of plan and forecast: FormatOpt's formats and openmetrics."""

MetricsOutOpt = Annotated[Path | None, typer.Option(
    "--metrics-out", show_default=False,
    help="Also write the OpenMetrics text to this file, atomically (for the node_exporter "
    "textfile collector: name it *.prom in its directory). Its own option because --out "
    "saves the JSON plan.")]


def plan_output_format(chosen: PlanFormat | None, json_flag: bool) -> Format | None:
    """The format of plan and forecast: a ``Format``, or None for openmetrics (the metrics
    text on stdout); --json with --format openmetrics is a usage error, as ``output_format``
    rules."""
    if chosen is PlanFormat.OPENMETRICS:
        if json_flag:
            raise UsageError("--json asks for json and --format asks for openmetrics; "
                             "pass one of them", field="--format")
        return None
    found = output_format(None if chosen is None else Format(chosen.value), json_flag)
    if found is Format.TABLE:
        human_view()
    return found


def human_view() -> None:
    """The answer on standard output is a human view (the table of plan and forecast): on
    a stream not declared UTF-8 it is spelled in the declared encoding; anything else is
    written as UTF-8 bytes (omniladder.cli, docs/contract.md#encodings)."""
    human = getattr(sys.stdout, "human_view", None)
    if callable(human):
        human()


def output_format(chosen: Format | None, json_flag: bool) -> Format:
    """The format --format and --json ask for together; --json is --format json, so the
    two may agree, and a disagreement is a usage error (exit 2)."""
    if json_flag and chosen not in (None, Format.JSON):
        assert chosen is not None
        raise UsageError(f"--json asks for json and --format asks for {chosen.value}; "
                         "pass one of them", field="--format")
    if json_flag:
        return Format.JSON
    return chosen if chosen is not None else Format.TABLE


class InputOptions(NamedTuple):
    config: Path | None = None
    connections: Path | None = None
    quota: Path | None = None
    spend: Path | None = None
    catalog: tuple[Path, ...] = ()
    models_catalog: tuple[Path, ...] = ()
    no_shipped_catalogs: bool = False

    def load(self) -> LoadedInputs:
        """Load and validate every input these options name."""
        from omniladder.inputs.input_set import find_settings, load_inputs

        loaded = load_inputs(
            find_settings(self.config), connections=self.connections, quota=self.quota,
            spend=self.spend, catalogs=self.catalog, models_catalogs=self.models_catalog,
            no_shipped_catalogs=self.no_shipped_catalogs)
        hold(loaded)
        return loaded


_SHARED: tuple[tuple[str, Any, object], ...] = (
    ("config", ConfigOpt, None),
    ("connections", ConnectionsOpt, None),
    ("quota", QuotaOpt, None),
    ("spend", SpendOpt, None),
    ("catalog", CatalogOpt, None),
    ("models_catalog", ModelsCatalogOpt, None),
    ("no_shipped_catalogs", NoShippedOpt, False),
)


def gathering(shared: Sequence[tuple[str, Any, object]], name: str,
              gather: Callable[[dict[str, Any]], object]
              ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator giving a command the ``shared`` options, gathered into one parameter.

    The command declares a keyword parameter ``name``; ``gather`` pops the shared options'
    values from the keyword arguments and builds its value. The command line shows them
    after the command's own arguments.
    """

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != name]
        arguments = [p for p in own if p.default is inspect.Parameter.empty]
        options = [p for p in own if p.default is not inspect.Parameter.empty]
        added = [inspect.Parameter(option, inspect.Parameter.KEYWORD_ONLY, default=default,
                                   annotation=annotation)
                 for option, annotation, default in shared]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            command(*args, **{name: gather(kwargs)}, **kwargs)

        parameters = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                      for p in arguments]
        parameters += added + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in options]
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters)
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate


def _input_options(kwargs: dict[str, Any]) -> InputOptions:
    return InputOptions(
        config=kwargs.pop("config"), connections=kwargs.pop("connections"),
        quota=kwargs.pop("quota"), spend=kwargs.pop("spend"),
        catalog=tuple(kwargs.pop("catalog") or ()),
        models_catalog=tuple(kwargs.pop("models_catalog") or ()),
        no_shipped_catalogs=kwargs.pop("no_shipped_catalogs"))


with_input_options = gathering(_SHARED, "options", _input_options)
"""Give a command the input options every planning command takes, as ``options``."""


def now_for(flag: str | None, inputs: LoadedInputs, *, snapshot_used: bool = True
            ) -> tuple[datetime, NowSource, LoadedInputs]:
    """R14's instant and its source; ``--now now`` is the clock.

    When the instant defaults to an old snapshot's taken_at, the inputs come back with a
    warning added, so the plan's JSON ``warnings`` carries it too.
    """
    from omniladder.engine.autoid import (
        is_clock_word,
        parse_instant,
        resolve_now,
        stale_snapshot_warning,
    )

    if flag is not None and is_clock_word(flag):
        return (*resolve_now(None, None), inputs)
    taken_at = inputs.quota.taken_at if inputs.quota is not None else None
    instant, source = resolve_now(parse_instant(flag) if flag is not None else None,
                                  taken_at)
    warning = stale_snapshot_warning(
        instant, source, inputs.settings.ladder.max_reading_age_seconds)
    if warning is not None and snapshot_used:
        inputs = inputs._replace(warnings=(warning, *inputs.warnings))
    return instant, source, inputs


def span_instants(start: str | None, end: str | None, clock: datetime | None = None
                  ) -> tuple[datetime | None, datetime | None]:
    """The instants of ``--from`` and ``--to``, each RFC 3339 text or ``now`` (both read
    the one clock), None where not given: every command that takes a span reads it here. A
    ``--from`` after the ``--to`` is a usage error naming both."""
    from datetime import UTC

    from omniladder import timefmt
    from omniladder.engine.autoid import parse_instant_or_now

    clock = clock or datetime.now(UTC)
    first = None if start is None else parse_instant_or_now(start, "--from", clock)
    last = None if end is None else parse_instant_or_now(end, "--to", clock)
    if first is not None and last is not None and first > last:
        raise UsageError(f"{timefmt.iso(first)} is after --to {timefmt.iso(last)}",
                         field="--from")
    return first, last


ROLES = {
    "settings": "the settings file",
    "connections": "the connections file",
    "quota": "the quota file",
    "spend": "the spend ledger",
    "billing-catalog": "a billing catalog",
    "models-catalog": "a model catalog",
    "windows-catalog": "a window-scope catalog",
}
"""What each role of ``LoadedInputs.read`` is called when an output would replace it."""


def files_read(inputs: LoadedInputs) -> list[tuple[str, Path]]:
    """Every file the inputs were loaded from, shipped catalogs included, as
    ``refuse_overwriting`` takes them."""
    return [(ROLES.get(role, f"the {role} file"), path) for role, _, path in inputs.read]


def refuse_overwriting(outputs: Iterable[tuple[str, Path | None]],
                       inputs: Iterable[tuple[str, Path]], *,
                       makes_directories: bool = False) -> None:
    """The one check every output option goes through before anything is written: exit 2
    when an output is an input of the run or another output (omniladder.inputs.writing).

    ``outputs`` are (option, path); an output not asked for (None) is skipped.
    """
    asked = [(option, path) for option, path in outputs if path is not None]
    if not asked:  # most runs write nothing: they need not import the writer (~1 ms)
        return
    from omniladder.inputs.writing import Output
    from omniladder.inputs.writing import refuse_overwriting as refuse

    refuse([Output(option, path) for option, path in asked], inputs,
           makes_directories=makes_directories)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """The one atomic writer (omniladder.inputs.writing), imported when a command writes."""
    from omniladder.inputs.writing import write_atomic as write

    write(path, text)


def say(message: str) -> None:
    """Talk goes to stderr; stdout is data. Control characters are written as their escapes
    (omniladder.rendering.escape), whatever file name or value the message quotes."""
    from omniladder.rendering.escape import printable

    sys.stderr.write(printable(message) + "\n")


def answer_is_no(reason: str) -> NoReturn:
    """Exit 1 (the answer is "no"), saying why in one line on stderr."""
    say(f"omniladder: exit 1: {reason}")
    raise typer.Exit(int(ExitCode.NO))


def differences(counts: dict[str, int]) -> str:
    """``3 differences`` from a diff's counts."""
    total = sum(counts.values())
    return f"{total} difference{'' if total == 1 else 's'}"


@contextmanager
def user_errors() -> Iterator[None]:
    """The one place a user-facing error becomes a message and an exit code."""
    try:
        yield
    except OmniladderError as exc:
        for line in str(exc).splitlines():
            say(f"omniladder: error: {line}")
        raise typer.Exit(int(exc.exit_code)) from None
