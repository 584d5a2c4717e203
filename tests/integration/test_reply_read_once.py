"""A person's reply is read once against its prompt, on the hot path and the slow path alike, and costs one
receive script where this process knows the thread's active prompt (two at most where it does not, or
where that prompt was superseded meanwhile)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import InboundMessage, PromptRequest, PromptState, ReasonCode, RunRequest
from gateway.decision import receiving
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.rules.outcomes import Outcome
from gateway.rules.replies import Reading
from gateway.store import Decision, Store, connect
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000200"
ALICE = "slack:UALICE"
MALLORY = "slack:UMALLORY"
URL_STEP = {"kind": "url", "message": "Connect your account", "url": "https://example.com/connect"}
DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [{"label": "staging"}, {"label": "production"}],
        }
    ],
}


class CountingStore(Store):
    """A store that keeps what each ``receive`` (one receive script) decided, in order."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.decisions: list[str] = []

    async def receive(self, *args: Any, **kwargs: Any) -> Decision:
        decision = await super().receive(*args, **kwargs)
        self.decisions.append(decision.status.value)
        return decision


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


async def started(store: Store) -> Gateway:
    """A gateway process of its own over ``store``'s Redis: caches of its own, cold."""
    service = Gateway(store, Channels([MemoryChannel("slack")]), sweep_interval=3600)
    await service.start()
    return service


async def test_a_reply_to_the_prompt_this_process_raised_takes_one_receive_script(store: Store) -> None:
    counting = CountingStore(store.redis)
    gateway = await started(counting)
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        step = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(URL_STEP))

        stranger = await gateway.receive(InboundMessage(thread_id=THREAD, sender=MALLORY, text="done"))
        not_taken = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="hmm"))
        answered = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="done"))

        outcomes = (stranger.outcome, not_taken.outcome, answered.outcome)
        assert outcomes == (Outcome.NOT_ALLOWED, Outcome.KEPT, Outcome.ANSWERED)
        assert counting.decisions == ["refused", "kept", "answered"]
        assert not (await gateway.get_prompt(step.prompt_id)).pending
    finally:
        await gateway.stop()


async def test_a_reply_in_a_process_that_never_saw_the_prompt_takes_two_then_one(store: Store) -> None:
    raiser = await started(Store(store.redis))
    try:
        run = await raiser.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        step = await raiser.raise_prompt(run.run_id, PromptRequest.model_validate(URL_STEP))
    finally:
        await raiser.stop()
    counting = CountingStore(store.redis)
    gateway = await started(counting)
    try:
        not_taken = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="hmm"))
        assert counting.decisions == ["active", "kept"]  # cold: the prompt handed back, then decided on

        answered = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="done"))

        assert (not_taken.outcome, answered.outcome) == (Outcome.KEPT, Outcome.ANSWERED)
        assert counting.decisions == ["active", "kept", "answered"]  # warm since the hand-back
        assert not (await gateway.get_prompt(step.prompt_id)).pending
    finally:
        await gateway.stop()


async def test_a_reply_read_against_a_prompt_superseded_meanwhile_answers_the_new_one(store: Store) -> None:
    counting = CountingStore(store.redis)
    gateway = await started(counting)
    other = await started(Store(store.redis))
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        step = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(URL_STEP))
        # Another process supersedes it: this one still takes the URL step for the active prompt, against
        # which "production" is a value not taken.
        deploy = await other.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        assert gateway.store.latest_prompt(THREAD).prompt_id == step.prompt_id  # type: ignore[union-attr]

        received = await gateway.receive(
            InboundMessage(thread_id=THREAD, sender=ALICE, text="production", event_id="Ev-race")
        )
        again = await gateway.receive(
            InboundMessage(thread_id=THREAD, sender=ALICE, text="production", event_id="Ev-race")
        )

        assert (received.outcome, again.outcome) == (Outcome.ANSWERED, Outcome.DUPLICATE)
        assert counting.decisions == ["active", "answered", "duplicate"]  # the kept guess was not applied
        answered = await gateway.get_prompt(deploy.prompt_id)
        assert answered.prompt_state is PromptState.ANSWERED
        assert answered.answers is not None and answered.answers[0].answer == ["production"]
        superseded = await gateway.get_prompt(step.prompt_id)
        assert (superseded.prompt_state, superseded.reason_code) == (
            PromptState.CANCELLED,
            ReasonCode.SUPERSEDED,
        )
        logged = [entry for _id, entry in await gateway.store.thread_items(THREAD, None, 100)]
        assert [entry["text"] for entry in logged if entry.get("sender") == ALICE] == ["production"]
    finally:
        await other.stop()
        await gateway.stop()
