"""A scenario (SPEC §10.5): the options that build one alternative, and the fleet they make
of the inputs as given."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from omniladder.engine.inputs import LoadedInputs
from omniladder.errors import InputError, UsageError
from omniladder.inputs.scenarios import ScenarioEntry
from omniladder.models import Connection, WithinRungOrder

AS_IS = "as-is"


@dataclass(frozen=True, slots=True, kw_only=True)
class Added:
    like: str
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioSpec:
    """One scenario: ``as-is`` changes nothing."""

    name: str
    order: WithinRungOrder | None = None
    remove: tuple[str, ...] = ()
    add: tuple[str, ...] = ()
    """``LIKE`` or ``LIKE:NEW_ID`` as given."""
    reserve: tuple[tuple[str, float], ...] = ()
    weight: tuple[tuple[str, float], ...] = ()
    where: str = "the command line"
    """Where it was given (a scenario file's name and entry), for messages."""

    def changes(self) -> tuple[str, ...]:
        """Its options, as the command line would give them."""
        out: list[str] = []
        if self.order is not None:
            out.append(f"--order {self.order}")
        out += [f"--remove {item}" for item in self.remove]
        out += [f"--add {item}" for item in self.add]
        out += [f"--reserve {key}={value:g}" for key, value in self.reserve]
        out += [f"--weight {key}={value:g}" for key, value in self.weight]
        return tuple(out)


def _fail(spec: ScenarioSpec, field: str, message: str) -> InputError | UsageError:
    if spec.where == "the command line":
        return UsageError(message, field=field)
    return InputError(f"{spec.where}: {field}: {message}")


def added(spec: ScenarioSpec, ids: set[str]) -> tuple[Added, ...]:
    """The seats the scenario adds: LIKE an existing connection (the whole text when it is
    one, else the part before the last ':'), NEW_ID not taken (default ``LIKE+1``, ``+2``
    ...)."""
    found: list[Added] = []
    taken = set(ids)
    for text in spec.add:
        if text in ids:
            like, new = text, None
        elif ":" in text and text.rsplit(":", 1)[0] in ids:
            like, new = text.rsplit(":", 1)
        else:
            raise _fail(spec, "--add", f"{text!r} names no connection of the fleet to copy "
                        "(give LIKE or LIKE:NEW_ID)")
        if new is None:
            number = 1
            while f"{like}+{number}" in taken:
                number += 1
            new = f"{like}+{number}"
        elif new in taken:
            raise _fail(spec, "--add", f"{new!r} is already a connection id; name the copy "
                        f"of {like!r} otherwise")
        taken.add(new)
        found.append(Added(like=like, id=new))
    return tuple(found)


def apply(inputs: LoadedInputs, spec: ScenarioSpec
          ) -> tuple[LoadedInputs, tuple[Added, ...]]:
    """The inputs with the scenario's fleet and order, and the seats it adds. An added seat
    is placed right after the connection it copies (R12 then serves it after that one),
    without readings: the replay gives it its windows, full at the span's start."""
    ids = {c.id for c in inputs.connections}
    for item in spec.remove:
        if item not in ids:
            raise _fail(spec, "--remove", f"{item!r} is not a connection of the fleet")
    seats = added(spec, ids)
    known = ids | {seat.id for seat in seats}
    for field, pairs in (("--reserve", spec.reserve), ("--weight", spec.weight)):
        for key, _ in pairs:
            if key not in known:
                raise _fail(spec, field, f"{key!r} is not a connection of the fleet or an "
                            "added one")
    removed = set(spec.remove)
    reserve = dict(spec.reserve)
    weight = dict(spec.weight)
    out: list[Connection] = []
    for connection in inputs.connections:
        if connection.id not in removed:
            out.append(_changed(connection, reserve, weight))
        for seat in seats:
            if seat.like == connection.id:
                copy = dataclasses.replace(connection, id=seat.id, label=None)
                out.append(_changed(copy, reserve, weight))
    settings = inputs.settings
    if spec.order is not None and spec.order != settings.ladder.within_rung_order:
        ladder = settings.ladder.model_copy(update={"within_rung_order": spec.order})
        settings = settings.model_copy(update={"ladder": ladder})
    return inputs._replace(connections=tuple(out), settings=settings), seats


def _changed(connection: Connection, reserve: dict[str, float],
             weight: dict[str, float]) -> Connection:
    changes: dict[str, float] = {}
    if connection.id in reserve:
        changes["reserve_percent"] = reserve[connection.id]
    if connection.id in weight:
        changes["capacity_weight"] = weight[connection.id]
    return dataclasses.replace(connection, **changes) if changes else connection  # type: ignore[arg-type]


def from_entries(entries: Sequence[ScenarioEntry], shown: str) -> list[ScenarioSpec]:
    """A scenario file's scenarios, each named after the file and its place in it for the
    messages (``scenarios.toml: scenarios[2] (second seat)``)."""
    return [ScenarioSpec(name=entry.name, order=entry.order, remove=entry.remove,
                         add=entry.add, reserve=tuple(entry.reserve.items()),
                         weight=tuple(entry.weight.items()),
                         where=f"{shown}: scenarios[{number}] ({entry.name})")
            for number, entry in enumerate(entries, 1)]
