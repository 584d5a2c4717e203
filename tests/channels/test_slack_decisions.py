"""The whole decision on Slack (contract §9), end to end: the real slack-bolt and slack_sdk against the fake.

An approval's card offers Deny with reason… and, where the call may be edited, Edit and approve…: each
opens a modal whose submission goes to the core like any press, the core deciding what it counts for (who
may answer, the tool's schema). An approval that needs several approvers shows each vote short of enough
in the thread.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from channels.slack.approval_modals import edit_view
from channels.slack.controls import DENY_WITH_REASON, EDIT_AND_APPROVE
from gateway.base.models import Prompt, PromptKind, PromptRequest, PromptState, Question, ToolCall
from gateway.rules import notices
from tests.channels.slack_support import ALICE, BOB, CHANNEL, EVE, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack
from tests.support.session_grants import asked_again, grants_of

DROP = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow db__drop to run?")],
    tool_call=ToolCall(name="db__drop", arguments={"database": "staging", "table": "users"}),
)
CALL = ToolCall(
    name="deploy",
    arguments={"service": "web", "replicas": 2, "canary": True, "regions": ["eu"]},
)
SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "description": "the service to deploy"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        "canary": {"type": "boolean"},
        "regions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["service", "replicas"],
}
DEPLOY = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow deploy to run?")],
    tool_call=CALL,
    editable=True,
    input_schema=SCHEMA,
)
TWO_PEOPLE = DROP.model_copy(update={"approvals": 2})


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


async def ask(gw: SlackGateway, request: PromptRequest) -> tuple[Prompt, dict[str, Any]]:
    """Alice mentions the app, the agent asks ``request`` in that thread: the prompt and its message."""
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", request)
    [message] = gw.fake.posted(thread_ts)
    return prompt, message


async def handled(gw: SlackGateway) -> None:
    await gw.channel.presses.idle()
    await gw.settled()


async def press(gw: SlackGateway, message: dict[str, Any], label: str, user: str = ALICE) -> None:
    assert await gw.fake.press(gw.events_url, message, label, user=user) == 200
    await handled(gw)


async def open_modal(
    gw: SlackGateway, message: dict[str, Any], label: str, user: str = ALICE
) -> dict[str, Any]:
    await press(gw, message, label, user)
    return gw.fake.opened_views()[-1]


async def submit(
    gw: SlackGateway, view: dict[str, Any], fill: dict[str, list[str] | str], user: str = ALICE
) -> dict[str, Any]:
    answer = await gw.fake.submit(gw.events_url, view, user=user, fill=fill)
    await handled(gw)
    return answer


async def now(gw: SlackGateway, prompt: Prompt) -> Prompt:
    return await gw.runtime.gateway.get_prompt(prompt.prompt_id)


def buttons(message: dict[str, Any]) -> list[str]:
    return [
        element["text"]["text"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
    ]


def hint(message: dict[str, Any]) -> str:
    [context] = [block for block in message["blocks"] if block["type"] == "context"]
    return str(context["elements"][0]["text"])


def inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A modal's inputs by label: each one's element."""
    return {block["label"]["text"]: block["element"] for block in view["blocks"] if block["type"] == "input"}


# The card ----------------------------------------------------------------------------------------------


async def test_approval_card_offers_a_deny_with_reason_and_says_how_a_reply_answers(gw: SlackGateway) -> None:
    _, message = await ask(gw, DROP)
    assert buttons(message) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        notices.CLAIM,
    ]
    assert hint(message) == notices.approval_hint(editable=False)
    assert "any other reply denies it" in hint(message)


async def test_editable_approval_card_also_offers_edit_and_approve(gw: SlackGateway) -> None:
    _, message = await ask(gw, DEPLOY)
    assert buttons(message) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        EDIT_AND_APPROVE,
        notices.CLAIM,
    ]
    assert "reply edit" in hint(message)


# Approve for this session -----------------------------------------------------------------------------


async def test_approve_for_this_session_approves_and_grants_the_exact_call_for_the_run(
    gw: SlackGateway,
) -> None:
    await gw.approvers(f"slack:{BOB}")
    prompt, message = await ask(gw, DROP)
    await press(gw, message, notices.APPROVE_FOR_SESSION, user=EVE)  # not an approver: nothing granted
    assert (await now(gw, prompt)).prompt_state is PromptState.PENDING
    assert await grants_of(gw.runtime, prompt) == []

    await press(gw, message, notices.APPROVE_FOR_SESSION, user=BOB)
    settled = await now(gw, prompt)
    assert (settled.answered_by, settled.answers[0].answer) == (f"slack:{BOB}", ["Approve"])
    [grant] = await grants_of(gw.runtime, prompt)
    assert (grant.created_by, grant.prompt_id) == (f"slack:{BOB}", prompt.prompt_id)
    assert await asked_again(gw.runtime, prompt) == grant.by
    assert grant.grant_id in gw.fake.private_notices()[-1]


