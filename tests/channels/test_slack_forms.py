"""Seed 002's forms and URL steps on Slack, end to end: the real slack-bolt and slack_sdk against the fake.

A form is filled in a modal with typed inputs or by typing in the thread; a URL step is done or declined
with its buttons or by typing. Every answer goes through the core: who may answer, and the one form
validator, whose refusals show under the modal's inputs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import Prompt, PromptRequest, PromptState, ReasonCode
from gateway.rules import notices
from tests.channels.slack_support import ALICE, CHANNEL, EVE, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack
from tests.support.new_kinds import DEPLOY_FORM as DEPLOY

FILLED: dict[str, list[str] | str] = {
    "Environment": ["Production"],
    "Replicas": "3",
    "Notify the team": ["Yes"],
    "Regions": ["eu", "ap"],
    "Start on": "2025-02-01",
    "Contact": "ada@example.com",
    "Note": "canary first",
}
AGE: dict[str, Any] = {
    "kind": "form",
    "message": "Your age?",
    "requested_schema": {
        "type": "object",
        "properties": {"age": {"type": "integer", "title": "Age", "minimum": 0}},
        "required": ["age"],
    },
}
SCALE: dict[str, Any] = {
    "kind": "form",
    "message": "Scale the service",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {"type": "string", "title": "Environment", "enum": ["stg", "prod"]},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1},
            "notify": {"type": "boolean", "title": "Notify"},
        },
        "required": ["env", "replicas"],
    },
}
CONNECT: dict[str, Any] = {
    "kind": "url",
    "message": "Connect your GitHub account",
    "url": "https://example.com/connect",
}


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


async def ask(gw: SlackGateway, payload: dict[str, Any]) -> tuple[Prompt, dict[str, Any]]:
    """Alice mentions the app; the agent asks ``payload`` in that thread: the prompt and its message."""
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", PromptRequest.model_validate(payload))
    [message] = gw.fake.posted(thread_ts)
    return prompt, message


async def handled(gw: SlackGateway) -> None:
    await gw.channel.presses.idle()
    await gw.settled()


async def press(gw: SlackGateway, message: dict[str, Any], label: str, user: str = ALICE) -> None:
    assert await gw.fake.press(gw.events_url, message, label, user=user) == 200
    await handled(gw)


async def open_fields(gw: SlackGateway, message: dict[str, Any], user: str = ALICE) -> dict[str, Any]:
    await press(gw, message, "Fill in…", user)
    return gw.fake.opened_views()[-1]


async def settled(gw: SlackGateway, prompt: Prompt) -> Prompt:
    return await gw.runtime.gateway.get_prompt(prompt.prompt_id)


def buttons(message: dict[str, Any]) -> list[str]:
    return [
        element["text"]["text"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
    ]


async def typed(gw: SlackGateway, message: dict[str, Any], text: str, user: str = ALICE) -> None:
    assert await gw.deliver(gw.reply(message["thread_ts"], text, user)) == 200
    await handled(gw)


# Forms in a modal ----------------------------------------------------------------------------------------


async def test_tool_asks_a_flat_form_and_the_person_submits_it_in_a_modal(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    assert buttons(message) == ["Fill in…", "Decline"]

    view = await open_fields(gw, message)
    inputs = {
        block["block_id"]: block["element"]["type"] for block in view["blocks"] if block["type"] == "input"
    }
    assert inputs == {
        "env": "static_select",
        "replicas": "number_input",
        "notify": "checkboxes",
        "regions": "checkboxes",
        "start": "datepicker",
        "contact": "email_text_input",
        "note": "plain_text_input",
    }
    assert await gw.fake.submit(gw.events_url, view, user=ALICE, fill=FILLED) == {}
    await handled(gw)

    answered = await settled(gw, prompt)
    assert answered.prompt_state is PromptState.ANSWERED
    assert answered.content == {
        "env": "prod",
        "replicas": 3,
        "notify": True,
        "regions": ["eu", "ap"],
        "start": "2025-02-01",
        "contact": "ada@example.com",
        "note": "canary first",
    }
    assert answered.answered_by == f"slack:{ALICE}"
    [notice] = gw.fake.private_notices()
    assert notice.startswith("Your answer was recorded: Production · 3 · Yes")
    audit = gw.fake.posted(message["thread_ts"])[-1]
    assert audit["text"].splitlines()[:4] == [
        "✓ Answered",
        "Environment: Production",
        "Replicas: 3",
        "Notify the team: Yes",
    ]
    assert buttons(gw.fake.message(message)) == []


async def test_form_value_the_validator_refuses_shows_under_its_input_and_the_form_stays_pending(
    gw: SlackGateway,
) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_fields(gw, message)

    answer = await gw.fake.submit(gw.events_url, view, user=ALICE, fill={**FILLED, "Replicas": "12"})
    assert answer == {"response_action": "errors", "errors": {"replicas": "Must be at most 10 (maximum 10)."}}
    await handled(gw)
    assert (await settled(gw, prompt)).pending
    assert gw.fake.private_notices() == []

    assert await gw.fake.submit(gw.events_url, view, user=ALICE, fill=FILLED) == {}
    await handled(gw)
    assert (await settled(gw, prompt)).content is not None


async def test_form_left_without_a_required_value_is_refused_by_the_core(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_fields(gw, message)
    answer = await gw.fake.submit(gw.events_url, view, user=ALICE, fill={"Environment": ["Staging"]})
    assert answer["errors"] == {"replicas": "Is required."}
    assert (await settled(gw, prompt)).pending


async def test_form_declined_by_its_button(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    await press(gw, message, "Decline")

    declined = await settled(gw, prompt)
    assert (declined.prompt_state, declined.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)
    assert gw.fake.private_notices() == [notices.DECLINED]
    assert buttons(gw.fake.message(message)) == []


async def test_form_submitted_by_someone_not_allowed_is_refused_in_the_modal(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_fields(gw, message, user=EVE)
    answer = await gw.fake.submit(gw.events_url, view, user=EVE, fill=FILLED)

    assert answer["response_action"] == "update"
    assert answer["view"]["blocks"][0]["text"]["text"] == notices.NOT_ALLOWED
    await press(gw, message, "Decline", user=EVE)
    assert (await settled(gw, prompt)).pending
    assert gw.fake.private_notices() == [notices.NOT_ALLOWED]


async def test_form_submitted_after_it_settled_changes_nothing(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, AGE)
    view = await open_fields(gw, message)
    await typed(gw, message, "36")
    answer = await gw.fake.submit(gw.events_url, view, user=ALICE, fill={"Age": "40"})
    assert answer["response_action"] == "update"
    assert "already answered (36)" in answer["view"]["blocks"][0]["text"]["text"]
    assert (await settled(gw, prompt)).content == {"age": 36}


# Forms by typed reply ------------------------------------------------------------------------------------


async def test_tool_asks_a_one_field_form_and_the_typed_reply_is_its_value(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, AGE)
    await typed(gw, message, "-1")
    assert (await settled(gw, prompt)).pending
    [refused] = gw.fake.ephemerals()
    assert (refused["user"], refused["text"]) == (
        ALICE,
        "Not taken: Age must be at least 0 (minimum 0). The form is still open.",
    )

    await typed(gw, message, "36")
    assert (await settled(gw, prompt)).content == {"age": 36}


async def test_tool_asks_a_flat_form_and_the_person_types_name_value_lines(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, SCALE)
    await typed(gw, message, "env: prod\nreplicas: 2\nnotify: yes")
    assert (await settled(gw, prompt)).content == {"env": "prod", "replicas": 2, "notify": True}


async def test_tool_asks_a_flat_form_and_the_person_types_a_field_at_a_time(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, SCALE)
    await typed(gw, message, "2")  # the first field's option number
    await typed(gw, message, "3")  # the last required field: the optional one is left empty
    assert (await settled(gw, prompt)).content == {"env": "prod", "replicas": 3}
    asked, sent = [notice["text"] for notice in gw.fake.ephemerals()]
    assert asked.startswith("Next, reply with 2. Replicas (replicas) — integer: a whole number, at least 1")
    assert asked.endswith(
        "That sends the form. To fill Notify (notify) too, reply with a line each:\nreplicas: …\nnotify: …"
    )
    assert sent.startswith(
        "Your answer was recorded: prod · 3 · (no selection). Optional, left empty: Notify"
    )


async def test_typed_decline_declines_a_form(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    await typed(gw, message, "decline")
    assert (await settled(gw, prompt)).reason_code == "declined"


async def test_form_value_typed_by_someone_not_allowed_is_not_taken(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, AGE)
    await typed(gw, message, "36", user=EVE)
    assert (await settled(gw, prompt)).pending
    [notice] = gw.fake.ephemerals()
    assert notice["user"] == EVE


# URL steps -----------------------------------------------------------------------------------------------


async def test_require_url_step_posts_the_link_as_a_button(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, CONNECT)
    assert buttons(message) == ["Open the page", "Done", "Decline"]
    [row] = [block for block in message["blocks"] if block["type"] == "actions"]
    assert row["elements"][0]["url"] == "https://example.com/connect"

    await press(gw, message, "Open the page")  # Slack tells the app of a link press too: nothing to do
    assert (await settled(gw, prompt)).pending
    assert gw.fake.private_notices() == []


async def test_require_url_step_done_by_button(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, CONNECT)
    await press(gw, message, "Done")
    done = await settled(gw, prompt)
    assert [answer.answer for answer in done.answers or []] == [["done"]]
    assert gw.fake.private_notices() == ["Your answer was recorded: done"]
    assert buttons(gw.fake.message(message)) == []


@pytest.mark.parametrize("text", ["done", "Done"])
async def test_require_url_step_done_by_typing(gw: SlackGateway, text: str) -> None:
    prompt, message = await ask(gw, CONNECT)
    await typed(gw, message, text)
    assert [answer.answer for answer in (await settled(gw, prompt)).answers or []] == [["done"]]


async def test_require_url_step_declined_by_button(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, CONNECT)
    await press(gw, message, "Decline")
    assert (await settled(gw, prompt)).reason_code is ReasonCode.DECLINED
    assert gw.fake.private_notices() == [notices.DECLINED]


async def test_require_url_step_declined_by_typing(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, CONNECT)
    await typed(gw, message, "decline")
    assert (await settled(gw, prompt)).reason_code is ReasonCode.DECLINED


async def test_require_url_step_done_by_someone_not_allowed_is_refused(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, CONNECT)
    await press(gw, message, "Done", user=EVE)
    await typed(gw, message, "done", user=EVE)
    assert (await settled(gw, prompt)).pending
    [typed_notice, press_notice] = gw.fake.private_notices()  # an ephemeral message; the press's response
    assert press_notice == notices.NOT_ALLOWED
    assert typed_notice.startswith("Your answer was not taken")
