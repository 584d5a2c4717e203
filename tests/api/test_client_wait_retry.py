"""A wait is only a read: the clients retry it on a connection failure or any 5xx (a gateway restarting, a
proxy with no backend), with backoff, within the caller's deadline; other calls keep their semantics."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gateway.base.models import Prompt, PromptKind, PromptState, Question
from gateway.client import Client, Threadgate, ThreadgateError

PROMPT_ID = "prm_01J00000000000000000000000"
NOW = datetime(2024, 4, 5, tzinfo=UTC)
PENDING = Prompt(
    prompt_id=PROMPT_ID,
    run_id="run_01J00000000000000000000000",
    thread_id="web:room",
    agent="ops",
    kind=PromptKind.TEXT,
    questions=[Question(question="Which branch?")],
    created_at=NOW,
    expires_at=NOW + timedelta(days=1),
)
ANSWERED = PENDING.model_copy(update={"prompt_state": PromptState.ANSWERED, "answered_by": "web:alice"})
Answer = Callable[[httpx.Request], httpx.Response]


def _json(prompt: Prompt) -> Answer:
    return lambda _request: httpx.Response(200, content=prompt.model_dump_json().encode())


def _status(status: int) -> Answer:
    # What uvicorn sends when a request is cut off: plain text, no error envelope.
    return lambda _request: httpx.Response(status, text="Internal Server Error")


def _reset(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadError("connection reset by peer", request=request)


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


FAILURES: dict[str, Answer] = {
    "500": _status(500),
    "502": _status(502),
    "503": _status(503),
    "504": _status(504),
    "reset": _reset,
    "refused": _refused,
}


class Script:
    """Answers requests in order, recording each (the last answer repeats)."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(request)


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_the_sync_client_waits_through_a_failure_that_may_pass(failure: str) -> None:
    script = Script(_json(PENDING), FAILURES[failure], FAILURES[failure], _json(ANSWERED))
    with Client(
        "http://gateway.test", "t", transport=httpx.MockTransport(script), reconnect_delay=0.001
    ) as tg:
        settled = tg.wait_prompt(PROMPT_ID, timeout=30)
    assert settled.prompt_state is PromptState.ANSWERED
    assert len(script.seen) == 4


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_the_async_client_waits_through_a_failure_that_may_pass(failure: str) -> None:
    script = Script(FAILURES[failure], _json(PENDING), FAILURES[failure], _json(ANSWERED))

    async def wait() -> Prompt:
        transport = httpx.MockTransport(script)
        async with Threadgate("http://gateway.test", "t", transport=transport, reconnect_delay=0.001) as tg:
            return await tg.wait_prompt(PROMPT_ID, timeout=30)

    assert asyncio.run(wait()).prompt_state is PromptState.ANSWERED
    assert len(script.seen) == 4


def test_a_wait_gives_up_at_its_deadline_while_the_gateway_keeps_failing() -> None:
    script = Script(_status(500))
    with (
        Client(
            "http://gateway.test", "t", transport=httpx.MockTransport(script), reconnect_delay=0.001
        ) as tg,
        pytest.raises(TimeoutError),
    ):
        tg.wait_prompt(PROMPT_ID, timeout=0.2)
    assert len(script.seen) > 1


def test_a_client_error_ends_the_wait_at_once() -> None:
    not_found = {"error": {"code": "PROMPT_NOT_FOUND", "message": "no such prompt", "details": {}}}
    script = Script(lambda _request: httpx.Response(404, json=not_found))
    with (
        Client(
            "http://gateway.test", "t", transport=httpx.MockTransport(script), reconnect_delay=0.001
        ) as tg,
        pytest.raises(ThreadgateError) as raised,
    ):
        tg.wait_prompt(PROMPT_ID, timeout=30)
    assert raised.value.code == "PROMPT_NOT_FOUND"
    assert len(script.seen) == 1


@pytest.mark.parametrize("call", ["cancel_prompt", "end_run"])
def test_a_call_that_changes_something_is_not_sent_again_on_a_500(call: str) -> None:
    script = Script(_status(500), _json(ANSWERED))
    args: dict[str, Any] = {"cancel_prompt": {"prompt_id": PROMPT_ID}, "end_run": {"run_id": "run_1"}}[call]
    with (
        Client(
            "http://gateway.test", "t", transport=httpx.MockTransport(script), reconnect_delay=0.001
        ) as tg,
        pytest.raises(ThreadgateError),
    ):
        getattr(tg, call)(**args)
    assert len(script.seen) == 1
