"""The fleet model: what every planner reads of the connections, built once per run.

Nothing here depends on the instant or the auto id but the category membership, which is
kept per category. A ``Fleet`` holds each connection's R1/R2 classification (R2a's
observation moves the overage only, never the class, so no rung depends on now), its models,
R12's candidates ((provider, model) keys in order of first appearance, each with its
members in connection-file order), R3's tier of each candidate, R4's rung of each pair,
R13's membership of each candidate in a category, R8's rung of a spend event, and the
warnings about models outside the model catalog.

``make_plan`` decides every pair at one instant, ``connection_plan`` one connection and the
pool entries its positions need, ``Stepper`` the pairs whose connections' decisions change:
three decision schedules over this one model, none of which derives any of it again. A rule
of the model changes here, once.
"""

import copy
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from omniladder import timefmt
from omniladder.engine.billing import BillingInfo, classify
from omniladder.engine.inputs import LoadedInputs, SourcedModelEntry
from omniladder.engine.quota import HistoryVerdicts, ReservedVerdicts
from omniladder.engine.readings import held_to
from omniladder.engine.tiers import TierInfo, economic_tier, rung_of
from omniladder.models import Connection, LadderSettings, Reading, Rung, SpendEvent

Candidate = tuple[str, str]
"""A (provider, model) key (R12)."""


class Pair(NamedTuple):
    """One (connection, model) pair as every instant and auto id share it."""

    model: str
    candidate: int
    """The candidate's position in R12 order."""
    tier: TierInfo
    rung: Rung


def first_appearance(connections: Sequence[Connection], models: Sequence[tuple[str, ...]]
                     ) -> dict[Candidate, list[int]]:
    """R12: every (provider, model) key in order of first appearance, each with the indexes
    of the connections serving it, in connection-file order."""
    candidates: dict[Candidate, list[int]] = {}
    # A fleet repeats a few (provider, models) combinations thousands of times: each
    # combination's candidates are looked up once, at its first connection (where those
    # not seen before appear first), and its later connections only join their members.
    lists_of: dict[tuple[str, tuple[str, ...]], list[list[int]]] = {}
    served_by = zip(connections, models, strict=True)
    for index, (connection, served) in enumerate(served_by):
        combination = (connection.provider, served)
        # a memo: a miss finds the same lists again, through setdefault
        lists = lists_of.get(combination)  # pragma: no mutate (a memo)
        if lists is None:
            lists = [candidates.setdefault((connection.provider, model), [])
                     for model in served]
            lists_of[combination] = lists  # pragma: no mutate (a memo)
        for members in lists:
            members.append(index)
    return candidates


def _distinct(models: tuple[str, ...], known: dict[tuple[str, ...], tuple[str, ...]]
              ) -> tuple[str, ...]:
    """``models`` without repeats, in order; ``known`` remembers the answers of this fleet,
    whose connections mostly list one of a few combinations."""
    # a memo of a pure answer: a miss computes the same again
    found = known.get(models)
    if found is None:
        found = tuple(dict.fromkeys(models))
        known[models] = found
    return found


def carries(sourced: SourcedModelEntry | None, category: str | None) -> bool:
    """R13: a candidate belongs to an auto id that names no category, and to one that does
    when its model catalog entry (``sourced``, None when the model is not listed) lists it."""
    return category is None or (sourced is not None and category in sourced.entry.categories)


def tier_warning(provider: str, model: str) -> str:
    """R3's warning about a model outside the catalog that a metered connection serves."""
    return (f"model {model!r} of provider {provider!r} is not in the model catalog; "
            "its metered connections are treated as premium")


class SpendNotes:
    """What one plan's attribution of spend events (R8) warns about: the events that name no
    connection of the fleet, by the connection they name, and the models outside the catalog
    that a metered connection's event named, in the order the events came."""

    __slots__ = ("unlisted", "unplaced")

    def __init__(self) -> None:
        self.unplaced: dict[str | None, list[datetime]] = {}
        self.unlisted: dict[Candidate, None] = {}


def seat_flags(connections: Sequence[Connection]) -> tuple[bool, bool]:
    """Whether some connection sets a reserve above 0 (R16), and whether some sets a
    reserve, a seat price or a seat period (SPEC §9). A loop reading the three fields by
    name: the interpreter reads a record's field in a few dozen instructions once it has
    seen the class, where ``operator.attrgetter`` looks each name up again (10,000
    connections: about 3 M instructions against 17 M, docs/performance.md#seat-flags)."""
    for connection in connections:
        if (connection.reserve_percent is not None or connection.seat_price_usd is not None
                or connection.seat_period is not None):
            break
    else:
        return False, False
    for connection in connections:
        if connection.reserve_percent:
            return True, True
    return False, True


