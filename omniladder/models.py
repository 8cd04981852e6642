"""Validated input models: the shapes of every file omniladder reads (SPEC §2).

Every model is strict and forbids unknown keys, so a typo is an error rather than a
setting silently ignored. Timestamps must carry an offset.
"""

import dataclasses
import re
import typing
from collections.abc import Hashable, Iterable
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

if typing.TYPE_CHECKING:
    from pydantic import TypeAdapter

from omniladder.timefmt import OUT_OF_RANGE, from_rfc3339, in_utc_range
from omniladder.vocabulary import CATEGORIES as CATEGORIES
from omniladder.vocabulary import PAID_RUNGS as PAID_RUNGS
from omniladder.vocabulary import QUOTA_RUNGS as QUOTA_RUNGS
from omniladder.vocabulary import RUNGS as RUNGS
from omniladder.vocabulary import Category as Category
from omniladder.vocabulary import Rung as Rung

Billing = Literal["subscription", "metered"]
Overage = Literal["hard-stop", "meters-to-paid", "unknown"]
Tier = Literal["free", "cheap", "premium"]

TERMINAL_STATUSES: frozenset[str] = frozenset(
    {"banned", "expired", "credits_exhausted", "deactivated", "unavailable"}
)
ConnectionStatus = Literal[
    "ok", "unknown", "error",
    "banned", "expired", "credits_exhausted", "deactivated", "unavailable",
]
ReadingStatus = Literal["ok", "exhausted", "unknown"]
ObservedOverage = Literal["hard-stop", "meters-to-paid"]
"""What a provider itself reported about usage past the plan (R2a)."""

SECRET_KEYS: frozenset[str] = frozenset(
    {"api_key", "apikey", "access_token", "refresh_token", "id_token", "token", "password",
     "cookie", "secret", "client_secret", "authorization"}
)


class _ParsedInstants(dict[str, datetime]):
    """Timestamps already parsed and checked, by their text: a fleet's readings share a few
    thousand instants (datetimes are immutable, so one object may serve every field that
    spells it alike). A text not seen before is parsed as it is looked up; one that is not
    a timestamp raises the ValueError that words it, and is not kept."""

    def __missing__(self, text: str) -> datetime:
        if len(self) >= 200_000:
            self.clear()
        checked = self[text] = _parse_timestamp_text(text)
        return checked


_PARSED = _ParsedInstants()


def _parse_timestamp(value: Any) -> Any:
    if type(value) is str:
        return _PARSED[value]
    return _check_instant(value)


NO_OFFSET = "timestamp has no offset; add one, e.g. 2026-11-29T12:00:00Z or +02:00"


def _parse_timestamp_text(value: str) -> datetime:
    text = value.strip()
    try:
        parsed = from_rfc3339(text)
    except ValueError:
        raise ValueError(
            f"not an RFC 3339 timestamp: {text!r} (expected e.g. 2026-11-29T12:00:00Z)"
        ) from None
    # _check_instant's checks, for what fromisoformat gives: no tzinfo, or a fixed offset
    # (never one whose utcoffset() is None).
    if parsed.tzinfo is None:
        raise ValueError(NO_OFFSET)
    if not in_utc_range(parsed):
        raise ValueError(OUT_OF_RANGE)
    return parsed


def _check_instant(value: Any) -> Any:
    if isinstance(value, str):  # a str subclass: not worth remembering
        return _parse_timestamp_text(value)
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(NO_OFFSET)
        if not in_utc_range(value):
            raise ValueError(OUT_OF_RANGE)
        return value
    raise ValueError(f"expected an RFC 3339 timestamp, got {type(value).__name__}")


