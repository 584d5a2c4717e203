"""The whole decision on Discord (contract §9), end to end: discord.py against the fake Discord, the core on
Redis.

An approval's message offers Deny with reason… and, where the call may be edited, Edit and approve…: each
opens a form (a modal) whose submission goes to the core's answer step like any press, the core deciding
what it counts for (who may answer, the tool's schema) and its refusals shown privately. An approval that
needs several approvers shows each vote short of enough as a line replying to it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from channels.discord.approvals import EDIT_TITLE, REASON_LABEL, REASON_TITLE, REST_LABEL
from channels.discord.control_ids import Action, ControlId
from channels.discord.controls import DENY_WITH_REASON, EDIT_AND_APPROVE
from gateway.base.models import AgentDefinition, HumanInput, Prompt, PromptRequest, PromptState, ToolCall
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import discord_support
from tests.channels.discord_support import ALICE, BOB, CHANNEL_ID, GUILD_ID, eventually, start_run
from tests.fakes.discord import FakeDiscord, Interaction
from tests.support.session_grants import asked_again, grants_of

fake = discord_support.fake
runtime = discord_support.runtime_on_redis

EVE = 555_555_555_555_555_555  # a real Discord user in the server, neither the run's starter nor an approver

DROP: dict[str, Any] = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"database": "staging", "table": "users"}},
}
CALL = ToolCall(name="deploy", arguments={"service": "web", "replicas": 2, "canary": True, "regions": ["eu"]})
SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "description": "the service to deploy"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        "canary": {"type": "boolean"},
        "regions": {"type": "array", "items": {"type": "string"}},
    },
}
DEPLOY: dict[str, Any] = {
    "kind": "approval",
    "questions": [{"question": "Allow deploy to run?"}],
    "tool_call": CALL.model_dump(mode="json"),
    "editable": True,
    "input_schema": SCHEMA,
}
WIDE_CALL = ToolCall(name="provision", arguments={f"a{index}": index for index in range(1, 8)})
WIDE: dict[str, Any] = {
    "kind": "approval",
    "questions": [{"question": "Allow provision to run?"}],
    "tool_call": WIDE_CALL.model_dump(mode="json"),
    "editable": True,
}


async def ask(fake: FakeDiscord, runtime: Runtime, payload: dict[str, Any]) -> tuple[Prompt, dict[str, Any]]:
    """Raise ``payload`` in a run Alice started; the prompt, and the message the bot posted for it."""
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, PromptRequest.model_validate(payload))
    return prompt, fake.posted(CHANNEL_ID)[-1]


async def press(fake: FakeDiscord, message: dict[str, Any], label: str, user: int = ALICE) -> Interaction:
    return await fake.answered(await fake.press(message, label, user_id=user, guild_id=GUILD_ID))


async def submit(
    fake: FakeDiscord, opened: Interaction, answers: dict[str, str | list[str]], user: int | None = None
) -> Interaction:
    return await fake.answered(await fake.submit_form(opened, answers, user_id=user))


async def now(runtime: Runtime, prompt: Prompt) -> Prompt:
    return await runtime.gateway.get_prompt(prompt.prompt_id)


async def agents(runtime: Runtime, prompt: Prompt) -> dict[str, Any]:
    """The settled prompt as the agent waiting on it gets it."""
    done = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    assert not done.pending, done
    return done.public()


def labels(message: dict[str, Any]) -> list[str]:
    return [control["label"] for control in FakeDiscord.controls(message)]


def fields(opened: Interaction) -> dict[str, dict[str, Any]]:
    """The opened form's fields by label: each one's label (with its description) and its text input."""
    assert opened.form is not None, opened.responses
    return {field["label"]: field for field in opened.form["components"]}


async def approvers(runtime: Runtime, *users: int) -> None:
    approving = [f"discord:{user}" for user in users]
    await runtime.store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=approving)))


# The card ----------------------------------------------------------------------------------------------


async def test_approval_offers_a_deny_with_reason_and_says_how_a_reply_answers(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    _, message = await ask(fake, runtime, DROP)
    assert labels(message) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        notices.CLAIM,
    ]
    assert message["content"] == (
        f"Allow db__drop to run?\n  1. Approve\n  2. Deny\n\n-# {notices.approval_hint(editable=False)}"
    )
    assert message["embeds"][0]["title"] == "db__drop"


async def test_editable_approval_also_offers_edit_and_approve(fake: FakeDiscord, runtime: Runtime) -> None:
    _, message = await ask(fake, runtime, DEPLOY)
    assert labels(message) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        EDIT_AND_APPROVE,
        notices.CLAIM,
    ]
    assert len(message["components"]) == 2, "five buttons: one action row; Claim on the next"
    assert message["content"].endswith(notices.approval_hint(editable=True))


# Approve for this session -----------------------------------------------------------------------------


async def test_approve_for_this_session_approves_and_grants_the_exact_call_for_the_run(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    await approvers(runtime, BOB)
    prompt, message = await ask(fake, runtime, DROP)
    refused = await press(fake, message, notices.APPROVE_FOR_SESSION, user=EVE)
    assert refused.private and refused.notice == notices.NOT_ALLOWED
    assert await grants_of(runtime, prompt) == []

    pressed = await press(fake, message, notices.APPROVE_FOR_SESSION, user=BOB)
    approved = await agents(runtime, prompt)
    assert (approved["answered_by"], approved["answers"][0]["answer"]) == (f"discord:{BOB}", ["Approve"])
    [grant] = await grants_of(runtime, prompt)
    assert (grant.created_by, grant.prompt_id) == (f"discord:{BOB}", prompt.prompt_id)
    assert pressed.private and grant.grant_id in pressed.notice
    assert await asked_again(runtime, prompt) == grant.by


# Deny with a reason --------------------------------------------------------------------------------------


async def test_deny_with_reason_form_denies_and_the_agent_gets_the_note(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DROP)
    opened = await press(fake, message, DENY_WITH_REASON)
    assert opened.form is not None and opened.form["title"] == REASON_TITLE
    assert list(fields(opened)) == [REASON_LABEL]

    denied = await submit(fake, opened, {REASON_LABEL: "use the staging copy instead"})

    assert denied.private and denied.notice == "Your answer was recorded: Deny"
    shown = await agents(runtime, prompt)
    assert (shown["answers"][0]["answer"], shown["note"]) == (["Deny"], "use the staging copy instead")
    assert (shown["answered_by"], shown["approved_call"]) == (f"discord:{ALICE}", None)
    await eventually(lambda: fake.message(message["id"])["components"] == [])


async def test_a_blank_reason_is_refused_and_the_approval_stays_open(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DROP)
    opened = await press(fake, message, DENY_WITH_REASON)
    refused = await submit(fake, opened, {REASON_LABEL: "   "})
    assert refused.private and refused.notice == notices.EMPTY_TEXT
    assert (await now(runtime, prompt)).pending


# Approve with edits --------------------------------------------------------------------------------------


async def test_edit_form_has_a_field_per_argument_filled_in(fake: FakeDiscord, runtime: Runtime) -> None:
    _, message = await ask(fake, runtime, DEPLOY)
    opened = await press(fake, message, EDIT_AND_APPROVE)
    assert opened.form is not None and opened.form["title"] == EDIT_TITLE
    shown = fields(opened)
    assert {label: field["component"].get("value") for label, field in shown.items()} == {
        "service": "web",
        "replicas": "2",
        "canary": "true",
        "regions": '["eu"]',
    }
    assert shown["service"]["description"] == "the service to deploy"


async def test_edit_form_approves_the_call_as_edited_with_its_values_typed(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DEPLOY)
    opened = await press(fake, message, EDIT_AND_APPROVE)

    approved = await submit(fake, opened, {"replicas": "3", "canary": "false", "regions": '["eu", "us"]'})

    assert approved.private and approved.notice == "Your answer was recorded: Approve"
    shown = await agents(runtime, prompt)
    edited = {"service": "web", "replicas": 3, "canary": False, "regions": ["eu", "us"]}
    assert shown["answers"][0]["answer"] == ["Approve"]
    assert shown["approved_call"] == {"name": "deploy", "arguments": edited}
    assert shown["tool_call"] == CALL.model_dump(mode="json")  # what was asked stays as asked


async def test_an_edit_the_tools_schema_refuses_is_told_privately_and_the_approval_stays_open(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DEPLOY)
    opened = await press(fake, message, EDIT_AND_APPROVE)

    refused = await submit(fake, opened, {"replicas": "12"})

    assert refused.private
    assert refused.notice == notices.edit_not_taken(
        "The edited arguments do not fit the tool: replicas: 12 is greater than the maximum of 10"
    )
    still = await now(runtime, prompt)
    assert (still.prompt_state, still.approved_call) == (PromptState.PENDING, None)
    assert labels(fake.message(message["id"])) == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        DENY_WITH_REASON,
        EDIT_AND_APPROVE,
        notices.CLAIM,
    ]

    await submit(fake, opened, {"replicas": "4"})
    assert (await agents(runtime, prompt))["approved_call"]["arguments"]["replicas"] == 4


async def test_a_call_of_more_than_five_arguments_shows_four_and_the_rest_as_json(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, WIDE)
    opened = await press(fake, message, EDIT_AND_APPROVE)
    shown = fields(opened)
    assert list(shown) == ["a1", "a2", "a3", "a4", REST_LABEL]
    rest = shown[REST_LABEL]["component"]["value"]
    assert json.loads(rest) == {"a5": 5, "a6": 6, "a7": 7}

    refused = await submit(fake, opened, {REST_LABEL: "[5, 6, 7]"})
    assert refused.notice == notices.edit_not_taken(notices.REST_NOT_AN_OBJECT)
    unreadable = await submit(fake, opened, {REST_LABEL: "{a5: 50}"})
    assert unreadable.notice is not None and unreadable.notice.startswith("Not taken: Not valid JSON (")
    assert (await now(runtime, prompt)).pending

    await submit(fake, opened, {"a1": "10", REST_LABEL: '{"a6": 60}'})  # a5 and a7 left out: kept
    edited = {"a1": 10, "a2": 2, "a3": 3, "a4": 4, "a5": 5, "a6": 60, "a7": 7}
    assert (await agents(runtime, prompt))["approved_call"] == {"name": "provision", "arguments": edited}


async def test_an_edit_of_a_call_not_raised_editable_is_refused_by_the_core(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DROP)
    assert EDIT_AND_APPROVE not in labels(message)
    forged = ControlId(Action.EDITED, prompt.prompt_id).encode()  # a form the gateway never opened
    components = [
        {"type": 18, "component": {"type": 4, "custom_id": f"arg:{index}", "value": value}}
        for index, value in enumerate(["production", "users"])
    ]
    data = {"custom_id": forged, "components": components}

    refused = await fake.answered(await fake.interact(5, data, message, user_id=ALICE, guild_id=GUILD_ID))

    assert refused.private and refused.notice is not None
    assert refused.notice.startswith("Not taken: this approval was not raised editable")
    assert (await now(runtime, prompt)).pending


# Who may decide ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "given"),
    [
        pytest.param(DENY_WITH_REASON, {REASON_LABEL: "no"}, id="deny-with-reason"),
        pytest.param(EDIT_AND_APPROVE, {"replicas": "9"}, id="edit-and-approve"),
    ],
)
async def test_a_form_submitted_by_someone_not_allowed_is_refused_and_the_approval_stays_open(
    fake: FakeDiscord, runtime: Runtime, label: str, given: dict[str, str | list[str]]
) -> None:
    await approvers(runtime, BOB)
    prompt, message = await ask(fake, runtime, DEPLOY)
    opened = await press(fake, message, label, user=EVE)

    refused = await submit(fake, opened, given)

    assert refused.private and refused.notice == notices.NOT_ALLOWED
    still = await now(runtime, prompt)
    assert (still.prompt_state, still.note, still.approved_call, still.votes) == (
        PromptState.PENDING,
        None,
        None,
        [],
    )
    await submit(fake, opened, given, user=BOB)
    assert (await agents(runtime, prompt))["answered_by"] == f"discord:{BOB}"


# Several approvers ---------------------------------------------------------------------------------------


async def test_two_approvers_each_vote_shows_as_a_line_until_enough_approve(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    await approvers(runtime, BOB)
    prompt, message = await ask(fake, runtime, {**DROP, "approvals": 2})

    first = await press(fake, message, "Approve", user=ALICE)
    voted = await now(runtime, prompt)
    assert voted.pending and [vote.by for vote in voted.votes] == [f"discord:{ALICE}"]
    assert first.private and first.notice == notices.voted(voted)
    line = await eventually(
        lambda: [m for m in fake.posted(CHANNEL_ID) if m["content"].startswith("Approved")]
    )
    assert line[0]["content"] == f"Approved 1 of 2: <@{ALICE}>"  # Discord shows the mention as a name
    assert str(line[0]["message_reference"]["message_id"]) == message["id"]
    assert line[0]["allowed_mentions"]["parse"] == []  # shown, not pinged
    assert labels(fake.message(message["id"]))  # still open for the second approver

    again = await press(fake, message, "Approve", user=ALICE)
    assert again.notice == notices.ALREADY_VOTED

    await press(fake, message, "Approve", user=BOB)
    approved = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    assert approved.prompt_state is PromptState.ANSWERED
    assert [vote.by for vote in approved.votes] == [f"discord:{ALICE}", f"discord:{BOB}"]
    await eventually(lambda: fake.message(message["id"])["components"] == [])
    assert sum(m["content"].startswith("Approved 1 of 2") for m in fake.posted(CHANNEL_ID)) == 1
