"""The whole decision on Teams (contract §9), end to end: the Teams SDK's card models and conversation client
against the fake Bot Framework, the core on Redis.

An approval's card offers Deny with reason… and, where the call may be edited, Edit and approve…: each an
``Action.ShowCard`` whose inputs a person fills in and sends with its ``Action.Execute``. The invoke goes
through the core's answer step like any press: the core decides what it counts for (who may answer, the
tool's schema), and its refusal is the invoke's answer only the presser sees. An approval that needs
several approvers shows each vote short of enough as a line in the thread.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from channels.teams.approvals import (
    DENY_WITH_REASON,
    EDIT_AND_APPROVE,
    EDIT_BUDGET,
    SEND_EDIT,
    SEND_REASON,
    approval_actions,
    editable,
)
from channels.teams.cards import votes_activity
from channels.teams.control_ids import ControlRef
from gateway.base.models import Prompt, PromptKind, PromptRequest, PromptState, Question, ToolCall
from gateway.rules import notices
from gateway.rules.render import message_item
from tests.channels.teams_support import (
    ALICE,
    BOB,
    CHANNEL_THREAD,
    EVE,
    TeamsGateway,
    fake_bot_framework,
    teams_gateway,
)
from tests.fakes.teams import Posted, identity
from tests.support.session_grants import asked_again, grants_of

THREAD = f"teams:{CHANNEL_THREAD}"
DROP = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow db__drop to run?")],
    tool_call=ToolCall(name="db__drop", arguments={"database": "staging", "table": "users"}),
)
CALL = ToolCall(name="deploy", arguments={"service": "web", "replicas": 2, "canary": True, "regions": ["eu"]})
DEPLOY = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow deploy to run?")],
    tool_call=CALL,
    editable=True,
    input_schema={
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "canary": {"type": "boolean"},
            "regions": {"type": "array", "items": {"type": "string"}},
        },
    },
)
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
MESSAGE = "application/vnd.microsoft.activity.message"


@pytest.fixture
async def gw(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


async def ask(gw: TeamsGateway, request: PromptRequest) -> tuple[Prompt, Posted]:
    prompt = await gw.ask(THREAD, request.model_copy(deep=True))
    return prompt, gw.card_of(prompt)


async def agents(gw: TeamsGateway, prompt: Prompt) -> dict[str, Any]:
    """The settled prompt as the agent waiting on it gets it."""
    done = await gw.runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    assert not done.pending, done
    return done.public()


def titles(card: Posted) -> list[str]:
    return [str(action.get("title")) for action in card.actions()]


# The card ----------------------------------------------------------------------------------------------


async def test_approval_card_offers_a_deny_with_reason_and_says_how_a_reply_answers(gw: TeamsGateway) -> None:
    _, card = await ask(gw, DROP)
    assert titles(card) == ["Approve", "Deny", notices.APPROVE_FOR_SESSION, DENY_WITH_REASON, notices.CLAIM]
    assert card.action(DENY_WITH_REASON)["type"] == "Action.ShowCard"
    assert list(card.inputs(SEND_REASON)) == ["note"]
    assert notices.approval_hint(editable=False) in card.text


async def test_editable_approval_card_offers_an_input_per_argument_filled_in(gw: TeamsGateway) -> None:
    _, card = await ask(gw, DEPLOY)
    assert titles(card) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        EDIT_AND_APPROVE,
        notices.CLAIM,
    ]
    assert notices.approval_hint(editable=True) in card.text
    shown = card.inputs(SEND_EDIT)
    assert {
        key: (element["label"], element["type"], element.get("value")) for key, element in shown.items()
    } == {
        "a0": ("service", "Input.Text", "web"),
        "a1": ("replicas", "Input.Text", "2"),
        "a2": ("canary", "Input.Toggle", "true"),
        "a3": ("regions", "Input.Text", '["eu"]'),
    }


# Approve for this session -----------------------------------------------------------------------------


async def test_approve_for_this_session_approves_and_grants_the_exact_call_for_the_run(
    gw: TeamsGateway,
) -> None:
    await gw.approvers(identity(BOB))
    prompt, card = await ask(gw, DROP)
    refused = await gw.press(card, notices.APPROVE_FOR_SESSION, EVE)
    assert refused == {"statusCode": 200, "type": MESSAGE, "value": notices.NOT_ALLOWED}
    assert await grants_of(gw.runtime, prompt) == []

    reply = await gw.press(card, notices.APPROVE_FOR_SESSION, BOB)
    shown = await agents(gw, prompt)
    assert (shown["answered_by"], shown["answers"][0]["answer"]) == (identity(BOB), ["Approve"])
    [grant] = await grants_of(gw.runtime, prompt)
    assert (grant.created_by, grant.prompt_id) == (identity(BOB), prompt.prompt_id)
    assert reply["type"] == ADAPTIVE_CARD and grant.grant_id in str(reply["value"])  # the settled card says
    assert notices.settled_by("approval", [["Approve"]], "Bob", grant.match) in str(reply["value"])
    assert shown["granted"] == grant.match.model_dump(mode="json")
    assert await asked_again(gw.runtime, prompt) == grant.by


# Deny with a reason --------------------------------------------------------------------------------------


async def test_deny_with_reason_denies_and_the_agent_gets_the_note(gw: TeamsGateway) -> None:
    prompt, card = await ask(gw, DROP)

    reply = await gw.press(card, SEND_REASON, ALICE, {"note": "use the staging copy instead"})

    assert reply["type"] == ADAPTIVE_CARD and "actions" not in reply["value"]  # the settled card
    shown = await agents(gw, prompt)
    assert (shown["answers"][0]["answer"], shown["note"]) == (["Deny"], "use the staging copy instead")
    assert (shown["answered_by"], shown["approved_call"]) == (identity(ALICE), None)
    await gw.settled()
    assert card.actions() == []


async def test_a_blank_reason_is_refused_and_the_approval_stays_open(gw: TeamsGateway) -> None:
    prompt, card = await ask(gw, DROP)
    reply = await gw.press(card, SEND_REASON, ALICE, {"note": "  "})
    assert reply == {"statusCode": 200, "type": MESSAGE, "value": notices.EMPTY_TEXT}
    assert (await gw.prompt(prompt.prompt_id)).pending


# Approve with edits --------------------------------------------------------------------------------------


async def test_approve_with_edits_approves_the_call_as_edited_with_its_values_typed(gw: TeamsGateway) -> None:
    prompt, card = await ask(gw, DEPLOY)

    reply = await gw.press(card, SEND_EDIT, ALICE, {"a1": "3", "a2": "false", "a3": '["eu", "us"]'})

    assert reply["type"] == ADAPTIVE_CARD
    shown = await agents(gw, prompt)
    edited = {"service": "web", "replicas": 3, "canary": False, "regions": ["eu", "us"]}
    assert shown["answers"][0]["answer"] == ["Approve"]
    assert shown["approved_call"] == {"name": "deploy", "arguments": edited}
    assert shown["tool_call"] == CALL.model_dump(mode="json")


async def test_an_edit_the_tools_schema_refuses_is_told_to_the_presser_and_the_approval_stays_open(
    gw: TeamsGateway,
) -> None:
    prompt, card = await ask(gw, DEPLOY)

    reply = await gw.press(card, SEND_EDIT, ALICE, {"a1": "12"})

    assert reply["type"] == MESSAGE
    assert reply["value"] == notices.edit_not_taken(
        "The edited arguments do not fit the tool: replicas: 12 is greater than the maximum of 10"
    )
    still = await gw.prompt(prompt.prompt_id)
    assert (still.prompt_state, still.approved_call) == (PromptState.PENDING, None)
    assert titles(card) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        EDIT_AND_APPROVE,
        notices.CLAIM,
    ]

    await gw.press(card, SEND_EDIT, ALICE, {"a1": "4"})
    assert (await agents(gw, prompt))["approved_call"]["arguments"]["replicas"] == 4


async def test_an_edit_of_a_call_not_raised_editable_is_refused_by_the_core(gw: TeamsGateway) -> None:
    prompt, card = await ask(gw, DROP)
    assert EDIT_AND_APPROVE not in titles(card)
    forged = gw.fake.press(card, SEND_REASON, ALICE, {"a0": "production"})
    forged["value"]["action"]["verb"] = "tg.edit"  # a press the card never offered

    reply = (await gw.deliver(forged)).json()

    assert reply["type"] == MESSAGE and reply["value"].startswith(
        "Not taken: this approval was not raised editable"
    )
    assert (await gw.prompt(prompt.prompt_id)).pending


# Who may decide ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "inputs"),
    [
        pytest.param(SEND_REASON, {"note": "no"}, id="deny-with-reason"),
        pytest.param(SEND_EDIT, {"a1": "9"}, id="approve-with-edits"),
    ],
)
async def test_someone_not_allowed_is_refused_and_the_approval_stays_open(
    gw: TeamsGateway, title: str, inputs: dict[str, str]
) -> None:
    await gw.approvers(identity(BOB))
    prompt, card = await ask(gw, DEPLOY)

    reply = await gw.press(card, title, EVE, inputs)  # a signed press from a real user, not an approver

    assert reply == {"statusCode": 200, "type": MESSAGE, "value": notices.NOT_ALLOWED}
    still = await gw.prompt(prompt.prompt_id)
    assert (still.prompt_state, still.note, still.approved_call, still.votes) == (
        PromptState.PENDING,
        None,
        None,
        [],
    )
    await gw.press(card, title, BOB, inputs)
    assert (await agents(gw, prompt))["answered_by"] == identity(BOB)


# Several approvers ---------------------------------------------------------------------------------------


async def test_two_approvers_each_vote_shows_as_a_line_until_enough_approve(gw: TeamsGateway) -> None:
    await gw.approvers(identity(BOB))
    prompt, card = await ask(gw, DROP.model_copy(update={"approvals": 2}))

    first = await gw.press(card, "Approve", ALICE)
    voted = await gw.prompt(prompt.prompt_id)
    assert voted.pending and [vote.by for vote in voted.votes] == [identity(ALICE)]
    assert first == {"statusCode": 200, "type": MESSAGE, "value": notices.voted(voted)}
    await gw.settled()
    lines = [posted.body.get("text") for posted in gw.fake.posts if posted is not card]
    assert lines == ["Approved 1 of 2: Alice"]  # by the name Teams gave with the press
    # Still open for the second approver; no "Approve for this session": one person's word grants nothing.
    assert titles(card) == ["Approve", "Deny", DENY_WITH_REASON, notices.CLAIM]

    again = await gw.press(card, "Approve", ALICE)
    assert again["value"] == notices.ALREADY_VOTED

    await gw.press(card, "Approve", BOB)
    approved = await agents(gw, prompt)
    assert approved["prompt_state"] == PromptState.ANSWERED
    assert [vote["by"] for vote in approved["votes"]] == [identity(ALICE), identity(BOB)]
    await gw.settled()
    assert card.actions() == []
    texts = [posted.body.get("text") for posted in gw.fake.posts if posted is not card]
    assert sum(str(text).startswith("Approved 1 of 2") for text in texts) == 1


# Within a card's room ------------------------------------------------------------------------------------


def test_a_call_too_large_for_a_card_keeps_the_rest_as_it_is_and_says_so() -> None:
    arguments = {f"a{index}": "x" * 3000 for index in range(5)}
    inputs, kept = editable(arguments)
    assert inputs == ["a0", "a1"] and kept == ["a2", "a3", "a4"]
    assert sum(len(arguments[name]) for name in inputs) <= EDIT_BUDGET

    actions = approval_actions(
        ControlRef("prm_1"), ToolCall(name="t", arguments=arguments), can_edit=True, grantable=True
    )
    edit_card = actions[-1].card
    assert edit_card is not None
    [note] = [element for element in edit_card.body if getattr(element, "text", None)]
    assert "a2, a3, a4" in str(note.text)


def test_an_agents_message_is_not_a_votes_line() -> None:
    assert votes_activity(message_item("Approved 1 of 2: someone")) is None
