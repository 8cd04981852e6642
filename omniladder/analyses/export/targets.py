"""The gateways an export writes for: the one registry of export targets, and the interface
each target implements.

A target is a class in a module of its own (``litellm``, ``omniroute``), subclassing
``ExportTarget``: how it renders the plan, how it compares the export with what is deployed
(``--current``), what its report calls a document's elements and in which format the document
is written. ``TARGETS`` names each target's module and its line of the command's help; the
command's choices and help, the fidelity report, the JSON report's schema and
docs/gateways.md all read it. The module stays light: the command line names the targets
without importing them, and a target's module is imported only when it exports.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from omniladder.analyses.export.fidelity import Fidelity
    from omniladder.analyses.export.routes import ConnectionRoute
    from omniladder.analyses.export.source import ExportPlan


class Registered(NamedTuple):
    module: str
    """The module whose ``TARGET`` is the target's ``ExportTarget``."""
    help: str
    """What the target writes, as the command's help names it."""


TARGETS: dict[str, Registered] = {
    "litellm": Registered("omniladder.analyses.export.litellm",
                          "a config.yaml model_list fragment"),
    "omniroute": Registered("omniladder.analyses.export.omniroute",
                            "a combo for POST /api/combos"),
}
"""Every export target, in the order the help lists them."""


class Built(NamedTuple):
    """A target's document for one plan, with what it could not carry."""

    document: dict[str, Any]
    text: str
    """The file as written: ``--out`` or standard output."""
    fidelity: list[Fidelity]
    entries: int
    """Pool entries the document holds."""
    units: int
    """Elements (``ExportTarget.unit``) the document holds."""


class ExportTarget(ABC):
    """What differs from one gateway to another; the rest of an export is shared."""

    name: ClassVar[str]
    """The target's name on the command line and in the report (its ``TARGETS`` key)."""
    unit: ClassVar[str]
    """What one exported element is called (a LiteLLM deployment, an OmniRoute step)."""
    group: ClassVar[str]
    """What the exported document is to the gateway (a model group, a combo)."""
    format: ClassVar[str]
    """The document's format (``yaml``, ``json``): the markdown report's fence."""
    map_refusal: ClassVar[str | None] = None
    """Why ``--map`` is refused for this target; None when the target reads one."""

    @abstractmethod
    def build(self, plan: ExportPlan, routes: Mapping[str, ConnectionRoute] | None, *,
              verified_only: bool) -> Built:
        """The target's document for ``plan``, with its fidelity items."""

    @abstractmethod
    def compare(self, name: str, document: dict[str, Any], text: str,
                shown: str) -> tuple[list[str], int]:
        """How ``document`` (managed as ``name``) differs from the deployed file's ``text``
        (``shown`` in messages), and how many elements that file deploys under ``name``."""


def names() -> tuple[str, ...]:
    return tuple(TARGETS)


def target(name: str) -> ExportTarget:
    """The registered target ``name``, its module imported on first use."""
    found: ExportTarget = importlib.import_module(TARGETS[name].module).TARGET
    return found


def help_text() -> str:
    """The command's help for TARGET: each target with what it writes."""
    each = [f"{name} ({registered.help})" for name, registered in TARGETS.items()]
    listed = ", ".join(each[:-1]) + " or " + each[-1] if len(each) > 1 else each[0]
    return f"The gateway: {listed}."
