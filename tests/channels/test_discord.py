"""The Discord channel end to end: discord.py against a wire-level fake Discord, the core on Redis."""

from __future__ import annotations

from typing import Any

import pytest

from channels.discord import DiscordChannel
from gateway.base.errors import GatewayError
from gateway.base.ids import parse_thread_id
from gateway.base.models import PromptKind, PromptRequest, PromptState, Question
from gateway.process.runtime import Runtime
from gateway.rules.render import message_item
from tests.channels import discord_support
from tests.channels.discord_support import (
    ALICE,
    BOB,
    CHANNEL_ID,
    DEPLOY_TARGET_TEXT,
    GUILD_ID,
    THREAD,
    agent_feed,
    deploy_question,
    discord_gateway,
    eventually,
    feed_until,
    start_run,
)
from tests.fakes.discord import BOT_ID, Failure, FakeDiscord
from tests.support.new_kinds import FORM, FORM_TEXT, URL, URL_TEXT

fake = discord_support.fake
runtime = discord_support.runtime
runtime_on_redis = discord_support.runtime_on_redis


async def answer(fake: FakeDiscord, runtime: Runtime, prompt_id: str, text: str, author: int = ALICE) -> Any:
    await fake.person_says(CHANNEL_ID, author, text, guild_id=GUILD_ID)
    return await runtime.gateway.wait_prompt(prompt_id, timeout=5)


# The full story ------------------------------------------------------------------------------------


async def test_message_with_no_prompt_open_reaches_the_agent_feed(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    await fake.person_says(CHANNEL_ID, ALICE, "deploy the thing please", guild_id=GUILD_ID)

    feed = await eventually(lambda: agent_feed(runtime))

    assert [(m["thread_id"], m["sender"], m["text"]) for m in feed] == [
        (THREAD, f"discord:{ALICE}", "deploy the thing please")
    ]


async def test_prompt_appears_with_seed_text_and_a_reply_of_2_resolves_it_with_an_audit_reply(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    run_id = await start_run(runtime.gateway)

    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())

    [asked] = fake.posted(CHANNEL_ID)
    assert asked["content"] == DEPLOY_TARGET_TEXT
    settled = await answer(fake, runtime, prompt.prompt_id, "2")
    assert settled.prompt_state is PromptState.ANSWERED
    assert [a.answer for a in settled.answers] == [["production"]]
    assert settled.answered_by == f"discord:{ALICE}"
    await fake.wait_for(lambda: fake.edits)  # the audit item goes out first, then the prompt is edited
    asked_again, audit = fake.posted(CHANNEL_ID)
    assert asked_again["id"] == asked["id"]  # edited in place: the outcome shown, the controls gone
    by = f"-# Answered by <@{ALICE}>"  # a mention Discord shows as the name; messages ping nobody
    assert asked_again["content"] == f"{DEPLOY_TARGET_TEXT}\n\n✓ Answered: production\n{by}"
    assert asked_again["components"] == []
    assert audit["content"] == f"✓ Answered: production\n{by}"
    assert str(audit["message_reference"]["message_id"]) == asked["id"]
    # The reply was taken as the answer, not queued as a message (an answer nobody was waiting for yet
    # is re-driven as a parked answer).
    assert [m["tag"] for m in await agent_feed(runtime)] in ([], ["parked_answer"])


async def test_a_reply_in_a_thread_channel_or_dm_answers_the_prompt_of_that_thread(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    dm_channel = 555_555_555_555_555_555
    run_id = await start_run(runtime.gateway, thread_id=f"discord:{dm_channel}")
    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())

    await fake.person_says(dm_channel, ALICE, "staging")  # a DM: no guild_id
    settled = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)

    assert [a.answer for a in settled.answers] == [["staging"]]
    assert fake.posted(dm_channel)[0]["content"] == DEPLOY_TARGET_TEXT


APPROVAL = PromptRequest(kind=PromptKind.APPROVAL, questions=[Question(question="Allow db__drop to run?")])
SECTIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question.model_validate(
            {
                "question": "Which sections?",
                "multiSelect": True,
                "options": [{"label": "KPI cards"}, {"label": "Chart"}, {"label": "Table"}],
            }
        )
    ],
)


