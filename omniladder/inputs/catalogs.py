"""The billing and model catalogs: the shipped ones and the operator's overrides, merged in
override order (the window-scope catalog is ``scopes.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from omniladder.engine.inputs import Catalogs, merge_catalogs
from omniladder.errors import InputError
from omniladder.inputs.documents import load_model
from omniladder.inputs.files import display_path
from omniladder.models import BillingCatalog, ModelCatalog

SHIPPED_PREFIX = "<shipped>"
BILLING_CATALOG_NAME = "connection-billing.toml"
MODEL_CATALOG_NAME = "models.toml"


def shipped_catalog_dir() -> Path:
    """The curated catalogs: inside an installed wheel, or at the top of a checkout."""
    here = Path(__file__).resolve().parent.parent  # the package: omniladder/
    for candidate in (here / "_catalogs", here.parent / "catalogs"):
        if (candidate / BILLING_CATALOG_NAME).is_file():
            return candidate
    raise InputError("the shipped catalogs are missing from this installation",
                     file=str(here / "_catalogs"))


def catalog_paths(billing_files: Iterable[Path], model_files: Iterable[Path],
                  include_shipped: bool = True
                  ) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """The billing and model catalog files in override order, with their display names."""
    billing_paths: list[tuple[Path, str]] = []
    model_paths: list[tuple[Path, str]] = []
    if include_shipped:
        shipped = shipped_catalog_dir()
        billing_paths.append((shipped / BILLING_CATALOG_NAME,
                              f"{SHIPPED_PREFIX}/{BILLING_CATALOG_NAME}"))
        model_paths.append((shipped / MODEL_CATALOG_NAME, f"{SHIPPED_PREFIX}/{MODEL_CATALOG_NAME}"))
    billing_paths += [(path, display_path(path)) for path in billing_files]
    model_paths += [(path, display_path(path)) for path in model_files]
    return billing_paths, model_paths


def load_catalogs(billing_files: Iterable[Path], model_files: Iterable[Path],
                  include_shipped: bool = True) -> Catalogs:
    billing_paths, model_paths = catalog_paths(billing_files, model_files, include_shipped)

    return merge_catalogs(
        [(shown, load_model(BillingCatalog, path, shown).entries)
         for path, shown in billing_paths],
        [(shown, load_model(ModelCatalog, path, shown).models) for path, shown in model_paths])
