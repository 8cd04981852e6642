"""One module per command, and the start-up of the command line in one place.

Every trick that keeps ``--version`` and a command's ``--help`` cheap is here
(docs/performance.md#typer): the table of where each command lives, so that a command line
imports only the command it names (lazy command loading); the variable a completion script
calls omniladder back with, and typer's completion modules, which are private and imported
only when completion is asked for; and pydantic's plugin search, turned off before any model
is declared. ``NOT_AT_START`` names what registering a command may not import: the modules of
a command import their analyses, views and models inside the command's function.
``tests/test_startup.py`` holds each command to it, in a fresh interpreter.

They live in the package's ``__init__`` because every command line imports it anyway: the
start-up imports no module it did not import before.
"""

import importlib
import sys
import types
from typing import Any

COMMANDS: dict[str, tuple[str, str, bool]] = {
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
    "whatif": ("whatif_cmd", "whatif", False),
}
"""Every command in the order ``--help`` lists them, and where it lives."""

NOT_AT_START = ("rich", "pydantic", "importlib.metadata", "omniladder.models",
                "omniladder.engine", "omniladder.inputs", "highspy", "numpy")
"""Packages (and their modules) that registering a command never imports: the views' tables,
the models and their validation, the engine and the readers come with the command's run;
HiGHS (highspy, with numpy) only with the one function that solves what-if's bound
(``omniladder.analyses.whatif.bound.solve``), whose import alone takes about 90 ms."""

COMPLETE_VAR = "_OMNILADDER_COMPLETE"
"""The variable a completion script sets when it calls omniladder back (click's name for a
program called omniladder)."""

NO_COMMAND = ""
"""``named_command``'s answer for a command line that runs no command (``--version``)."""


def named_command(argv: list[str]) -> str | None:
    """The command the command line names first, when it is one; ``NO_COMMAND`` when none is
    needed (``--version``); None otherwise (no command, a root option first, a typo): those
    get the whole application."""
    first = argv[1] if len(argv) > 1 else None
    if first == "--version" and len(argv) == 2:
        return NO_COMMAND  # the version needs no command: none is imported
    return first if first in COMMANDS else None


def load_command(name: str) -> Any:
    """The typer command or sub-application ``name``, its module imported now."""
    module, attribute, _ = COMMANDS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)


def start_completion() -> None:
    """Register typer's shell classes, for a completion script asking for completions: only
    then, so that no other run pays for importing them (typer's own modules, pinned typer
    <0.29)."""
    from typer._completion_classes import completion_init

    completion_init()


def completion_script(shell: str) -> str:
    """typer's completion script for ``shell``: the shell calls ``omniladder`` back with
    ``COMPLETE_VAR`` set, which builds the whole application, every command included."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="omniladder", complete_var=COMPLETE_VAR,
                                 shell=shell)


_PLUGIN_LOADER = "pydantic.plugin._loader"


def without_pydantic_plugins() -> None:
    """Build every validator of this process without looking for pydantic plugins.

    Called by ``omniladder.cli.main`` before any model is declared, so only the command line
    runs this way; a program importing ``omniladder.models`` keeps pydantic's own loader.

    pydantic looks for plugins (packages registering a ``pydantic`` entry point, such as an
    observability tool) when it builds the first validator of a process: it imports
    ``importlib.metadata`` (with ``email``, ``zipfile`` and ``csv``) and reads the metadata of
    every installed distribution. That is 15-20 ms of a 190 ms table view, 8 % of the
    start-up ratio (docs/performance.md#start-up), for plugins omniladder never wants: its
    validation is of the operator's files, not of a service to observe. The loader module is
    replaced by one that finds none; a name other than ``get_plugins`` asked of it (by a later
    pydantic) puts the real module back and comes from it.
    """
    if _PLUGIN_LOADER in sys.modules:
        return
    loader = types.ModuleType(_PLUGIN_LOADER)

    def get_plugins() -> tuple[()]:
        return ()

    def real_loader(name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module
            raise AttributeError(name)
        sys.modules.pop(_PLUGIN_LOADER, None)
        return getattr(importlib.import_module(_PLUGIN_LOADER), name)

    loader.get_plugins = get_plugins  # type: ignore[attr-defined]
    loader.__getattr__ = real_loader  # type: ignore[method-assign]
    sys.modules[_PLUGIN_LOADER] = loader
