"""A traffic ledger document's records for its JSON Schema (``omniladder schema traffic``):
what ``event_from`` accepts, field for field, described for pydantic. No reader builds them:
a ledger is validated by ``events.event_from``, and only the schema command defines these."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from pydantic import Field

from omniladder.models import (
    LEDGER_COST_MAX,
    LEDGER_COUNT_MAX,
    Identifier,
    Record,
    StrictModel,
    Timestamp,
)

_Count = Annotated[int, Field(ge=0, le=LEDGER_COUNT_MAX)]
"""A whole number, 0 up to ``LEDGER_COUNT_MAX``."""
_Cost = Annotated[float, Field(ge=0, le=LEDGER_COST_MAX, allow_inf_nan=False)]
"""US dollars, 0 up to ``LEDGER_COST_MAX``."""


@dataclasses.dataclass(frozen=True, slots=True)
class TrafficEvent(Record):
    """One event of a traffic ledger: a request served, or an attempt that failed."""

    at: Timestamp
    connection: Identifier
    model: Identifier
    requested: Identifier | None = None
    status: Literal["served", "failed"] = "served"
    tokens_in: _Count | None = None
    tokens_out: _Count | None = None
    tokens_cache_read: _Count | None = None
    tokens_cache_write: _Count | None = None
    cost_usd: _Cost | None = None
    request_id: Identifier | None = None
    attempts_before: _Count | None = None


class TrafficFile(StrictModel):
    events: tuple[TrafficEvent, ...] = ()
