"""R6 quota verdicts, R7 hysteresis replayed from history, R9 the cooldown clamp.

Pure functions over a connection's history (its readings sorted by ``checked_at``); the
planner keeps no state of its own, so the same history and ``now`` always give the same
verdict.
"""

import bisect
import dataclasses
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Literal, NamedTuple, overload

from omniladder import timefmt
from omniladder.engine import readings as rules
from omniladder.engine.readings import threshold_of
from omniladder.models import Connection, LadderSettings, Reading, Window

VerdictKind = Literal["usable", "unknown", "exhausted"]


def readings_until(history: Sequence[Reading], now: datetime) -> Sequence[Reading]:
    """Only readings with ``checked_at <= now`` exist (R6). ``history`` is sorted."""
    if not history:
        return history
    # Equivalent mutant: `<` only skips this fast path for a latest reading exactly at now,
    # and bisect_right then keeps the readings at now too: the same slice.
    if history[-1].checked_at <= now:  # pragma: no mutate (same slice)
        return history
    cut = bisect.bisect_right(history, now, key=lambda reading: reading.checked_at)
    return history[:cut]


def carries_quota(reading: Reading) -> bool:
    """SPEC §2.2 (v1.2): a reading with no window, no top-level figure and no status says
    nothing about quota (a source's empty snapshot after a hit limit); R6, R7 and R9 pass
    over it. Its ``overage`` still counts for R2a."""
    return (reading.status is not None or reading.remaining_percent is not None
            or bool(reading.windows))


def quota_readings(readings: Sequence[Reading]) -> Sequence[Reading]:
    """The readings that carry quota information, in order (the same sequence when all do)."""
    for reading in readings:
        if not carries_quota(reading):
            return tuple(reading for reading in readings if carries_quota(reading))
    return readings


# --- R6.4 (v1.2): regain before reset -------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class HeldWindow(Window):
    """A window an earlier reading showed at or below the exit cutoff, with a reset still
    ahead, standing in a later reading that showed it higher or left it out (R6.4): a window
    regains nothing before its reset."""

    held_from: datetime | None = None
    """``checked_at`` of the earlier reading that showed the window low."""
    shown: float | None = None
    """What the later reading itself showed for the window; None when it left it out."""


def _held_key(window: Window) -> tuple[str, tuple[str, ...] | None]:
    return window.name, window.models


class _Hold(NamedTuple):
    """A low window of an earlier reading that later readings hold until its reset (R6.4)."""

    window: Window
    """The window as that reading showed it."""
    since: datetime
    """That reading's ``checked_at``."""
    until: datetime
    """The window's reset: later readings hold it while they are before this instant."""

    def held(self, shown: float | None) -> HeldWindow:
        """The window as a later reading holds it, beside what that reading showed (None
        when it left the window out)."""
        window = self.window
        return HeldWindow(name=window.name, remaining_percent=window.figure, unlimited=False,
                          reset_at=window.reset_at, models=window.models,
                          held_from=self.since, shown=shown)


def _holds(window: Window, now: datetime, cutoff: float) -> bool:
    """R6.4: whether later readings hold this window of a reading: it shows the window at
    or below the cutoff with a reset after now (a held window is not held again)."""
    if not rules.is_low(window, cutoff):
        return False  # most windows: checked first
    reset_at = window.reset_at
    return reset_at is not None and reset_at > now and not isinstance(window, HeldWindow)


def _first_holding(readings: Sequence[Reading], now: datetime, cutoff: float) -> int | None:
    """The position of the first reading whose windows later readings hold (R6.4); None
    when no reading before the latest has one (the latest has no later reading)."""
    for position in range(len(readings) - 1):
        for window in readings[position].all_windows():
            # Most windows are above the cutoff: passed over before the whole check (an
            # inline part of ``readings.is_low``, which ``_holds`` then asks in full).
            if (window.remaining_percent or 0.0) <= cutoff and _holds(window, now, cutoff):
                return position
    return None


