"""What a saved plan records of how it was made (SPEC §4.2): the omniladder version and each
input file's path and sha256, so ``diff`` can tell a changed fleet from a changed program."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from omniladder import __version__
from omniladder.engine.inputs import LoadedInputs
from omniladder.inputs.files import read_bytes


def input_stamps(inputs: LoadedInputs, digests: Mapping[str, str] | None = None
                 ) -> list[dict[str, str]]:
    """Each file the plan read, in reading order: its role, display path and sha256.

    ``digests`` are those ``files.digests_kept`` took as the inputs were loaded: the bytes
    planned from, whatever the file holds now. A file missing from them is read again.
    Shipped catalogs are named ``<shipped>/…`` as in the plan's ``connections``, so the stamp
    does not depend on where omniladder is installed; their digest still changes with them.
    """
    kept = digests or {}
    return [{"role": role, "path": shown,
             "sha256": kept.get(os.fspath(path))
             or hashlib.sha256(read_bytes(path, shown)).hexdigest()}
            for role, shown, path in inputs.read]


def stamped(document: dict[str, Any], inputs: LoadedInputs,
            digests: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The plan document with the additive ``omniladder_version`` and ``inputs`` fields."""
    return {**document, "omniladder_version": __version__,
            "inputs": input_stamps(inputs, digests)}
