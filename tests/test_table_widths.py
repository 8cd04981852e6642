"""fitted_table gives rich the widths of its identifier and figure columns instead of letting
it measure them: its tables must print as the measured ones do, at every width, with wide
characters, and in every table style the views use."""

from __future__ import annotations

import io
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from omniladder.rendering.table import ID, NUM, TEXT, fitted_table
from tests.depth import deep

STYLES: list[dict[str, Any]] = [
    {"box": box.SIMPLE_HEAD, "pad_edge": False},  # plan, audit, export
    {"box": None, "pad_edge": False, "padding": (0, 3, 0, 0), "show_header": False},  # check
    {"box": box.SIMPLE_HEAD},
]

_ADD_COLUMN = Table.add_column


def _measured_column(table: Table, header: str = "", *args: Any, width: int | None = None,
                     **kwargs: Any) -> None:
    """A column rich measures, no narrower than the width given (fitted_table's columns
    before it gave their widths)."""
    if width is not None:
        kwargs["min_width"] = width
    _ADD_COLUMN(table, header, *args, **kwargs)


def _printed(width: int, rows: list[list[Text]], style: dict[str, Any]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    fitted_table(console, [("connection", ID), ("#", NUM), ("detail", TEXT), ("reason", ID)],
                 rows, **style)
    return out.getvalue()


_CELL = st.text(alphabet=st.sampled_from("ab-/:.0 é界\u0301"), max_size=30)


@deep(200, deadline=None)
def test_given_widths_print_as_measured_ones(examples: settings) -> None:
    @examples
    @given(rows=st.lists(st.lists(_CELL, min_size=4, max_size=4), min_size=1, max_size=6),
           width=st.integers(min_value=10, max_value=140), style=st.sampled_from(STYLES))
    def holds(rows: list[list[str]], width: int, style: dict[str, Any]) -> None:
        cells = [[Text(cell) for cell in row] for row in rows]
        given_widths = _printed(width, cells, style)
        with mock.patch.object(Table, "add_column", _measured_column):
            measured = _printed(width, cells, style)
        assert given_widths == measured

    holds()
