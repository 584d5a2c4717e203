"""Each platform's chat behind one small interface, driven through its wire-level fake, for the tests that
hold for every platform alike (who may answer by person, link codes): a gateway with that one channel, a
shared thread, people by short name, their messages in the shared thread or a direct message with the bot,
and the texts the bot wrote back (in the thread or privately)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from gateway.process.runtime import Runtime
from tests.channels import discord_support, teams_support, telegram_support
from tests.channels.slack_support import slack_gateway
from tests.fakes import teams
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack, message_event
from tests.web.conftest import web_gateway

PLATFORMS = ("slack", "telegram", "discord", "teams", "web")
# A platform's own id for each person of these tests (Telegram's are also their private chats' ids).
SLACK_IDS = {"dana": "U0DANA", "erin": "U0ERIN", "mallory": "U0MALLORY", "sam": "U0SAM"}
TELEGRAM_IDS = {"dana": 501, "erin": 502, "mallory": 503, "sam": 504}
DISCORD_IDS = {"dana": 601_000_000_000_000_001, "erin": 602_000_000_000_000_002}
DISCORD_IDS |= {"mallory": 603_000_000_000_000_003, "sam": 604_000_000_000_000_004}


@dataclass
class Chat:
    """One platform's chat: ``say`` a person's message, ``told`` what the bot wrote back."""

    platform: str
    runtime: Runtime
    thread_id: str  # the shared thread: a channel, a group, a room
    direct_messages: bool  # whether the platform has one-to-one conversations with the bot
    identity: Callable[[str], str]  # "dana" -> "slack:U0DANA"
    send: Callable[[str, str, bool], Any]  # (who, text, direct): deliver the message
    texts: Callable[[], list[str]]  # everything the bot wrote, in threads or privately, oldest first
    press: Callable[[str, str], Awaitable[None]]  # (who, prompt id): press the prompt's Approve control

    async def approve(self, who: str, prompt_id: str, *, pressed: bool) -> None:
        """``who`` approves the prompt in the shared thread: presses its Approve, or types "approve"."""
        if pressed:
            await self.press(who, prompt_id)
        else:
            await self.say(who, "approve")

    async def say(self, who: str, text: str, *, direct: bool = False) -> None:
        """``who`` writes ``text`` in the shared thread, or in a direct message with the bot."""
        await self.send(who, text, direct)

    async def told(self, words: str, timeout: float = 5.0) -> str:
        """The latest text the bot wrote that contains ``words``, once it has."""
        try:
            async with asyncio.timeout(timeout):
                while not (found := [text for text in self.texts() if words in text]):
                    await self.runtime.gateway.outbox.idle()
                    await asyncio.sleep(0.02)
        except TimeoutError:
            raise AssertionError(f"the bot never wrote {words!r}; it wrote {self.texts()!r}") from None
        return found[-1]


@asynccontextmanager
async def chat(platform: str, redis_url: str) -> AsyncIterator[Chat]:
    """A started gateway whose one channel is ``platform``'s, against its fake (the web chat is its own)."""
    opened = {"slack": _slack, "telegram": _telegram, "discord": _discord, "teams": _teams, "web": _web}
    async with opened[platform](redis_url) as found:
        yield found


@asynccontextmanager
async def _slack(redis_url: str) -> AsyncIterator[Chat]:
    fake = FakeSlack()
    await fake.start()
    try:
        async with slack_gateway(fake, redis_url) as gw:
            root = await gw.open_thread("the deploy")

            async def send(who: str, text: str, direct: bool) -> None:
                user = SLACK_IDS[who]
                if direct:  # the app's direct message with the person: a D channel of type im
                    event = message_event(f"D{user[1:]}", user, text, ts=fake.next_ts(), channel_type="im")
                else:
                    event = gw.reply(root, text, user)
                assert await gw.deliver(event) == 200

            def texts() -> list[str]:
                return [str(posted.get("text") or "") for posted in fake.posted()] + fake.private_notices()

            async def press(who: str, prompt_id: str) -> None:
                await gw.settled()
                [card] = [
                    posted for posted in fake.posted(root) if prompt_id in json.dumps(posted.get("blocks"))
                ]
                status = await fake.press(gw.events_url, card, "Approve", user=SLACK_IDS[who])
                assert status == 200
                await gw.channel.presses.idle()

            def identity(who: str) -> str:
                return f"slack:{SLACK_IDS[who]}"

            yield Chat("slack", gw.runtime, f"slack:C0TEAM:{root}", True, identity, send, texts, press)
    finally:
        await fake.stop()