class _LookedUpFromJson:
    """A Timestamp's way in from JSON text (``load_model``'s direct path): a string, then
    the instant ``_PARSED`` holds for it, looked up without a Python call of ours — 84,000
    timestamps in a 10,000-connection quota file, most of them seen before
    (docs/performance.md#loading). The instants are the very objects the plain path gives
    (``datetime.timezone`` offsets, one object per text); any other JSON value fails here
    and the file takes the plain path, which words the problem. Python input (TOML's native
    timestamps, records built in code) takes ``_parse_timestamp`` as before, and the JSON
    Schema is the plain path's."""

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        plain = handler(source)
        looked_up = core_schema.chain_schema([
            core_schema.str_schema(strict=True),
            core_schema.no_info_plain_validator_function(_PARSED.__getitem__),
        ])
        return core_schema.json_or_python_schema(json_schema=looked_up, python_schema=plain)

    def __get_pydantic_json_schema__(self, schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(typing.cast(Any, schema)["python_schema"])


def parse_date(value: Any) -> Any:
    if isinstance(value, datetime):
        raise ValueError("expected a date such as 2026-08-22, got a timestamp")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not a date: {value!r} (expected e.g. 2026-08-22)") from None
    raise ValueError(f"expected a date such as 2026-08-22, got {type(value).__name__}")


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""The C0 and C1 control characters and DEL: what a terminal may act on instead of print."""


def identifier_problem(value: str) -> str | None:
    """What is wrong with an identifier (blank, or holding a control character), or None."""
    if not value.strip():
        return "must not be empty"
    # isprintable() is a fast C test that every control character fails: only a string it
    # refuses (a control character, or a space other than " ") is searched.
    if not value.isprintable():
        found = _CONTROL.search(value)
        if found is not None:
            return (f"contains a control character ({repr(found.group())[1:-1]} at character "
                    f"{found.start() + 1}); an identifier is printed on terminals and in "
                    "reports, so it may hold none")
    return None


IDENTIFIER_PATTERN = (r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f]"
                      r"[^\x00-\x1f\x7f-\x9f]*$")
r"""The strings ``identifier_problem`` passes, as a pattern pydantic matches natively: no
control character, and one character at least that is neither one nor blank. Rust's ``\s``
and ``str.strip`` agree on every character that is not a control character (checked over
every code point by tests/test_records.py). Checked natively, 167,000 identifiers of a
10,000-connection fleet validate about 12 ms faster than through a Python call each
(docs/performance.md#loading); validation words a mismatch as ``identifier_problem`` does."""

def first_repeat(keys: Iterable[Hashable]) -> tuple[int, int] | None:
    """(index of the first occurrence, index of the repeat) of the first key seen twice."""
    seen: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        if key in seen:
            return seen[key], index
        seen[key] = index
    return None


Timestamp = Annotated[datetime, BeforeValidator(_parse_timestamp), _LookedUpFromJson()]
CalendarDate = Annotated[date, BeforeValidator(parse_date)]
Percent = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
NonBlank = Annotated[str, AfterValidator(_non_blank)]
Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN),
                       WithJsonSchema({"type": "string"})]
"""An id, provider, auth type, model or window name: not blank, and free of control
characters (a C0 or C1 control code, or DEL)."""
Usd = Annotated[float, Field(ge=0, allow_inf_nan=False)]
LEDGER_COUNT_MAX = 10**12
"""The most tokens (or failed attempts) one event of a ledger counts: a million times the
longest context any model takes. A count past it is no request's (a unit, a column or a
byte gone wrong), and bounding it keeps every product and sum of counts a float."""
LEDGER_COST_MAX = 1_000_000.0
"""The most US dollars one event of a traffic or spend ledger records. Each event at most
this, a ledger of at most a gibibyte (a few dozen bytes an event at the least) sums to
under 10^14: every sum of a ledger's costs is a finite float."""
CapacityWeight = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""A seat's size against a weight-1 seat (SPEC §9): positive and finite."""
WithinRungOrder = Literal["declared", "expiring-first"]
"""R15: the order of the connections and candidates within a quota rung."""
MAX_WINDOW_SECONDS = 366 * 86_400
WindowSeconds = Annotated[float, Field(gt=0, le=MAX_WINDOW_SECONDS, allow_inf_nan=False)]
"""A quota window's length in seconds: longer than zero, at most a leap year."""

_DURATION = re.compile(r"(?P<count>\d+)(?P<unit>[smhd])")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
CALENDAR_MONTH = "month"
"""A window that runs one calendar month up to its reset (Copilot's monthly allowance)."""


_LONGEST_COUNT = 20
"""Digits of a duration's count that matter: 10**20 seconds is past the calendar already."""


