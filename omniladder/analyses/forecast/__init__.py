"""`forecast`: when each auto id steps up a rung, and when it starts paying.

Two parts, both plain functions over the loaded inputs:

* **Pace** of every window of each connection's latest reading (the reading R6 judges at
  now, R6.4's held windows included): the elapsed part of the window, the use an even pace
  would have reached, the actual use, the burn rate over the readings of the window's current
  cycle, the instant the window reaches the exit cutoff at that rate, and whether it lasts to
  its reset. Guardrails give a reason instead of a number: fewer than two readings in the
  cycle, less than 5% of the window elapsed (when its length and reset are known), a stale,
  unknown or exhausted reading. Nothing runs out after its own reset.
* **The ladder's forecast.** Each connection whose latest reading is fresh at now gets
  projected readings: its windows burnt at their rates (along the hours of the day a day of
  history shows: ``profile``), back to 100% at each reset, as if
  its telemetry kept arriving. The projected readings join the recorded history and the
  stepping engine (``omniladder.engine.stepping``, the one ``simulate`` runs) decides the
  plan at every instant a decision can change (docs/forecast.md#instants): each projected
  reset and cutoff crossing, computed as an instant, each change of the recorded inputs
  (a reading's reset or turning stale, a cooldown's end, a budget period, a spend event)
  and the listed steps. The forecast *is* a simulation of recorded-plus-projected readings,
  so R6, R7 (hysteresis), R8, R9 and R10/R11 are never re-derived here, and its answers do
  not depend on the step. A connection whose reading is stale, unknown or exhausted gets
  no projection, and a window that cannot be projected makes the answers unknown
  (docs/forecast.md#unknown). The projection is walked at each window's middle, high and
  low burn for the answers' p10 / p50 / p90 (docs/forecast.md#band). Spend is not
  projected (the engine counts the ledger's recorded spend only): with a ledger, each paid
  rung's estimate reports where its cost per hour reaches the rung's R8 budget
  (``budget_reached_at``), and the plan keeps the rung open after it.

A projected reading is written at now and at each instant where a decision can change;
between two of them a window only falls and stays on the same side of the cutoff, so the
engine decides as with a reading at every instant (a test holds the two to the same walk).
"""

from __future__ import annotations
