"""Names the command line needs without validating anything: importing them stays cheap.

``omniladder ids`` lists the auto ids from these; it must not pay for pydantic.
"""

from __future__ import annotations

from typing import Literal

Category = Literal["coding", "reasoning", "vision", "chat", "multimodal"]
CATEGORIES: tuple[Category, ...] = ("coding", "reasoning", "vision", "chat", "multimodal")
