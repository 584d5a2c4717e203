"""Who may answer, when a person is behind two identities, on every platform through its real SDK path: an
approver list naming ``person:dana`` or ``group:sre`` admits dana's identity on the platform and nobody
else; with two approvals dana's other identity is the same vote ("You already voted as …"); and a starter
who does not count does not count from any of their identities."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    Person,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    RunRequest,
    ToolCall,
)
from gateway.rules import notices
from tests.channels.chats import PLATFORMS, Chat, chat
from tests.fakes import teams
from tests.support.conditions import eventually

# Who lists dana: by person, or by a directory group she is in.
APPROVER_KINDS = {"person": "person:dana", "group": "group:sre"}
NOT_TAKEN = notices.NOT_ALLOWED.split(":")[0]  # "Your answer was not taken"
# Each platform's Approve pressed, and "approve" typed where the platform tells the typist why it was not
# taken (Teams answers a card's press privately; a typed refusal there is told to nobody).
WAYS = [pytest.param(platform, True, id=f"{platform}-pressed") for platform in PLATFORMS] + [
    pytest.param(platform, False, id=f"{platform}-typed") for platform in PLATFORMS if platform != "teams"
]


def elsewhere(room: Chat, who: str) -> str:
    """``who``'s identity on another platform than the room's."""
    return f"slack:U0{who.upper()}DESK" if room.platform == "teams" else teams.identity(f"{who}-desk")


async def _directory(room: Chat, *approvers: str) -> None:
    """Dana (sre) and sam each with an identity here and one elsewhere; erin here; mallory nobody's."""
    people = room.runtime.store.people
    for who, groups in (("dana", ["sre"]), ("sam", [])):
        await people.put(
            Person(person=who, identities=[room.identity(who), elsewhere(room, who)], groups=groups)
        )
    await people.put(Person(person="erin", identities=[room.identity("erin")]))
    await room.runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=list(approvers)))
    )


async def _approval(room: Chat, started_by: str | None = None, **rule: object) -> Prompt:
    """An agent's run in the shared thread asks to approve a call."""
    gateway = room.runtime.gateway
    run = await gateway.create_run(RunRequest(thread_id=room.thread_id, agent="ops", started_by=started_by))
    request = PromptRequest.model_validate(
        {
            "kind": PromptKind.APPROVAL,
            "questions": [Question(question="Allow db__drop to run?")],
            "tool_call": ToolCall(name="db__drop", arguments={"table": "users"}),
            **rule,
        }
    )
    return await gateway.raise_prompt(run.run_id, request)


async def _prompt_when(room: Chat, prompt_id: str, done: Callable[[Prompt], bool]) -> Prompt:
    """The prompt, once ``done`` holds of it."""

    async def holds() -> bool:
        return done(await room.runtime.gateway.get_prompt(prompt_id))

    await eventually(holds, f"{prompt_id} as expected", timeout=5)
    return await room.runtime.gateway.get_prompt(prompt_id)


@pytest.mark.parametrize("kind", sorted(APPROVER_KINDS))
@pytest.mark.parametrize(("platform", "pressed"), WAYS)
async def test_a_listed_person_answers_from_their_platform_identity_and_a_stranger_is_refused(
    platform: str, pressed: bool, kind: str, real_redis: str
) -> None:
    async with chat(platform, real_redis) as room:
        await _directory(room, APPROVER_KINDS[kind])
        prompt = await _approval(room)
        await room.approve("mallory", prompt.prompt_id, pressed=pressed)
        refused = await room.told(NOT_TAKEN)
        still = await room.runtime.gateway.get_prompt(prompt.prompt_id)
        await room.approve("dana", prompt.prompt_id, pressed=pressed)
        answered = await _prompt_when(room, prompt.prompt_id, lambda seen: not seen.pending)
    assert refused and still.prompt_state is PromptState.PENDING
    assert answered.prompt_state is PromptState.ANSWERED
    assert (answered.answered_by, answered.person) == (room.identity("dana"), "dana")


@pytest.mark.parametrize("kind", sorted(APPROVER_KINDS))
@pytest.mark.parametrize(("platform", "pressed"), WAYS)
async def test_with_two_approvals_the_persons_other_identity_is_the_same_vote(
    platform: str, pressed: bool, kind: str, real_redis: str
) -> None:
    async with chat(platform, real_redis) as room:
        await _directory(room, APPROVER_KINDS[kind], room.identity("erin"))
        prompt = await _approval(room, approvals=2)
        gateway = room.runtime.gateway
        await gateway.answer(prompt.prompt_id, elsewhere(room, "dana"), text="approve")  # over REST, say
        await room.approve("dana", prompt.prompt_id, pressed=pressed)
        told = await room.told("You already voted as")
        await room.approve("erin", prompt.prompt_id, pressed=pressed)
        answered = await _prompt_when(room, prompt.prompt_id, lambda seen: not seen.pending)
    assert notices.ALREADY_VOTED_AS.format(identity=elsewhere(room, "dana")) in told
    assert answered.prompt_state is PromptState.ANSWERED
    votes = [(vote.by, vote.person) for vote in answered.votes]
    assert votes == [(elsewhere(room, "dana"), "dana"), (room.identity("erin"), "erin")]


@pytest.mark.parametrize(("platform", "pressed"), WAYS)
async def test_a_starter_who_does_not_count_does_not_count_from_their_other_identity(
    platform: str, pressed: bool, real_redis: str
) -> None:
    async with chat(platform, real_redis) as room:
        await _directory(room, room.identity("erin"))
        prompt = await _approval(room, started_by=elsewhere(room, "sam"), approvals=2, starter_counts=False)
        await room.approve("sam", prompt.prompt_id, pressed=pressed)
        voted = await _prompt_when(room, prompt.prompt_id, lambda seen: bool(seen.votes))
        await room.approve("erin", prompt.prompt_id, pressed=pressed)
        after = await _prompt_when(room, prompt.prompt_id, lambda seen: len(seen.votes) == 2)
    assert [(vote.by, vote.person, vote.counted) for vote in voted.votes] == [
        (room.identity("sam"), "sam", False)
    ]
    assert after.prompt_state is PromptState.PENDING, (
        "the starter's vote from their platform identity did not count"
    )