@asynccontextmanager
async def _telegram(redis_url: str) -> AsyncIterator[Chat]:
    group = telegram_support.GROUP
    async with (
        telegram_support.fake_bot_api() as fake,
        telegram_support.telegram_gateway(fake, redis_url) as runtime,
    ):
        answered: list[str] = []  # a press's answer: a notice only the presser sees

        async def send(who: str, text: str, direct: bool) -> None:
            user = TELEGRAM_IDS[who]
            await fake.say(user if direct else group, user, text)  # a private chat's id is the person's

        async def press(who: str, prompt_id: str) -> None:
            await runtime.gateway.outbox.idle()
            cards = [sent.message_id for sent in fake.sent if sent.chat_id == group and sent.reply_markup]
            card = next(
                card
                for card in reversed(cards)
                if any(b.text.endswith("Approve") for b in fake.buttons(card))
            )
            data = fake.button(card, "Approve").data
            update = await fake.press(TELEGRAM_IDS[who], card, data)
            answered.append(str((await fake.answered(update)).get("text") or ""))

        def texts() -> list[str]:
            return [sent.text for sent in fake.sent] + answered

        def identity(who: str) -> str:
            return f"telegram:{TELEGRAM_IDS[who]}"

        yield Chat("telegram", runtime, f"telegram:{group}", True, identity, send, texts, press)


@asynccontextmanager
async def _discord(redis_url: str) -> AsyncIterator[Chat]:
    channel, guild = discord_support.CHANNEL_ID, discord_support.GUILD_ID
    fake = await FakeDiscord().start()
    try:
        async with discord_support.discord_gateway(fake, redis_url) as runtime:
            answered: list[str] = []  # a press's ephemeral answer

            async def send(who: str, text: str, direct: bool) -> None:
                user = DISCORD_IDS[who]
                if direct:  # a DM channel: outside any server
                    await fake.person_says(user + 7, user, text)
                else:
                    await fake.person_says(channel, user, text, guild_id=guild)

            async def press(who: str, prompt_id: str) -> None:
                await runtime.gateway.outbox.idle()
                [card] = [
                    message
                    for message in fake.posted(channel)
                    if prompt_id in json.dumps(message.get("components"))
                ]
                pressed = await fake.press(
                    fake.message(card["id"]), "Approve", user_id=DISCORD_IDS[who], guild_id=guild
                )
                answered.append((await fake.answered(pressed)).notice or "")

            def texts() -> list[str]:
                return [str(message.get("content") or "") for message in fake.messages] + answered

            def identity(who: str) -> str:
                return f"discord:{DISCORD_IDS[who]}"

            yield Chat("discord", runtime, discord_support.THREAD, True, identity, send, texts, press)
    finally:
        await fake.stop()


@asynccontextmanager
async def _teams(redis_url: str) -> AsyncIterator[Chat]:
    async with (
        teams_support.fake_bot_framework() as fake,
        teams_support.teams_gateway(fake, redis_url) as gw,
    ):
        answered: list[str] = []  # the invoke responses' messages: what only the presser sees

        async def send(who: str, text: str, direct: bool) -> None:
            where = teams_support.IN_PERSONAL if direct else teams_support.IN_CHANNEL
            response = await gw.say(where, text, who)
            assert response.status_code < 300, response.text

        async def press(who: str, prompt_id: str) -> None:
            await gw.settled()
            card = next(
                posted
                for posted in reversed(fake.posts)
                for action in posted.actions()
                if str((action.get("data") or {}).get("tg", "")).startswith(prompt_id)
            )
            body = await gw.press(card, "Approve", who)
            if isinstance(body.get("value"), str):
                answered.append(body["value"])

        def texts() -> list[str]:
            return [posted.text for posted in fake.posts] + answered

        thread = f"teams:{teams_support.CHANNEL_THREAD}"
        yield Chat("teams", gw.runtime, thread, True, teams.identity, send, texts, press)


@dataclass
class _WebNotices:
    """The web chat answers a message in its HTTP response: the notices, as they came."""

    texts: list[str] = field(default_factory=list)


@asynccontextmanager
async def _web(redis_url: str) -> AsyncIterator[Chat]:
    notices = _WebNotices()
    async with web_gateway(redis_url) as gw, gw.client() as client:

        async def post(who: str, **body: Any) -> None:
            response: httpx.Response = await client.post("/chat/ops/messages", json={"name": who, **body})
            assert response.status_code < 300, response.text
            notices.texts.append(str(response.json().get("notice") or ""))

        async def send(who: str, text: str, direct: bool) -> None:
            await post(who, text=text)

        async def press(who: str, prompt_id: str) -> None:  # the card's Approve, for that prompt
            approve = [{"questionId": "q1", "selected": ["Approve"]}]
            await post(who, text="Approve", prompt_id=prompt_id, answers=approve)

        def identity(who: str) -> str:
            return f"web:{who}"

        yield Chat("web", gw.runtime, "web:ops", False, identity, send, lambda: notices.texts, press)
