"""One rule for the values a gateway's request log gives a ledger event, shared by the
traffic importers (``import omniroute``'s ``call_logs``, ``import litellm-spend``).

A row is one attempt or request that happened: it is never refused, nor left out, for one
value it holds that the ledger cannot take. That value alone is dropped and counted, and
the import's notes say how many of each (docs/traffic.md#bad-values):

* a token count must be a whole number, 0 up to ``LEDGER_COUNT_MAX`` (the bound every
  reader of a ledger holds): ``12`` (or ``12.0``, a whole number a
  writer stored as a float) is kept; a negative number, a fraction, a text, a boolean or a
  non-finite number is dropped, so the event is kept without it (``audit traffic`` then
  counts it unpriced when it must be priced, never as 0);
* a name of what the client asked for (OmniRoute's ``combo_name``, LiteLLM's
  ``model_group``) holding a control character cannot be written as ``requested``: it is
  dropped, and the event is kept without it.

The counts are keyed ``"column: what was wrong"``; the values themselves are never shown
(a text in a token column may be anything).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, MutableMapping
from typing import Any

from omniladder.models import IDENTIFIER_PATTERN, LEDGER_COUNT_MAX

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)

NEGATIVE = "negative"
FRACTION = "not a whole number"
NOT_A_NUMBER = "not a number"
PAST_BOUND = f"more than any request has (over {LEDGER_COUNT_MAX:,})"
CONTROL = "a control character"


def _count_problem(value: Any) -> tuple[int | None, str | None]:
    if type(value) is int:
        if value < 0:
            return None, NEGATIVE
        return (value, None) if value <= LEDGER_COUNT_MAX else (None, PAST_BOUND)
    if type(value) is float:
        if not math.isfinite(value):
            return None, NOT_A_NUMBER
        if value < 0:
            return None, NEGATIVE
        if not value.is_integer():
            return None, FRACTION
        return (int(value), None) if value <= LEDGER_COUNT_MAX else (None, PAST_BOUND)
    return None, NOT_A_NUMBER  # a text, a boolean, a blob: nothing a writer counts with


def token_count(value: Any, column: str, dropped: MutableMapping[str, int]) -> int | None:
    """A token count as the ledger takes it; None when the row has none (NULL) or when it
    is not a whole number 0 or more, counted in ``dropped`` under ``column``."""
    if value is None:
        return None
    count, problem = _count_problem(value)
    if problem is not None:
        key = f"{column}: {problem}"
        dropped[key] = dropped.get(key, 0) + 1
    return count


def requested_name(value: Any, column: str, dropped: MutableMapping[str, int]) -> str | None:
    """A requested name as the ledger takes it: stripped; None when blank or absent, and
    when it holds a control character, counted in ``dropped`` under ``column``."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    if _IDENTIFIER.match(text) is None:
        key = f"{column}: {CONTROL}"
        dropped[key] = dropped.get(key, 0) + 1
        return None
    return text


def dropped_note(table: str, dropped: Mapping[str, int]) -> str | None:
    """The note naming each dropped value's column and fault with its count, or None."""
    if not dropped:
        return None
    total = sum(dropped.values())
    listed = ", ".join(f"{key} ({n})" for key, n in sorted(dropped.items()))
    return (f"{total} {table} value{'s' if total != 1 else ''} the ledger cannot take "
            f"{'were' if total != 1 else 'was'} dropped, each row kept without it: {listed} "
            "(a token count must be a whole number, 0 or more and no more than any request "
            "has; an event without one is counted unpriced when it must be priced)")
