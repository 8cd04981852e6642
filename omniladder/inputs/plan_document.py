"""The plan document (SPEC §4.2): the JSON ``omniladder plan --json`` prints and ``--out``
saves, as one pydantic model.

``PlanDocument`` is the document's one shape: the writer (``rendering/json_view.py``) writes
exactly its fields (a test holds the two together on every golden plan and on generated
ones), ``omniladder schema plan`` prints its JSON Schema (committed as
``schemas/plan.schema.json``), and ``show``, ``diff``, ``plan --compare`` and ``export``
read a saved plan through ``read_saved_plan``, so a damaged or foreign file is one clear
error naming the file and the field. Fields added to format 1 after its first release have
defaults, so a plan saved by an older release still reads; keys a later release adds are
ignored, so an older omniladder can still compare a newer plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from omniladder.engine.records import FORMAT_VERSION
from omniladder.errors import InputError
from omniladder.inputs.documents import as_tuples, parse_json
from omniladder.inputs.files import decode_text, display_path, read_bytes
from omniladder.inputs.validation import validate
from omniladder.models import StrictModel, first_repeat


class _DocumentModel(StrictModel):
    # A saved plan is this program's own output: keys added to format 1 by a later release
    # are ignored rather than refused, so an older omniladder can still compare it.
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class DocumentSettings(_DocumentModel):
    """The effective settings the plan was made with (the engine's ``PlanSettings``)."""

    exit_cutoff_percent: float
    reentry_min_remaining_percent: float
    max_reading_age_seconds: float
    rung_budget_usd: dict[str, float] = Field(default_factory=dict)
    budget_period: str | None = None
    clamp_cooldown_to_reset: bool | None = None
    cheap_max_input_usd_per_mtok: float | None = None
    within_rung_order: str | None = None
    """R15's order; absent when ``declared`` (and from plans saved before it was added)."""


class DocumentRung(_DocumentModel):
    rung: str
    state: str
    candidates: int
    connections: int
    budget_usd: float | None = None
    spent_usd: float | None = None
    note: str = ""


class DocumentMark(_DocumentModel):
    connection_id: str
    reason: str
    detail: str = ""


class DocumentEntry(_DocumentModel):
    position: int
    rung: str
    provider: str
    model: str
    allowed_connection_ids: tuple[str, ...]
    unverified_connection_ids: tuple[str, ...] = ()
    unverified: tuple[DocumentMark, ...] = ()
    """Why each unverified connection is; absent from plans saved before it was added."""
    order_reasons: tuple[str, ...] = ()
    """R15 ``expiring-first``, quota rungs: why each allowed connection stands where it
    does, in allowlist order; absent under ``declared`` and on paid rungs."""
    order_stale_at: str | None = None
    """R15 ``expiring-first``, quota rungs: the soonest reset among the entry's allowed
    connections, when the order may have changed."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rung, self.provider, self.model)


class DocumentExclusion(_DocumentModel):
    connection_id: str
    provider: str
    model: str | None
    rung: str | None
    reason: str
    detail: str = ""
    fix: str | None = None
    """The remedy; absent from plans saved before it was added."""

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.connection_id, self.model)


class DocumentConnection(_DocumentModel):
    id: str
    provider: str
    auth_type: str | None = None
    billing: str
    overage: str
    billing_source: str | None = None
    catalog_file: str | None = None
    override: dict[str, str] | None = None
    overage_source: str | None = None
    capacity_weight: float | None = None
    """The seat's size (SPEC §9), when the connections file gives it."""
    reserve_percent: float | None = None
    seat_price_usd: float | None = None
    seat_period: str | None = None


class DocumentClamp(_DocumentModel):
    connection_id: str
    rate_limited_until: str
    clamped_to: str
    cooling: bool


class DocumentInput(_DocumentModel):
    """One input file of a saved plan's stamp (``plan --out``)."""

    role: str
    path: str
    sha256: str


class PlanDocument(_DocumentModel):
    """The plan document (SPEC §4.2), keys in the order the writer writes them."""

    format_version: str
    auto_id: str
    category: str | None = None
    tier: str | None = None
    now: str
    now_source: str | None = None
    settings: DocumentSettings | None = None
    rungs: tuple[DocumentRung, ...]
    pool: tuple[DocumentEntry, ...]
    excluded: tuple[DocumentExclusion, ...]
    connections: tuple[DocumentConnection, ...]
    clamps: tuple[DocumentClamp, ...] = ()
    warnings: tuple[str, ...] = ()
    summary: str = ""
    omniladder_version: str | None = None
    """Stamped by ``plan --out``; None in a plan printed by ``--json``."""
    inputs: tuple[DocumentInput, ...] | None = None
    """Stamped by ``plan --out``; None in a plan printed by ``--json``."""

    @model_validator(mode="after")
    def _unique_keys(self) -> PlanDocument:
        # Moves are judged by list order and reported by position: a pool whose positions
        # are not its order (an edited file) would diff as "moved #1 -> #1".
        for index, entry in enumerate(self.pool):
            if entry.position != index + 1:
                raise ValueError(f"pool[{index}].position is {entry.position}, expected "
                                 f"{index + 1}: a saved plan lists its pool in dispatch "
                                 "order, from position 1")
        repeat = first_repeat(entry.key for entry in self.pool)
        if repeat is not None:
            first, again = repeat
            entry = self.pool[again]
            raise ValueError(f"pool[{again}] repeats pool[{first}]: "
                             f"{entry.rung} {entry.provider}/{entry.model}")
        repeat = first_repeat(x.key for x in self.excluded)
        if repeat is not None:
            first, again = repeat
            x = self.excluded[again]
            raise ValueError(f"excluded[{again}] repeats excluded[{first}]: "
                             f"{x.connection_id} ({x.model or 'all models'})")
        return self


_OTHER_DOCUMENTS = (
    (("policy", "expectations"), "an `omniladder check --json` document"),
    (("equal", "old", "new"), "an `omniladder diff --json` document"),
    (("connection_id", "connection"), "an `omniladder why --json` document"),
    (("from", "to", "steps"), "an `omniladder simulate --json` document"),
    (("billing_files", "model_files"), "an `omniladder catalog show --json` document"),
    (("ok", "problems"), "an `omniladder catalog check --json` document"),
)
"""Documents of this program that are not plans, known by keys only they have (no key here
is a key of a plan document)."""


def parse_saved_plan(data: Any, name: str) -> PlanDocument:
    """Validate a plan document (already parsed JSON); ``name`` is what errors call it."""
    if not isinstance(data, dict):
        raise InputError("not a saved omniladder plan: the top level must be an object",
                         file=name)
    for keys, what in _OTHER_DOCUMENTS:
        if all(key in data for key in keys):
            raise InputError(f"not a saved omniladder plan: this is {what} (write a plan "
                             "with `omniladder plan AUTO_ID --out FILE`)", file=name)
    if "format_version" not in data:
        raise InputError("not a saved omniladder plan: no format_version (write one with "
                         "`omniladder plan AUTO_ID --out FILE`)", file=name,
                         field="format_version")
    version = data["format_version"]
    if version != FORMAT_VERSION:
        raise InputError(f"plan format_version {version!r} is not supported; this omniladder "
                         f"reads format_version {FORMAT_VERSION!r} (save the plan again with "
                         "this version's `omniladder plan AUTO_ID --out FILE`)",
                         file=name, field="format_version")
    return validate(PlanDocument, as_tuples(data), name)


def load_saved_plan(path: Path) -> PlanDocument:
    """Read a saved plan with json and validate it, or raise one clear InputError."""
    return read_saved_plan(path)[0]


def read_saved_plan(path: Path) -> tuple[PlanDocument, str]:
    """A saved plan validated, and its text as read; or one clear InputError."""
    name = display_path(path)
    text = decode_text(read_bytes(path, name), name)
    data = parse_json(text, name,
                      hint="a saved plan is the JSON `omniladder plan --out` writes")
    return parse_saved_plan(data, name), text