@pytest.mark.parametrize(
    ("request_", "reply", "expected"),
    [
        pytest.param(deploy_question(), "Production", ["production"], id="label-case-insensitive"),
        pytest.param(APPROVAL, "approve", ["Approve"], id="approve-token"),
        pytest.param(APPROVAL, "no way", ["Deny"], id="non-token-denies"),
        pytest.param(SECTIONS, "1, 3", ["KPI cards", "Table"], id="multi-select-numbers"),
        pytest.param(
            deploy_question(), "canary first, then prod", ["canary first, then prod"], id="other-text"
        ),
        pytest.param(deploy_question(), f"<@{BOT_ID}> 1", ["staging"], id="bot-mention-is-addressing"),
    ],
)
async def test_replies_map_as_the_seed_says(
    fake: FakeDiscord, runtime_on_redis: Runtime, request_: PromptRequest, reply: str, expected: list[str]
) -> None:
    run_id = await start_run(runtime_on_redis.gateway)
    prompt = await runtime_on_redis.gateway.raise_prompt(run_id, request_.model_copy(deep=True))

    settled = await answer(fake, runtime_on_redis, prompt.prompt_id, reply)

    assert [a.answer for a in settled.answers] == [expected]


# Who may answer ------------------------------------------------------------------------------------


async def test_reply_from_someone_not_allowed_leaves_prompt_pending_and_gets_a_dm(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    run_id = await start_run(runtime.gateway, started_by=ALICE)
    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())

    await fake.person_says(CHANNEL_ID, BOB, "1", guild_id=GUILD_ID)
    await fake.wait_for(lambda: len(fake.messages) == 2)

    still = await runtime.gateway.get_prompt(prompt.prompt_id)
    assert still.prompt_state is PromptState.PENDING
    [opened] = fake.calls_to("POST", "/users/@me/channels")
    assert int(opened.body["recipient_id"]) == BOB
    notice = fake.posted(fake.dm_channels[BOB])[0]["content"]
    assert notice.startswith(f"In <#{CHANNEL_ID}>: Your answer was not taken")
    assert "deployment target" not in notice
    assert [m["content"] for m in fake.posted(CHANNEL_ID)] == [DEPLOY_TARGET_TEXT]
    settled = await answer(fake, runtime, prompt.prompt_id, "1", author=ALICE)
    assert [a.answer for a in settled.answers] == [["staging"]]


# Whose messages count ------------------------------------------------------------------------------


