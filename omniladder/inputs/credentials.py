"""Does a value look like a key? The one guard of every field that must never hold one.

omniladder never needs a credential, and a field that names where a key lives (a variable's
name in ``api_key_env``) or where a gateway is reached (``api_base``) is where a key gets
pasted by mistake. A key there would be written to an export and printed in its report, so
such a value is refused, and the refusal never repeats it: it says which field, which
connection and what kind of key the value looks like.

A value looks like a key when

* it starts with a prefix a provider gives its keys (``KEY_PREFIXES``: OpenAI ``sk-`` and
  ``sk-proj-``, Anthropic ``sk-ant-``, GitHub ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_``
  ``github_pat_``, Groq ``gsk_``, Stripe-style ``sk_live_`` ``sk_test_`` ``rk_live_``
  ``rk_test_``, Google ``AIza``, xAI ``xai-``, …) followed by at least
  ``_PREFIX_TAIL`` more letters or digits; the prefixes are matched case-sensitively, as
  providers issue them (an upper-case ``SK_LIVE_KEY`` is a variable's name); or
* it holds a run of at least ``RANDOM_RUN`` letters and digits (between ``_``, ``-``, ``.``
  or ``/``) that mixes lower-case letters and digits: a random string. The names operators
  give variables are upper case by convention (``ANTHROPIC_API_KEY_WORK_2``) or made of
  words shorter than that, so they never do; a 20-character random string of letters and
  digits has no digit or no lower-case letter about 3 times in 100, which the prefixes
  mostly catch.

A URL (``api_base``) carries a key where a user or password, a query, a fragment or a path
parameter (``/v1;key=…``) stands, or as a path segment that starts with a key's prefix.
Only the prefixes are looked for in a path: a gateway's path may hold a random-looking id
that is no secret (an account id of 32 hex digits).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

KEY_PREFIXES: tuple[tuple[str, str], ...] = (
    # longest first: sk-ant- before sk-
    ("sk-ant-", "an Anthropic API key (sk-ant-…)"),
    ("sk-proj-", "an OpenAI project key (sk-proj-…)"),
    ("sk-svcacct-", "an OpenAI service-account key (sk-svcacct-…)"),
    ("sk-or-", "an OpenRouter key (sk-or-…)"),
    ("sk-", "an OpenAI-style secret key (sk-…)"),
    ("github_pat_", "a GitHub fine-grained token (github_pat_…)"),
    ("ghp_", "a GitHub personal access token (ghp_…)"),
    ("gho_", "a GitHub OAuth token (gho_…)"),
    ("ghu_", "a GitHub user-to-server token (ghu_…)"),
    ("ghs_", "a GitHub server-to-server token (ghs_…)"),
    ("ghr_", "a GitHub refresh token (ghr_…)"),
    ("gsk_", "a Groq API key (gsk_…)"),
    ("sk_live_", "a Stripe-style live secret key (sk_live_…)"),
    ("sk_test_", "a Stripe-style test secret key (sk_test_…)"),
    ("rk_live_", "a Stripe-style restricted key (rk_live_…)"),
    ("rk_test_", "a Stripe-style restricted key (rk_test_…)"),
    ("AIza", "a Google API key (AIza…)"),
    ("xai-", "an xAI API key (xai-…)"),
    ("hf_", "a Hugging Face token (hf_…)"),
    ("glpat-", "a GitLab personal access token (glpat-…)"),
    ("AKIA", "an AWS access key id (AKIA…)"),
)
"""Prefixes providers give their keys, with what a key so prefixed is. Sources: each
provider's documentation of its key format (GitHub's "About authentication to GitHub"
token prefixes; Stripe's API keys page; OpenAI's, Anthropic's, Groq's, xAI's and Google
Cloud's API key pages), and the patterns of secret scanners that match them."""

_PREFIX_TAIL = 8
"""Letters or digits a key has after its prefix at the least (real keys have 20 and more):
``sk-x`` or ``hf_token`` is no key."""

RANDOM_RUN = 20
"""The shortest run of letters and digits read as a random string when it mixes lower-case
letters and digits."""

_TAIL = re.compile(rf"[A-Za-z0-9_\-]{{{_PREFIX_TAIL},}}")
_RUNS = re.compile(rf"[A-Za-z0-9]{{{RANDOM_RUN},}}")


def prefixed_kind(value: str) -> str | None:
    """What kind of key ``value`` looks like by its prefix alone, or None."""
    text = value.strip()
    for prefix, kind in KEY_PREFIXES:
        if text.startswith(prefix) and _TAIL.match(text, len(prefix)):
            return kind
    return None


