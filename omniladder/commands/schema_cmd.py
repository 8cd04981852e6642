"""`omniladder schema KIND`: the JSON Schema of an input kind, for editors and CI."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from omniladder.commands.common import user_errors


class Kind(StrEnum):
    CONNECTIONS = "connections"
    QUOTA = "quota"
    SETTINGS = "settings"
    SPEND = "spend"
    TRAFFIC = "traffic"
    BILLING_CATALOG = "billing-catalog"
    MODEL_CATALOG = "model-catalog"
    WINDOW_CATALOG = "window-catalog"
    PLAN = "plan"


def schema(
    kind: Annotated[Kind, typer.Argument(
        metavar="KIND", help="Which document's schema to print: "
        + ", ".join(kind.value for kind in Kind) + ".")],
) -> None:
    """Print the JSON Schema of an input kind or of the plan document, generated from the
    models that read them."""
    with user_errors():
        import sys

        from omniladder.inputs.schemas import schema_text

        sys.stdout.write(schema_text(kind.value))
