"""Window scopes (SPEC §6): which models a provider's quota window limits, as curated data.

A quota source names its windows its own way (``weekly opus (7d)``, ``seven_day_opus``,
``code_review``, one key per model id, ``<model id> (<token type>)``).
``catalogs/quota-windows.toml`` maps a provider and a window-name pattern to the model-name
patterns the window limits, or marks it ``ignore`` (not a chat quota, or a sentinel).
Importers turn a match into the concrete ``models`` list of the window, from the
connection's own models; a window that scopes to none of them is dropped, and a window no
entry matches applies to every model (the conservative reading).

Precedence: overlay files are consulted before the files they are applied over (the last
overlay first, the shipped catalog last); inside one file the first matching entry wins.
An overlay entry with the same provider and window pattern as an earlier file's entry
replaces it.

Aliases (``[[aliases]]``): a source may name a window after an id that is not the id of the
model it limits (gemini-cli's bucket ``gemini-3-flash`` limits ``gemini-3-flash-preview``).
Such a window is scoped under its own name and under each alias (a trailing qualifier kept),
and limits every model any of those names scopes to: more models limited, never fewer. A
window the catalog ignores under its own name stays ignored. An overlay alias with the same
provider and id replaces the earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from omniladder.inputs import catalogs
from omniladder.inputs.documents import load_model
from omniladder.inputs.files import display_path
from omniladder.scope_models import (
    WindowAliasEntry,
    WindowAnchor,
    WindowScopeCatalog,
    WindowScopeEntry,
)

WINDOW_CATALOG_NAME = "quota-windows.toml"
WINDOW_PLACEHOLDER = "{window}"
WINDOW_BASE_PLACEHOLDER = "{window_base}"

ScopeKind = Literal["all", "models", "ignore", "none"]


@lru_cache(maxsize=4096)
def _glob(pattern: str) -> re.Pattern[str]:
    """A case-insensitive whole-string matcher for a glob: ``*`` any run, ``?`` one char."""
    parts = []
    for char in pattern:
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def glob_matches(pattern: str, text: str) -> bool:
    return _glob(pattern).fullmatch(text) is not None


_PLACEHOLDERS = re.compile(r"(\{window\}|\{window_base\})")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def window_base(window: str) -> str:
    """A window's name without a trailing parenthesised qualifier: ``m (REQUESTS)`` → ``m``."""
    return _QUALIFIER.sub("", window) or window


def _model_pattern(pattern: str, window: str) -> re.Pattern[str]:
    """A model pattern with ``{window}`` standing for the window's name and
    ``{window_base}`` for that name without a trailing ``(qualifier)``, both taken literally."""
    parts = []
    for piece in _PLACEHOLDERS.split(pattern):
        if piece == WINDOW_PLACEHOLDER:
            parts.append(re.escape(window))
        elif piece == WINDOW_BASE_PLACEHOLDER:
            parts.append(re.escape(window_base(window)))
        else:
            parts.append(_glob(piece).pattern)
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class SourcedScope:
    entry: WindowScopeEntry
    file: str


@dataclass(frozen=True)
class SourcedAlias:
    entry: WindowAliasEntry
    file: str


@dataclass(frozen=True)
class Scope:
    """What one window of one connection limits, after the catalog is consulted."""

    kind: ScopeKind
    """``all``: every model (written without a models list); ``models``: only ``models``;
    ``ignore``: the catalog says it is not a chat quota; ``none``: it limits none of the
    connection's models. The last two are dropped by importers."""
    models: tuple[str, ...] | None
    matched: SourcedScope | None

    @property
    def kept(self) -> bool:
        return self.kind in ("all", "models")


