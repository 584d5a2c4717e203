"""Who cancelled a prompt is written by the script that cancels it, so every reader of the settlement
(the wake-up other processes hear, a 409's details) names them, with no moment where it is missing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    ReplyPolicy,
    RunRequest,
)
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.waiters import Waiters

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}
APPROVAL = {"kind": "approval", "questions": [{"question": "Allow db__drop to run?"}]}
URL = {"kind": "url", "message": "Connect GitHub", "url": "https://example.com/connect"}


@pytest.fixture
async def elsewhere(gateway: Gateway) -> AsyncIterator[Waiters]:
    """Another process's waiters: they learn how a prompt settled from the settle broadcast alone."""
    waiters = Waiters(gateway.store.redis)
    await waiters.start()
    yield waiters
    await waiters.stop()


async def ask(gateway: Gateway, policy: ReplyPolicy, request: dict[str, object]) -> str:
    await gateway.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(on_unmatched_reply=policy))
    )
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    return (await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(request))).prompt_id


async def heard(waiters: Waiters, prompt_id: str, settle: Callable[[], Awaitable[object]]) -> dict[str, str]:
    """The settled fields the broadcast carried when ``settle`` settled the prompt."""
    with waiters.watch(prompt_id) as watch:
        await settle()
        settled = await asyncio.wait_for(watch.future, 5)
    assert settled.fields is not None
    return settled.fields


def says(text: str) -> InboundMessage:
    return InboundMessage(thread_id=THREAD, sender=ALICE, text=text)


async def test_a_person_cancelling_is_named_in_the_settlement_itself(
    gateway: Gateway, elsewhere: Waiters
) -> None:
    prompt_id = await ask(gateway, ReplyPolicy.ANSWER, QUESTION)
    fields = await heard(elsewhere, prompt_id, lambda: gateway.cancel_prompt(prompt_id, "not now", by=ALICE))
    assert fields["cancelled_by"] == ALICE


async def test_a_decline_in_chat_names_the_decliner_in_the_settlement_itself(
    gateway: Gateway, elsewhere: Waiters
) -> None:
    prompt_id = await ask(gateway, ReplyPolicy.ANSWER, URL)
    outcomes: list[Outcome] = []

    async def decline() -> None:
        outcomes.append((await gateway.receive(says("decline"))).outcome)

    fields = await heard(elsewhere, prompt_id, decline)
    assert outcomes == [Outcome.DECLINED]
    assert fields["cancelled_by"] == ALICE


@pytest.mark.parametrize("how", ["agent", "new_message"])
async def test_a_cancel_on_nobodys_behalf_names_nobody(
    gateway: Gateway, elsewhere: Waiters, how: str
) -> None:
    prompt_id = await ask(gateway, ReplyPolicy.NEW_MESSAGE, APPROVAL)

    async def cancel() -> None:
        if how == "agent":
            await gateway.cancel_prompt(prompt_id, "no longer needed")
        else:
            assert (await gateway.receive(says("something else entirely"))).outcome is Outcome.SUPERSEDED

    fields = await heard(elsewhere, prompt_id, cancel)
    assert fields["state"] == "cancelled" and "cancelled_by" not in fields
