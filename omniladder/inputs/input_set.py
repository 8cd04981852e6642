"""The input set: the settings file and the flags resolved into files, and every file read
into the engine's ``LoadedInputs`` (connections, quota, spend, catalogs), with the warnings
the reading made."""

from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from omniladder.engine.inputs import LoadedInputs
from omniladder.errors import InputError, InputErrors, UsageError
from omniladder.inputs.catalogs import catalog_paths, load_catalogs
from omniladder.inputs.documents import load_model
from omniladder.inputs.files import display_path
from omniladder.inputs.ledger.suffixes import LINE_SUFFIXES, refuse_suffix
from omniladder.inputs.normalise import quota_histories
from omniladder.inputs.validation import toml_line
from omniladder.models import (
    LEDGER_COST_MAX,
    Connection,
    ConnectionsFile,
    QuotaFile,
    Reading,
    Settings,
    SpendEvent,
    SpendFile,
)


class InputFiles(NamedTuple):
    """Which files to read, after the settings file and the flags are combined."""

    settings_file: Path | None = None
    connections: Path | None = None
    quota: Path | None = None
    spend: Path | None = None
    billing_catalogs: tuple[Path, ...] = ()
    model_catalogs: tuple[Path, ...] = ()
    no_shipped_catalogs: bool = False
    window_catalogs: tuple[Path, ...] = ()
    named_in_settings: tuple[tuple[str, Path], ...] = ()
    """Each path the settings file gave rather than a flag, with its key there
    (``[inputs] quota``, ``[catalogs] billing``)."""