def with_holds(readings: Sequence[Reading], now: datetime,
               cutoff: float) -> Sequence[Reading]:
    """R6.4 (v1.2): each reading as R6 and R7 read it, a low window of an earlier reading
    held in every later reading until its reset.

    A window (same name, same models) that a reading showed at or below ``cutoff`` with a
    ``reset_at`` after both a later reading's ``checked_at`` and now keeps that figure and
    reset in the later reading when the later one shows it higher or leaves it out. The same
    sequence comes back when nothing is held (the common case).
    """
    # Holding starts at the first reading with a window to hold: the readings before it
    # pass as they are and leave nothing held. Most histories have none, and one pass over
    # their windows, cheaper than the walk, proves it.
    start = _first_holding(readings, now, cutoff)
    return readings if start is None else _walk_holds(readings, start, now, cutoff)


def _walk_holds(readings: Sequence[Reading], start: int, now: datetime,
                cutoff: float) -> Sequence[Reading]:
    """``with_holds`` from the reading at ``start`` on, the readings before it left as
    they are: from 0, the whole rule."""
    holds: dict[tuple[str, tuple[str, ...] | None], _Hold] = {}
    out: list[Reading] | None = None
    for position in range(start, len(readings)):
        reading = readings[position]
        checked = reading.checked_at
        if holds:
            holds = {key: hold for key, hold in holds.items() if hold.until > checked}
        own = reading.all_windows()
        if holds:
            shown = {_held_key(window): window for window in own}
            added: list[Window] = []
            replaced: dict[tuple[str, tuple[str, ...] | None], Window] = {}
            for key, hold in holds.items():
                mine = shown.get(key)
                if mine is None:
                    added.append(hold.held(None))
                elif not mine.unlimited and mine.figure <= hold.window.figure:
                    continue  # the later reading is as low or lower: its own word stands
                else:
                    replaced[key] = hold.held(100.0 if mine.unlimited else mine.figure)
            if added or replaced:
                windows = tuple(replaced.get(_held_key(window), window) for window in own)
                # A top-level figure becomes its one window beside the held ones; the
                # top-level reset stays for R6.3 and R9, which read it on exhausted readings.
                rewritten = dataclasses.replace(
                    reading, remaining_percent=None, windows=windows + tuple(added))
                if out is None:
                    out = list(readings[:position])
                out.append(rewritten)
                own = windows
            elif out is not None:
                out.append(reading)
        elif out is not None:
            out.append(reading)
        for window in own:
            if _holds(window, now, cutoff):
                assert window.reset_at is not None  # a held window has a reset after now
                holds[_held_key(window)] = _Hold(window=window, since=checked,
                                                 until=window.reset_at)
    return readings if out is None else tuple(out)


def in_force(history: Sequence[Reading], now: datetime, cutoff: float) -> Sequence[Reading]:
    """The readings R6 and R7 judge at now: at or before now, carrying quota information,
    with R6.4's held windows."""
    return with_holds(quota_readings(readings_until(history, now)), now, cutoff)


class WindowView(NamedTuple):
    """One window of a reading, seen for one model at one instant (R6)."""

    window: Window
    applies: bool
    current: bool

    @property
    def outdated(self) -> bool:
        return self.applies and not self.current


def window_views(reading: Reading, model: str, at: datetime) -> tuple[WindowView, ...]:
    return tuple(
        WindowView(window, window.applies_to(model),
                   window.reset_at is None or window.reset_at > at)
        for window in reading.all_windows()
    )


