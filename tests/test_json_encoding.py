"""The JSON view's fast encoder writes exactly what json.dumps(indent=2) writes (SPEC §4.2)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from omniladder.rendering.json_view import dumps

scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text()
           | st.sampled_from(["", "[bold]x[/bold]", "é ü ✓ \u2028", "\x00\x1f\"\\"]))
documents = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                   | st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(document=documents)
def test_same_text_as_json_dumps(document: Any) -> None:
    assert dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


class Colour(StrEnum):
    RED = "red"


def test_unexpected_values_fall_back_to_json_dumps() -> None:
    for document in ({"a": Colour.RED}, {1: "x", "b": [1.5, None]}, [True, {2.5: "y"}]):
        assert dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)