class Fleet:
    """The connections of one set of inputs, with everything a decision reads of them that
    does not depend on the instant. Read-only once built; ``tier_of`` and ``in_category``
    remember their answers."""

    def __init__(self, inputs: LoadedInputs) -> None:
        self.inputs = inputs
        catalogs = inputs.catalogs
        settings = inputs.settings
        self.ladder = settings.ladder
        self._tier_settings = settings.tiers
        connections_file = inputs.files.get("connections", "connections")
        self.connections: tuple[Connection, ...] = inputs.connections
        deduplicated: dict[tuple[str, ...], tuple[str, ...]] = {}
        # R1/R2 do not depend on now; an override that would widen is an error, raised here
        # for the first such connection in file order.
        self.classified: tuple[BillingInfo, ...] = tuple(
            classify(c, catalogs, connections_file) for c in self.connections)
        self.models: tuple[tuple[str, ...], ...] = tuple(
            _distinct(c.models, deduplicated) if c.models is not None
            else catalogs.models_of(c.provider) for c in self.connections)
        self.index: dict[str, int] = {c.id: i for i, c in enumerate(self.connections)}
        self.histories: tuple[Sequence[Reading], ...] = tuple(
            inputs.readings.get(c.id, ()) for c in self.connections)
        ladder = self.ladder
        # Most fleets set no reserve: asked of every connection once, then skipped.
        self.reserved, self.seated = seat_flags(self.connections)
        """Whether some connection sets a reserve above 0 (R16); whether some sets a
        reserve or a seat price or period (SPEC §9)."""
        self.ladders: tuple[LadderSettings, ...] = tuple(
            ladder if c.reserve_percent is None else held_to(ladder, c.reserve_percent)
            for c in self.connections) if self.reserved else (ladder,) * len(self.connections)
        """Per connection, the thresholds it is held to (R7 with its reserve, R16): the
        ladder itself for a connection without a reserve above the cutoff."""

        found = first_appearance(self.connections, self.models)
        self.keys: tuple[Candidate, ...] = tuple(found)
        """The candidates in R12 order."""
        self.order: dict[Candidate, int] = {key: i for i, key in enumerate(self.keys)}
        self.members: tuple[list[int], ...] = tuple(found.values())
        """Per candidate, the indexes of the connections serving it, in file order."""
        self.tiers: tuple[TierInfo, ...] = tuple(
            economic_tier(provider, model, catalogs, settings.tiers)
            for provider, model in self.keys)
        classified = self.classified
        rungs: list[list[Rung]] = []
        unlisted: list[Candidate] = []
        per_candidate = zip(self.keys, self.members, self.tiers, strict=True)
        classes = [info.billing for info in classified]
        for key, members, tier in per_candidate:
            # R4's rung, and being treated as metered, depend on a member's billing class
            # alone: each is asked once per class among the members, of one member of it.
            member_classes = list(map(classes.__getitem__, members))
            one_of_class = dict(zip(member_classes, members, strict=True))
            rung_by_class = {billing: rung_of(classified[member], tier)
                             for billing, member in one_of_class.items()}
            rungs.append(list(map(rung_by_class.__getitem__, member_classes)))
            if tier.source == "not-in-catalog" and any(
                    classified[m].treated_as_metered for m in one_of_class.values()):
                unlisted.append(key)
        self.rungs: tuple[list[Rung], ...] = tuple(rungs)
        """Per candidate, the rung of each member's pair (``members``' order)."""
        self.unlisted: tuple[Candidate, ...] = tuple(unlisted)
        """The candidates outside the model catalog with a metered member, in R12 order."""
        self._extra_tiers: dict[Candidate, TierInfo] = {}
        self._membership: dict[str | None, tuple[bool, ...]] = {}
        self._pairs: tuple[tuple[Pair, ...], ...] | None = None

    # --- pairs ---------------------------------------------------------------------------

    def in_category(self, category: str | None) -> tuple[bool, ...]:
        """Per candidate (R12 order), whether it belongs to ``category`` (R13)."""
        # a memo of a pure answer: a miss computes the same again
        found = self._membership.get(category)
        if found is None:
            models = self.inputs.catalogs.models
            found = tuple(carries(models.get(key), category) for key in self.keys)
            self._membership[category] = found
        return found

    @property
    def pairs(self) -> tuple[tuple[Pair, ...], ...]:
        """Each connection's pairs, in candidate order (the order a plan decides them)."""
        if self._pairs is None:
            lists: list[list[Pair]] = [[] for _ in self.connections]
            per_candidate = zip(self.keys, self.members, self.rungs, strict=True)
            for position, (key, members, rungs) in enumerate(per_candidate):
                tier = self.tiers[position]
                for index, rung in zip(members, rungs, strict=True):
                    lists[index].append(Pair(key[1], position, tier, rung))
            self._pairs = tuple(tuple(pairs) for pairs in lists)
        return self._pairs

    def pairs_of(self, index: int) -> tuple[Pair, ...]:
        """One connection's pairs, in candidate order, without building every connection's."""
        if self._pairs is not None:
            return self._pairs[index]
        provider = self.connections[index].provider
        positions = sorted(self.order[(provider, model)] for model in self.models[index])
        return tuple(
            Pair(self.keys[p][1], p, self.tiers[p], self.rungs[p][self.members[p].index(index)])
            for p in positions)

    def tier_of(self, provider: str, model: str) -> TierInfo:
        """R3's tier of any (provider, model), a candidate or a model only a spend event
        names."""
        key = (provider, model)
        position = self.order.get(key)
        if position is not None:
            return self.tiers[position]
        # a memo of a pure answer: a miss computes the same again
        found = self._extra_tiers.get(key)
        if found is None:
            found = economic_tier(provider, model, self.inputs.catalogs, self._tier_settings)
            self._extra_tiers[key] = found
        return found

    def with_readings(self, inputs: LoadedInputs) -> "Fleet":
        """This fleet over ``inputs``, the same inputs but for their readings (the forecast's
        projections at another burn): everything here but the histories depends on the
        connections, the catalogs and the settings only, and is shared."""
        fleet = copy.copy(self)
        fleet.inputs = inputs
        fleet.histories = tuple(inputs.readings.get(c.id, ()) for c in self.connections)
        return fleet

    def verdicts(self, index: int, now: datetime) -> HistoryVerdicts:
        """The quota verdicts (R6, R7) of one connection's models at now."""
        if self.reserved:
            ladder = self.ladders[index]
            if ladder is not self.ladder:
                return ReservedVerdicts(self.histories[index], now, ladder, self.ladder)
        return HistoryVerdicts(self.histories[index], now, self.ladder)

    # --- spend ---------------------------------------------------------------------------

    def rung_of_event(self, event: SpendEvent, notes: SpendNotes | None = None) -> Rung | None:
        """R8: the rung an event without one counts toward, the rung of the pair it names;
        None when it names no connection of the fleet. ``notes`` records what a plan warns
        about."""
        # only an event without a rung is asked about, and validation gives such an event a
        # connection and a model: the `or` never falls back
        index = self.index.get(event.connection or "")  # pragma: no mutate (`or` never falls back)
        if index is None or event.model is None:
            if notes is not None:
                notes.unplaced.setdefault(event.connection, []).append(event.at)
            return None
        # The rung depends on the billing class alone, which R2a's observation never moves.
        billing = self.classified[index]
        provider = self.connections[index].provider
        tier = self.tier_of(provider, event.model)
        if notes is not None and tier.source == "not-in-catalog" and billing.treated_as_metered:
            notes.unlisted[(provider, event.model)] = None
        return rung_of(billing, tier)

    def warnings(self, notes: SpendNotes) -> list[str]:
        """The inputs' warnings, then R3's about models outside the catalog (those a spend
        event named first, then the candidates in R12 order), then one per connection named
        by spend events that count toward no rung."""
        out = list(self.inputs.warnings)
        warned = dict(notes.unlisted)
        warned.update(dict.fromkeys(self.unlisted))
        out += [tier_warning(provider, model) for provider, model in warned]
        for connection, instants in notes.unplaced.items():
            if len(instants) == 1:
                out.append(f"spend event at {timefmt.iso(instants[0])} names connection "
                           f"{connection!r}, which is not in the connections file; it counts "
                           "toward no rung")
            else:
                out.append(f"{len(instants)} spend events from {timefmt.iso(min(instants))} "
                           f"to {timefmt.iso(max(instants))} name connection {connection!r}, "
                           "which is not in the connections file; they count toward no rung")
        return out


def fleet_for(inputs: LoadedInputs, fleet: Fleet | None) -> Fleet:
    """The fleet model of ``inputs``: the one given (built from these very inputs), or a new
    one."""
    if fleet is None:
        return Fleet(inputs)
    if fleet.inputs is not inputs:
        raise ValueError("the fleet was built from other inputs")
    return fleet