def _figure(reading: Reading, model: str, at: datetime) -> float | None:
    """R6.6's figure of a reading for a model at an instant: the lowest remaining percent
    over its windows that apply to the model and have not reset by then (an unlimited
    window counts 100); None when no such window exists."""
    windows = reading.windows
    if windows is None:  # the one window of a top-level figure applies to every model
        value = reading.remaining_percent
        reset_at = reading.reset_at
        if value is None or (reset_at is not None and reset_at <= at):
            return None
        return float(value)
    best: float | None = None
    for window in windows:
        models = window.models
        if models is not None and model not in models:
            continue
        reset_at = window.reset_at
        if reset_at is not None and reset_at <= at:
            continue
        # ``readings.figure``, inline: this runs for every window of a replayed reading.
        value = 100.0 if window.unlimited else float(window.remaining_percent or 0.0)
        if best is None or value < best:
            best = value
    return best


class ReplayStep(NamedTuple):
    """One reading of the R7 replay: what it showed and the state it left."""

    checked_at: datetime
    status: str | None
    figure: float | None
    threshold: float
    in_play_before: bool
    in_play_after: bool


class Verdict(NamedTuple):
    """R6 and R7 on one (connection, model) at now: usable, unknown or exhausted, with the
    reading, window and figure that decided it, the threshold it was held to (the exit
    cutoff, or R7's re-entry floor when ``floor_applied``) and the replay that led there."""

    kind: VerdictKind
    reason: str | None
    """A reason code when the verdict is not usable."""
    detail: str
    reading: Reading | None = None
    figure: float | None = None
    window: Window | None = None
    threshold: float | None = None
    floor_applied: bool = False
    replay: Sequence[ReplayStep] = ()
    out_since: datetime | None = None
    held_past_age: bool = False
    """R6.4: the reading is older than the max age, and a low window with a reset instant
    still after now keeps the pair exhausted."""
    first_after: datetime | None = None
    """For ``quota-missing`` when readings exist but all lie after now: the first of them."""


def replay(readings: Sequence[Reading], model: str,
           ladder: LadderSettings) -> tuple[bool, datetime | None, "Replay"]:
    """R7: replay the earlier readings from *in play*; return the state they leave.

    Each reading is judged at its own ``checked_at``. Returns (in play, out since, steps);
    the steps are worked out only when read (``Replay``), as ``replay_steps`` gives them.
    """
    if _stays_in_play(readings, ladder):
        return True, None, Replay(readings, model, ladder)
    in_play = True
    out_since: datetime | None = None
    # The same judgement of each reading as ``replay_steps``, keeping only the state: a
    # plan reads no step, and building them was about a third of the replay's cost.
    for reading in readings:
        checked_at = reading.checked_at
        after = _in_play_after(in_play, reading.status, _figure(reading, model, checked_at),
                               ladder)
        if after != in_play:
            in_play, out_since = after, None if after else checked_at
    return in_play, out_since, Replay(readings, model, ladder)


def _in_play_after(in_play: bool, status: str | None, figure: float | None,
                   ladder: LadderSettings) -> bool:
    """R7 on one reading: a pair in play leaves on an exhausted status or a figure at or
    below the exit cutoff; a pair out of play comes back on a figure above the re-entry
    floor that does not say exhausted."""
    if in_play:
        return not (status == "exhausted"
                    or (figure is not None and rules.below(figure, True, ladder)))
    return status != "exhausted" and figure is not None and not rules.below(figure, False, ladder)


def _stays_in_play(readings: Sequence[Reading], ladder: LadderSettings) -> bool:
    """R7: whether a pair in play stays in play through these readings, whatever its
    model: none says exhausted, and every window of every one shows a figure above the exit
    cutoff (an unlimited window counts 100, which a cutoff of 100 does not leave below).

    A pair leaves play only on a reading whose figure is ``below`` the cutoff, and no figure
    above the cutoff is, whatever the comparison at the cutoff itself; so the replay's state
    is known without working out each reading's figure for the model. Most histories'
    earlier readings are such.
    """
    cutoff = threshold_of(True, ladder)
    for reading in readings:
        if reading.status == "exhausted":
            return False
        for window in reading.all_windows():
            # ``readings.figure`` and ``below``, read inline: this runs over every earlier
            # window of most replays, and a call per window cost a plan 55 M instructions.
            if (100.0 if window.unlimited else (window.remaining_percent or 0.0)) <= cutoff:
                return False
    return True


