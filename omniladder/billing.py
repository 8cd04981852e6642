"""R1 billing classification and R2 narrowing overrides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from omniladder.errors import InputError
from omniladder.loading import Catalogs, SourcedBillingEntry
from omniladder.models import Connection

BillingClass = Literal["subscription", "metered", "unknown", "keyless"]
OverageClass = Literal["hard-stop", "meters-to-paid", "unknown"]
BillingSource = Literal["keyless", "catalog", "catalog-provider-wide", "uncurated", "override"]


@dataclass(frozen=True)
class BillingInfo:
    billing: BillingClass
    overage: OverageClass
    source: BillingSource
    matched: SourcedBillingEntry | None
    """The catalog entry that matched (R1 steps 2-3), with its file."""
    step: int
    """Which R1 step matched: 1 keyless, 2 exact, 3 provider-wide, 4 uncurated."""
    override: dict[str, str] | None
    """The connection's own billing/overage keys, when it set any (R2)."""

    @property
    def treated_as_metered(self) -> bool:
        """Uncurated is not free: unknown billing counts as metered everywhere."""
        return self.billing in ("metered", "unknown")


def classify(connection: Connection, catalogs: Catalogs,
             connections_file: str = "connections") -> BillingInfo:
    """Classify one connection (R1), then apply its narrowing overrides (R2)."""
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
    if override:
        source = "override"
    return BillingInfo(billing, overage, source, matched, step, override or None)


def _widening(connection: Connection, file: str, key: str, current: str,
              wanted: str) -> InputError:
    return InputError(
        f"override would widen {current!r} to {wanted!r} for connection {connection.id!r}; "
        "overrides only narrow (R2). To grant it, add a billing catalog overlay "
        "(--catalog FILE or [catalogs] billing) with an entry for provider "
        f"{connection.provider!r}, auth_type {connection.auth_type!r}",
        file=file, field=f"connections[id={connection.id}].{key}",
    )
