"""A gateway event discord.py cannot read, or a handler fails on, is logged once and skipped: the session
stays up and the next reply answers the prompt."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from gateway.base.models import PromptState
from gateway.process.runtime import Runtime
from tests.channels import discord_support
from tests.channels.discord_support import (
    ALICE,
    CHANNEL_ID,
    GUILD_ID,
    deploy_question,
    discord_gateway,
    eventually,
    start_run,
)
from tests.fakes.discord import BUTTON, FakeDiscord

fake = discord_support.fake


@pytest.fixture
def redis_url() -> None:
    """The embedded store: what is under test is the session, not the store."""
    return None


BadEvent = Callable[[FakeDiscord, dict[str, Any]], Awaitable[str | None]]


def logged(caplog: pytest.LogCaptureFixture, prefix: str = "discord.event.") -> list[dict[str, Any]]:
    """The fields of each ``discord.event.*`` line, with its event name."""
    return [
        {"event": record.getMessage(), **record.fields}  # type: ignore[attr-defined]
        for record in caplog.records
        if record.getMessage().startswith(prefix)
    ]


async def channel_without_its_fields(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    def strip(payload: dict[str, Any]) -> None:
        payload["channel"] = {"id": str(CHANNEL_ID), "type": 0}  # no name, position, overwrites…

    return await interact_mangled(fake, message, strip)


async def id_that_is_not_a_snowflake(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    def garble(payload: dict[str, Any]) -> None:
        payload["id"] = "not-a-snowflake"

    await interact_mangled(fake, message, garble)
    return "not-a-snowflake"


async def member_of_the_wrong_type(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    def garble(payload: dict[str, Any]) -> None:
        payload["member"] = "alice"

    return await interact_mangled(fake, message, garble)


async def component_data_of_the_wrong_type(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    def garble(payload: dict[str, Any]) -> None:
        payload["data"] = ["production"]

    return await interact_mangled(fake, message, garble)


async def message_without_an_author(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    said = {"id": str(fake.snowflake()), "channel_id": str(CHANNEL_ID), "type": 0, "content": "2"}
    await fake.dispatch("MESSAGE_CREATE", said)
    return said["id"]


async def event_data_that_is_not_an_object(fake: FakeDiscord, message: dict[str, Any]) -> str | None:
    await fake.dispatch("INTERACTION_CREATE", "garbage")  # type: ignore[arg-type]
    return None


async def interact_mangled(
    fake: FakeDiscord, message: dict[str, Any], mangle: Callable[[dict[str, Any]], None]
) -> str:
    button = fake.button(message, "production")
    data = {"custom_id": button["custom_id"], "component_type": BUTTON}
    interaction = await fake.interact(3, data, message, user_id=ALICE, guild_id=GUILD_ID, mangle=mangle)
    return interaction.id


@pytest.mark.parametrize(
    "bad_event",
    [
        channel_without_its_fields,
        id_that_is_not_a_snowflake,
        member_of_the_wrong_type,
        component_data_of_the_wrong_type,
        message_without_an_author,
        event_data_that_is_not_an_object,
    ],
)
async def test_an_event_that_cannot_be_read_is_logged_once_and_the_next_reply_answers(
    fake: FakeDiscord, redis_url: str | None, caplog: pytest.LogCaptureFixture, bad_event: BadEvent
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    async with discord_gateway(fake, redis_url) as runtime:
        prompt_id, message = await ask(fake, runtime)
        [session] = fake.open_sessions()
        caplog.clear()

        event_id = await bad_event(fake, message)
        [line] = await eventually(lambda: logged(caplog))
        await fake.person_says(CHANNEL_ID, ALICE, "2", guild_id=GUILD_ID)

        settled = await runtime.gateway.wait_prompt(prompt_id, timeout=5)
        assert settled.prompt_state is PromptState.ANSWERED
        assert [a.answer for a in settled.answers or []] == [["production"]]
        assert line["event_id"] == event_id and line["error"], line
        assert len(logged(caplog)) == 1
        assert fake.open_sessions() == [session] and len(fake.sessions) == 1  # the same session, still up


async def test_a_frame_no_client_could_read_ends_the_session_and_a_new_one_starts_at_once(
    fake: FakeDiscord, redis_url: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    async with discord_gateway(fake, redis_url) as runtime:
        prompt_id, _ = await ask(fake, runtime)

        await fake.send_frame("{not json")
        await fake.wait_for(lambda: len(fake.sessions) == 2 and len(fake.open_sessions()) == 1)
        await fake.person_says(CHANNEL_ID, ALICE, "2", guild_id=GUILD_ID)

        settled = await runtime.gateway.wait_prompt(prompt_id, timeout=5)
        assert settled.prompt_state is PromptState.ANSWERED
        assert "lease.work_failed" in [record.getMessage() for record in caplog.records]


async def ask(fake: FakeDiscord, runtime: Runtime) -> tuple[str, dict[str, Any]]:
    """An agent asks the deployment question in the channel; the prompt's id and its posted message."""
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, deploy_question())
    [message] = fake.posted(CHANNEL_ID)
    return prompt.prompt_id, message