def replay_steps(readings: Sequence[Reading], model: str,
                 ladder: LadderSettings) -> tuple[ReplayStep, ...]:
    """R7's replay, one step per earlier reading: what it showed and the state it left."""
    in_play = True
    steps: list[ReplayStep] = []
    for reading in readings:
        checked_at = reading.checked_at
        status = reading.status
        figure = _figure(reading, model, checked_at)
        before = in_play
        in_play = _in_play_after(in_play, status, figure, ladder)
        steps.append(ReplayStep(checked_at, status, figure, threshold_of(before, ladder),
                                before, in_play))
    return tuple(steps)


class Replay(Sequence[ReplayStep]):
    """The steps of a verdict's R7 replay (``replay_steps``), worked out the first time
    something reads them.

    Only ``why`` and simulate's causes read the steps; a plan reads the state the replay
    leaves. It compares, hashes and prints as the tuple of its steps, so a verdict equals
    one whose steps were given as a tuple.
    """

    __slots__ = ("_ladder", "_model", "_readings", "_steps")

    def __init__(self, readings: Sequence[Reading], model: str,
                 ladder: LadderSettings) -> None:
        self._readings = readings
        self._model = model
        self._ladder = ladder
        self._steps: tuple[ReplayStep, ...] | None = None

    @property
    def steps(self) -> tuple[ReplayStep, ...]:
        steps = self._steps  # pragma: no mutate (working them out again: the same steps)
        if steps is None:
            steps = self._steps = replay_steps(self._readings, self._model, self._ladder)
        return steps

    @overload
    def __getitem__(self, index: int) -> ReplayStep: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ReplayStep, ...]: ...

    def __getitem__(self, index: int | slice) -> ReplayStep | tuple[ReplayStep, ...]:
        return self.steps[index]

    def __len__(self) -> int:
        return len(self._readings)

    def __iter__(self) -> Iterator[ReplayStep]:
        return iter(self.steps)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Replay):
            other = other.steps
        return self.steps == other

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return repr(self.steps)


def verdict(history: Sequence[Reading], model: str, now: datetime,
            ladder: LadderSettings, unreserved: LadderSettings | None = None) -> Verdict:
    """R6 with the R7 threshold: the quota verdict of one (connection, model) at now.
    ``ladder`` holds the connection's thresholds; when its reserve raised them, the ladder's
    own as ``unreserved`` words a low verdict they would not give ``quota-below-reserve``
    (R16, as ``ReservedVerdicts``)."""
    readings = in_force(history, now, ladder.exit_cutoff_percent)
    if not readings:
        return _missing(history, now)
    found = _verdict(readings, model, now, ladder, replay(readings[:-1], model, ladder))
    if (unreserved is None or unreserved is ladder or found.reason not in LOW_REASONS
            or verdict(history, model, now, unreserved).kind == "exhausted"):
        return found
    return below_reserve(found, ladder.exit_cutoff_percent, now)


def _missing(history: Sequence[Reading], now: datetime) -> Verdict:
    """R6.1: no reading at or before now carries quota information."""
    until = readings_until(history, now)
    if until:
        count = len(until)
        return Verdict("unknown", "quota-missing",
                       f"no quota reading at or before now: the {count} there "
                       f"{'is' if count == 1 else 'are'} empty (no window, figure or status; "
                       f"the latest at {timefmt.short(until[-1].checked_at, now)})")
    if history:
        return Verdict("unknown", "quota-missing",
                       "no quota reading at or before now: "
                       + ("the only one lies after it (at " if len(history) == 1
                          else f"all {len(history)} lie after it (the first at ")
                       + f"{timefmt.short(history[0].checked_at, now)})",
                       first_after=history[0].checked_at)
    return Verdict("unknown", "quota-missing", "no quota reading at or before now")


