"""Renderers: one per output format, all reading the same Plan."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TextIO

from omniladder.plan import Plan


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"


def render(plan: Plan, fmt: Format, out: TextIO, *, detail: bool = False) -> None:
    """Write the plan to ``out`` in the chosen format."""
    RENDERERS[fmt](plan, out, detail)


def _table(plan: Plan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.table import render_table

    render_table(plan, out, detail=detail)


def _json(plan: Plan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.json_view import plan_json

    out.write(plan_json(plan))
    out.write("\n")


RENDERERS: dict[Format, Callable[[Plan, TextIO, bool], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
}