async def test_own_other_bots_webhook_and_system_messages_are_ignored(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    await fake.person_says(CHANNEL_ID, BOT_ID, "my own echo", guild_id=GUILD_ID, bot=True)
    await fake.person_says(CHANNEL_ID, 666, "another bot", guild_id=GUILD_ID, bot=True)
    await fake.person_says(CHANNEL_ID, 777, "via webhook", guild_id=GUILD_ID, webhook_id=888)
    await fake.person_says(CHANNEL_ID, ALICE, "pinned a message", guild_id=GUILD_ID, message_type=6)
    await fake.person_says(CHANNEL_ID, ALICE, "a person", guild_id=GUILD_ID)

    feed = await eventually(lambda: agent_feed(runtime))

    assert [m["text"] for m in feed] == ["a person"]


async def test_other_bots_count_when_the_channel_accepts_them(fake: FakeDiscord, real_redis: str) -> None:
    async with discord_gateway(fake, real_redis, accept_bots=True) as runtime:
        await fake.person_says(CHANNEL_ID, BOT_ID, "my own echo", guild_id=GUILD_ID, bot=True)
        await fake.person_says(CHANNEL_ID, 666, "another bot", guild_id=GUILD_ID, bot=True)

        feed = await eventually(lambda: agent_feed(runtime))

        assert [(m["sender"], m["text"]) for m in feed] == [("discord:666", "another bot")]


async def test_messages_reach_the_core_in_the_order_discord_sent_them(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())

    await fake.person_says(CHANNEL_ID, ALICE, "2", guild_id=GUILD_ID)
    for index in range(5):
        await fake.person_says(CHANNEL_ID, ALICE, f"follow-up {index}", guild_id=GUILD_ID)
    feed = await feed_until(runtime, lambda texts: len(texts) == 6)

    settled = await runtime.gateway.get_prompt(prompt.prompt_id)
    assert [a.answer for a in settled.answers] == [["production"]]
    # Nobody was waiting, so the answer is parked: re-driven as the agent's next message, then the rest.
    assert feed == ["production", *(f"follow-up {index}" for index in range(5))]


# Duplicates ----------------------------------------------------------------------------------------


async def test_events_replayed_on_resume_resolve_nothing_twice(fake: FakeDiscord, runtime: Runtime) -> None:
    await fake.person_says(CHANNEL_ID, ALICE, "before the prompt", guild_id=GUILD_ID)
    await feed_until(runtime, lambda texts: len(texts) == 1)
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())
    settled = await answer(fake, runtime, prompt.prompt_id, "2")
    [session] = fake.sessions

    await fake.ask_to_reconnect(replay_from=0)  # Discord replays every event of the session
    await fake.wait_for(lambda: session.resumes == 1 and session.open)
    await fake.person_says(CHANNEL_ID, ALICE, "after the resume", guild_id=GUILD_ID)
    feed = await feed_until(runtime, lambda texts: texts[-1:] == ["after the resume"])
    await runtime.gateway.outbox.idle()

    assert len(fake.sessions) == 1
    # "2" reaches the feed only as a parked answer, when it settled before the test began waiting.
    assert [text for text in feed if text != "production"] == ["before the prompt", "after the resume"]
    assert feed.count("production") <= 1
    again = await runtime.gateway.get_prompt(prompt.prompt_id)
    assert again.settled_at == settled.settled_at
    audits = [m for m in fake.posted(CHANNEL_ID) if m["content"].startswith("✓")]
    assert len(audits) == 1


# Outbound limits and failures ----------------------------------------------------------------------


async def test_a_short_429_is_waited_out_and_the_prompt_posted_once(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    fake.failures.append(Failure(429, retry_after=0.3))
    run_id = await start_run(runtime.gateway)

    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())

    attempts = fake.calls_to("POST", f"/channels/{CHANNEL_ID}/messages")
    assert len(attempts) == 2
    assert attempts[1].at - attempts[0].at >= 0.3
    assert [m["content"] for m in fake.posted(CHANNEL_ID)] == [DEPLOY_TARGET_TEXT]
    assert prompt.prompt_state is PromptState.PENDING