def _verdict(readings: Sequence[Reading], model: str, now: datetime, ladder: LadderSettings,
             replayed: tuple[bool, datetime | None, Replay]) -> Verdict:
    """``verdict`` over readings at or before now (at least one), given the R7 replay of
    all but the latest."""
    latest = readings[-1]
    in_play = replayed[0]
    threshold = threshold_of(in_play, ladder)
    status = latest.status
    if status == "unknown":
        return _judged(latest, threshold, replayed, "unknown", "quota-unknown",
                       f"reading at {timefmt.short(latest.checked_at, now)} has status unknown")
    if status == "exhausted":
        seen = timefmt.short(latest.checked_at, now)
        if latest.reset_at is not None and latest.reset_at <= now:
            return _judged(
                latest, threshold, replayed, "unknown", "quota-reset-since-reading",
                f"reading at {seen} said exhausted until {timefmt.short(latest.reset_at, now)};"
                " reset since, no newer reading")
        resets = (f", resets {timefmt.short(latest.reset_at, now)}"
                  if latest.reset_at is not None else "")
        return _judged(latest, threshold, replayed, "exhausted", "quota-exhausted",
                       f"reading at {seen} says exhausted{resets}")
    max_age = ladder.max_reading_age_seconds

    # One pass over the latest reading's windows that apply to the model: the lowest
    # current figure (R6.6), the lowest among windows with a reset (R6.4), the first
    # window whose reset has passed (R6.7), and whether any applies at all (R6.8).
    figure: float | None = None
    window: Window | None = None
    dated: float | None = None
    dated_window: Window | None = None  # pragma: no mutate (read only once dated is set)
    first: Window | None = None
    applies = False  # pragma: no mutate (None reads the same: only `not applies`)
    for candidate in latest.all_windows():
        models = candidate.models
        if models is not None and model not in models:
            continue
        applies = True
        reset_at = candidate.reset_at
        if reset_at is not None and reset_at <= now:
            if first is None:
                first = candidate
            continue
        # ``readings.figure``, inline: this loop runs for every pair of a plan.
        value = 100.0 if candidate.unlimited else float(candidate.remaining_percent or 0.0)
        if figure is None or value < figure:
            figure, window = value, candidate
        if reset_at is not None and (dated is None or value < dated):
            dated, dated_window = value, candidate

    # R6.4: a low current window that has a reset instant stays low until that instant,
    # however old the reading; staleness only makes a healthy figure uncertain.
    if not rules.is_fresh(latest.checked_at, now, max_age):
        age = rules.age_seconds(latest.checked_at, now)
        if dated is not None and rules.below(dated, in_play, ladder):
            assert dated_window is not None
            return _low(latest, now, threshold, replayed, dated, dated_window, age)
        return _judged(
            latest, threshold, replayed, "unknown", "quota-stale",
            f"reading at {timefmt.short(latest.checked_at, now)} is "
            f"{timefmt.age_beside(age, max_age)} old (max {timefmt.duration(max_age)})")
    if figure is not None and rules.below(figure, in_play, ladder):
        assert window is not None
        return _low(latest, now, threshold, replayed, figure, window, None)
    if first is not None:  # R6.7
        assert first.reset_at is not None
        return _judged(
            latest, threshold, replayed, "unknown", "quota-reset-since-reading",
            f"{first.name} window reset at {timefmt.short(first.reset_at, now)}, "
            f"after the reading at {timefmt.short(latest.checked_at, now)}", figure, window)
    if not applies:  # R6.8
        return _judged(
            latest, threshold, replayed, "unknown", "quota-unknown",
            f"reading at {timefmt.short(latest.checked_at, now)} has no window for {model}")
    assert figure is not None
    assert window is not None
    return _judged(latest, threshold, replayed, "usable", None,
                   f"{window.name} window at {timefmt.pct(figure)}, "
                   f"reading {timefmt.duration(rules.age_seconds(latest.checked_at, now))} old",
                   figure, window)


