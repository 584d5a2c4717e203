"""Native prompt controls on Discord: a person presses what the bot posted (discord.py against the fake
Discord, the core on Redis) and the agent receives structured answers; a refused press changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from channels.discord.choices import NOT_ON_A_FORM
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    ToolCall,
)
from gateway.delivery.lease import Lease
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import discord_support
from tests.channels.discord_support import (
    ALICE,
    BOB,
    CHANNEL_ID,
    DEPLOY_TARGET_TEXT,
    GUILD_ID,
    agent_feed,
    deploy_question,
    discord_gateway,
    discord_settings,
    start_run,
)
from tests.fakes.discord import FakeDiscord, Interaction
from tests.support.platforms import build_channel

fake = discord_support.fake
runtime = discord_support.runtime
runtime_on_redis = discord_support.runtime_on_redis


def question(text: str, labels: list[str], *, multi: bool = False, header: str | None = None) -> Question:
    options = [{"label": label} for label in labels]
    return Question.model_validate(
        {"question": text, "header": header, "multiSelect": multi, "options": options}
    )


DROP_USERS = ToolCall(name="db__drop", arguments={"table": "users", "cascade": True})
APPROVAL = PromptRequest(
    kind=PromptKind.APPROVAL, questions=[Question(question="Allow db__drop to run?")], tool_call=DROP_USERS
)
SECTIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[question("Which sections?", ["KPI cards", "Chart", "Table"], multi=True)],
)
FREE_TEXT = PromptRequest(
    kind=PromptKind.TEXT, questions=[Question(question="What should the release be called?")]
)
MANY_REGIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[question("Which region?", [f"region-{index:02d}" for index in range(1, 26)])],
)
DASHBOARD = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        question("Where should the data come from?", ["CSV import", "Database"], header="Source"),
        question("Which sections?", ["KPI cards", "Chart", "Table"], multi=True, header="Sections"),
        Question(question="Any preference for visual style?", header="Style"),
    ],
)


async def ask(fake: FakeDiscord, runtime: Runtime, request: PromptRequest) -> tuple[Prompt, dict[str, Any]]:
    """Raise ``request`` in a run Alice started; the prompt, and the message the bot posted for it."""
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, request.model_copy(deep=True))
    return prompt, fake.posted(CHANNEL_ID)[-1]


async def press(fake: FakeDiscord, message: dict[str, Any], label: str, user: int = ALICE) -> Interaction:
    return await fake.answered(await fake.press(message, label, user_id=user, guild_id=GUILD_ID))


async def fill(fake: FakeDiscord, opened: Interaction, answers: dict[str, str | list[str]]) -> Interaction:
    await fake.answered(opened)
    return await fake.answered(await fake.submit_form(opened, answers))


async def answers_given(runtime: Runtime, prompt: Prompt) -> list[list[str]]:
    done = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    assert done.prompt_state is PromptState.ANSWERED, done
    return [answer.answer for answer in done.answers or []]


async def still_pending(runtime: Runtime, prompt: Prompt) -> bool:
    return (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING


# Each kind and variant, pressed as a person would ---------------------------------------------------


async def test_approval_shows_the_real_tool_call_and_approve_resolves_it(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, APPROVAL)

    assert message["content"] == (
        f"Allow db__drop to run?\n  1. Approve\n  2. Deny\n\n-# {notices.approval_hint(editable=False)}"
    )
    [call] = message["embeds"]
    assert call["title"] == "db__drop"
    assert '"table": "users"' in call["description"] and '"cascade": true' in call["description"]
    assert [c["label"] for c in fake.controls(message)] == [
        "Approve",
        "Deny",
        notices.APPROVE_FOR_SESSION,
        "Deny with reason…",
        "Claim",
    ]
    pressed = await press(fake, message, "Approve")

    assert await answers_given(runtime, prompt) == [["Approve"]]
    assert pressed.private and pressed.notice == "Your answer was recorded: Approve"


async def test_deny_button_denies(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, APPROVAL)

    await press(fake, message, "Deny")

    assert await answers_given(runtime, prompt) == [["Deny"]]


async def test_single_select_has_a_button_per_option_and_one_press_picks_it(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, deploy_question())

    assert message["content"] == DEPLOY_TARGET_TEXT  # the numbered text stays, for typed replies
    assert [c["label"] for c in fake.controls(message)] == ["staging", "production", "Other…", "Claim"]
    await press(fake, message, "production")

    assert await answers_given(runtime, prompt) == [["production"]]


async def test_other_on_an_option_list_collects_free_text_verbatim(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, deploy_question())

    opened = await press(fake, message, "Other…")
    submitted = await fill(fake, opened, {"What's the deployment target?": "canary first, then prod"})

    assert await answers_given(runtime, prompt) == [["canary first, then prod"]]
    assert submitted.private and submitted.notice == "Your answer was recorded: canary first, then prod"


async def test_a_long_option_list_is_a_select_menu(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, MANY_REGIONS)

    [menu, other, claim] = fake.controls(message)
    assert claim["label"] == "Claim"
    assert len(menu["options"]) == 25 and (menu["min_values"], menu["max_values"]) == (1, 1)
    assert other["label"] == "Other…"
    await fake.answered(await fake.choose(message, ["region-17"], user_id=ALICE, guild_id=GUILD_ID))

    assert await answers_given(runtime, prompt) == [["region-17"]]


async def test_multi_select_menu_takes_several_labels_in_option_order(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, SECTIONS)

    menu = fake.controls(message)[0]
    assert (menu["min_values"], menu["max_values"]) == (0, 3)
    await fake.answered(await fake.choose(message, ["Table", "KPI cards"], user_id=ALICE, guild_id=GUILD_ID))

    assert await answers_given(runtime, prompt) == [["KPI cards", "Table"]]


async def test_multi_select_none_of_these_answers_with_no_labels(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, SECTIONS)

    pressed = await press(fake, message, "None of these")

    assert await answers_given(runtime, prompt) == [[]]
    assert pressed.notice == "Your answer was recorded: (no selection)"


async def test_free_text_prompt_opens_a_text_form(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, FREE_TEXT)

    opened = await press(fake, message, "Answer…")
    await fill(fake, opened, {"What should the release be called?": "Aurora\nwith a second line"})

    assert await answers_given(runtime, prompt) == [["Aurora\nwith a second line"]]


async def test_several_questions_are_answered_at_once_by_one_form(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DASHBOARD)

    assert [c["label"] for c in fake.controls(message)] == ["Answer…", "Claim"]
    opened = await press(fake, message, "Answer…")
    assert [field["label"] for field in opened.form["components"]] == [  # type: ignore[index]
        "Source",
        "Sections",
        "Style",
        "Other: Source",
        "Other: Sections",
    ]
    submitted = await fill(
        fake, opened, {"Source": "CSV import", "Sections": ["KPI cards", "Table"], "Style": "dark theme"}
    )

    assert await answers_given(runtime, prompt) == [["CSV import"], ["KPI cards", "Table"], ["dark theme"]]
    assert submitted.notice == "Your answer was recorded: CSV import · KPI cards, Table · dark theme"
    received = await runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.question_id for a in received.answers or []] == ["q1", "q2", "q3"]


async def test_other_text_on_the_form_answers_its_question_verbatim(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DASHBOARD)

    opened = await press(fake, message, "Answer…")
    await fill(
        fake,
        opened,
        {
            "Other: Source": "a Google sheet",
            "Sections": ["Chart"],
            "Other: Sections": "a map",
            "Style": "any",
        },
    )

    assert await answers_given(runtime, prompt) == [["a Google sheet"], ["Chart", "a map"], ["any"]]


async def test_a_form_leaving_a_single_select_question_unanswered_is_refused(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DASHBOARD)

    opened = await press(fake, message, "Answer…")
    submitted = await fill(fake, opened, {"Sections": ["Chart"], "Style": "any"})

    assert submitted.private and submitted.notice == NOT_ON_A_FORM
    assert await still_pending(runtime, prompt)


async def test_a_typed_number_still_answers_a_prompt_that_has_controls(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, deploy_question())

    await fake.person_says(CHANNEL_ID, ALICE, "2", guild_id=GUILD_ID)

    assert await answers_given(runtime, prompt) == [["production"]]
    await fake.wait_for(lambda: fake.edits)
    assert fake.message(message["id"])["components"] == []


async def test_a_prompt_too_long_for_one_message_carries_its_controls_on_the_last_part(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    long_options = [{"label": f"option {index}", "description": "d" * 250} for index in range(12)]
    request = PromptRequest(
        kind=PromptKind.ASK_USER_QUESTION,
        questions=[Question.model_validate({"question": "Which one?", "options": long_options})],
    )
    prompt, last = await ask(fake, runtime, request)
    first = fake.posted(CHANNEL_ID)[0]

    assert first["components"] == [] and last["content"].endswith("(2/2)")
    await press(fake, last, "option 7")

    assert await answers_given(runtime, prompt) == [["option 7"]]
    await fake.wait_for(lambda: fake.edits)
    edited = fake.message(last["id"])
    assert edited["components"] == []
    assert edited["content"].endswith(f"\n\n✓ Answered: option 7\n-# Answered by <@{ALICE}>")
    assert len(edited["content"]) <= 2000


# Settled prompts lose their controls ---------------------------------------------------------------


async def test_an_answered_prompt_shows_its_outcome_and_has_no_controls_left(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, APPROVAL)

    await press(fake, message, "Approve")
    await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    await fake.wait_for(lambda: fake.edits)

    now = fake.message(message["id"])
    assert now["components"] == []
    by = f"-# Approved by <@{ALICE}>"  # small print; Discord shows the mention as Alice's name
    assert now["content"] == f"Allow db__drop to run?\n  1. Approve\n  2. Deny\n\n✓ Answered: Approve\n{by}"
    assert now["embeds"] == message["embeds"]  # the record of what was approved stays
    audit = fake.posted(CHANNEL_ID)[-1]
    assert audit["content"] == f"✓ Answered: Approve\n{by}"
    assert str(audit["message_reference"]["message_id"]) == message["id"]


async def test_an_answer_given_through_the_api_names_that_identity_on_the_card_and_the_audit_line(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    await runtime.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(approvers=["web:ops_lead"]))
    )
    prompt, message = await ask(fake, runtime, APPROVAL)

    await runtime.gateway.answer(prompt.prompt_id, "web:ops_lead", text="no")
    await fake.wait_for(lambda: fake.edits)

    by = "-# Denied by web:ops\\_lead"  # markdown escaped, so it reads as written
    assert fake.message(message["id"])["content"].endswith(f"\n\n✓ Answered: Deny\n{by}")
    assert fake.posted(CHANNEL_ID)[-1]["content"] == f"✓ Answered: Deny\n{by}"


async def test_a_cancelled_prompt_shows_why_and_has_no_controls_left(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, deploy_question())

    await runtime.gateway.end_run(prompt.run_id)
    await fake.wait_for(lambda: fake.edits)

    now = fake.message(message["id"])
    assert now["components"] == []
    assert now["content"] == f"{DEPLOY_TARGET_TEXT}\n\n✗ Cancelled: the run ended"


# Presses that are refused --------------------------------------------------------------------------


async def test_a_press_by_someone_not_allowed_is_refused_privately_and_the_prompt_stays_open(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, deploy_question())

    refused = await press(fake, message, "staging", user=BOB)

    assert refused.private and refused.notice == notices.NOT_ALLOWED
    assert await still_pending(runtime, prompt)
    assert fake.calls_to("POST", "/users/@me/channels") == []  # the press's own answer told them, no DM
    assert fake.edits == []
    await press(fake, message, "production", user=ALICE)
    assert await answers_given(runtime, prompt) == [["production"]]


async def test_a_press_on_a_superseded_prompt_is_refused_privately_and_changes_nothing(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    old, old_message = await ask(fake, runtime, deploy_question())  # as the person's screen still shows it
    new = await runtime.gateway.raise_prompt(old.run_id, APPROVAL.model_copy(deep=True))

    refused = await press(fake, old_message, "staging")

    assert refused.private
    assert (
        refused.notice
        == "This prompt was cancelled (a newer prompt in this thread replaced it), so nothing was changed."
    )
    assert (await runtime.gateway.get_prompt(old.prompt_id)).prompt_state is PromptState.CANCELLED
    assert await still_pending(runtime, new)
    await fake.wait_for(lambda: fake.edits)
    assert fake.message(old_message["id"])["components"] == []  # retired when it was superseded


async def test_opening_a_form_on_a_settled_prompt_is_refused_privately(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    _, message = await ask(fake, runtime, deploy_question())
    await press(fake, message, "staging")

    refused = await press(fake, message, "Other…")

    assert refused.form is None
    assert (
        refused.private
        and refused.notice == "This prompt was already answered (staging), so nothing was changed."
    )


def _retarget(custom_id: str, field: int, value: str) -> str:
    parts = custom_id.split(":")
    parts[field] = value
    return ":".join(parts)


@pytest.mark.parametrize(
    ("label", "tamper", "notice"),
    [
        pytest.param(
            "production", lambda c: _retarget(c, 4, "7"), notices.MISMATCH, id="option-out-of-range"
        ),
        pytest.param(
            "production", lambda c: _retarget(c, 3, "3"), notices.MISMATCH, id="question-out-of-range"
        ),
        pytest.param("production", lambda c: _retarget(c, 4, "x"), notices.MISMATCH, id="not-an-index"),
        pytest.param("production", lambda c: c + ":0", notices.MISMATCH, id="extra-field"),
        pytest.param(
            "staging",
            lambda c: f"tg:none:{c.split(':')[2]}:0",
            notices.MISMATCH,
            id="none-on-a-single-select",
        ),
        pytest.param(
            "staging", lambda c: f"tg:answers:{c.split(':')[2]}", notices.MISMATCH, id="form-id-on-a-button"
        ),
        pytest.param(
            "staging",
            lambda c: _retarget(c, 2, "prm_" + "0" * 26),
            notices.UNKNOWN_PROMPT,
            id="unknown-prompt-id",
        ),
        pytest.param("staging", lambda c: "tg:pick:" + "A" * 90, notices.MISMATCH, id="garbage"),
    ],
)
async def test_tampered_control_data_is_refused_privately_and_changes_nothing(
    fake: FakeDiscord, runtime_on_redis: Runtime, label: str, tamper: Any, notice: str
) -> None:
    runtime = runtime_on_redis
    prompt, message = await ask(fake, runtime, deploy_question())
    genuine = fake.button(message, label)["custom_id"]
    log_before = await runtime.store.thread_items(prompt.thread_id, None, 100)

    refused = await fake.answered(
        await fake.press(message, label, user_id=ALICE, guild_id=GUILD_ID, custom_id=tamper(genuine))
    )

    assert refused.private and refused.notice == notice
    assert await still_pending(runtime, prompt)
    assert (
        await runtime.store.thread_items(prompt.thread_id, None, 100) == log_before
    )  # never reached the core
    await press(fake, message, label)
    assert await answers_given(runtime, prompt) == [[label]]


async def test_tampered_select_values_are_refused_and_change_nothing(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    prompt, message = await ask(fake, runtime_on_redis, SECTIONS)
    [menu, *_] = fake.controls(message)

    forged = {"custom_id": menu["custom_id"], "component_type": 3, "values": ["0", "9"]}
    refused = await fake.answered(await fake.interact(3, forged, message, user_id=ALICE, guild_id=GUILD_ID))

    assert refused.private and refused.notice == notices.MISMATCH
    assert await still_pending(runtime_on_redis, prompt)


# Processes, restarts, deadlines and duplicates -----------------------------------------------------


@contextlib.asynccontextmanager
async def overlapping_process(fake: FakeDiscord, redis_url: str) -> AsyncIterator[Runtime]:
    """A second gateway process that holds its own gateway session too, as during a lease handover
    (the old holder not yet gone when the new one connects)."""
    settings = discord_settings(fake, redis_url)
    runtime = Runtime.build(settings, channels=[build_channel("discord", settings)])
    runtime.gateway.sweep_interval = 0.2
    runtime.lease = lambda name: Lease(  # type: ignore[method-assign]
        runtime.connection.client, f"{name}:overlap", ttl_ms=settings.threadgate_lease_ttl_ms
    )
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.stop()


async def test_two_presses_racing_on_two_gateway_processes_give_exactly_one_answer(
    fake: FakeDiscord, real_redis: str
) -> None:
    async with discord_gateway(fake, real_redis) as first, overlapping_process(fake, real_redis) as second:
        await fake.wait_for(lambda: len(fake.open_sessions()) == 2)
        ops = await first.store.get_agent("ops") or AgentDefinition(name="ops")
        approvers = [*ops.human_input.approvers, f"discord:{BOB}"]
        human_input = ops.human_input.model_copy(update={"approvers": approvers})
        await first.store.put_agent(ops.model_copy(update={"human_input": human_input}))
        prompt, message = await ask(fake, first, deploy_question())
        one, other = fake.open_sessions()

        presses = await asyncio.gather(
            fake.press(message, "staging", user_id=ALICE, guild_id=GUILD_ID, session=one),
            fake.press(message, "production", user_id=BOB, guild_id=GUILD_ID, session=other),
        )
        alice, bob = [await fake.answered(pressed) for pressed in presses]

        given = await answers_given(second, prompt)
        assert given in ([["staging"]], [["production"]])
        winner, loser = (alice, bob) if given == [["staging"]] else (bob, alice)
        assert winner.notice == f"Your answer was recorded: {given[0][0]}"
        assert (
            loser.private
            and loser.notice == f"This prompt was already answered ({given[0][0]}), so nothing was changed."
        )
        await fake.wait_for(lambda: fake.edits)  # after the audit item
        audits = [m for m in fake.posted(CHANNEL_ID) if m["content"].startswith("✓")]
        by = ALICE if given == [["staging"]] else BOB
        assert [m["content"] for m in audits] == [f"✓ Answered: {given[0][0]}\n-# Answered by <@{by}>"]


async def test_a_press_on_a_message_posted_before_a_restart_still_answers(
    fake: FakeDiscord, real_redis: str
) -> None:
    async with discord_gateway(fake, real_redis) as before:
        prompt, message = await ask(fake, before, SECTIONS)

    async with discord_gateway(fake, real_redis) as after:
        await fake.wait_for(lambda: len(fake.open_sessions()) == 1)
        await fake.answered(await fake.choose(message, ["Chart"], user_id=ALICE, guild_id=GUILD_ID))

        assert await answers_given(after, prompt) == [["Chart"]]


async def test_a_press_the_core_is_slow_to_settle_is_acknowledged_first_then_answered(
    fake: FakeDiscord, real_redis: str
) -> None:
    async with discord_gateway(fake, real_redis, ack_deadline=0.0) as runtime:
        prompt, message = await ask(fake, runtime, deploy_question())

        pressed = await press(fake, message, "staging")

        assert [r["type"] for r in pressed.responses] == [5]  # deferred, ephemeral "thinking"
        assert pressed.private and pressed.notice == "Your answer was recorded: staging"
        assert await answers_given(runtime, prompt) == [["staging"]]


async def test_a_press_replayed_on_resume_resolves_nothing_twice(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    prompt, message = await ask(fake, runtime_on_redis, deploy_question())
    await press(fake, message, "production")
    first = await runtime_on_redis.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    [session] = fake.sessions

    await fake.wait_for(lambda: fake.edits)
    await fake.ask_to_reconnect(replay_from=0)  # Discord replays the INTERACTION_CREATE as well
    await fake.wait_for(lambda: session.resumes == 1 and session.open)
    # The replayed press is handled again: the core calls it a duplicate, Discord refuses a second answer.
    await fake.wait_for(lambda: len(fake.calls_to("POST", "/callback")) == 2)

    again = await runtime_on_redis.gateway.get_prompt(prompt.prompt_id)
    assert again.settled_at == first.settled_at
    assert [a.answer for a in again.answers or []] == [["production"]]
    # Nobody was waiting: the answer is re-driven once as the agent's next message, and nothing else.
    assert [(m["tag"], m["text"]) for m in await agent_feed(runtime_on_redis)] == [
        ("parked_answer", "production")
    ]
    assert len([m for m in fake.posted(CHANNEL_ID) if m["content"].startswith("✓")]) == 1


async def test_a_press_in_a_dm_answers_the_prompt_of_that_dm(fake: FakeDiscord, runtime: Runtime) -> None:
    dm_channel = 666_666_666_666_666_666
    run_id = await start_run(runtime.gateway, thread_id=f"discord:{dm_channel}")
    prompt = await runtime.gateway.raise_prompt(run_id, APPROVAL.model_copy(deep=True))
    [message] = fake.posted(dm_channel)

    pressed = await fake.answered(await fake.press(message, "Approve", user_id=ALICE))  # a DM: no guild

    assert pressed.notice == "Your answer was recorded: Approve"
    assert await answers_given(runtime, prompt) == [["Approve"]]
