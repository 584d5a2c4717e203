"""Each adapter's ``start_thread``, run by the real platform SDK against our wire-level fakes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from channels.discord import DiscordChannel
from channels.slack import SlackChannel
from channels.telegram import TelegramChannel
from channels.web import WebChannel
from gateway.base.ids import parse_thread_id
from gateway.decision.session_threads import parse_channel_ref
from gateway.delivery.channel import ChannelError, StartsThreads
from tests.fakes.discord import FakeDiscord, _json
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram

HEADER = "Claude Code in api, session 3f6c1b2a"
TELEGRAM_TOKEN = "424242:fake-token-for-tests"


class ThreadingDiscord(FakeDiscord):
    """The Discord fake plus ``POST /channels/{channel}/messages/{message}/threads`` (start a thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[dict[str, Any]] = []

    async def start(self) -> ThreadingDiscord:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_post("/api/v10/channels/{channel_id}/messages", self._create_message)
        app.router.add_post("/api/v10/channels/{channel_id}/messages/{message_id}/threads", self._thread)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def _thread(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        thread = {
            "id": str(self.snowflake()),
            "type": 11,
            "parent_id": request.match_info["channel_id"],
            "guild_id": "1",
            "name": call.body["name"],
            "owner_id": "1",
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {"archived": False, "auto_archive_duration": 10080, "locked": False},
            "starter_message_id": request.match_info["message_id"],
        }
        self.threads.append(thread)
        return _json(thread)


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


async def test_slack_starts_a_thread_on_a_top_level_message(fake_slack: FakeSlack) -> None:
    channel = SlackChannel(
        fake_slack.bot_token, signing_secret=fake_slack.signing_secret, api_url=fake_slack.api_url
    )
    assert isinstance(channel, StartsThreads)

    thread_id = await channel.start_thread(parse_channel_ref("slack:C0TEAM"), HEADER)

    (posted,) = fake_slack.posted()
    assert "thread_ts" not in posted
    assert (posted["channel"], posted["text"]) == ("C0TEAM", HEADER)
    assert thread_id == f"slack:C0TEAM:{posted['ts']}"
    assert parse_thread_id(thread_id).parts == ("C0TEAM", posted["ts"])


async def test_slack_refusal_is_a_channel_error(fake_slack: FakeSlack) -> None:
    channel = SlackChannel(
        fake_slack.bot_token, signing_secret=fake_slack.signing_secret, api_url=fake_slack.api_url
    )
    fake_slack.refuse("chat.postMessage", "not_in_channel")
    with pytest.raises(ChannelError, match="not_in_channel"):
        await channel.start_thread(parse_channel_ref("slack:C0TEAM"), HEADER)


@pytest.mark.parametrize(("ref", "topic"), [("telegram:-100500", None), ("telegram:-100500:77", 77)])
async def test_telegram_session_thread_is_the_chat_or_topic_named(ref: str, topic: int | None) -> None:
    fake = FakeTelegram(TELEGRAM_TOKEN)
    await fake.start()
    channel = TelegramChannel(TELEGRAM_TOKEN, base_url=fake.base_url)
    try:
        await channel.bot.initialize()
        thread_id = await channel.start_thread(parse_channel_ref(ref), HEADER)
    finally:
        await channel.bot.shutdown()
        await fake.stop()
    (sent,) = fake.sent
    assert (sent.chat_id, sent.topic_id, sent.text) == (-100500, topic, HEADER)
    assert thread_id == ref


async def test_discord_starts_a_thread_from_the_header_message() -> None:
    fake = await ThreadingDiscord().start()
    channel = DiscordChannel(fake.token, api_base_url=fake.api_base_url)
    try:
        thread_id = await channel.start_thread(parse_channel_ref("discord:80351110224678912"), HEADER)
    finally:
        await channel.stop()
        await fake.stop()
    (header,) = fake.posted(80351110224678912)
    (thread,) = fake.threads
    assert header["content"] == HEADER
    assert thread["starter_message_id"] == header["id"]
    assert thread["name"] == HEADER
    assert thread_id == f"discord:{thread['id']}"
    assert json.loads(json.dumps(header["allowed_mentions"]))["parse"] == []


async def test_web_session_thread_is_a_fresh_room_beside_the_channel() -> None:
    channel = WebChannel()
    first = await channel.start_thread(parse_channel_ref("web:sessions"), HEADER)
    second = await channel.start_thread(parse_channel_ref("web:sessions"), HEADER)
    assert first != second
    assert first.startswith("web:sessions-")
    assert parse_thread_id(first).thread_id == first


async def test_web_session_room_stays_a_valid_thread_id_for_the_longest_room() -> None:
    thread_id = await WebChannel().start_thread(parse_channel_ref("web:" + "r" * 64), HEADER)
    assert parse_thread_id(thread_id).thread_id == thread_id
