"""The maintained price database of SPEC §7.4: token prices for the models the model catalog
lacks, from the ``genai-prices`` package (the optional extra ``omniladder[prices]``).

Only the prices bundled with the installed package are read (``genai_prices.calc_price``
without ``UpdatePrices``, which is what fetches newer prices over the network and is never
started here): the audit reads no network, and the same package version prices alike.
A price names its source, ``genai-prices <version>``, so an operator can tell a figure from
the database from the catalog's and from the gateway's own.

Facts used, from genai-prices 0.2.5 (https://pypi.org/project/genai-prices/0.2.5/,
``genai_prices/__init__.py``, ``types.py``, ``data_snapshot.py``): ``calc_price(usage,
model_ref, provider_id=..., genai_request_timestamp=...)`` returns a ``PriceCalculation``
whose ``total_price`` is a ``Decimal`` of US dollars; ``Usage(input_tokens=...,
output_tokens=..., cache_read_tokens=..., cache_write_tokens=...)`` counts every input token
in ``input_tokens``, cached ones included (a cache read is priced at the cache-read price and
taken off the input); a model or provider it does not know is a ``LookupError``; its
provider ids are ``anthropic``, ``openai``, ``google``, ``deepseek``, ``groq``, ``mistral``,
``openrouter`` and others (``genai_prices/data.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timezone
from typing import Any

EXTRA = "omniladder[prices]"
"""What to install for the price database."""
PACKAGE = "genai-prices"

PROVIDERS: Mapping[str, str] = {
    "claude": "anthropic",
    "codex": "openai",
    "gemini": "google",
    "gemini-cli": "google",
    "antigravity": "google",
    "copilot-web": "github-copilot",
    "xai": "x-ai",
}
"""omniladder's provider ids (``catalogs/``) that genai-prices names otherwise; any other id
is looked up as it is (``openai``, ``anthropic``, ``deepseek``, ``groq``, ``mistral``,
``openrouter``, ``cursor``, ...)."""


_PARTS_KEPT = 1 << 12
"""``PriceDatabase._in_force`` keeps the price of this many parts of days at most."""
_UNKNOWN: Any = object()


def _cuts(prices: list[Any]) -> list[time] | None:
    """The UTC times of day at which a model's conditional prices may start or stop
    holding, sorted; None when one has a condition other than a start date (which holds
    from a UTC midnight on) or a daily interval of times.

    genai-prices (``genai_prices/types.py``: ``StartDateConstraint.active`` compares the
    instant's UTC date with ``start_date``; ``TimeOfDateConstraint.active`` compares the
    instant's UTC time of day with ``start_time`` and ``end_time`` taken to UTC, a naive
    time being UTC) decides each condition from the UTC date and time of day alone, so
    between two of these times of a date the price in force is one."""
    from genai_prices.types import StartDateConstraint, TimeOfDateConstraint

    found: set[time] = set()
    for price in prices:
        condition = price.constraint
        if condition is None or type(condition) is StartDateConstraint:
            continue
        if type(condition) is not TimeOfDateConstraint:
            return None
        for value in (condition.start_time, condition.end_time):
            if value.tzinfo is None:
                found.add(value.replace(tzinfo=UTC))
            elif type(value.tzinfo) is timezone:
                found.add(datetime.combine(date(1970, 1, 1), value).astimezone(UTC).timetz())
            else:
                return None
    return sorted(found)


class PriceDatabase:
    """``genai-prices``' bundled prices, looked up once per (provider, model)."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self.version: str = str(module.__version__)
        self.source = f"{PACKAGE} {self.version}"
        self._found: dict[tuple[str, str], Any] = {}
        self._rates: dict[int, tuple[Any, tuple[float, float, float, float] | None]] = {}
        """Per price in force (by identity; the price is kept), its rates (``_linear``)."""
        self._held: dict[tuple[int, date, int], Any] = {}
        """Per model with several prices, UTC date and part of that day (``_in_force``), the
        price in force."""
        self._cuts: dict[int, list[time] | None] = {}
        """Per model with several prices (by identity; ``_found`` keeps it), the UTC times
        of day at which one of them starts or stops holding (``_cuts``)."""

    def knows(self, provider: str, model: str) -> bool:
        """Whether the database has a price for the model on the provider."""
        key = (provider, model)
        if key not in self._found:
            from genai_prices.data_snapshot import get_snapshot

            try:
                self._found[key] = get_snapshot().find_provider_model(
                    model, None, PROVIDERS.get(provider, provider), None)
            except LookupError:
                self._found[key] = None
        return self._found[key] is not None

    def price(self, provider: str, model: str, at: datetime, tokens_in: int, tokens_out: int,
              cache_read: int, cache_write: int) -> float | None:
        """An event's tokens at the database's price in force at ``at``; None when the
        database does not know the model. ``tokens_in`` counts input tokens besides the
        cached ones (SPEC §7.1), which genai-prices counts among its input tokens.

        A price without tiers (one that does not move with the prompt's size) is linear in
        the tokens: its four rates (a million input, output, cache-read and cache-write
        tokens) are calculated by genai-prices once, and each event is priced from them,
        so a ledger of millions of events is not a calculation of genai-prices' each. A
        tiered price is calculated by genai-prices for each event."""
        found = self._found.get((provider, model))
        if found is None:
            if not self.knows(provider, model):
                return None
            found = self._found[(provider, model)]
        found_provider, found_model = found
        in_force = self._in_force(found_model, at)
        known = self._rates.get(id(in_force))
        if known is None or known[0] is not in_force:
            known = self._rates[id(in_force)] = (in_force, self._linear(found_provider,
                                                                        in_force))
        rates = known[1]
        if rates is None:
            usage = self._module.Usage(input_tokens=tokens_in + cache_read + cache_write,
                                       output_tokens=tokens_out, cache_read_tokens=cache_read,
                                       cache_write_tokens=cache_write)
            calculation = found_model.calc_price(usage, found_provider,
                                                 genai_request_timestamp=at)
            return float(calculation.total_price)
        per_in, per_out, per_read, per_write = rates
        priced: float = (tokens_in * per_in + tokens_out * per_out + cache_read * per_read
                         + cache_write * per_write) / 1_000_000
        return priced

    def _in_force(self, found_model: Any, at: datetime) -> Any:
        """The model's price in force at the instant: its one price, or of its conditional
        prices the one ``get_prices`` picks, asked once per UTC date and part of the day
        between two of the prices' times (``_cuts``), in which the pick cannot change."""
        prices = found_model.prices
        if not isinstance(prices, list):  # one ModelPrice, always in force
            return prices
        key = id(found_model)
        cuts = self._cuts.get(key, _UNKNOWN)
        if cuts is _UNKNOWN:
            cuts = self._cuts[key] = _cuts(prices)
        if cuts is None:
            return found_model.get_prices(at)
        utc = at.astimezone(UTC)
        part = (key, utc.date(), bisect_right(cuts, utc.timetz()) if cuts else 0)
        in_force = self._held.get(part)
        if in_force is None:
            if len(self._held) >= _PARTS_KEPT:
                self._held.clear()
            in_force = self._held[part] = found_model.get_prices(at)
        return in_force

    def _linear(self, provider: Any, in_force: Any) -> tuple[float, float, float, float] | None:
        """The dollars a million of each kind of token costs at a price (input, output,
        cache read, cache write), or None for a tiered price."""
        from genai_prices.types import TieredPrices

        if (any(isinstance(value, TieredPrices) for value in vars(in_force).values())
                or provider.id == "groq"):  # its whisper models bill 10 s at least
            return None
        usage = self._module.Usage
        million = 1_000_000
        return (float(in_force.calc_price(usage(input_tokens=million))["total_price"]),
                float(in_force.calc_price(usage(output_tokens=million))["total_price"]),
                float(in_force.calc_price(usage(input_tokens=million,
                                                cache_read_tokens=million))["total_price"]),
                float(in_force.calc_price(usage(input_tokens=million,
                                                cache_write_tokens=million))["total_price"]))

_LOADED: list[PriceDatabase | None] = []


def price_database() -> PriceDatabase | None:
    """The database when ``genai-prices`` is installed, else None (imported once, on first
    need: the audit asks only when an event's model is not in the catalog)."""
    if not _LOADED:
        try:
            import genai_prices
        except ImportError:
            _LOADED.append(None)
        else:
            _LOADED.append(PriceDatabase(genai_prices))
    return _LOADED[0]


def installed() -> str | None:
    """``genai-prices <version>`` when the package is installed, else None, read from its
    distribution's metadata (importing it, with its bundled prices, takes most of a
    second: that is left to the first event that needs it)."""
    if _LOADED:
        return None if _LOADED[0] is None else _LOADED[0].source
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PACKAGE} {version(PACKAGE)}"
    except PackageNotFoundError:
        return None


def missing_note(count: int) -> str:
    """The note of an audit that left events unpriced for want of the database."""
    return (f"{count} event{'s' if count != 1 else ''} of models the model catalog lacks "
            f"could not be priced: install {EXTRA} (the {PACKAGE} price database, read "
            "offline) to price them; they are listed as unpriced, never counted as $0")
