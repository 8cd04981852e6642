"""A deep property runs twice: a quick variant in the default run and the deep one in the slow run.

A property drawing far more examples than hypothesis' default costs seconds; the default run
keeps the same body with ``QUICK`` examples, and the variant with all its examples is marked
slow, which CI runs (docs/development.md#slow). The test takes the settings as its parameter
and applies them to the property it states inside::

    @deep(300)
    def test_a_property(examples: settings) -> None:
        @examples
        @given(st.integers())
        def holds(number: int) -> None:
            ...

        holds()

Its ids are ``[quick]`` and ``[deep]``: ``-k deep`` picks the deep ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import settings

QUICK = 30
"""Examples of the default run's variant: under a third of hypothesis' default."""

Test = TypeVar("Test", bound=Callable[..., None])


def deep(examples: int, quick: int = QUICK, **options: Any) -> Callable[[Test], Test]:
    """Parametrise a test by its hypothesis settings: ``quick`` examples in the default run,
    ``examples`` in the slow run; ``options`` (``deadline``, ``suppress_health_check``) go
    to both."""
    assert quick < examples, "a property this small needs no deep variant"
    return pytest.mark.parametrize("examples", [
        pytest.param(settings(max_examples=quick, **options), id="quick"),
        pytest.param(settings(max_examples=examples, **options), id="deep",
                     marks=pytest.mark.slow)])