async def test_a_long_429_makes_the_question_unavailable_never_a_denial(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    fake.failures.append(Failure(429, retry_after=120))
    run_id = await start_run(runtime.gateway)

    with pytest.raises(GatewayError) as raised:
        await runtime.gateway.raise_prompt(run_id, deploy_question())

    assert raised.value.code == "PROMPT_UNAVAILABLE"
    assert raised.value.message.startswith("Question unavailable")
    assert "rate-limiting" in raised.value.message
    assert fake.posted(CHANNEL_ID) == []


async def test_a_burst_of_agent_messages_with_a_429_arrives_complete_and_in_order(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    fake.failures.append(Failure(429, retry_after=0.2))
    for index in range(6):
        await runtime.gateway.post_message(THREAD, f"step {index}")

    await eventually(lambda: len(fake.posted(CHANNEL_ID)) == 6)
    await runtime.gateway.outbox.idle()

    assert [m["content"] for m in fake.posted(CHANNEL_ID)] == [f"step {index}" for index in range(6)]


async def test_a_send_retried_after_a_server_error_posts_once(
    fake: FakeDiscord, runtime_on_redis: Runtime
) -> None:
    runtime = runtime_on_redis
    fake.failures.append(Failure(500, create=True))  # Discord made the message but the answer was lost

    await runtime.gateway.post_message(THREAD, "only once")
    await eventually(lambda: len(fake.calls_to("POST", f"/channels/{CHANNEL_ID}/messages")) == 2)
    await runtime.gateway.outbox.idle()

    assert [m["content"] for m in fake.posted(CHANNEL_ID)] == ["only once"]


async def test_an_over_long_message_is_split_visibly_within_discords_limit(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    text = "\n".join(f"line {index:04d} " + "x" * 80 for index in range(50))  # about 4,500 characters

    await runtime.gateway.post_message(THREAD, text)
    await eventually(lambda: len(fake.posted(CHANNEL_ID)) >= 3)
    await runtime.gateway.outbox.idle()

    parts = [m["content"] for m in fake.posted(CHANNEL_ID)]
    assert len(parts) == 3
    assert all(len(part) <= 2000 for part in parts)
    assert [part.rsplit("\n", 1)[1] for part in parts] == ["(1/3)", "(2/3)", "(3/3)"]
    assert "".join(part.rsplit("\n", 1)[0] for part in parts).replace("\n", "") == text.replace("\n", "")


async def test_posts_mention_nobody(fake: FakeDiscord, runtime: Runtime) -> None:
    await runtime.gateway.post_message(THREAD, "@everyone look")
    await eventually(lambda: fake.posted(CHANNEL_ID))

    assert fake.posted(CHANNEL_ID)[0]["allowed_mentions"] == {"parse": []}


# Connection ----------------------------------------------------------------------------------------


async def test_gateway_identifies_with_the_settings_token_and_the_message_content_intent(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    [session] = fake.sessions
    intents = session.identify["intents"]

    assert session.identify["token"] == fake.token
    assert intents & (1 << 15), "MESSAGE_CONTENT"
    assert intents & (1 << 9), "GUILD_MESSAGES"
    assert intents & (1 << 12), "DIRECT_MESSAGES"
    assert all(call.headers["Authorization"] == f"Bot {fake.token}" for call in fake.calls)


async def test_stop_closes_the_gateway_session(fake: FakeDiscord, real_redis: str) -> None:
    async with discord_gateway(fake, real_redis):
        assert len(fake.open_sessions()) == 1

    await fake.wait_for(lambda: not fake.open_sessions())


async def test_posting_works_on_a_process_that_does_not_hold_the_gateway(fake: FakeDiscord) -> None:
    channel = DiscordChannel(fake.token, api_base_url=fake.api_base_url, gateway_url=fake.gateway_url)
    try:
        ref = await channel.post(parse_thread_id(THREAD), message_item("posted without a connection"))
    finally:
        await channel.stop()

    assert [m["content"] for m in fake.posted(CHANNEL_ID)] == ["posted without a connection"]
    assert ref.message_id == fake.posted(CHANNEL_ID)[0]["id"]
    assert fake.sessions == []


async def test_a_wrong_token_never_connects_and_posts_fail_saying_what_to_fix(
    fake: FakeDiscord, real_redis: str
) -> None:
    wrong = FakeDiscord("not-the-token")
    wrong.port = fake.port  # the same server, asked with another token
    async with discord_gateway(wrong, real_redis, connected=False, fatal_pause=0.1) as runtime:
        run_id = await start_run(runtime.gateway)
        with pytest.raises(GatewayError) as raised:
            await runtime.gateway.raise_prompt(run_id, deploy_question())

    assert "DISCORD_BOT_TOKEN" in raised.value.message
    assert fake.sessions == []
    assert fake.messages == []


@pytest.mark.parametrize(
    ("payload", "text", "controls"),
    [(FORM, FORM_TEXT, ["Fill in…", "Decline"]), (URL, URL_TEXT, ["Open the page", "Done", "Decline"])],
)
async def test_a_form_or_url_step_is_posted_as_its_text_with_its_controls(
    fake: FakeDiscord, runtime_on_redis: Runtime, payload: dict[str, Any], text: str, controls: list[str]
) -> None:
    run_id = await start_run(runtime_on_redis.gateway)
    await runtime_on_redis.gateway.raise_prompt(run_id, PromptRequest.model_validate(payload))
    [asked] = fake.posted(CHANNEL_ID)
    assert asked["content"] == text
    assert [control["label"] for control in fake.controls(asked)] == controls
