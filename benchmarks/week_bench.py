"""The generated week's what-if figures (docs/whatif.md#generated-week): fidelity, paid
dollars under ``declared`` and ``expiring-first``, the bound, and R15's several-windows rule
against the alternatives, measured by regret.

    python benchmarks/week_bench.py                    # 20 and 100 connections
    python benchmarks/week_bench.py --connections 40   # one size
    python benchmarks/week_bench.py --connections 20 --seed 1 --seed 2 --short-anchor fixed

For each size and seed (``--seed``, repeated; 1 by default), ``fleet.py --whatif-week 7``
writes a week (readings every 30 min); ``whatif`` fits it, replays ``as-is`` (the declared
order that wrote it) and ``expiring-first`` under each rule for a seat with several windows.

``--short-anchor fixed`` (``fleet.py --short-anchor``, ``week.write_week``) runs the
five-hour windows on a fixed schedule instead of from their first use: the week's settings
then name a window catalog of their own (``[catalogs] windows``) giving those windows anchor
``fixed``, and the bench reads the window catalogs as ``whatif`` does, from the settings
(``resolve_files``, ``load_window_scopes``). ``--short-anchor both`` runs each week both
ways. ``--demand-scale`` scales the demand against the fleet's weight (``write_week``'s).
The rules:

* ``resets last`` (R15's rule, docs/rules.md#r15): the window that resets last alone (the
  weekly one), as codex-lb's waste-pressure score reads the secondary window;
* ``capped``: each window's remaining percent capped by every window that resets at or
  after it, the highest rate of any (R15's rule before this measure chose);
* ``uncapped``: each window on its own, the highest rate of any;
* ``hybrid``: the window that resets last, and each window anchored ``fixed`` (by the week's
  window catalog) that resets before it, its remaining percent capped by every window that
  resets at or after it, the highest rate of these; a shorter first-use window is ignored
  (on a first-use week the hybrid is the window that resets last).

Each row prints the paid dollars, the regret above the bound and the share of the gap
between ``declared`` and the bound that the rule closes. The rules other than R15's are
swapped in for the replay's urgency here only; the product has one rule.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from week import write_week

from omniladder.analyses.whatif import replay as replay_module
from omniladder.analyses.whatif.run import catalog_of, whatif
from omniladder.analyses.whatif.scenario import ScenarioSpec
from omniladder.engine.autoid import parse_auto_id
from omniladder.engine.pool import Terms, urgency_terms
from omniladder.engine.readings import figure, is_current
from omniladder.inputs.input_set import load_inputs, resolve_files
from omniladder.inputs.ledger.read import Ledger
from omniladder.inputs.scopes import load_window_scopes
from omniladder.models import Reading, Window

TermsOf = Callable[[Reading | None, str, float, datetime], Terms]


def _windows(reading: Reading | None, model: str, now: datetime) -> list[Window]:
    if reading is None:
        return []
    return [w for w in reading.all_windows()
            if w.applies_to(model) and is_current(w, now) and not w.unlimited
            and w.reset_at is not None and figure(w) > 0]


def _counted(reading: Reading | None, model: str, now: datetime) -> list[tuple[float, datetime]]:
    return [(figure(w), w.reset_at) for w in _windows(reading, model, now)
            if w.reset_at is not None]


def uncapped(reading: Reading | None, model: str, weight: float, now: datetime) -> Terms:
    return tuple((left * weight, reset) for left, reset in _counted(reading, model, now))


def capped(reading: Reading | None, model: str, weight: float, now: datetime) -> Terms:
    found = _counted(reading, model, now)
    terms = []
    for left, reset in found:
        expiring = min([left] + [other for other, later in found if later >= reset])
        terms.append((expiring * weight, reset))
    return tuple(terms)


def hybrid(anchor: Callable[[str, str], str]) -> TermsOf:
    """The window that resets last, and each fixed window resetting before it, capped by
    every window resetting at or after it; ``anchor(connection, window)``."""

    def terms(reading: Reading | None, model: str, weight: float, now: datetime) -> Terms:
        last = urgency_terms(reading, model, weight, now)
        if reading is None or not last:
            return last
        found = _counted(reading, model, now)
        latest = last[0][1]
        shorter = []
        for window in _windows(reading, model, now):
            reset = window.reset_at
            if reset is None or reset >= latest or anchor(reading.connection,
                                                           window.name) != "fixed":
                continue
            expiring = min([figure(window)] + [left for left, at in found if at >= reset])
            shorter.append((expiring * weight, reset))
        return last + tuple(shorter)

    return terms


def rules(anchor: Callable[[str, str], str]) -> dict[str, TermsOf]:
    return {"resets last": urgency_terms, "capped": capped, "uncapped": uncapped,
            "hybrid": hybrid(anchor)}


@contextmanager
def rule(terms: TermsOf) -> Iterator[None]:
    namespace = vars(replay_module)
    kept = namespace["urgency_terms"]
    namespace["urgency_terms"] = terms
    try:
        yield
    finally:
        namespace["urgency_terms"] = kept


def measure(connections: int, out: Path, bound: bool, seed: int = 1,
            short_anchor: str = "first-use", demand_scale: float = 1.0) -> list[str]:
    started = time.perf_counter()
    settings = write_week(out, connections, seed=seed, reading_minutes=30.0,
                          short_anchor=short_anchor, demand_scale=demand_scale)
    generated = time.perf_counter() - started
    inputs = load_inputs(settings)
    files = resolve_files(settings, inputs.settings)
    catalog = catalog_of(load_window_scopes(files.window_catalogs,
                                            include_shipped=not files.no_shipped_catalogs))
    providers = {c.id: c.provider for c in inputs.connections}

    def anchor(connection: str, window: str) -> str:
        return catalog.anchor(providers[connection], window)[0]

    label = f"{connections} | {short_anchor} | {seed}"
    auto_id = parse_auto_id("auto/thrifty")
    lines: list[str] = []
    bound_usd: float | None = None
    declared: float | None = None
    first = True
    for name, terms in rules(anchor).items():
        started = time.perf_counter()
        with rule(terms):
            report = whatif(inputs, auto_id, Ledger(out / "traffic.jsonl"),
                            scenarios=[ScenarioSpec(name="expiring-first",
                                                    order="expiring-first")],
                            catalog=catalog, bound=bound and bound_usd is None)
        seconds = time.perf_counter() - started
        as_is, ordered = report.scenarios
        if first:
            first = False
            bound_usd = report.bound_usd
            declared = as_is.paid_usd
            fidelity = report.fidelity
            recorded = fidelity.paid_usd_recorded
            off = (fidelity.paid_usd_replayed - recorded) / recorded if recorded else 0.0
            lines.append(
                f"| {label} | {report.requests:,} | fidelity | "
                f"${recorded:,.2f} recorded, ${fidelity.paid_usd_replayed:,.2f} replayed "
                f"({off:+.1%}); readings {fidelity.readings_mae_points or 0:.2f} points over "
                f"{fidelity.readings_compared:,} | generated in {generated:.0f} s |")
            lines.append(f"| {label} | | declared | ${declared:,.2f}; bound "
                         + (f"${bound_usd:,.2f}" if bound_usd is not None else "none")
                         + (f" ({report.bound.seconds:.1f} s, {report.bound.variables:,} "
                            f"variables)" if report.bound is not None else "") + " | |")
        assert declared is not None
        paid = ordered.paid_usd
        floor = bound_usd or 0.0
        gap = declared - floor
        share = (declared - paid) / gap if gap > 0 else 0.0
        lines.append(f"| {label} | | expiring-first, {name} | ${paid:,.2f}, regret "
                     f"${paid - floor:,.2f}, {share:.0%} of the gap closed | {seconds:.0f} s |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, action="append")
    parser.add_argument("--seed", type=int, action="append")
    parser.add_argument("--short-anchor", choices=("first-use", "fixed", "both"),
                        default="first-use")
    parser.add_argument("--demand-scale", type=float, default=1.0)
    parser.add_argument("--no-bound", action="store_true")
    args = parser.parse_args()
    sizes = args.connections or [20, 100]
    anchors = ("first-use", "fixed") if args.short_anchor == "both" else (args.short_anchor,)
    print("| connections | 5h anchor | seed | requests | run | figures | time |")
    print("|---:|---|---:|---:|---|---|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for size in sizes:
            for seed in args.seed or [1]:
                for short in anchors:
                    for line in measure(size, Path(scratch) / f"week-{size}-{seed}-{short}",
                                        not args.no_bound, seed, short,
                                        args.demand_scale):
                        print(line, flush=True)


if __name__ == "__main__":
    main()
