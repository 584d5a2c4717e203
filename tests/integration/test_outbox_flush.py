"""A flush waits for a drain of the same thread this process already runs, whichever path started it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.rules.render import message_item
from gateway.store import Store
from tests.support.memory_channel import HeldChannel

THREAD = "slack:C0456:1712345678.000100"


@pytest.fixture
async def held(store: Store) -> AsyncIterator[tuple[Gateway, HeldChannel]]:
    channel = HeldChannel()
    service = Gateway(store, Channels([channel]), sweep_interval=3600)
    await service.start()
    yield service, channel
    channel.go.set()
    await service.stop()


async def test_a_flush_waits_for_the_sweep_that_holds_the_thread_instead_of_finding_it_busy(
    store: Store,
) -> None:
    # Owed to the thread with no drain kicked, before the process starts: as a crashed process leaves it.
    # (Pushed after the start, the start's own sweep could take the thread's empty lists just before the
    # push and then drop the old dirty mark, leaving nothing for any sweep to find.)
    item = message_item("deploying now").model_dump(mode="json")
    await store.push_chat(THREAD, {"t": "message", "id": "itm_1", "item": item}, 0)
    channel = HeldChannel()
    service = Gateway(store, Channels([channel]), sweep_interval=3600)
    await service.start()
    try:
        sweeping = asyncio.create_task(service.outbox.sweep(everything=True))
        await asyncio.wait_for(channel.posting.wait(), 5)  # a sweep holds the thread's lock, mid-post
        flushing = asyncio.create_task(service.outbox.flush(THREAD))
        await asyncio.sleep(0.2)
        assert not flushing.done()  # waiting for the sweep's pass, not told the thread is busy
        channel.go.set()
        assert await asyncio.wait_for(flushing, 5) is True
        await asyncio.wait_for(sweeping, 5)  # (the start's own sweep may be the one that drained it)
    finally:
        channel.go.set()
        await service.stop()
    assert len(channel.posts) == 1
