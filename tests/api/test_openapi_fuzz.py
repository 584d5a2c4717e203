"""Schemathesis against /openapi.json: generated good and bad requests never get a 500 or an undocumented
answer, and every answer matches the documented schema (error envelopes included)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks

from gateway.api import create_app
from gateway.api.deps import ApiOptions
from gateway.process.runtime import Runtime
from tests.api.conftest import AGENT_AUTH, OPERATOR_AUTH, ServedChannel, api_settings
from tests.support.redis_server import RedisServer, free_port

EXAMPLES = 20
OPTIONS = ApiOptions(max_wait_s=0.05, sse_heartbeat_s=0.1, respond_limit=1000)
OPERATOR_ROUTES = {
    ("POST", "/v1/agents/{agent}/inputs/{prompt_id}"),
    ("PUT", "/v1/agents/{agent}"),
    ("GET", "/v1/people"),
    ("GET", "/v1/people/{person}"),
    ("PUT", "/v1/people/{person}"),
    ("DELETE", "/v1/people/{person}"),
}
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


class LiveGateway:
    """The app served by uvicorn in a thread of its own (its own event loop), for synchronous callers."""

    def __init__(self, redis_url: str) -> None:
        self.runtime = Runtime.build(
            api_settings(redis_url), channels=[ServedChannel("slack"), ServedChannel("web")]
        )
        self.app = create_app(self.runtime, OPTIONS)
        self.port = free_port()
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveGateway:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                return self
            threading.Event().wait(0.01)
        raise RuntimeError("the gateway did not start")

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def live(redis_server: RedisServer) -> Iterator[LiveGateway]:
    redis_server.flush()
    with LiveGateway(redis_server.url) as gateway:
        seed(gateway.base_url)
        yield gateway


def seed(base_url: str) -> None:
    """A run with a pending prompt, so generated ids sometimes hit real objects."""
    with httpx.Client(base_url=base_url, headers=AGENT_AUTH) as client:
        run = client.post(
            "/v1/runs", json={"thread_id": "web:room", "agent": "ops", "started_by": "web:alice"}
        )
        client.post(
            f"/v1/runs/{run.json()['run_id']}/prompts",
            json={"kind": "text", "questions": [{"question": "?"}]},
        )


def fuzz(operation: Any, mode: GenerationMode, base_url: str, headers: dict[str, str]) -> None:
    """Run one operation's generated cases through the checks."""

    @given(case=operation.as_strategy(mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def call(case: Any) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, checks=CHECKS)

    try:
        call()
    except Unsatisfiable:
        # An operation that takes nothing (``GET /v1/people``, ``POST /v1/me/links``) has no wrong input.
        if mode is not GenerationMode.NEGATIVE:
            raise


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_endpoint_answers_generated_requests_within_its_contract(
    live: LiveGateway, mode: GenerationMode
) -> None:
    document = live.app.openapi()
    api = schemathesis.openapi.from_dict(document)
    tested = 0
    for result in api.get_all_operations():
        operation = result.ok()
        if operation.path == "/v1/events":  # an endless stream; covered by its own tests
            continue
        described = document["paths"][operation.path][operation.method.lower()]
        if mode is GenerationMode.NEGATIVE and not (
            described.get("parameters") or described.get("requestBody")
        ):
            continue  # nothing a request could get wrong (GET /v1/me): no negative case to make
        operator = (operation.method.upper(), operation.path) in OPERATOR_ROUTES or operation.path.endswith(
            "/respond"
        )
        fuzz(operation, mode, live.base_url, OPERATOR_AUTH if operator else AGENT_AUTH)
        tested += 1
    assert tested >= 14


def test_openapi_document_lists_every_contract_path(live: LiveGateway) -> None:
    paths = live.app.openapi()["paths"]
    expected = {
        "/v1/threads/{thread_id}/items": {"get", "post"},
        "/v1/messages": {"get"},
        "/v1/runs": {"post"},
        "/v1/runs/{run_id}/end": {"post"},
        "/v1/runs/{run_id}/prompts": {"post"},
        "/v1/prompts/{prompt_id}": {"get"},
        "/v1/prompts/{prompt_id}/cancel": {"post"},
        "/v1/prompts": {"get"},
        "/v1/events": {"get"},
        "/v1/agents/{agent}/inputs": {"get"},
        "/v1/agents/{agent}/inputs/{prompt_id}": {"post"},
        "/v1/agent-runs/{runId}/threads/{threadId}/user-inputs/{requestId}/respond": {"post"},
        "/v1/agents/{agent}": {"get", "put"},
        "/v1/history": {"get"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path
        for method in methods:
            errors = paths[path][method]["responses"]["401"]["content"]["application/json"]["schema"]
            assert errors == {"$ref": "#/components/schemas/ErrorEnvelope"}
