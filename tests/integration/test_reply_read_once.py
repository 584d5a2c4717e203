"""A person's reply is read once against its prompt, on the hot path and the slow path alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import InboundMessage, PromptRequest, RunRequest
from gateway.decision import receiving
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.rules.outcomes import Outcome
from gateway.rules.replies import Reading
from gateway.store import Store, connect
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000200"
ALICE = "slack:UALICE"
URL_STEP = {"kind": "url", "message": "Connect your account", "url": "https://example.com/connect"}


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    service = Gateway(Store(connect(None).client), Channels([MemoryChannel("slack")]), sweep_interval=3600)
    await service.start()
    yield service
    await service.stop()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The replies the core reads, in order."""
    seen: list[str] = []
    read = receiving.read_reply

    def counted(prompt: Any, text: str, *args: Any, **kwargs: Any) -> Reading:
        seen.append(text)
        return read(prompt, text, *args, **kwargs)

    monkeypatch.setattr(receiving, "read_reply", counted)
    return seen


async def test_a_reply_the_prompt_does_not_take_is_read_once(gateway: Gateway, reads: list[str]) -> None:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(URL_STEP))
    assert gateway.store.latest_prompt(THREAD) is not None  # the hot path reads it first

    received = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=ALICE, text="hmm", event_id="e1")
    )

    assert received.outcome is Outcome.KEPT and received.prompt is not None
    assert received.prompt.prompt_id == prompt.prompt_id
    assert reads == ["hmm"]
    assert (await gateway.get_prompt(prompt.prompt_id)).pending


async def test_an_answer_on_the_hot_path_is_read_once(gateway: Gateway, reads: list[str]) -> None:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(URL_STEP))

    received = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=ALICE, text="done", event_id="e2")
    )

    assert received.outcome is Outcome.ANSWERED
    assert reads == ["done"]
    assert not (await gateway.get_prompt(prompt.prompt_id)).pending
