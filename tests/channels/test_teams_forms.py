"""Forms and URL steps on Teams: one card with a typed input per property, Send and Decline; a link with
Done and Decline. The core's form validator alone decides what is a valid value.

Input shapes from "Adaptive Cards schema explorer" (Input.Text, Input.Number, Input.Date, Input.Toggle,
Input.ChoiceSet) and "Work with Universal Actions for Adaptive Cards".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import Prompt, PromptRequest, PromptState, ReasonCode
from gateway.rules import notices
from tests.channels.teams_support import (
    ALICE,
    CHANNEL_THREAD,
    EVE,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.support.new_kinds import DEPLOY_FORM as DEPLOY

THREAD = f"teams:{CHANNEL_THREAD}"
CONNECT: dict[str, Any] = {
    "kind": "url",
    "message": "Connect your GitHub account",
    "url": "https://example.com/connect",
}


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


async def _ask(gw: TeamsGateway, raw: dict[str, Any]) -> Prompt:
    return await gw.ask(THREAD, PromptRequest.model_validate(raw))


async def test_a_form_is_one_card_with_typed_inputs_carrying_the_schemas_limits(gw: TeamsGateway) -> None:
    card = gw.card_of(await _ask(gw, DEPLOY))
    inputs = card.inputs()
    types = {name: element["type"] for name, element in inputs.items()}
    assert types == {
        "f.env": "Input.ChoiceSet",
        "f.replicas": "Input.Number",
        "f.notify": "Input.Toggle",
        "f.regions": "Input.ChoiceSet",
        "f.start": "Input.Date",
        "f.contact": "Input.Text",
        "f.note": "Input.Text",
    }
    assert (inputs["f.env"]["isRequired"], inputs["f.replicas"]["isRequired"]) == (True, True)
    assert "isRequired" not in inputs["f.note"]
    assert (inputs["f.replicas"]["min"], inputs["f.replicas"]["max"]) == (1, 10)
    assert inputs["f.note"]["maxLength"] == 20
    assert inputs["f.regions"]["isMultiSelect"] is True
    assert [choice["title"] for choice in inputs["f.env"]["choices"]] == ["Staging", "Production"]
    assert inputs["f.contact"]["style"] == "Email"
    assert [action["title"] for action in card.actions()] == ["Send", "Decline"]


async def test_a_filled_form_answers_with_typed_content(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, DEPLOY)
    filled = {
        "f.env": "1",
        "f.replicas": "3",
        "f.notify": "true",
        "f.regions": "0,2",
        "f.start": "2025-02-01",
        "f.contact": "ada@example.com",
        "f.note": "canary first",
    }
    reply = await gw.press(gw.card_of(prompt), "Send", ALICE, filled)
    assert reply["type"] == "application/vnd.microsoft.card.adaptive"
    answered = await gw.prompt(prompt.prompt_id)
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


async def test_a_value_the_validator_refuses_is_said_privately_and_the_form_stays_open(
    gw: TeamsGateway,
) -> None:
    prompt = await _ask(gw, DEPLOY)
    reply = await gw.press(gw.card_of(prompt), "Send", ALICE, {"f.env": "0", "f.replicas": "42"})
    assert reply["type"] == "application/vnd.microsoft.activity.message"
    assert reply["value"].startswith("Not taken: Replicas must be at most 10")
    assert (await gw.prompt(prompt.prompt_id)).pending


async def test_declining_a_form_cancels_it_as_declined(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, DEPLOY)
    reply = await gw.press(gw.card_of(prompt), "Decline", ALICE)
    assert reply["type"] == "application/vnd.microsoft.card.adaptive"
    assert any(element.get("text") == "Declined by Alice" for element in reply["value"]["body"])
    declined = await gw.prompt(prompt.prompt_id)
    assert (declined.prompt_state, declined.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)


async def test_a_strangers_form_is_refused_and_stays_open(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, DEPLOY)
    reply = await gw.press(gw.card_of(prompt), "Send", EVE, {"f.env": "0", "f.replicas": "2"})
    assert reply["value"] == notices.NOT_ALLOWED
    assert (await gw.prompt(prompt.prompt_id)).pending


async def test_a_url_step_is_a_link_with_done_and_decline(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, CONNECT)
    card = gw.card_of(prompt)
    link, done, decline = card.actions()
    assert (link["type"], link["url"]) == ("Action.OpenUrl", "https://example.com/connect")
    assert (done["title"], decline["title"]) == ("Done", "Decline")
    await gw.press(card, "Done", ALICE)
    answered = await gw.prompt(prompt.prompt_id)
    assert [answer.answer for answer in answered.answers or []] == [["done"]]


async def test_a_url_steps_decline_cancels_it(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, CONNECT)
    reply = await gw.press(gw.card_of(prompt), "Decline", ALICE)
    assert reply["type"] == "application/vnd.microsoft.card.adaptive"
    assert (await gw.prompt(prompt.prompt_id)).reason_code == ReasonCode.DECLINED


async def test_done_on_a_form_is_not_a_control_it_has(gw: TeamsGateway) -> None:
    prompt = await _ask(gw, DEPLOY)
    card = gw.card_of(prompt)
    invoke = gw.fake.press(card, "Send", ALICE)
    invoke["value"]["action"]["verb"] = "tg.done"
    reply = (await gw.deliver(invoke)).json()
    assert "does not match" in reply["value"]
    assert (await gw.prompt(prompt.prompt_id)).pending