def duration_count(digits: str) -> int:
    """The count of a duration part (``90`` of ``90m``). Python converts at most 4,300 digits
    (``sys.get_int_max_str_digits``, a ValueError past it); a count of more than 20 digits
    is longer than the calendar in every unit, so 10**20 stands in for it and the caller's
    bound refuses it as too long."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= _LONGEST_COUNT else 10**_LONGEST_COUNT


def duration_seconds(text: str) -> float | None:
    """``5h``, ``7d``, ``1h30m`` in seconds; None for ``month`` (a calendar month up to the
    reset, whose length varies)."""
    if text == CALENDAR_MONTH:
        return None
    return float(sum(duration_count(p.group("count")) * _DURATION_UNITS[p.group("unit")]
                     for p in _DURATION.finditer(text)))


def _duration(value: str) -> str:
    text = value.strip()
    if text == CALENDAR_MONTH:
        return text
    parts = list(_DURATION.finditer(text))
    if not parts or "".join(p.group(0) for p in parts) != text:
        raise ValueError(f"not a window length: {value!r} (expected e.g. 5h, 7d, 1d or "
                         "\"month\")")
    seconds = duration_seconds(text) or 0.0
    if not 0 < seconds <= 366 * 86_400:
        raise ValueError(f"a window length must be longer than zero and at most 366d, "
                         f"got {value!r}")
    return text


WindowDuration = Annotated[str, AfterValidator(_duration)]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Record:
    """The base of the input records a file holds by the thousand (connections, readings,
    windows, spend events): frozen slots dataclasses that pydantic validates as strictly as a
    StrictModel.

    A model instance carries a ``__dict__`` and a set of the fields given; a record only its
    slots, a third of the memory of a large quota file. A record takes a table (a dict) as
    its input like a model does: only its fields are strict, not the record itself, which
    strict would take only as an instance in Python. Build one from plain data with
    ``validate_record``; ``dataclasses.replace`` copies one without validating it again.
    """

    __slots__ = ()
    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid", strict=True)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        node: Any = schema
        while node.get("type") != "dataclass" and "schema" in node:
            node = node["schema"]  # through the validators wrapped around the record
        if node.get("type") == "dataclass":
            node["strict"] = False  # takes a table; its fields keep the strict config
        return schema


R = TypeVar("R", bound=Record)


def field_types(kind: type[BaseModel] | type[Record]) -> dict[str, Any]:
    """A model's or a record's fields, name to type, in order (what ``model_fields`` is to a
    model, without the validators annotated on each type)."""
    found = _FIELD_TYPES.get(kind)
    if found is None:
        if issubclass(kind, BaseModel):
            found = {name: info.annotation for name, info in kind.model_fields.items()}
        else:
            hints = typing.get_type_hints(kind)
            found = {item.name: hints[item.name]
                     for item in dataclasses.fields(typing.cast(Any, kind))}
        _FIELD_TYPES[kind] = found
    return found


_FIELD_TYPES: dict[type[Any], dict[str, Any]] = {}

_ADAPTERS: dict[type[Any], "TypeAdapter[Any]"] = {}


def validate_record(kind: type[R], data: Any) -> R:
    """One record validated from plain data: what ``model_validate`` is to a model."""
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        from pydantic import TypeAdapter  # only importers and tests build records one by one

        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    found: R = adapter.validate_python(data)
    return found


# --- connections (SPEC §2.1) -------------------------------------------------------------

SeatPeriod = Literal["day", "week", "month"]
"""The period a seat's price is paid for (SPEC §9)."""
DEFAULT_SEAT_PERIOD: SeatPeriod = "month"
"""The period of a seat price given without one."""