def key_kind(value: str) -> str | None:
    """What kind of key ``value`` looks like (``a Groq API key (gsk_…)``), or None."""
    kind = prefixed_kind(value)
    if kind is not None:
        return kind
    for run in _RUNS.findall(value):
        if any(char.islower() for char in run) and any(char.isdigit() for char in run):
            return f"a random string of {len(run)} letters and digits (a key)"
    return None


def url_key(value: str) -> str | None:
    """Where a URL carries what could be a key (``a query``), or None. A URL that cannot
    be split is left to its field's own check."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return "a user or password"
    if parts.query:
        return "a query"
    if parts.fragment:
        return "a fragment"
    path = parts.path
    if ";" in path:
        return "a path parameter (;…)"
    for segment in path.split("/"):
        kind = prefixed_kind(segment)
        if kind is not None:
            return f"a path segment that looks like {kind}"
    return None


def pasted_key(value: str, field: str, owner: str | None = None) -> str | None:
    """The one-line problem of a field that looks like it holds a key, naming the field,
    the connection and the kind of key, never the value; None when it does not."""
    kind = key_kind(value)
    where = f"{field} of connection {owner!r}" if owner else field
    if kind is not None:
        return (f"{where} looks like {kind}: it must be {_WHAT.get(field, 'a name')}, never "
                "a key; a key never goes in an omniladder file (the value is never shown)")
    return None


def pasted_url_key(value: str, field: str, owner: str | None = None) -> str | None:
    """``pasted_key`` for a URL: a key anywhere it could ride (``url_key``)."""
    where = url_key(value)
    if where is None:
        return None
    subject = f"{field} of connection {owner!r}" if owner else field
    return (f"{subject} must not carry {where}, where a key could hide: give the key's "
            "variable in api_key_env (the value is never shown)")


_WHAT = {"api_key_env": "the name of an environment variable",
         "model_prefix": "a provider route such as openai/"}


# --- what an importer writes or prints ----------------------------------------------------

KEY_STARTS = tuple(prefix for prefix, _ in KEY_PREFIXES)
KEY_FIRST = frozenset(prefix[0] for prefix in KEY_STARTS)
"""The first characters of ``KEY_STARTS``: a gateway's own ids (hex, ``chatcmpl-…``) start
with none, so a loop over millions of them asks ``startswith`` of almost none."""
REDACTED = "redacted-key-"
"""How a key-shaped value an importer read is written: this and a digest of the value."""


def imported_key(value: str) -> bool:
    """Whether a value an importer read from a gateway's records (an id, a name, a request
    id) looks like a key by its prefix (``prefixed_kind``). The random-string rule is not
    applied to them: a gateway's own ids are random strings that are no secret (LiteLLM's
    hash ids of deployments, request ids), and a key pasted into such a field starts with
    its provider's prefix."""
    return value.lstrip().startswith(KEY_STARTS) and prefixed_kind(value) is not None


def redacted(value: str) -> str:
    """The marker written in place of a key-shaped value: ``redacted-key-`` and 12 hex
    digits of a digest of it, so two keys stay two values (and a re-import of the same
    rows the same events) and the key itself is never written or printed."""
    import hashlib

    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=6)
    return REDACTED + digest.hexdigest()


def guarded(value: str, field: str, found: dict[str, int]) -> str:
    """``value``, or its marker (``redacted``) when it looks like a key, counted under
    ``field`` in ``found``."""
    if not imported_key(value):
        return value
    found[field] = found.get(field, 0) + 1
    return redacted(value)


def shown_value(value: object) -> str:
    """A value as a message quotes it (``repr``), unless it is a text that looks like a key
    (by prefix or as a random string): then what kind it looks like, never the value."""
    if isinstance(value, str):
        kind = key_kind(value)
        if kind is not None:
            return f"a value that looks like {kind} (not shown)"
    return repr(value)


def redacted_note(found: dict[str, int], where: str) -> str | None:
    """The one note of the key-shaped values an importer replaced, per field; None when it
    replaced none."""
    if not found:
        return None
    total = sum(found.values())
    listed = ", ".join(f"{name} ({n})" for name, n in sorted(found.items()))
    return (f"{total} value{'s' if total != 1 else ''} of {where} looked like a key and "
            f"{'were' if total != 1 else 'was'} written as {REDACTED}… instead (a key is never "
            f"written or shown): {listed}")
