"""The one assertion of a refused run: exit 2 and one error line (CONVENTIONS: bad input is
one clear message naming the file, the field and what is wrong, exit 2, never a traceback)."""

from __future__ import annotations

from typing import Any

ERROR_PREFIX = "omniladder: error: "


def one_error_line(stderr: str, *fragments: str) -> str:
    """``stderr`` is one ``omniladder: error:`` line holding each fragment; the line."""
    (line,) = stderr.splitlines()
    assert line.startswith(ERROR_PREFIX), line
    for fragment in fragments:
        assert fragment in line, line
    return line


def one_error(result: Any, *fragments: str) -> str:
    """The run (a ``CliRunner`` result) ended with exit 2, no traceback, nothing on stdout and
    one ``omniladder: error:`` line holding each fragment; the line."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert "Traceback" not in result.output
    assert result.stdout == "", result.stdout
    return one_error_line(result.stderr, *fragments)
