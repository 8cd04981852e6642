"""What a saved plan records of how it was made (SPEC §4.2): the omniladder version and each
input file's path and sha256, so ``diff`` can tell a changed fleet from a changed program."""

from __future__ import annotations

import hashlib
from typing import Any

from omniladder import __version__
from omniladder.engine.inputs import LoadedInputs
from omniladder.loading import read_bytes


def input_stamps(inputs: LoadedInputs) -> list[dict[str, str]]:
    """Each file the plan read, in reading order: its role, display path and sha256.

    Shipped catalogs are named ``<shipped>/…`` as in the plan's ``connections``, so the stamp
    does not depend on where omniladder is installed; their digest still changes with them.
    """
    return [{"role": role, "path": shown,
             "sha256": hashlib.sha256(read_bytes(path, shown)).hexdigest()}
            for role, shown, path in inputs.read]


def stamped(document: dict[str, Any], inputs: LoadedInputs) -> dict[str, Any]:
    """The plan document with the additive ``omniladder_version`` and ``inputs`` fields."""
    return {**document, "omniladder_version": __version__, "inputs": input_stamps(inputs)}