def _judged(latest: Reading, threshold: float,
            replayed: tuple[bool, datetime | None, Replay], kind: VerdictKind,
            reason: str | None, detail: str, figure: float | None = None,
            window: Window | None = None) -> Verdict:
    """A verdict on the latest reading, with the threshold and the replay that led to it."""
    in_play, out_since, steps = replayed
    return Verdict(kind, reason, detail, latest, figure, window, threshold, not in_play,
                   steps, out_since)


def _low(latest: Reading, now: datetime, threshold: float,
         replayed: tuple[bool, datetime | None, Replay], figure: float,
         window: Window, held_age: float | None) -> Verdict:
    """R6.4 / R6.6: a current window at or below the threshold; ``held_age`` is the age of a
    stale reading whose low window is held until its reset (R6.4), None for a fresh one."""
    in_play, out_since, steps = replayed
    reason = "quota-below-cutoff" if in_play else "quota-below-reentry"
    detail = _low_detail(latest, now, threshold, in_play, out_since, figure, window, held_age,
                         None)
    return Verdict("exhausted", reason, detail, latest, figure, window, threshold,
                   not in_play, steps, out_since, held_age is not None)


def _low_detail(latest: Reading, now: datetime, threshold: float, in_play: bool,
                out_since: datetime | None, figure: float, window: Window,
                held_age: float | None, reserve: float | None) -> str:
    """The words of a low verdict: the window, its figure and the threshold it was held to
    (the reserve's, R16, when ``reserve`` is given), its reset, and R6.4's hold."""
    resets = (f", resets {timefmt.short(window.reset_at, now)}"
              if window.reset_at is not None else "")
    if in_play:
        why = (f"cutoff {timefmt.pct(threshold)}" if reserve is None
               else f"reserve {timefmt.pct(reserve)}")
    else:
        assert out_since is not None  # the R7 replay sets it whenever a pair leaves play
        floor = f"re-entry floor {timefmt.pct(threshold)}"
        if reserve is not None:
            floor += f" over the reserve {timefmt.pct(reserve)}"
        why = f"{floor}, out since {timefmt.short(out_since, now)}"
    detail = f"{window.name} window at {timefmt.pct(figure)} ({why}){resets}"
    if isinstance(window, HeldWindow) and window.held_from is not None:
        later = ("leaves it out" if window.shown is None
                 else f"shows {timefmt.pct(window.shown)}")
        detail += (f"; held from the reading at {timefmt.short(window.held_from, now)} (the "
                   f"one at {timefmt.short(latest.checked_at, now)} {later}): no regain "
                   "before a reset")
    if held_age is not None:
        detail += (f"; reading {timefmt.duration(held_age)} old, still low until that reset"
                   " (usage only grows inside a window)")
    return detail


LOW_REASONS: frozenset[str] = frozenset({"quota-below-cutoff", "quota-below-reentry"})
"""The reasons of a figure at or below the threshold a pair is held to (R6.4, R6.6, R7)."""


def below_reserve(found: Verdict, reserve: float, now: datetime) -> Verdict:
    """R16: a low verdict (``LOW_REASONS``) that the ladder's own thresholds would not give,
    reworded: out only because of the connection's reserve (``quota-below-reserve``)."""
    latest, figure, window, threshold = found.reading, found.figure, found.window, found.threshold
    assert latest is not None
    assert figure is not None
    assert window is not None
    assert threshold is not None
    held_age = rules.age_seconds(latest.checked_at, now) if found.held_past_age else None
    detail = _low_detail(latest, now, threshold, not found.floor_applied, found.out_since,
                         figure, window, held_age, reserve)
    return found._replace(reason="quota-below-reserve", detail=detail)


