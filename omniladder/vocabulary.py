"""Names the command line needs without validating anything: importing them stays cheap.

``omniladder ids`` lists the auto ids from these, and ``audit traffic``'s help names the
findings of ``findings.FINDINGS``, whose rules read the rungs: neither may pay for pydantic.
"""

from __future__ import annotations

from typing import Literal

Category = Literal["coding", "reasoning", "vision", "chat", "multimodal"]
CATEGORIES: tuple[Category, ...] = ("coding", "reasoning", "vision", "chat", "multimodal")

Rung = Literal["subscription", "keyless", "free", "cheap", "premium"]
RUNGS: tuple[Rung, ...] = ("subscription", "keyless", "free", "cheap", "premium")
"""The rungs of the ladder (R4), in its order."""
QUOTA_RUNGS: frozenset[str] = frozenset({"subscription", "keyless", "free"})
PAID_RUNGS: tuple[Rung, ...] = ("cheap", "premium")