# Deny with a reason --------------------------------------------------------------------------------------


async def test_deny_with_reason_modal_denies_and_the_agent_gets_the_note(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    view = await open_modal(gw, message, DENY_WITH_REASON)
    assert view["private_metadata"] == prompt.prompt_id
    assert list(inputs(view)) == ["Reason"]

    assert await submit(gw, view, {"Reason": "use the staging copy instead"}) == {}
    denied = await now(gw, prompt)
    assert [answer.answer for answer in denied.answers or []] == [["Deny"]]
    assert (denied.note, denied.answered_by, denied.approved_call) == (
        "use the staging copy instead",
        f"slack:{ALICE}",
        None,
    )
    assert denied.public()["note"] == "use the staging copy instead"
    assert gw.fake.private_notices() == ["Your answer was recorded: Deny"]
    assert buttons(gw.fake.message(message)) == []


async def test_deny_with_a_blank_reason_stays_open_with_the_problem_shown(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    view = await open_modal(gw, message, DENY_WITH_REASON)
    answer = await submit(gw, view, {"Reason": "   "})
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["note"]
    assert (await now(gw, prompt)).pending


async def test_typed_reply_that_is_not_an_approve_word_denies_with_its_words_as_the_note(
    gw: SlackGateway,
) -> None:
    prompt, message = await ask(gw, DROP)
    assert await gw.deliver(gw.reply(message["thread_ts"], "not on a Friday")) == 200
    await handled(gw)
    denied = await now(gw, prompt)
    assert ([answer.answer for answer in denied.answers or []], denied.note) == (
        [["Deny"]],
        "not on a Friday",
    )


# Approve with edits --------------------------------------------------------------------------------------


async def test_edit_modal_has_a_typed_input_per_argument_prefilled(gw: SlackGateway) -> None:
    _, message = await ask(gw, DEPLOY)
    view = await open_modal(gw, message, EDIT_AND_APPROVE)
    shown = inputs(view)
    assert {label: element["type"] for label, element in shown.items()} == {
        "service": "plain_text_input",
        "replicas": "number_input",
        "canary": "static_select",
        "regions": "plain_text_input",
    }
    assert shown["service"]["initial_value"] == "web"
    assert (shown["replicas"]["initial_value"], shown["replicas"]["is_decimal_allowed"]) == ("2", False)
    assert shown["canary"]["initial_option"]["value"] == "true"
    assert json.loads(shown["regions"]["initial_value"]) == ["eu"]
    [service] = [block for block in view["blocks"] if block.get("label", {}).get("text") == "service"]
    assert service["hint"]["text"] == "the service to deploy"


async def test_edit_modal_approves_the_call_as_edited_with_its_values_typed(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_modal(gw, message, EDIT_AND_APPROVE)
    fill: dict[str, list[str] | str] = {"replicas": "3", "canary": ["false"], "regions": '["eu", "us"]'}
    assert await submit(gw, view, fill) == {}

    approved = await now(gw, prompt)
    assert [answer.answer for answer in approved.answers or []] == [["Approve"]]
    edited = {"service": "web", "replicas": 3, "canary": False, "regions": ["eu", "us"]}
    assert approved.approved_call == ToolCall(name="deploy", arguments=edited)
    assert type(approved.approved_call.arguments["replicas"]) is int
    assert approved.tool_call == CALL  # what was asked stays as asked
    assert gw.fake.private_notices() == ["Your answer was recorded: Approve"]


async def test_edit_modal_left_as_it_is_approves_the_call_as_asked(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_modal(gw, message, EDIT_AND_APPROVE)
    assert await submit(gw, view, {}) == {}
    assert (await now(gw, prompt)).approved_call == CALL


async def test_argument_that_is_not_json_is_shown_under_its_input_and_nothing_is_sent(
    gw: SlackGateway,
) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_modal(gw, message, EDIT_AND_APPROVE)
    answer = await submit(gw, view, {"regions": "[eu, us]"})
    assert answer["response_action"] == "errors"
    assert list(answer["errors"]) == ["a3"]
    assert answer["errors"]["a3"].startswith("Not valid JSON (Expecting value)")
    assert (await now(gw, prompt)).pending
    assert gw.fake.private_notices() == []


async def test_edit_the_tools_schema_refuses_is_shown_under_its_input_and_the_prompt_stays_pending(
    gw: SlackGateway,
) -> None:
    prompt, message = await ask(gw, DEPLOY)
    view = await open_modal(gw, message, EDIT_AND_APPROVE)
    answer = await submit(gw, view, {"replicas": "12"})
    assert answer == {"response_action": "errors", "errors": {"a1": "12 is greater than the maximum of 10."}}
    assert (await now(gw, prompt)).pending
    assert gw.fake.private_notices() == []

    assert await submit(gw, view, {"replicas": "4"}) == {}
    assert (await now(gw, prompt)).approved_call == CALL.model_copy(
        update={"arguments": {**CALL.arguments, "replicas": 4}}
    )


async def test_edit_of_a_call_not_raised_editable_is_refused_by_the_core(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    assert EDIT_AND_APPROVE not in buttons(message)
    forged = edit_view(await now(gw, prompt))  # a modal the gateway never opened for this prompt
    answer = await submit(gw, forged, {"database": "production"})
    assert answer["response_action"] == "errors"
    assert "was not raised as editable" in answer["errors"]["a0"]
    assert (await now(gw, prompt)).pending


async def test_typed_edit_approves_the_call_as_edited(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DEPLOY)
    assert await gw.deliver(gw.reply(message["thread_ts"], "edit replicas: 5")) == 200
    await handled(gw)
    approved = await now(gw, prompt)
    assert approved.approved_call is not None and approved.approved_call.arguments["replicas"] == 5


# Who may decide ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "fill"),
    [
        pytest.param(DENY_WITH_REASON, {"Reason": "no"}, id="deny-with-reason"),
        pytest.param(EDIT_AND_APPROVE, {"replicas": "9"}, id="edit-and-approve"),
    ],
)
async def test_modal_submitted_by_someone_not_allowed_is_refused_and_the_prompt_stays_pending(
    gw: SlackGateway, label: str, fill: dict[str, list[str] | str]
) -> None:
    await gw.approvers(f"slack:{BOB}")
    prompt, message = await ask(gw, DEPLOY)
    view = await open_modal(
        gw, message, label, user=EVE
    )  # a real Slack user, signed by Slack: not an approver

    answer = await submit(gw, view, fill, user=EVE)
    assert answer["response_action"] == "update"
    assert answer["view"]["blocks"][0]["text"]["text"] == notices.NOT_ALLOWED
    still = await now(gw, prompt)
    assert (still.prompt_state, still.note, still.votes) == (PromptState.PENDING, None, [])

    assert await submit(gw, view, fill, user=BOB) == {}
    assert (await now(gw, prompt)).answered_by == f"slack:{BOB}"


# Several approvers ---------------------------------------------------------------------------------------


async def test_two_approvers_each_vote_shows_in_the_thread_until_enough_approve(gw: SlackGateway) -> None:
    await gw.approvers(f"slack:{BOB}")
    prompt, message = await ask(gw, TWO_PEOPLE)

    await press(gw, message, "Approve", user=ALICE)
    voted = await now(gw, prompt)
    assert voted.pending and [vote.by for vote in voted.votes] == [f"slack:{ALICE}"]
    votes = gw.fake.posted(message["thread_ts"])[-1]
    assert votes["blocks"] == [
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Approved 1 of 2: <@{ALICE}>"}]}
    ]
    assert gw.fake.private_notices() == [notices.voted(voted)]
    assert buttons(gw.fake.message(message))  # still open for the second approver

    await press(gw, message, "Approve", user=ALICE)
    assert gw.fake.private_notices()[-1] == notices.ALREADY_VOTED
    assert (await now(gw, prompt)).pending

    await press(gw, message, "Approve", user=BOB)
    approved = await now(gw, prompt)
    assert approved.prompt_state is PromptState.ANSWERED
    assert [vote.by for vote in approved.votes] == [f"slack:{ALICE}", f"slack:{BOB}"]
    assert buttons(gw.fake.message(message)) == []
    texts = [posted["text"] for posted in gw.fake.posted(message["thread_ts"])]
    assert texts[-1] == "✓ Answered: Approve"
    assert sum(text.startswith("Approved 1 of 2") for text in texts) == 1
