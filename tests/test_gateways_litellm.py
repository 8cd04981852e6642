"""The file `export litellm` writes, loaded into LiteLLM's own ``Router`` and run against a
fake upstream on loopback (docs/gateways.md#export-litellm): what the export promises is
what LiteLLM does.

* all deployments healthy: only order 1 answers; failures climb the orders one at a time;
* ``auto/subscription`` never leaves its group, whatever fails;
* LiteLLM steps down on any error (429, 5xx, timeout, 401, 400);
* the export's ids work under ``usage-based-routing-v2``, where an id holding ``:`` is
  never found;
* an unset ``os.environ/NAME`` is not "no key": LiteLLM sends the provider's default one.

Marked ``gateways``: they need the ``litellm`` package (>= 1.101.0, the version the ladder
is verified on), which is not a dependency; without it they are skipped with the reason.
CI installs it in an environment of its own and runs ``-m gateways`` (.ci/run). Nothing
leaves the machine: every deployment's ``api_base`` is the fake upstream on 127.0.0.1, and
LiteLLM reads its cost map from the package (``LITELLM_LOCAL_MODEL_COST_MAP``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from omniladder.analyses.export.core import export
from omniladder.analyses.export.routes import ConnectionRoute
from omniladder.analyses.export.source import ExportEntry, ExportPlan
from omniladder.engine.autoid import parse_auto_id

pytestmark = [
    pytest.mark.gateways,
    # LiteLLM's own deprecation and event-loop noise is not this project's to fail on.
    pytest.mark.filterwarnings("ignore"),
]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the cost map
if os.environ.get("OMNILADDER_REQUIRE_GATEWAYS") == "1":  # CI: a missing package fails
    import litellm  # type: ignore[import-not-found, unused-ignore]
litellm = pytest.importorskip(
    "litellm", reason="the litellm package is not installed: the gateways tests load the "
    "export into LiteLLM's own Router (pip install 'litellm>=1.101.0'; .ci/run does)")

VERIFIED_ON = (1, 101, 0)
"""The oldest LiteLLM the ladder is verified on (docs/gateways.md#export-litellm)."""


def _version() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in version("litellm").split(".")[:3] if part.isdigit())


def test_the_installed_litellm_is_one_the_ladder_is_verified_on() -> None:
    assert _version() >= VERIFIED_ON


# --- a fake upstream on loopback ---------------------------------------------------------------