@dataclasses.dataclass(frozen=True, slots=True)
class Connection(Record):
    """A provider account the gateway dispatches to: its models, state and seat."""

    id: Identifier
    provider: Identifier
    auth_type: Identifier
    models: tuple[Identifier, ...] | None = None
    active: bool = True
    status: ConnectionStatus | None = None
    rate_limited_until: Timestamp | None = None
    label: str | None = None
    overage: Overage | None = None
    billing: Billing | None = None
    state_as_of: Timestamp | None = None
    """The instant ``active``, ``status`` and ``rate_limited_until`` were observed (SPEC §7.2
    v1.4): before it they are not known (``observed_at``). None: they hold at every instant."""
    rate_limited_since: Timestamp | None = None
    """When the cooldown began, where the source records it: before ``state_as_of`` the
    cooldown is in force only from here on."""

    @field_validator("rate_limited_since")
    @classmethod
    def _since_before_until(cls, value: datetime | None,
                            info: ValidationInfo) -> datetime | None:
        # runs only when the key is given: a connection without it pays nothing
        if value is None:
            return value
        until = info.data.get("rate_limited_until")
        if until is None:
            raise ValueError("needs rate_limited_until (the cooldown it starts)")
        if value >= until:
            raise ValueError("must be before rate_limited_until (a cooldown begins before "
                             "it ends)")
        return value
    capacity_weight: CapacityWeight | None = None
    """How much quota one percent of this connection's windows is, in units of a weight-1
    seat (SPEC §9); None reads as 1."""
    reserve_percent: Percent | None = None
    """R16: the share of each window kept for use outside the gateway; the connection's exit
    cutoff when above the ladder's (``readings.held_to``)."""
    seat_price_usd: Usd | None = None
    """What the seat costs per ``seat_period`` (a month when no period is given)."""
    seat_period: SeatPeriod | None = None

    @property
    def keyless(self) -> bool:
        return self.auth_type == "none"

    def observed_at(self, now: datetime) -> bool:
        """Whether ``active``, ``status`` and ``rate_limited_until`` are known at now: from
        ``state_as_of`` on (always without it). Before it the connection is taken as active
        with no status, cooling only from ``rate_limited_since`` (``engine.decide``)."""
        as_of = self.state_as_of
        return as_of is None or now >= as_of
    @property
    def weight(self) -> float:
        """``capacity_weight``, 1 when not given."""
        return 1.0 if self.capacity_weight is None else self.capacity_weight


class ConnectionsFile(StrictModel):
    connections: tuple[Connection, ...] = ()

    def first_duplicate(self) -> tuple[int, int] | None:
        """(first index, repeated index) of the first repeated connection id, if any."""
        return first_repeat(connection.id for connection in self.connections)


# --- quota snapshot (SPEC §2.2) ------------------------------------------------------------


