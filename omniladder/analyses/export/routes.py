"""The ``--map`` file: where LiteLLM reaches each connection of a plan.

A plan knows connections by id; a LiteLLM deployment needs a model string with LiteLLM's
provider route (``openai/…``, ``anthropic/…``), an ``api_base`` and a key. The map gives,
per connection id::

    [[connections]]
    id = "openai-key"
    model_prefix = "openai/"                # litellm_params.model = prefix + the plan's model
    api_base = "https://api.openai.com/v1"  # optional
    api_key_env = "OPENAI_API_KEY"          # optional: the *name* of the variable

The key itself is never in the map: the export writes ``api_key: os.environ/NAME``, the
form LiteLLM resolves from its own environment when it loads the config
(``ProxyConfig._check_for_os_environ_vars`` in BerriAI/litellm
``litellm/proxy/proxy_server.py``; docs.litellm.ai/docs/proxy/configs). The file is TOML or
JSON and validated strictly like every input: an unknown key is exit 2 naming the file and
the field, and a secret-looking key (``api_key``, ``token``, …) is refused by the loaders'
secret guard without its value ever being shown. Values of ``api_key_env`` and ``api_base``
are never echoed either: a pasted key could sit there by mistake.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationInfo, field_validator

from omniladder.errors import InputError
from omniladder.inputs.credentials import pasted_key, pasted_url_key
from omniladder.inputs.documents import load_model
from omniladder.inputs.files import display_path
from omniladder.inputs.validation import toml_line
from omniladder.models import StrictModel, first_repeat

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A POSIX environment variable name: what ``os.environ/NAME`` may name."""


class ConnectionRoute(StrictModel):
    """How LiteLLM reaches one connection."""

    id: str
    model_prefix: str = ""
    api_base: str | None = None
    api_key_env: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("model_prefix")
    @classmethod
    def _prefix(cls, value: str, info: ValidationInfo) -> str:
        return _no_key(pasted_key(value, "model_prefix", info.data.get("id")), value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str, info: ValidationInfo) -> str:
        _no_key(pasted_key(value, "api_key_env", info.data.get("id")), value)
        if value.startswith("os.environ/"):
            raise ValueError("give the variable's name alone; the export writes "
                             "os.environ/NAME itself (the value is never shown)")
        if ENV_NAME.fullmatch(value) is None:
            raise ValueError("must be the name of an environment variable (letters, digits "
                             "and _, not starting with a digit), never a key; the value is "
                             "never shown")
        return value

    @field_validator("api_base")
    @classmethod
    def _url(cls, value: str, info: ValidationInfo) -> str:
        try:
            parts = urlsplit(value)
            port_ok = parts.port is None or parts.port > 0
        except ValueError:
            parts, port_ok = None, False
        if (parts is None or not port_ok or parts.scheme not in ("http", "https")
                or not parts.hostname):
            raise ValueError("must be an http:// or https:// URL with a host (the value is "
                             "never shown)")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not carry a user or password: omniladder never writes "
                             "credentials (the value is never shown)")
        if parts.query or parts.fragment:
            raise ValueError("must not carry a query or fragment, where a key could hide: "
                             "give the key's variable in api_key_env (the value is never "
                             "shown)")
        return _no_key(pasted_url_key(value, "api_base", info.data.get("id")), value)


def _no_key(problem: str | None, value: str) -> str:
    """``value``, or the ValueError saying what key it looks like (inputs.credentials)."""
    if problem is not None:
        raise ValueError(problem)
    return value


class RoutesFile(StrictModel):
    connections: tuple[ConnectionRoute, ...] = ()


def load_routes(path: Path) -> dict[str, ConnectionRoute]:
    """Read and validate a ``--map`` file: connection id → route, or one clear InputError."""
    shown = display_path(path)
    routes = load_model(RoutesFile, path, shown)
    repeat = first_repeat(route.id for route in routes.connections)
    if repeat is not None:
        first, again = repeat
        raise InputError(f"repeats the id of connections[{first}]", file=shown,
                         field=f"connections[{again}].id",
                         line=toml_line(path, ("connections", again, "id")))
    return {route.id: route for route in routes.connections}
