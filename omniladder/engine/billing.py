"""R1 billing classification, R2 narrowing overrides and R2a observed overage."""

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, NamedTuple

from omniladder import timefmt
from omniladder.engine.inputs import Catalogs, SourcedBillingEntry
from omniladder.engine.readings import age_seconds, is_fresh
from omniladder.errors import InputError, close_match
from omniladder.models import Connection, Reading

BillingClass = Literal["subscription", "metered", "unknown", "keyless"]
OverageClass = Literal["hard-stop", "meters-to-paid", "unknown"]
BillingSource = Literal["keyless", "catalog", "catalog-provider-wide", "uncurated", "override"]
OverageSource = Literal["keyless", "catalog", "catalog-provider-wide", "uncurated", "override",
                        "observed"]

_STEP_SOURCES: dict[int, BillingSource] = {
    1: "keyless", 2: "catalog", 3: "catalog-provider-wide", 4: "uncurated"}


class Observation(NamedTuple):
    """The provider's own report of overage that R2a considered (a reading's ``overage``)."""

    overage: str
    checked_at: datetime
    fresh: bool
    applied: bool
    """It changed the connection's overage."""
    note: str
    """Why it was applied, or why not."""


class BillingInfo(NamedTuple):
    """How one connection bills (R1, R2, R2a): its class and overage behaviour, and each
    step that decided them, for the plan's ``connections`` and ``why``'s trace."""

    billing: BillingClass
    overage: OverageClass
    source: BillingSource
    matched: SourcedBillingEntry | None
    """The catalog entry that matched (R1 steps 2-3), with its file."""
    step: int
    """Which R1 step matched: 1 keyless, 2 exact, 3 provider-wide, 4 uncurated."""
    override: dict[str, str] | None
    """The connection's own billing/overage keys, when it set any (R2)."""
    overage_source: OverageSource = "catalog"
    """Where the overage came from (R2a); ``observed`` when a reading's report changed it."""
    observation: Observation | None = None
    """The observation R2a considered, applied or not."""
    near: str | None = None
    """For an uncurated connection: the catalog provider or auth type its own is a typo of."""

    @property
    def treated_as_metered(self) -> bool:
        """Uncurated is not free: unknown billing counts as metered everywhere."""
        return self.billing in ("metered", "unknown")


def classify(connection: Connection, catalogs: Catalogs,
             connections_file: str = "connections") -> BillingInfo:
    """Classify one connection (R1), then apply its narrowing overrides (R2)."""
    plain = connection.billing is None and connection.overage is None
    if plain:  # no override: the class is the catalog's for (provider, auth type)
        class_key = ("class", connection.provider, connection.auth_type)
        known: BillingInfo | None = catalogs.memo.get(class_key)
        if known is not None:
            return known
    billing: BillingClass
    overage: OverageClass
    source: BillingSource
    matched = None
    if connection.keyless:
        billing, overage, source, step = "keyless", "hard-stop", "keyless", 1
    elif (exact := catalogs.billing.get((connection.provider, connection.auth_type))) is not None:
        matched, source, step = exact, "catalog", 2
        billing, overage = exact.entry.billing, exact.entry.overage
    elif (wide := catalogs.billing.get((connection.provider, None))) is not None:
        matched, source, step = wide, "catalog-provider-wide", 3
        billing, overage = wide.entry.billing, wide.entry.overage
    else:
        billing, overage, source, step = "unknown", "unknown", "uncurated", 4

    override: dict[str, str] = {}
    if connection.billing is not None:
        override["billing"] = connection.billing
        if connection.billing == "subscription" and billing != "subscription":
            raise _widening(connection, connections_file, "billing", billing, "subscription")
        if connection.billing == "metered":
            billing = "metered"
    if connection.overage is not None:
        override["overage"] = connection.overage
        if connection.overage == "hard-stop" and overage != "hard-stop":
            raise _widening(connection, connections_file, "overage", overage, "hard-stop")
        overage = connection.overage
    overage_source: OverageSource = ("override" if connection.overage is not None
                                      else _STEP_SOURCES[step])
    if override:
        source = "override"
    near = _near_memo(connection, catalogs) if step == 4 else None
    info = BillingInfo(billing, overage, source, matched, step, override or None,
                       overage_source, near=near)
    if plain:
        catalogs.memo[class_key] = info
    return info


