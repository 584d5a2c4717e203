"""Gateway.read_thread: a channel reads a thread's item log after a cursor, waiting for the next item."""

from __future__ import annotations

import asyncio

from gateway.base.models import InboundMessage
from gateway.decision.service import Gateway
from gateway.store import keys
from tests.support.conditions import until_waiting_on

THREAD = "slack:C0456:1712345678.000100"


def said(text: str) -> InboundMessage:
    return InboundMessage(thread_id=THREAD, sender="slack:U0123ABC", text=text)


async def test_read_thread_returns_items_after_the_cursor_oldest_first(gateway: Gateway) -> None:
    for text in ("one", "two", "three"):
        await gateway.receive(said(text))
    everything = await gateway.read_thread(THREAD)
    after_first = await gateway.read_thread(THREAD, after=everything[0][0])
    assert [entry["text"] for _, entry in everything] == ["one", "two", "three"]
    assert [entry["text"] for _, entry in after_first] == ["two", "three"]


async def test_read_thread_waits_for_the_next_item_instead_of_returning_empty(gateway: Gateway) -> None:
    await gateway.receive(said("before"))
    cursor = (await gateway.read_thread(THREAD))[-1][0]
    waiting = asyncio.create_task(gateway.read_thread(THREAD, after=cursor, wait=5))
    await until_waiting_on(gateway.feeds, keys.items(THREAD))  # the item below arrives live
    await gateway.receive(said("after"))
    rows = await asyncio.wait_for(waiting, 5)
    assert [entry["text"] for _, entry in rows] == ["after"]


async def test_read_thread_without_wait_returns_nothing_past_the_end(gateway: Gateway) -> None:
    await gateway.receive(said("only"))
    cursor = (await gateway.read_thread(THREAD))[-1][0]
    assert await gateway.read_thread(THREAD, after=cursor) == []
