"""The once-markers' lifetimes are settings: a platform event's or web post's id, and a feed entry's id."""

from __future__ import annotations

import pytest

from gateway.base.models import InboundMessage, RunRequest
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import FeedEntry, keys
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_server import RedisServer

THREAD = "web:once-markers"
ALICE = "web:alice"


def test_the_defaults_are_two_days_and_an_hour() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    store = Runtime.build(settings, channels=[]).store
    assert (store.dedupe_ttl_s, store.feed_dedupe_s) == (172_800, 3_600)


@pytest.mark.parametrize(("dedupe_s", "once_s"), [(1, 1), (90, 45), (7 * 86_400, 2 * 3_600)])
async def test_the_markers_live_as_long_as_the_settings_say(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch, dedupe_s: int, once_s: int
) -> None:
    redis_server.flush()
    monkeypatch.setenv("THREADGATE_DEDUPE_SECONDS", str(dedupe_s))
    monkeypatch.setenv("THREADGATE_FEED_ONCE_SECONDS", str(once_s))
    settings = Settings(_env_file=None, redis_url=redis_server.url)  # type: ignore[call-arg]
    runtime = Runtime.build(settings, channels=[MemoryChannel("web")])
    store, gateway = runtime.store, runtime.gateway
    await store.load()
    try:
        await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="hello", event_id="web:c1"))
        events = keys.events_feed(keys.partition(THREAD))
        await store.publish([FeedEntry(events, "msg_1.received", '{"id": "msg_1.received"}')], [])
        seen = await store.redis.pttl(keys.seen(THREAD, "web:c1"))
        once = await store.redis.pttl(keys.feed_seen(events, "msg_1.received"))
    finally:
        await runtime.connection.client.aclose()
    assert dedupe_s * 1000 - 5_000 < seen <= dedupe_s * 1000
    assert once_s * 1000 - 5_000 < once <= once_s * 1000


@pytest.mark.parametrize("name", ["THREADGATE_DEDUPE_SECONDS", "THREADGATE_FEED_ONCE_SECONDS"])
@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_lifetime_that_is_not_a_positive_number_of_seconds_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name.lower()):
        Settings(_env_file=None)  # type: ignore[call-arg]