def _near_memo(connection: Connection, catalogs: Catalogs) -> str | None:
    """``_near_catalog_key``, remembered per (provider, auth type) for the run."""
    # Equivalent mutants: any spelling of the tag keeps this key apart from the memo's
    # ("models_of", provider) pairs.
    memo_key = ("near", connection.provider, connection.auth_type)  # pragma: no mutate (any tag)
    if memo_key in catalogs.memo:
        near: str | None = catalogs.memo[memo_key]
        return near
    near = catalogs.memo[memo_key] = _near_catalog_key(connection, catalogs)
    return near


def _near_catalog_key(connection: Connection, catalogs: Catalogs) -> str | None:
    """``provider 'claude'`` or ``auth_type 'oauth'`` when the connection's is close to it.

    A provider is suggested only when one of its entries would cover the connection's auth
    type: ``gemini`` with an API key is not a misspelt ``gemini-cli``, whose entry is OAuth."""
    providers = {provider for provider, auth in catalogs.billing
                 if auth is None or auth == connection.auth_type}
    if connection.provider not in {provider for provider, _ in catalogs.billing}:
        match = close_match(connection.provider, providers)
        return f"provider {match!r}" if match else None
    auth_types = {auth for provider, auth in catalogs.billing
                  if provider == connection.provider and auth is not None}
    match = close_match(connection.auth_type, auth_types)
    return f"auth_type {match!r}" if match else None


def observe(info: BillingInfo, readings: Sequence[Reading], now: datetime,
            max_age_seconds: float) -> BillingInfo:
    """R2a: apply the provider's own report of overage, from readings at or before now.

    The observation is the ``overage`` of the latest reading that carries one. An observed
    ``meters-to-paid`` always narrows, whatever its age. An observed ``hard-stop`` widens only
    an ``unknown`` overage that came from the catalog (never a catalog ``meters-to-paid``,
    never the connection's own setting), and only while its reading is fresh (R6.5's test).
    """
    for reading in reversed(readings):
        if reading.overage is not None:
            break
    else:
        return info
    assert reading.overage is not None
    fresh = is_fresh(reading.checked_at, now, max_age_seconds)
    seen = f"reported {reading.overage} at {timefmt.short(reading.checked_at, now)}"
    if reading.overage == "meters-to-paid":
        if info.overage == "meters-to-paid":
            return _noted(info, reading, fresh, False, f"{seen}; agrees with the "
                          f"{info.overage_source} overage")
        return info._replace(overage="meters-to-paid", overage_source="observed",
                       observation=Observation(reading.overage, reading.checked_at, fresh, True,
                                               f"{seen}: narrows {info.overage} to "
                                               "meters-to-paid (R2a)"))
    if info.overage == "hard-stop":
        return _noted(info, reading, fresh, False, f"{seen}; agrees with the "
                      f"{info.overage_source} overage")
    if info.overage_source == "override":
        why = "the connection's own overage setting is final"
    elif info.overage != "unknown":
        why = f"it never widens a {info.overage_source} {info.overage}"
    elif info.overage_source not in ("catalog", "catalog-provider-wide"):
        why = f"only a catalog unknown may be widened, this one is {info.overage_source}"
    elif not fresh:
        age = age_seconds(reading.checked_at, now)
        why = (f"the reading is {timefmt.age_beside(age, max_age_seconds)} old (max "
               f"{timefmt.duration(max_age_seconds)}); only a fresh report widens")
    else:
        return info._replace(overage="hard-stop", overage_source="observed",
                       observation=Observation(reading.overage, reading.checked_at, fresh, True,
                                               f"{seen}: widens the catalog's unknown to "
                                               "hard-stop while fresh (R2a)"))
    return _noted(info, reading, fresh, False, f"{seen}; not used: {why}")


def _noted(info: BillingInfo, reading: Reading, fresh: bool, applied: bool,
           note: str) -> BillingInfo:
    assert reading.overage is not None
    return info._replace(observation=Observation(reading.overage, reading.checked_at, fresh,
                                                 applied, note))


def _widening(connection: Connection, file: str, key: str, current: str,
              wanted: str) -> InputError:
    if connection.keyless:
        # R1.1 comes before any catalog entry: an overlay for auth_type "none" grants nothing.
        grant = ('A keyless backend (auth_type "none") is keyless whatever the billing '
                 "catalog says (R1.1): auto/subscription never serves it, auto/thrifty serves "
                 "it on the keyless rung")
    else:
        grant = ("To grant it, add a billing catalog overlay (--catalog FILE or [catalogs] "
                 f"billing) with an entry for provider {connection.provider!r}, auth_type "
                 f"{connection.auth_type!r}")
    return InputError(
        f"override would widen {current!r} to {wanted!r} for connection {connection.id!r}; "
        f"overrides only narrow (R2). {grant}",
        file=file, field=f"connections[id={connection.id}].{key}",
    )
