"""The one escaping helper of every human and markdown view, and of the talk on stderr.

A control character reaching a terminal is acted on, not printed: ``ESC [2J`` clears the
screen, ``ESC ]0;…BEL`` retitles the window, a carriage return overwrites the line. Input
identifiers are refused at load when they hold one (omniladder.models ``Identifier``), but
free text is not (a connection's ``label``, a catalog's ``reason``), and neither are the
strings of a saved plan (``show``, ``diff``), a gateway's candidate list (``audit``) or a
file name. Every view therefore writes each C0 and C1 control character and DEL as its
Python escape (``\\x1b``, ``\\r``, ``\\x9b``), and a lone surrogate (a file name that is not
UTF-8) as ``\\udcff``, which no encoder could write at all. A newline and a tab are kept:
views lay them out.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text


@functools.cache
def _unprintable() -> re.Pattern[str]:
    """What is escaped here, compiled when a text first fails ``str.isprintable`` (about
    0.7 ms that a view whose texts are all printable, the usual case, never spends)."""
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab, and every lone surrogate,
    written as its escape."""
    if text.isprintable():  # a fast C test that every character escaped here fails
        return text
    return _unprintable().sub(_escaped, text)


def printable_text(text: Text) -> Text:
    """A rich ``Text`` escaped as ``printable`` escapes a string, its styles kept on the
    characters they covered."""
    plain = text.plain
    if plain.isprintable():
        return text
    unprintable = _unprintable()
    if unprintable.search(plain) is None:
        return text
    # Where each character of the old text starts in the new one (and where the text ends).
    starts: list[int] = []
    pieces: list[str] = []
    at = 0
    for char in plain:
        starts.append(at)
        piece = unprintable.sub(_escaped, char)
        pieces.append(piece)
        at += len(piece)
    starts.append(at)
    escaped = text.copy()
    escaped.plain = "".join(pieces)
    last = len(plain)
    escaped.spans = [span._replace(start=starts[min(span.start, last)],
                                   end=starts[min(span.end, last)]) for span in text.spans]
    return escaped


# --- a human view on a standard output that is not UTF-8 -----------------------------------
# (docs/contract.md#encodings) The machine formats are written as UTF-8 bytes whatever the
# stream declares; a human view is spelled in the declared encoding instead: the views' own
# symbols as ASCII, anything else the encoding lacks as its Python escape.

SPELLED = {
    "→": "->", "←": "<-", "—": "--", "–": "-", "−": "-", "…": "...", "·": "-",
    "×": "x", "÷": "/", "±": "+/-", "≥": ">=", "≤": "<=", "§": "S", "✓": "v", "✗": "x",
    "✅": "[ok]", "❌": "[x]", "△": "^", "█": "#", "▇": "#", "▆": "=", "▅": "=", "▄": "-",
    "▃": "-", "▂": "_", "▁": "_", "•": "*", "“": '"', "”": '"', "‘": "'", "’": "'",
}
"""ASCII spellings of the symbols the views print, where the encoding lacks them."""


def _box(char: str) -> str | None:
    """An ASCII stand-in for a box-drawing character (rich's table rules), one column wide."""
    import unicodedata

    name = unicodedata.name(char, "")
    if not name.startswith("BOX DRAWINGS"):
        return None
    horizontal, vertical = "HORIZONTAL" in name, "VERTICAL" in name
    if horizontal and not vertical and not any(w in name for w in ("DOWN", "UP")):
        return "-"
    if vertical and not horizontal and not any(w in name for w in ("LEFT", "RIGHT")):
        return "|"
    return "+"


def for_encoding(text: str, encoding: str) -> str:
    """``text`` as a human view writes it to a stream of ``encoding``: every character the
    encoding holds as it is, a view's symbol or a box-drawing character it lacks in ASCII
    (``SPELLED``), and any other character as its escape (``\\xe9``, ``\\u4e2d``): nothing
    of the answer is dropped or replaced by ``?``."""
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        pass
    else:
        return text
    pieces = []
    for char in text:
        try:
            char.encode(encoding)
        except UnicodeEncodeError:
            spelled = SPELLED.get(char) or _box(char)
            pieces.append(spelled if spelled is not None
                          else char.encode("ascii", "backslashreplace").decode("ascii"))
        else:
            pieces.append(char)
    return "".join(pieces)
