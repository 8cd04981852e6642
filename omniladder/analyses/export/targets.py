"""The gateways an export writes for: a module of its own, light enough for the command line
to name them without importing the rest of the package."""

from __future__ import annotations

from enum import StrEnum


class Target(StrEnum):
    LITELLM = "litellm"
    """A LiteLLM proxy config.yaml fragment (model_list)."""
    OMNIROUTE = "omniroute"
    """An OmniRoute combo, the body of POST /api/combos."""


UNIT: dict[Target, str] = {Target.LITELLM: "deployment", Target.OMNIROUTE: "step"}
"""What one exported element is called on each target."""
