"""Claims on Slack, end to end against the fake Slack (contract §11): the **Claim** button on a prompt's
card, and ``claim`` typed in its thread. While one person holds a prompt only they answer it; the thread
is told once who took it, anyone else is told privately until when."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.base.models import Person, PromptKind, PromptRequest, Question, ToolCall
from gateway.rules import notices
from tests.channels.slack_support import ALICE, BOB, EVE, SlackGateway, slack_gateway
from tests.channels.test_slack_controls import ask, handled, pending, press
from tests.fakes.slack import FakeSlack

DROP = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow db__drop to run?")],
    tool_call=ToolCall(name="db__drop", arguments={"database": "staging"}),
)


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        await gateway.approvers(f"slack:{BOB}")
        await gateway.runtime.store.people.put(Person(person="bob", name="Bob", identities=[f"slack:{BOB}"]))
        yield gateway


def thread_texts(gw: SlackGateway, thread_ts: str) -> list[str]:
    return [str(message.get("text", "")) for message in gw.fake.posted(thread_ts)]


async def test_the_claim_button_holds_the_prompt_for_the_presser(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    await press(gw, message, notices.CLAIM, user=BOB)
    held = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert held.claimed_by == "person:bob" and held.claimed_until is not None
    hhmm = notices.claim_time(held.claimed_until)
    assert gw.fake.private_notices() == [notices.you_are_on_it(held.claimed_until)]
    assert thread_texts(gw, message["thread_ts"]).count("Bob is on it") == 1

    await press(gw, message, "Approve", user=ALICE)  # the run's starter, but Bob holds it
    assert await pending(gw, prompt)
    assert gw.fake.private_notices()[-1] == f"Bob is on it until {hhmm}"

    await press(gw, message, "Approve", user=BOB)
    settled = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert (settled.answered_by, [answer.answer for answer in settled.answers or []]) == (
        f"slack:{BOB}",
        [["Approve"]],
    )


async def test_someone_who_may_not_answer_cannot_claim(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    await press(gw, message, notices.CLAIM, user=EVE)
    assert (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).claimed_by is None
    assert gw.fake.private_notices() == [notices.NOT_ALLOWED]


async def test_claim_typed_in_the_thread_claims_its_open_prompt(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    thread_ts = message["thread_ts"]
    assert await gw.deliver(gw.reply(thread_ts, "claim", user=BOB)) == 200
    await handled(gw)
    held = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert held.claimed_by == "person:bob"
    assert thread_texts(gw, thread_ts).count("Bob is on it") == 1
    assert await gw.deliver(gw.reply(thread_ts, "claim", user=BOB)) == 200  # again: renewed, told once
    await handled(gw)
    assert thread_texts(gw, thread_ts).count("Bob is on it") == 1

    assert await gw.deliver(gw.reply(thread_ts, "approve", user=ALICE)) == 200
    await handled(gw)
    assert await pending(gw, prompt)
    assert held.claimed_until is not None
    assert gw.fake.private_notices()[-1].startswith("Bob is on it until ")
    assert not any(entry.get("text") == "claim" for entry in await gw.agent_feed())  # never the agent's
