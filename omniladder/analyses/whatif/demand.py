"""What the replay serves (SPEC §10.1): the audited id's requests, each with its tokens, and
the token unit every consumption figure is counted in (§10.2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

UNIT_WEIGHTS = {"in": 1.0, "out": 5.0, "cache_read": 0.1, "cache_write": 1.25}
"""One token unit is one input token; an output token weighs 5, a cache read 0.1, a cache
write 1.25. These are the ratios of Anthropic's list prices (Claude Sonnet 4: $3 input, $15
output, $0.30 cache read, $3.75 five-minute cache write per million tokens; OpenAI's GPT-5
family prices output at 8× input and cached input at 0.1×): a plan's quota meters compute,
which the vendor's own prices track (docs/whatif.md#units)."""


def token_units(tokens_in: int, tokens_out: int, cache_read: int, cache_write: int) -> float:
    """The token units of one request (``UNIT_WEIGHTS``)."""
    return (tokens_in + UNIT_WEIGHTS["out"] * tokens_out
            + UNIT_WEIGHTS["cache_read"] * cache_read + UNIT_WEIGHTS["cache_write"] * cache_write)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One request of the demand: served (by ``connection`` and ``model`` as recorded) or
    failed everywhere (``connection`` None)."""

    at: datetime
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    connection: str | None = None
    model: str | None = None
    cost_usd: float | None = None
    """The cost the gateway recorded; None when it recorded none."""

    @property
    def units(self) -> float:
        """Its token units, a count the ledger does not give counted 0."""
        return token_units(self.tokens_in or 0, self.tokens_out or 0, self.cache_read or 0,
                           self.cache_write or 0)