class HistoryVerdicts:
    """The verdicts of one connection's history at now, for each of its models.

    A model enters a verdict only through which windows apply to it, and only windows with
    a ``models`` list tell models apart. Models those windows treat alike share one verdict,
    computed once; only the "no window for <model>" detail names the model, so that verdict
    is computed for each model. Same results as calling ``verdict`` per model.
    """

    # One per connection of a fleet, most of them never asked (paid connections): slots,
    # and the memo tables made by the first question.
    __slots__ = ("_earlier_scoped", "_history", "_keys", "_readings", "_replays", "_shared",
                 "ladder", "now")
    _shared: dict[tuple[int, ...], Verdict]
    _replays: dict[tuple[int, ...], tuple[bool, datetime | None, Replay]]
    _keys: dict[str, tuple[int, ...]]
    """For each model a window names, the places of the windows that name it among the
    windows that name models (earlier readings first): the key of its group."""
    _earlier_scoped: int
    """How many of the windows that name models belong to the readings before the latest:
    a key's places below it are the earlier readings' part."""

    def __init__(self, history: Sequence[Reading], now: datetime,
                 ladder: LadderSettings) -> None:
        """``ladder`` holds the connection's thresholds (``readings.held_to``)."""
        self._history = history
        self.now = now
        self.ladder = ladder
        self._readings: Sequence[Reading] | None = None

    # The memo reads and writes below are marked: a verdict, a replay or the readings not
    # found or not kept are computed again by pure functions with the same result.
    def __call__(self, model: str) -> Verdict:
        readings = self._readings  # pragma: no mutate (memo)
        if readings is None:  # the first verdict asked for: a paid connection may ask none
            readings = self._readings = in_force(self._history, self.now,
                                                  self.ladder.exit_cutoff_percent)
            self._shared = {}
            self._replays = {}
            # A top-level figure's window applies to every model: only listed windows count.
            # Keyed once per named model rather than at each question: most connections
            # name none, and a plan asks each of its models once.
            places: dict[str, list[int]] = {}
            scoped = 0
            earlier = 0  # pragma: no mutate (the loop sets it; with no reading it goes unread)
            for reading in readings:
                earlier = scoped  # the windows before the latest reading's, at the end
                for window in reading.windows or ():
                    if window.models is not None:
                        for named in window.models:
                            places.setdefault(named, []).append(scoped)
                        scoped += 1
            self._earlier_scoped = earlier
            self._keys = {named: tuple(found) for named, found in places.items()}
        key = self._keys.get(model, ())  # a model no window names: none of them applies
        found = self._shared.get(key)
        if found is None:
            if not readings:  # the whole history words quota-missing
                found = _missing(self._history, self.now)
            else:
                # R7's replay sees the earlier readings only: models their windows treat
                # alike replay alike.
                # pragma: no mutate start (`bisect_right` also splits by the latest reading's
                # first window: finer groups, the same replays)
                early = key[:bisect.bisect_left(key, self._earlier_scoped)]
                # pragma: no mutate end
                replayed = self._replays.get(early)  # pragma: no mutate (memo)
                if replayed is None:
                    replayed = self._replays[early] = replay(readings[:-1], model, self.ladder)
                found = _verdict(readings, model, self.now, self.ladder, replayed)
            if not _names_model(found):
                self._shared[key] = found
        return found

    def deferred(self, model: str) -> "DeferredVerdict":
        """The verdict of ``model``, computed only when something reads it."""
        return DeferredVerdict(self, model)


class ReservedVerdicts(HistoryVerdicts):
    """The verdicts of a connection whose reserve raised its thresholds (R16): those of
    ``HistoryVerdicts`` at the raised thresholds, a low one worded ``quota-below-reserve``
    when the ladder's own thresholds (``unreserved``) would not exhaust the pair. A
    connection without a reserve never pays for the second look."""

    __slots__ = ("_plain",)

    def __init__(self, history: Sequence[Reading], now: datetime, ladder: LadderSettings,
                 unreserved: LadderSettings) -> None:
        super().__init__(history, now, ladder)
        self._plain = HistoryVerdicts(history, now, unreserved)

    def __call__(self, model: str) -> Verdict:
        found = super().__call__(model)
        if found.reason not in LOW_REASONS or self._plain(model).kind == "exhausted":
            return found
        return below_reserve(found, self.ladder.exit_cutoff_percent, self.now)


