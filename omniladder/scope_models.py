"""The quota-window scope catalog's models (SPEC §6): which models a provider's quota window
limits, which providers an import source describes, and the windows a source names after
another id.

Only ``import``, ``catalog``, ``schema`` and the commands that scope windows (``why``,
``check``, ``forecast``) read this catalog; the models live apart from omniladder.models so
that the commands that never read it (``plan``, ``simulate`` ...) do not define them (about
6.5 million instructions of the example's table view, docs/performance.md#start-up).
"""

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from omniladder.models import (
    CalendarDate,
    Identifier,
    StrictModel,
    WindowDuration,
    first_repeat,
)
from omniladder.quota_sources import QUOTA_SOURCES

WindowAnchor = Literal["first-use", "fixed"]
"""When a window's cycle starts (SPEC §10.3): at the first request after its reset, or on
the schedule of its recorded resets."""


class WindowScopeEntry(StrictModel):
    """Which models a provider's quota window limits (SPEC §6), or that it limits none.

    ``window`` and the model patterns are globs (``*`` any run of characters, ``?`` one),
    matched case-insensitively; in a model pattern ``{window}`` stands for the window's name.
    """

    provider: Identifier
    window: Identifier
    models: tuple[Identifier, ...] | None = None
    exclude_models: tuple[Identifier, ...] = ()
    ignore: bool = False
    zero_is_sentinel: bool = False
    """A stored 0 that the source did not flag exhausted means unlimited or unreported, not
    an empty window (older Copilot adapters wrote unlimited windows as 0): importers drop
    such a value instead of reading it as exhaustion."""
    duration: WindowDuration | None = None
    """The window's length (``5h``, ``7d``, ``1d``, or ``month``: the calendar month up to
    its reset), read by ``forecast`` when a reading does not carry ``window_seconds``."""
    anchor: WindowAnchor | None = None
    """When the window's cycle starts (SPEC §10.3): ``first-use``, at the first request after
    its reset (Claude's and Codex's five-hour windows), or ``fixed``, on the schedule its
    recorded resets show (weekly, daily, monthly windows). None: the catalog does not say,
    which ``whatif`` reads as fixed and says so (``inputs.scopes.window_anchor``)."""
    reason: str | None = None
    source: str | None = None
    reviewed: CalendarDate | None = None

    @model_validator(mode="after")
    def _models_or_ignore(self) -> "WindowScopeEntry":
        if self.ignore and (self.models is not None or self.exclude_models):
            raise ValueError("give models (and exclude_models) or ignore = true, not both")
        if not self.ignore and not self.models:
            raise ValueError("give models (name patterns such as \"*opus*\") or ignore = true")
        return self


if TYPE_CHECKING:
    QuotaSource = str
else:
    QuotaSource = Literal[tuple(QUOTA_SOURCES)]
    """The ``omniladder import`` sources that merge one connection's readings (SPEC §6):
    the names of ``quota_sources.QUOTA_SOURCES``."""


def _distinct_providers(value: tuple[str, ...]) -> tuple[str, ...]:
    repeat = first_repeat(value)
    if repeat is not None:
        first, again = repeat
        raise ValueError(f"provider {value[again]!r} is listed twice ([{first}] and [{again}])")
    return value


class SourceProvidersEntry(StrictModel):
    """Which providers' connections one import source describes (SPEC §6, "A payload must
    fit"): importing onto a connection of another provider is refused unless forced."""

    importer: QuotaSource
    providers: Annotated[tuple[Identifier, ...], Field(min_length=1),
                         AfterValidator(_distinct_providers)]
    auth_types: Annotated[tuple[Identifier, ...], Field(min_length=1),
                          AfterValidator(_distinct_providers)] | None = None
    """The auth types whose connections carry this telemetry (an OAuth login's plan
    windows are no API key's); absent, any."""
    reason: str | None = None
    source: str | None = None
    reviewed: CalendarDate | None = None

def _one_entry_per_importer(
        value: tuple[SourceProvidersEntry, ...]) -> tuple[SourceProvidersEntry, ...]:
    repeat = first_repeat(entry.importer for entry in value)
    if repeat is not None:
        first, again = repeat
        raise ValueError(f"importer {value[again].importer!r} is given twice "
                         f"(sources[{first}] and sources[{again}]); give its providers once")
    return value


_NOT_IN_AN_ID = frozenset("*?(){}")
"""Characters a bucket or model id never holds: glob wildcards, the parenthesised qualifier
importers add to a window name, and catalog placeholders."""


class WindowAliasEntry(StrictModel):
    """A window a source names after an id that is not the id of the model it limits (SPEC
    §6): gemini-cli's quota bucket ``gemini-3-flash`` is the quota of ``gemini-3-flash-
    preview``. Scoping reads such a window as if it were named after each of ``models``
    (a trailing ``(qualifier)`` kept), besides its own name.

    Ids are exact (compared case-insensitively), never patterns.
    """

    provider: Identifier
    window: Identifier
    """The id the source writes (a bucket's ``modelId``), without any qualifier."""
    models: tuple[Identifier, ...]
    """The model ids that window limits."""
    reason: str | None = None
    source: str | None = None
    reviewed: CalendarDate | None = None
    @model_validator(mode="after")
    def _exact_ids(self) -> "WindowAliasEntry":
        for name in (self.window, *self.models):
            found = sorted(set(name) & _NOT_IN_AN_ID)
            if found:
                raise ValueError(
                    f"{name!r}: aliases name exact ids, without {' '.join(found)} (patterns "
                    "and qualifiers belong in [[windows]])")
        if not self.models:
            raise ValueError("give the model ids the window limits (models = [\"...\"])")
        folded = [model.casefold() for model in self.models]
        if len(set(folded)) != len(folded):
            raise ValueError("models lists the same id twice")
        if self.window.casefold() in folded:
            raise ValueError(f"{self.window!r} is an alias of itself: list only other ids")
        return self


class WindowScopeCatalog(StrictModel):
    windows: tuple[WindowScopeEntry, ...] = ()
    sources: Annotated[tuple[SourceProvidersEntry, ...],
                       AfterValidator(_one_entry_per_importer)] = ()
    aliases: tuple[WindowAliasEntry, ...] = ()