@dataclass(frozen=True)
class WindowScopes:
    """The effective window-scope catalog, in the order entries are tried."""

    entries: tuple[SourcedScope, ...]
    files: tuple[str, ...]
    aliases: tuple[SourcedAlias, ...] = ()
    """The effective aliases, one per (provider, id): an overlay's replaces an earlier one."""
    _answers: dict[tuple[str, str, tuple[str, ...]], Scope] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    """Each (provider, window, models) answer, kept: an import asks the same question for
    every reading of a connection."""
    _alias_of: dict[tuple[str, str], SourcedAlias] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for sourced in self.aliases:
            key = (sourced.entry.provider, sourced.entry.window.casefold())
            self._alias_of[key] = sourced

    def alias(self, provider: str, window: str) -> SourcedAlias | None:
        """The alias of a window's id (its name without a trailing qualifier), if any."""
        if not self._alias_of:
            return None
        return self._alias_of.get((provider, window_base(window).casefold()))

    def alias_names(self, provider: str, window: str) -> tuple[str, ...]:
        """The names a window is also scoped under: each aliased model id, with the
        window's own trailing qualifier (``gemini-3-flash (TOKENS)`` →
        ``gemini-3-flash-preview (TOKENS)``)."""
        sourced = self.alias(provider, window)
        if sourced is None:
            return ()
        qualifier = window[len(window_base(window)):]
        return tuple(model + qualifier for model in sourced.entry.models)

    def match(self, provider: str, window: str) -> SourcedScope | None:
        for sourced in self.entries:
            entry = sourced.entry
            if entry.provider == provider and glob_matches(entry.window, window):
                return sourced
        return None

    def scope(self, provider: str, window: str, models: Sequence[str]) -> Scope:
        """The scope of one window of a connection of ``provider`` serving ``models``."""
        key = (provider, window, tuple(models))
        answer = self._answers.get(key)
        if answer is None:
            answer = self._scope(provider, window, models)
            self._answers[key] = answer
        return answer

    def _scope(self, provider: str, window: str, models: Sequence[str]) -> Scope:
        own = self._scope_by_name(provider, window, models)
        aliases = self.alias_names(provider, window)
        if not aliases or own.kind == "ignore":
            return own
        parts = [own, *(self._scope_by_name(provider, name, models) for name in aliases)]
        matched = next((part.matched for part in parts if part.matched is not None), None)
        if any(part.kind == "all" for part in parts):
            return Scope("all", None, matched)
        limited = {model for part in parts for model in part.models or ()}
        chosen = tuple(model for model in dict.fromkeys(models) if model in limited)
        if not chosen:
            return Scope("none", (), matched)
        return Scope("models", chosen, matched)

    def _scope_by_name(self, provider: str, window: str, models: Sequence[str]) -> Scope:
        sourced = self.match(provider, window)
        if sourced is None:
            return Scope("all", None, None)
        entry = sourced.entry
        if entry.ignore:
            return Scope("ignore", None, sourced)
        patterns = entry.models or ()
        if patterns == ("*",) and not entry.exclude_models:
            return Scope("all", None, sourced)
        wanted = [_model_pattern(p, window) for p in patterns]
        unwanted = [_model_pattern(p, window) for p in entry.exclude_models]
        chosen = tuple(
            model for model in dict.fromkeys(models)
            if any(p.fullmatch(model) for p in wanted)
            and not any(p.fullmatch(model) for p in unwanted))
        if not chosen:
            return Scope("none", (), sourced)
        return Scope("models", chosen, sourced)


def window_anchor(scopes: WindowScopes, provider: str, window: str
                  ) -> tuple[WindowAnchor, bool]:
    """When a window's cycle starts (SPEC §10.3), and whether the catalog said so: the
    ``anchor`` of the first entry that matches the window's own name; ``("fixed", False)``
    when no entry matches or the one that does gives no anchor (a window the catalog does
    not name keeps its recorded resets, and the output says it was not told)."""
    sourced = scopes.match(provider, window)
    if sourced is None or sourced.entry.anchor is None:
        return "fixed", False
    return sourced.entry.anchor, True


def ordered(files: Sequence[tuple[str, Sequence[WindowScopeEntry]]],
            aliases: Sequence[tuple[str, Sequence[WindowAliasEntry]]] = ()) -> WindowScopes:
    """Entries of files given in override order (shipped first) → the order they are tried;
    aliases of the same files, a later file's alias replacing an earlier one's."""
    seen: set[tuple[str, str]] = set()
    out: list[SourcedScope] = []
    for shown, entries in reversed(files):
        for entry in entries:
            key = (entry.provider, entry.window)
            if key in seen:
                continue
            seen.add(key)
            out.append(SourcedScope(entry, shown))
    effective: dict[tuple[str, str], SourcedAlias] = {}
    for shown, alias_entries in aliases:
        for alias in alias_entries:
            effective[(alias.provider, alias.window.casefold())] = SourcedAlias(alias, shown)
    return WindowScopes(tuple(out), tuple(shown for shown, _ in files),
                        tuple(effective.values()))


def window_catalog_paths(window_files: Iterable[Path],
                         include_shipped: bool = True) -> list[tuple[Path, str]]:
    """The window-scope catalog files in override order, with their display names."""
    paths: list[tuple[Path, str]] = []
    if include_shipped:
        paths.append((catalogs.shipped_catalog_dir() / WINDOW_CATALOG_NAME,
                      f"{catalogs.SHIPPED_PREFIX}/{WINDOW_CATALOG_NAME}"))
    paths += [(path, display_path(path)) for path in window_files]
    return paths


def load_window_scopes(window_files: Iterable[Path] = (),
                       include_shipped: bool = True) -> WindowScopes:
    """Read and validate the window-scope catalogs, shipped first, then the overlays."""
    loaded = [(shown, load_model(WindowScopeCatalog, path, shown))
                for path, shown in window_catalog_paths(window_files, include_shipped)]
    return ordered([(shown, catalog.windows) for shown, catalog in loaded],
                   [(shown, catalog.aliases) for shown, catalog in loaded])
