"""``link <code>`` on every platform, through its real SDK path: taken in a direct message with the bot;
typed where others read it (a channel, a group) on a platform that has direct messages, refused and spent.
The web chat has no direct messages: a room takes it."""

from __future__ import annotations

import pytest

from gateway.base.models import Person
from gateway.people.linking import new_link_code
from gateway.store.people import PeopleStore
from tests.channels.chats import PLATFORMS, chat

WITH_DMS = [platform for platform in PLATFORMS if platform != "web"]


async def _dana(people: PeopleStore) -> None:
    """Dana is in the directory, with one identity of another surface."""
    await people.put(Person(person="dana", identities=["web:dana-desk"]))


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_code_sent_in_a_direct_message_links_the_sender(platform: str, real_redis: str) -> None:
    async with chat(platform, real_redis) as room:
        people = room.runtime.store.people
        await _dana(people)
        code = await new_link_code(people, "dana")
        await room.say("dana", f"link {code}", direct=True)
        told = await room.told("Linked")
        found = await people.whois(room.identity("dana"))
    assert f"Linked: {room.identity('dana')} is now person:dana's" in told
    assert found is not None and found.person == "dana"


@pytest.mark.parametrize("platform", WITH_DMS)
async def test_a_code_typed_where_others_read_it_is_refused_and_spent(platform: str, real_redis: str) -> None:
    async with chat(platform, real_redis) as room:
        people = room.runtime.store.people
        await _dana(people)
        code = await new_link_code(people, "dana")
        await room.say("dana", f"link {code}")
        refused = await room.told("direct message")
        await room.say("mallory", f"link {code}", direct=True)  # whoever read it there
        await room.say("dana", f"link {code}", direct=True)  # and dana, in a direct message after all
        await room.told("already used")
        await room.runtime.gateway.outbox.idle()
        used = [text for text in room.texts() if "already used" in text]
        linked = [await people.whois(room.identity(who)) for who in ("dana", "mallory")]
    assert "Send link codes to me in a direct message" in refused
    assert len(used) == 2, "the code is void for everyone"
    assert linked == [None, None]
    assert not any("Linked" in text for text in room.texts())


async def test_the_web_chat_has_no_direct_messages_so_a_room_takes_the_code(real_redis: str) -> None:
    async with chat("web", real_redis) as room:
        assert not room.direct_messages
        people = room.runtime.store.people
        await _dana(people)
        code = await new_link_code(people, "dana")
        await room.say("dana", f"link {code}")
        told = await room.told("Linked")
        found = await people.whois("web:dana")
    assert told.startswith("Linked: web:dana is now person:dana's")
    assert found is not None and found.person == "dana"
