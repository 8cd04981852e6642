"""Renderers: one per output format, all reading the same Plan.

``Format`` is the one list of output formats. Every command taking ``--format`` keeps a
``RENDERERS`` table from ``Format`` to a renderer; ``FORMAT_RENDERERS`` names each command's
table, and a test checks every format has a renderer in every one (CONVENTIONS 9).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from omniladder.engine.records import Plan


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    """GitHub-flavoured markdown, for a pull request comment or $GITHUB_STEP_SUMMARY."""


class PlanFormat(StrEnum):
    """The formats of ``plan`` and ``forecast``: every ``Format``, and OpenMetrics text for
    a Prometheus textfile collector (omniladder.rendering.openmetrics), which only these two
    commands write."""

    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    OPENMETRICS = "openmetrics"


FORMAT_RENDERERS: dict[str, str] = {
    "plan": "omniladder.rendering",
    "show": "omniladder.rendering.show_view",
    "check": "omniladder.rendering.check_view",
    "diff": "omniladder.rendering.diff_view",
    "audit omniroute": "omniladder.rendering.audit_view",
    "audit traffic": "omniladder.rendering.traffic_view",
    "export": "omniladder.rendering.export_view",
    "forecast": "omniladder.rendering.forecast_view",
    "whatif": "omniladder.rendering.whatif_view",
}
"""Each command that takes --format, and the module whose ``RENDERERS`` serves it."""

METRICS_RENDERERS: dict[str, str] = {
    "plan": "omniladder.rendering.openmetrics:plan_metrics",
    "forecast": "omniladder.rendering.openmetrics:forecast_metrics",
    "audit traffic": "omniladder.rendering.traffic_view:traffic_metrics",
}
"""Each command that takes ``--format openmetrics`` (``PlanFormat``), and its renderer."""


def render(plan: Plan, fmt: Format, out: TextIO, *, detail: bool = False) -> None:
    """Write the plan to ``out`` in the chosen format."""
    RENDERERS[fmt](plan, out, detail)


def _table(plan: Plan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.table import render_table

    render_table(plan, out, detail=detail)


def _json(plan: Plan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.json_view import write_plan_json

    write_plan_json(plan, out)


def _markdown(plan: Plan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.markdown import plan_markdown
    from omniladder.rendering.plan_view import view_of_plan

    out.write(plan_markdown(view_of_plan(plan), detail=detail))


RENDERERS: dict[Format, Callable[[Plan, TextIO, bool], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}
