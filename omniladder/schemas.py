"""JSON Schemas of every input kind, generated from the models the loaders validate with."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from omniladder.models import (
    BillingCatalog,
    ConnectionsFile,
    ModelCatalog,
    QuotaFile,
    Settings,
    SpendFile,
    WindowScopeCatalog,
)

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

KINDS: dict[str, type[BaseModel]] = {
    "connections": ConnectionsFile,
    "quota": QuotaFile,
    "settings": Settings,
    "spend": SpendFile,
    "billing-catalog": BillingCatalog,
    "model-catalog": ModelCatalog,
    "window-catalog": WindowScopeCatalog,
}
"""Input kind → the model its loader validates against (SPEC §2)."""

_TITLES = {
    "connections": "omniladder connections file",
    "quota": "omniladder quota snapshot",
    "settings": "omniladder settings (omniladder.toml)",
    "spend": "omniladder spend ledger",
    "billing-catalog": "omniladder billing catalog",
    "model-catalog": "omniladder model catalog",
    "window-catalog": "omniladder quota-window scope catalog",
}


def schema_file_name(kind: str) -> str:
    return f"{kind}.schema.json"


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one input kind (validation mode: what a file may contain)."""
    schema = KINDS[kind].model_json_schema(mode="validation")
    return {"$schema": SCHEMA_DIALECT, **schema, "title": _TITLES[kind]}


def schema_text(kind: str) -> str:
    """The schema as committed under schemas/: two-space JSON with a final newline."""
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"
