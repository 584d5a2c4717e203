"""``threadgate serve`` with every platform configured writes one JSON object per line after its banner,
whatever the platforms send it and whatever its libraries have to say."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack, message_event
from tests.fakes.telegram import FakeTelegram
from tests.support.serve import ServeProcess, serve_env, serving

TELEGRAM_TOKEN = "424242:fake-token-for-tests"
ALICE = 111
DISCORD_CHANNEL, DISCORD_ALICE = 111_111_111_111_111_111, 333_333_333_333_333_333
BANNER = ("Threadgate ", "Store: ", "Warning: ", "Channels: ")


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeSlack, FakeTelegram, FakeDiscord]]:
    slack, telegram, discord = FakeSlack(), FakeTelegram(TELEGRAM_TOKEN), FakeDiscord()
    await slack.start()
    await telegram.start()
    await discord.start()
    yield slack, telegram, discord
    await discord.stop()
    await telegram.stop()
    await slack.stop()


@pytest.mark.slow
async def test_every_line_after_the_banner_is_one_json_object(
    fakes: tuple[FakeSlack, FakeTelegram, FakeDiscord], tmp_path: Path
) -> None:
    slack, telegram, discord = fakes
    env = serve_env(
        SLACK_BOT_TOKEN=slack.bot_token,
        SLACK_SIGNING_SECRET=slack.signing_secret,
        SLACK_API_URL=slack.api_url,
        TELEGRAM_BOT_TOKEN=TELEGRAM_TOKEN,
        TELEGRAM_BASE_URL=telegram.base_url,
        DISCORD_BOT_TOKEN=discord.token,
        DISCORD_API_BASE_URL=discord.api_base_url,
        DISCORD_GATEWAY_URL=discord.gateway_url,
        THREADGATE_LEASE_TTL_MS="2000",
        THREADGATE_LOG_LEVEL="INFO",
    )
    server = ServeProcess(env, tmp_path)
    with serving(server, ready_path=None):  # the fakes it calls at startup run on this event loop
        await asyncio.to_thread(server.wait_ready)
        await telegram.wait_for(lambda: bool(telegram.calls_of("getUpdates")), timeout=30)
        await discord.wait_for(lambda: len(discord.open_sessions()) == 1, timeout=30)
        events_url = f"{server.url}/slack/events"

        mention = message_event("C0TEAM", "U0ALICE", f"<@{slack.bot_user_id}> hi", ts=slack.next_ts())
        assert await slack.deliver(events_url, slack.callback({**mention, "type": "app_mention"})) == 200
        assert await slack.deliver(events_url, {**slack.callback({}), "event": "garbage"}) == 200
        await telegram.say(ALICE, ALICE, "hello")
        unreadable = await telegram.push({"update_id": 9000, "message": "garbage"})
        await telegram.confirmed(unreadable["update_id"], timeout=10)
        await discord.person_says(DISCORD_CHANNEL, DISCORD_ALICE, "hello")
        await discord.dispatch("INTERACTION_CREATE", {"id": "1", "type": 3, "channel": {}})
        await discord.send_frame("{not json")  # ends the session: the lease starts a new one
        await discord.wait_for(lambda: len(discord.sessions) == 2 and len(discord.open_sessions()) == 1, 15)

    lines = server.log.read_text().splitlines()
    banner = [line for line in lines if line.startswith(BANNER)]
    logged = [line for line in lines if not line.startswith(BANNER)]
    assert [line.split(" ")[0] for line in banner[:1]] == ["Threadgate"]
    parsed = []
    for line in logged:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not a JSON line: {line[:300]}")
    events = {entry["event"] for entry in parsed}
    assert {"slack.event.unreadable", "telegram.update.unreadable", "discord.event.unreadable"} <= events
    assert "lease.work_failed" in events and "shutdown.finished" in events
    assert not [entry for entry in parsed if "As you gave" in entry["event"]]  # Bolt's, about our own token
    assert not [entry for entry in parsed if "voice will NOT be supported" in entry["event"]]
