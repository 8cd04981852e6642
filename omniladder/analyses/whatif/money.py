"""What a replayed request pays on a paid pair (SPEC §7.4's prices, §10.3)."""

from __future__ import annotations

from collections.abc import Callable

from omniladder.analyses.traffic import token_cost
from omniladder.analyses.whatif.demand import Request
from omniladder.engine.inputs import LoadedInputs
from omniladder.inputs.prices import price_database
from omniladder.models import Connection

Price = Callable[[Connection, str, Request], float | None]


def pricer(inputs: LoadedInputs) -> Price:
    """SPEC §7.4's price of a request's tokens on a paid pair: the model catalog's prices,
    then the price database's; None when neither prices it."""
    models = inputs.catalogs.models

    def price(connection: Connection, model: str, request: Request) -> float | None:
        sourced = models.get((connection.provider, model))
        if sourced is not None:
            return token_cost(sourced.entry, request.tokens_in, request.tokens_out,
                              request.cache_read, request.cache_write)
        database = price_database()
        if (database is None or request.tokens_in is None or request.tokens_out is None
                or not database.knows(connection.provider, model)):
            return None
        return database.price(connection.provider, model, request.at, request.tokens_in,
                              request.tokens_out, request.cache_read or 0,
                              request.cache_write or 0)

    return price