def _as_named(path: Path) -> str:
    """A path as the operator named it, relative to the working directory when inside it,
    without following links (``display_path`` shows where a link leads)."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def find_settings(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    default = Path("omniladder.toml")
    return default if default.is_file() else None


def resolve_files(settings_path: Path | None, settings: Settings, *,
                  connections: Path | None = None, quota: Path | None = None,
                  spend: Path | None = None, catalogs: Sequence[Path] = (),
                  models_catalogs: Sequence[Path] = (),
                  no_shipped_catalogs: bool = False,
                  windows_catalogs: Sequence[Path] = ()) -> InputFiles:
    """Flags win over the settings file's [inputs]; settings paths are relative to the folder
    of the settings file as it is named (a link's own folder, not the one it leads to, as
    git resolves a relative include: docs/inputs.md#s2-3)."""
    base = settings_path.parent if settings_path is not None else Path(".")
    named: list[tuple[str, Path]] = []

    def from_settings(value: str | None, key: str) -> Path | None:
        if value is None:
            return None
        named.append((f"[inputs] {key}", base / value))
        return base / value

    chosen = {"connections": connections or from_settings(settings.inputs.connections,
                                                          "connections"),
              "quota": quota or from_settings(settings.inputs.quota, "quota"),
              # a traffic ledger is a spend ledger (SPEC §7.1): the one named for spend
              "spend": spend or from_settings(settings.inputs.spend, "spend")
              or from_settings(settings.inputs.traffic, "traffic")}
    for key, paths in (("billing", settings.catalogs.billing),
                       ("models", settings.catalogs.models),
                       ("windows", settings.catalogs.windows)):
        named += [(f"[catalogs] {key}", base / path) for path in paths]
    return InputFiles(
        settings_file=settings_path,
        connections=chosen["connections"],
        quota=chosen["quota"],
        spend=chosen["spend"],
        billing_catalogs=tuple(base / p for p in settings.catalogs.billing) + tuple(catalogs),
        model_catalogs=tuple(base / p for p in settings.catalogs.models) + tuple(models_catalogs),
        no_shipped_catalogs=no_shipped_catalogs or not settings.catalogs.include_shipped,
        window_catalogs=(tuple(base / p for p in settings.catalogs.windows)
                         + tuple(windows_catalogs)),
        named_in_settings=tuple(named),
    )


def _read_spend(path: Path, shown: str, warnings: list[str]) -> tuple[SpendEvent, ...]:
    """The spend events of the file given as the spend ledger, with the notes its reading
    made added to ``warnings``. SPEC §7.1: a traffic ledger is a spend ledger too. One event
    per line is one; a document is read as a spend ledger first (the common case, parsed
    once), and only one that is not is asked whether it is a traffic ledger. A spend
    document's events are held to a traffic ledger's rule (``LEDGER_COST_MAX`` an event, so
    every sum of them is a finite float): the first past it is exit 2.

    The ledger's readers are imported here, and only for a ledger that is not a spend
    document (one event per line, or a document of traffic events): a plan without a spend
    ledger, or with a spend document, does not load them (docs/performance.md#ledger-import)."""
    refuse_suffix(path, shown, "a spend ledger (or a traffic ledger)")
    if path.suffix.lower() not in LINE_SUFFIXES:
        try:
            spend = load_model(SpendFile, path).events
        except InputError:
            from omniladder.inputs.ledger.read import is_traffic

            if not is_traffic(path, shown):
                raise
        else:
            for index, event in enumerate(spend):
                if event.cost_usd > LEDGER_COST_MAX:
                    from omniladder.inputs.ledger.events import cost_refusal

                    raise InputError(cost_refusal(event.cost_usd), file=shown,
                                     field=f"events[{index}].cost_usd",
                                     line=toml_line(path, ("events", index, "cost_usd")))
            return spend
    from omniladder.inputs.ledger.read import spend_events

    traffic, notes = spend_events(path, shown)
    warnings.extend(notes)
    return traffic


@contextlib.contextmanager
def named_by_settings(files: InputFiles) -> Iterator[None]:
    """An error about a file the settings file named (missing, a directory, unreadable)
    names the settings file and the key too: ``omniladder.toml: [inputs] quota:
    data/quota.json: file not found (…)``. An error inside the file names it alone."""
    try:
        yield
    except InputErrors:
        raise
    except InputError as exc:
        settings = files.settings_file
        if settings is None or exc.field is not None or exc.line is not None:
            raise
        for key, path in files.named_in_settings:
            shown = display_path(path)
            if exc.file != shown:
                continue
            named = _as_named(settings)
            folder = str(Path(named).parent)
            link = (" (a link: not the folder it leads to)" if settings.is_symlink() else "")
            raise InputError(
                f"{shown}: {exc.message}; paths in {key.split()[0]} are relative to the folder "
                f"of the settings file as named, {folder}{link}", file=named,
                field=key) from None
        raise


def load_settings(path: Path | None) -> Settings:
    return Settings() if path is None else load_model(Settings, path)


def load_inputs(settings_path: Path | None = None, **flags: Any) -> LoadedInputs:
    """Read and validate every input: settings, connections, quota, spend and catalogs."""
    settings = load_settings(settings_path)
    files = resolve_files(settings_path, settings, **flags)
    return load_files(files, settings)


def clock() -> datetime:
    """The current time, for the checks that compare inputs with it (tests replace it)."""
    return datetime.now(UTC)


def load_files(files: InputFiles, settings: Settings) -> LoadedInputs:
    with named_by_settings(files):
        return _load_files(files, settings)


_PERIOD = operator.attrgetter("seat_period")


def _unpriced_periods(connections: Sequence[Connection], shown: str) -> list[str]:
    """SPEC §9: a seat_period without a seat_price_usd prices nothing: a warning naming the
    field (not an error: a leftover period changes no plan)."""
    return [f"{shown}: connections[{index}].seat_period ({connection.seat_period}) of "
            f"{connection.id!r} is given without seat_price_usd; it prices nothing"
            for index, connection in enumerate(connections)
            if connection.seat_period is not None and connection.seat_price_usd is None]


def _load_files(files: InputFiles, settings: Settings) -> LoadedInputs:
    warnings: list[str] = []
    shown: dict[str, str] = {}
    if files.settings_file is not None:
        shown["settings"] = display_path(files.settings_file)
    ladder = settings.ladder
    if ladder.reentry_min_remaining_percent < ladder.exit_cutoff_percent:
        warnings.append(
            f"{shown.get('settings', 'settings')}: ladder.reentry_min_remaining_percent "
            f"({ladder.reentry_min_remaining_percent:g}) is below exit_cutoff_percent "
            f"({ladder.exit_cutoff_percent:g}); the effective re-entry floor is the cutoff"
        )

    if files.connections is None:
        raise UsageError(
            "no connections file: pass --connections, or --config with [inputs] connections "
            "(or run where an omniladder.toml is)"
        )
    shown["connections"] = display_path(files.connections)
    fleet = load_model(ConnectionsFile, files.connections)
    connections = fleet.connections
    known = {connection.id for connection in connections}
    duplicate = fleet.first_duplicate() if len(known) < len(connections) else None
    if duplicate is not None:
        first, again = duplicate
        raise InputError(
            f"duplicate connection id {fleet.connections[again].id!r} "
            f"(first at connections[{first}]); ids must be unique",
            file=shown["connections"], field=f"connections[{again}].id",
            line=toml_line(files.connections, ("connections", again, "id")))
    if any(map(_PERIOD, connections)):  # asked at C speed: most fleets give none
        warnings.extend(_unpriced_periods(connections, shown["connections"]))

    quota: QuotaFile | None = None
    readings: dict[str, tuple[Reading, ...]] = {}
    if files.quota is not None:
        shown["quota"] = display_path(files.quota)
        quota, readings, notes = quota_histories(load_model(QuotaFile, files.quota), known,
                                                 shown["quota"], shown["connections"], clock())
        warnings.extend(notes)
    else:
        warnings.append("no quota file: every connection has no reading (quota-missing)")

    spend: tuple[SpendEvent, ...] | None = None
    if files.spend is not None:
        shown["spend"] = display_path(files.spend)
        spend = _read_spend(files.spend, shown["spend"], warnings)

    catalogs = load_catalogs(files.billing_catalogs, files.model_catalogs,
                             include_shipped=not files.no_shipped_catalogs)
    read = [(role, shown[role], path) for role, path in (
        ("settings", files.settings_file), ("connections", files.connections),
        ("quota", files.quota), ("spend", files.spend)) if path is not None]
    billing_paths, model_paths = catalog_paths(files.billing_catalogs, files.model_catalogs,
                                               not files.no_shipped_catalogs)
    read += [("billing-catalog", name, path) for path, name in billing_paths]
    read += [("models-catalog", name, path) for path, name in model_paths]
    return LoadedInputs(settings=settings, connections=connections, readings=readings,
                        quota=quota, spend=spend, catalogs=catalogs, files=shown,
                        warnings=tuple(warnings), read=tuple(read))