def _names_a_model(value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:
        raise ValueError("must name at least one model; a window that limits every model "
                         "has no models key")
    return value


WindowModels = Annotated[tuple[Identifier, ...], AfterValidator(_names_a_model),
                         Field(json_schema_extra={"minItems": 1})]
"""The models a window limits (SPEC §2.2). An empty list would limit none, so a spent window
written that way would be read as no limit at all: an input error, never a silent pass."""


@dataclasses.dataclass(frozen=True, slots=True)
class Window(Record):
    """One quota window of a reading: what remains of it and when it resets."""

    name: Identifier
    remaining_percent: Percent | None = None
    unlimited: bool = False
    reset_at: Timestamp | None = None
    models: WindowModels | None = None
    window_seconds: WindowSeconds | None = None
    """The window's length, when the source says it (Codex ``window_minutes``): what
    ``forecast`` reads the elapsed part of the window from. Additive (format_version 1)."""

    @model_validator(mode="after")
    def _one_figure(self) -> "Window":
        if self.unlimited and self.remaining_percent is not None:
            raise ValueError("give remaining_percent or unlimited = true, not both")
        if not self.unlimited and self.remaining_percent is None:
            raise ValueError("a window needs remaining_percent or unlimited = true")
        return self

    def applies_to(self, model: str) -> bool:
        return self.models is None or model in self.models

    @property
    def figure(self) -> float:
        """The remaining percent this window contributes; an unlimited window counts 100."""
        return 100.0 if self.unlimited else float(self.remaining_percent or 0.0)


class _ReadingSlots(Record):
    __slots__ = ("_top_level_window",)
    _top_level_window: tuple[Window, ...] | None


@dataclasses.dataclass(frozen=True, slots=True)
class Reading(_ReadingSlots):
    """One reading of a connection's quota: its windows at the instant it was checked."""

    connection: Identifier
    checked_at: Timestamp
    status: ReadingStatus | None = None
    remaining_percent: Percent | None = None
    reset_at: Timestamp | None = None
    windows: tuple[Window, ...] | None = None
    overage: ObservedOverage | None = None

    @model_validator(mode="after")
    def _figure_in_one_place(self) -> "Reading":
        if self.windows is None:
            # Left to all_windows, which builds it when first asked: a plan asks on about
            # half the readings that have a top-level figure (docs/performance.md#loading).
            # None rather than no value spares that first ask an AttributeError.
            object.__setattr__(self, "_top_level_window", None)
        elif self.remaining_percent is not None:
            raise ValueError(
                "give remaining_percent at top level or windows, not both"
            )
        return self

    def all_windows(self) -> tuple[Window, ...]:
        """The reading's windows; a top-level figure is one window applying to every model."""
        if self.windows is not None:
            return self.windows
        try:
            kept = self._top_level_window
        except AttributeError:  # a reading built without validation (a probe, a test, a copy)
            kept = None
        return self._keep_top_level_window() if kept is None else kept

    def _keep_top_level_window(self) -> tuple[Window, ...]:
        # Built when first asked for and kept in a slot beside the fields (never compared):
        # the verdicts of every model replay the same readings, four calls a reading in a
        # plan. Both values were validated.
        kept = () if self.remaining_percent is None else (
            Window(name="quota", remaining_percent=self.remaining_percent, unlimited=False,
                   reset_at=self.reset_at, models=None),
        )
        object.__setattr__(self, "_top_level_window", kept)
        return kept


class QuotaFile(StrictModel):
    taken_at: Timestamp | None = None
    readings: tuple[Reading, ...] = ()


# --- spend ledger (SPEC §2.4) --------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SpendEvent(Record):
    """One paid request: when, what it cost, and which connection and model served it."""

    at: Timestamp
    cost_usd: Usd
    connection: Identifier | None = None
    model: Identifier | None = None
    rung: Rung | None = None

    @model_validator(mode="after")
    def _attributable(self) -> "SpendEvent":
        if self.rung is None and (self.connection is None or self.model is None):
            raise ValueError("an event needs a rung, or both connection and model")
        return self

    def attributed(self, rung: str) -> "SpendEvent":
        """The same event with its rung given: one of RUNGS, as the planner attributes it
        (a copy, not validated again)."""
        return dataclasses.replace(self, rung=typing.cast(Rung, rung))


class SpendFile(StrictModel):
    events: tuple[SpendEvent, ...] = ()


# --- settings (SPEC §2.3) ------------------------------------------------------------------


class InputsSettings(StrictModel):
    connections: NonBlank | None = None
    quota: NonBlank | None = None
    spend: NonBlank | None = None
    traffic: NonBlank | None = None


class LadderSettings(StrictModel):
    exit_cutoff_percent: Percent = 2.0
    reentry_min_remaining_percent: Percent = 5.0
    max_reading_age_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 180.0
    clamp_cooldown_to_reset: bool = True
    within_rung_order: WithinRungOrder = "declared"

    @property
    def reentry_floor(self) -> float:
        """The effective re-entry floor: never below the exit cutoff (SPEC §2.3, R7)."""
        return max(self.reentry_min_remaining_percent, self.exit_cutoff_percent)


class RungBudgets(StrictModel):
    cheap: Annotated[float, Field(allow_inf_nan=False)] | None = None
    premium: Annotated[float, Field(allow_inf_nan=False)] | None = None

    def for_rung(self, rung: str) -> float | None:
        if rung == "cheap":
            return self.cheap
        if rung == "premium":
            return self.premium
        return None


class BudgetSettings(StrictModel):
    period: Literal["day", "week", "month"] = "month"
    rung_budget_usd: RungBudgets = RungBudgets()


class TierSettings(StrictModel):
    cheap_max_input_usd_per_mtok: Usd = 1.0
    free_providers: tuple[Identifier, ...] = ()


class CatalogSettings(StrictModel):
    billing: tuple[NonBlank, ...] = ()
    models: tuple[NonBlank, ...] = ()
    windows: tuple[NonBlank, ...] = ()
    include_shipped: bool = True


class Settings(StrictModel):
    inputs: InputsSettings = InputsSettings()
    ladder: LadderSettings = LadderSettings()
    budgets: BudgetSettings = BudgetSettings()
    tiers: TierSettings = TierSettings()
    catalogs: CatalogSettings = CatalogSettings()


# --- curated catalogs (SPEC §2.5) ----------------------------------------------------------


class BillingEntry(StrictModel):
    provider: Identifier
    auth_type: Identifier | None = None
    billing: Billing
    overage: Overage
    reason: str | None = None
    source: str | None = None
    reviewed: CalendarDate | None = None


class BillingCatalog(StrictModel):
    entries: tuple[BillingEntry, ...] = ()


class ModelEntry(StrictModel):
    provider: Identifier
    model: Identifier
    input_usd_per_mtok: Usd
    output_usd_per_mtok: Usd
    categories: tuple[Category, ...] = ()
    tier: Tier | None = None
    as_of: CalendarDate | None = None
    source: str | None = None


class ModelCatalog(StrictModel):
    models: tuple[ModelEntry, ...] = ()