class Upstream:
    """An OpenAI-compatible chat endpoint per connection (``/<connection>/v1``) that answers
    as told: a status code, or ``"slow"`` for longer than the router's timeout. It records
    each request's connection and ``Authorization`` header."""

    def __init__(self) -> None:
        self.answers: dict[str, int | str] = {}
        self.seen: list[tuple[str, str | None]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                cid = self.path.split("/")[1]
                upstream.seen.append((cid, self.headers.get("Authorization")))
                answer = upstream.answers.get(cid, 200)
                if answer == "slow":
                    time.sleep(TIMEOUT * 3)
                    answer = 200
                body = json.dumps(_completion(cid) if answer == 200 else {
                    "error": {"message": f"{cid} answers {answer}", "type": "x",
                              "code": str(answer)}}).encode()
                try:
                    self.send_response(int(answer))
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the router gave up
                    return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def base(self, cid: str) -> str:
        return f"http://127.0.0.1:{self.port}/{cid}/v1"

    def reset(self, **answers: int | str) -> None:
        self.answers = dict(answers)
        self.seen = []


def _completion(cid: str) -> dict[str, Any]:
    return {"id": "fake", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": cid}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


TIMEOUT = 1.0
"""The router's request timeout, seconds: a ``slow`` upstream takes three times as long."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    fake = Upstream()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


# --- the export under test ---------------------------------------------------------------------

LADDER = (
    ExportEntry(position=1, rung="subscription", provider="claude", model="claude-sonnet-4-5",
                allowed=("sub-a", "sub-b"), unverified=()),
    ExportEntry(position=2, rung="keyless", provider="ollama", model="qwen2.5-coder:32b",
                allowed=("local",), unverified=()),
    ExportEntry(position=3, rung="free", provider="openrouter",
                model="deepseek/deepseek-chat-v3.1:free", allowed=("free",), unverified=()),
    ExportEntry(position=4, rung="cheap", provider="openai", model="gpt-5-mini",
                allowed=("cheap",), unverified=()),
    ExportEntry(position=5, rung="premium", provider="openai", model="gpt-5.1",
                allowed=("premium",), unverified=()),
)
"""auto/thrifty over every rung, with model names that carry their own ':'."""
RUNG_OF = {"sub-a": 1, "sub-b": 1, "local": 2, "free": 3, "cheap": 4, "premium": 5}


def exported(upstream: Upstream, auto_id: str, entries: tuple[ExportEntry, ...], *,
             expiring_first: bool = False) -> list[dict[str, Any]]:
    """The model_list of the file the export writes, as LiteLLM's loader reads it."""
    plan = ExportPlan(auto_id=parse_auto_id(auto_id), now="2026-11-29T12:00:00Z",
                      now_source="flag", entries=entries, rung_notes={}, warnings=(),
                      plan_file=None, expiring_first=expiring_first,
                      order_stale_at={"subscription": "2026-11-29T13:57:00Z"}
                      if expiring_first else None)
    routes = {cid: ConnectionRoute(id=cid, model_prefix="openai/", api_base=upstream.base(cid),
                                   api_key_env=f"KEY_{cid.replace('-', '_').upper()}")
              for entry in entries for cid in entry.allowed}
    result = export("litellm", plan, routes=routes)
    listed: list[dict[str, Any]] = yaml.safe_load(result.text)["model_list"]
    return listed


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for cid in RUNG_OF:
        monkeypatch.setenv(f"KEY_{cid.replace('-', '_').upper()}", f"key-{cid}")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def ask(model_list: list[dict[str, Any]], group: str, times: int = 3,
        **settings: Any) -> list[str]:
    """``times`` requests to ``group`` through a fresh Router: the connection that answered
    each, or the error's class name."""
    router = litellm.Router(model_list=model_list, num_retries=0, timeout=TIMEOUT, **settings)
    answers: list[str] = []
    for _ in range(times):
        try:
            response = router.completion(model=group,
                                         messages=[{"role": "user", "content": "hi"}])
            answers.append(str(response.choices[0].message.content))
        except Exception as error:  # LiteLLM raises its own classes, or ValueError
            answers.append(type(error).__name__)
    return answers


# --- order routing -------------------------------------------------------------------------------


@pytest.mark.usefixtures("keys")
def test_all_healthy_only_order_1_answers(upstream: Upstream) -> None:
    upstream.reset()
    answers = ask(exported(upstream, "auto/thrifty", LADDER), "omniladder-thrifty", times=6)
    assert set(answers) <= {"sub-a", "sub-b"}
    assert {cid for cid, _ in upstream.seen} <= {"sub-a", "sub-b"}


EXPIRING_FIRST = (
    ExportEntry(position=1, rung="subscription", provider="claude", model="claude-sonnet-4-5",
                allowed=("sub-b", "sub-a"), unverified=()),
    *LADDER[1:],
)
"""R15 expiring-first: the plan puts sub-b, whose quota lapses first, ahead of sub-a."""


@pytest.mark.usefixtures("keys")
def test_an_expiring_first_rung_dispatches_its_first_connection_first(
        upstream: Upstream) -> None:
    """Each connection of the rung has its own order sub-level: all healthy, only the plan's
    first connection answers; when it fails, the second answers, and no rung below."""
    listed = exported(upstream, "auto/thrifty", EXPIRING_FIRST, expiring_first=True)
    upstream.reset()
    assert ask(listed, "omniladder-thrifty", times=6) == ["sub-b"] * 6
    assert {cid for cid, _ in upstream.seen} == {"sub-b"}
    upstream.reset(**{"sub-b": 503})
    assert ask(listed, "omniladder-thrifty") == ["sub-a"] * 3
    assert {cid for cid, _ in upstream.seen} <= {"sub-a", "sub-b"}


@pytest.mark.usefixtures("keys")
@pytest.mark.parametrize("down", [1, 2, 3, 4])
def test_an_outage_of_the_first_orders_climbs_to_the_next(upstream: Upstream,
                                                          down: int) -> None:
    """Orders 1..down fail: the next one answers, and no order above it is asked."""
    upstream.reset(**{cid: 503 for cid, order in RUNG_OF.items() if order <= down})
    answers = ask(exported(upstream, "auto/thrifty", LADDER), "omniladder-thrifty")
    assert {RUNG_OF[answer] for answer in answers} == {down + 1}, answers
    assert max(RUNG_OF[cid] for cid, _ in upstream.seen) == down + 1


@pytest.mark.usefixtures("keys")
def test_auto_subscription_never_leaves_its_group(upstream: Upstream) -> None:
    """With the thrifty group in the same proxy, a spent subscription group fails its
    requests; nothing reaches another group's deployments."""
    subscription = exported(upstream, "auto/subscription", LADDER[:1])
    thrifty = exported(upstream, "auto/thrifty", LADDER)
    upstream.reset(**{"sub-a": 429, "sub-b": 429})
    answers = ask(subscription + thrifty, "omniladder-subscription")
    assert not set(answers) & set(RUNG_OF), answers  # every request failed
    assert {cid for cid, _ in upstream.seen} == {"sub-a", "sub-b"}


@pytest.mark.usefixtures("keys")
@pytest.mark.parametrize("failure", [429, 500, 401, 400, "slow"])
def test_litellm_steps_down_on_any_error(upstream: Upstream, failure: int | str) -> None:
    """What litellm-steps-down-on-any-error says: not only a spent plan moves the request
    to the next order."""
    upstream.reset(**{"sub-a": failure, "sub-b": failure})
    answers = ask(exported(upstream, "auto/thrifty", LADDER), "omniladder-thrifty", times=1)
    assert answers == ["local"]


# --- ids under usage-based-routing-v2 ----------------------------------------------------------


@pytest.mark.usefixtures("keys")
def test_the_exported_ids_are_found_under_usage_based_routing_v2(upstream: Upstream) -> None:
    upstream.reset(**{"sub-a": 503, "sub-b": 503})
    model_list = exported(upstream, "auto/thrifty", LADDER)
    assert not [d for d in model_list if ":" in d["model_info"]["id"]]
    answers = ask(model_list, "omniladder-thrifty", routing_strategy="usage-based-routing-v2")
    assert answers == ["local"] * 3


@pytest.mark.usefixtures("keys")
def test_an_id_with_a_colon_is_never_found_under_usage_based_routing_v2(
        upstream: Upstream) -> None:
    """Why no ':' may reach an id: the ids exports wrote before are refused."""
    upstream.reset()
    model_list = exported(upstream, "auto/thrifty", LADDER[:2])
    for deployment in model_list:
        deployment["model_info"]["id"] = deployment["model_info"]["id"].replace("~", ":")
    answers = ask(model_list, "omniladder-thrifty", routing_strategy="usage-based-routing-v2")
    assert not set(answers) & set(RUNG_OF), answers
    assert upstream.seen == []


# --- the key fallback ---------------------------------------------------------------------------


@pytest.mark.usefixtures("keys")
def test_an_unset_key_variable_sends_the_providers_default_key(
        upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    """What litellm-subscription-default-key warns of: an openai/ route to a subscription
    proxy whose own variable is unset carries OPENAI_API_KEY."""
    monkeypatch.delenv("KEY_SUB_A")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-metered-default")
    upstream.reset()
    alone = (ExportEntry(position=1, rung="subscription", provider="claude",
                         model="claude-sonnet-4-5", allowed=("sub-a",), unverified=()),)
    answers = ask(exported(upstream, "auto/subscription", alone), "omniladder-subscription",
                  times=1)
    assert answers == ["sub-a"]
    assert upstream.seen == [("sub-a", "Bearer sk-metered-default")]