class DeferredVerdict:
    """One pair's quota verdict, computed the first time it is read.

    A pair on a paid rung, or one a gate (R5) or R10's billing checks already refuse, is
    decided without its quota; the views that show the verdict anyway (``why``, simulate's
    causes) read it through ``PairDecision.verdict``. It compares, hashes and prints as the
    verdict it stands for, so a plan is equal to one whose verdicts were all computed.
    """

    __slots__ = ("_model", "_source", "_value")

    def __init__(self, source: HistoryVerdicts, model: str) -> None:
        self._source = source
        self._model = model
        self._value: Verdict | None = None

    def get(self) -> Verdict:
        value = self._value  # pragma: no mutate (asking the history again: the same verdict)
        if value is None:
            value = self._value = self._source(self._model)
        return value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredVerdict):
            other = other.get()
        return self.get() == other

    def __hash__(self) -> int:
        return hash(self.get())

    def __repr__(self) -> str:
        return repr(self.get())


def resolved(quota: Verdict | DeferredVerdict | None) -> Verdict | None:
    """The verdict itself, computing a deferred one."""
    return quota.get() if isinstance(quota, DeferredVerdict) else quota


def _names_model(found: Verdict) -> bool:
    """R6.8's detail ("has no window for <model>") is the one that depends on the model."""
    # pragma: no mutate start (saying True more often only keeps fewer verdicts in the
    # cache, and a verdict not kept is computed again identically)
    return (found.reason == "quota-unknown" and found.reading is not None
            and found.reading.status != "unknown")
    # pragma: no mutate end


# --- R9 cooldown clamp ---------------------------------------------------------------------


class Cooldown(NamedTuple):
    """A connection's cooldown at now (R5 gate, R9 clamp)."""

    until: datetime
    """The configured ``rate_limited_until``."""
    end: datetime
    """The effective end, after any clamp."""
    reset_at: datetime | None
    """The connection's own reset instant the clamp considered."""
    clamped: bool
    cooling: bool
    """The connection is cooling down at now."""


def own_reset(reading: Reading, cutoff: float) -> datetime | None:
    """R9: the reset instant of an exhausted reading, or of all its exhausted windows."""
    if reading.status == "exhausted" and reading.reset_at is not None:
        return reading.reset_at
    resets: list[datetime] = []
    for window in reading.all_windows():
        if not rules.is_low(window, cutoff):
            continue
        if window.reset_at is None:
            return None
        resets.append(window.reset_at)
    return max(resets) if resets else None


def cooldown(connection: Connection, history: Sequence[Reading], now: datetime,
             ladder: LadderSettings) -> Cooldown | None:
    """The connection's cooldown at now, with the R9 clamp applied; None without one.

    Before the instant the cooldown was observed (``state_as_of``, SPEC §7.2 v1.4) it is in
    force only from its recorded start, ``rate_limited_since``: without one, none."""
    until = connection.rate_limited_until
    if until is None:
        return None
    if not connection.observed_at(now):
        since = connection.rate_limited_since
        if since is None or now < since:
            return None
    end = until
    reset_at: datetime | None = None
    readings = quota_readings(readings_until(history, now))
    if ladder.clamp_cooldown_to_reset and readings:
        latest = readings[-1]
        reset_at = own_reset(latest, ladder.exit_cutoff_percent)
        if reset_at is not None and reset_at > latest.checked_at:
            end = min(until, reset_at)
    return Cooldown(until, end, reset_at, end != until, end > now)
