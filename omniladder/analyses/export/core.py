"""The one entry point: a plan and a target in, (document, fidelity report) out; and the
``--current`` comparison with what a gateway has deployed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from omniladder.analyses.export.fidelity import LEVELS, Fidelity, ordered
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportPlan
from omniladder.analyses.export.targets import ExportTarget, target
from omniladder.errors import UsageError

__all__ = ["Comparison", "Export", "ExportTarget", "check_map", "compare_current", "export"]


class Comparison(NamedTuple):
    """The export against what is deployed (``--current``)."""

    file: str
    differences: tuple[str, ...]
    empties: str | None = None
    """The deployed group or combo the export would leave with nothing to dispatch."""
    first_run: bool = False
    """The file does not exist yet: nothing is deployed (the first run of a cron job)."""

    @property
    def equal(self) -> bool:
        return not self.differences


class Export(NamedTuple):
    target: ExportTarget
    plan: ExportPlan
    document: dict[str, Any]
    text: str
    """The file as written: ``--out`` or standard output."""
    fidelity: tuple[Fidelity, ...]
    entries: int
    """Pool entries the document holds."""
    units: int
    """Elements the document holds (the target's ``unit``: LiteLLM deployments, OmniRoute
    steps)."""
    verified_only: bool
    map_file: str | None

    @property
    def name(self) -> str:
        return self.plan.name

    def counts(self) -> dict[str, int]:
        return {level: sum(1 for found in self.fidelity if found.level == level)
                for level in LEVELS}

    def summary(self) -> str:
        unit = self.target.unit
        counts = self.counts()
        return (f"export {self.target.name} {self.plan.auto_id.text} → {self.name}: "
                f"{self.units} {unit}{'' if self.units == 1 else 's'} for {self.entries} of "
                f"{len(self.plan.entries)} pool entries; {counts['dropped']} dropped, "
                f"{counts['warning']} warning{'' if counts['warning'] == 1 else 's'}, "
                f"{counts['info']} info")


def export(name: str, plan: ExportPlan, *,
           routes: Mapping[str, ConnectionRoute] | None = None, map_file: str | None = None,
           verified_only: bool = False) -> Export:
    """Build the document of the target ``name`` from the plan, with its fidelity report."""
    chosen = target(name)
    check_map(chosen, routes is not None)
    built = chosen.build(plan, routes, verified_only=verified_only)
    return Export(target=chosen, plan=plan, document=built.document, text=built.text,
                  fidelity=ordered(built.fidelity),
                  entries=built.entries, units=built.units, verified_only=verified_only,
                  map_file=map_file)


def check_map(chosen: ExportTarget, given: bool) -> None:
    """Exit 2 (on ``--map``) when a map is given to a target that reads none."""
    if given and chosen.map_refusal is not None:
        raise UsageError(chosen.map_refusal, field="--map")


def compare_current(result: Export, path: Path) -> Comparison:
    """Read the deployed document and say how the export differs from it."""
    from omniladder.inputs.files import check_input_file, decode_text, display_path, read_bytes

    shown = display_path(path)
    if _first_run(path):
        what = result.target.unit
        found = [] if not result.units else [
            f"{shown} does not exist yet: nothing is deployed, so this is a first run and "
            f"the export's {result.units} {what}{'' if result.units == 1 else 's'} "
            f"{'is' if result.units == 1 else 'are'} to apply"]
        return Comparison(shown, tuple(found), first_run=True)
    check_input_file(path, shown)
    text = decode_text(read_bytes(path, shown), shown)
    found, deployed = result.target.compare(result.name, result.document, text, shown)
    empties = result.name if deployed and not result.units else None
    return Comparison(shown, tuple(found), empties)


def _first_run(path: Path) -> bool:
    """Whether ``path`` names nothing yet in a folder that exists: the file a cron job's
    ``--current F --out F`` reads before its first ``--out`` wrote it. A missing folder is
    left to the read (file not found, exit 2): a mistyped path, not a first run."""
    try:
        path.lstat()
    except FileNotFoundError:
        try:
            return path.parent.is_dir()
        except (OSError, ValueError):
            return False
    except (OSError, ValueError):
        return False
    return False
