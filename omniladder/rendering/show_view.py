"""Views of a saved plan (``omniladder show``): the plan's own table and markdown, read from
the document, and the document itself, passed through as it was saved."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from omniladder.inputs.plan_document import PlanDocument
from omniladder.rendering import Format
from omniladder.rendering.plan_view import view_of_saved


@dataclass(frozen=True)
class ShownPlan:
    saved: PlanDocument
    text: str
    """The document exactly as read (after a UTF-8 byte-order mark, if any)."""
    file: str


def render_show(shown: ShownPlan, fmt: Format, out: TextIO, *, detail: bool = False) -> None:
    RENDERERS[fmt](shown, out, detail)


def _table(shown: ShownPlan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.table import render_table

    render_table(view_of_saved(shown.saved, shown.file), out, detail=detail)


def _json(shown: ShownPlan, out: TextIO, detail: bool) -> None:
    out.write(shown.text if shown.text.endswith("\n") else shown.text + "\n")


def _markdown(shown: ShownPlan, out: TextIO, detail: bool) -> None:
    from omniladder.rendering.markdown import plan_markdown

    out.write(plan_markdown(view_of_saved(shown.saved, shown.file), detail=detail))


RENDERERS: dict[Format, Callable[[ShownPlan, TextIO, bool], None]] = {
    Format.TABLE: _table,
    Format.JSON: _json,
    Format.MARKDOWN: _markdown,
}
