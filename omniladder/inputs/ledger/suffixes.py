"""The file types a ledger is read from, told by the name alone: what a plan needs to accept
a spend ledger without loading the ledger's readers (docs/performance.md#ledger-import)."""

from __future__ import annotations

from pathlib import Path

from omniladder.errors import InputError
from omniladder.inputs.files import STDIN_NAME, check_input_file

LINE_SUFFIXES = (".jsonl", ".ndjson")
"""The endings of a ledger written one JSON event per line (SPEC §7.1)."""
LEDGER_SUFFIXES = (*LINE_SUFFIXES, ".json", ".toml")
"""The file types a traffic ledger is read from: one event per line, or a document."""


def refuse_suffix(path: Path, shown: str, what: str = "a traffic ledger") -> None:
    """The InputError of a ledger whose name ends in none of ``LEDGER_SUFFIXES`` (standard
    input, ``-``, is not one: a ledger is read twice, or streamed from a file)."""
    suffix = path.suffix.lower()
    if suffix in LEDGER_SUFFIXES:
        return
    check_input_file(path, shown)  # a directory or a device is named as what it is

    accepted = ", ".join(LEDGER_SUFFIXES[:-1]) + f" or {LEDGER_SUFFIXES[-1]}"
    message = f"unsupported file type; {what} is a {accepted} file"
    if shown in ("-", STDIN_NAME):
        message += " (not standard input: give the file)"
    elif Path(shown).suffix.lower() != suffix:
        message += f" (the type is read from the name given, '{path}')"
    raise InputError(message, file=shown)
