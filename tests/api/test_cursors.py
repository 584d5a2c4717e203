"""Cursors at the limits: every form (feed and log positions, Last-Event-ID, web chat, the history's) is
checked in one place; a position past what Redis holds is 422 INVALID_PARAMS, and the very last one reads
empty."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest

from gateway.base.cursors import (
    LAST_STREAM_ID,
    U64,
    exclusive_start,
    feed_cursor,
    history_cursor,
    history_positions,
    history_vector_cursor,
    is_stream_position,
)
from gateway.store import keys
from tests.api.conftest import THREAD
from tests.web.conftest import web_gateway

BEYOND_REDIS = ["18446744073709551616-0", "0-18446744073709551616", "99999999999999999999-0"]
WIDTH = len(keys.EVERY_PARTITION)
SOME_POSITIONS = ("1712345678901-3", "0-0", "1712345600000-0", *("1712345678000-7",) * (WIDTH - 3))


def _opaque(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    ("cursor", "valid"),
    [
        ("0-0", True),
        ("1712345678901-3", True),
        (LAST_STREAM_ID, True),
        *((cursor, False) for cursor in BEYOND_REDIS),
        ("1-", False),
        ("-1", False),
        ("1-2-3", False),
        ("١٢-٣", False),  # digits, but not ASCII ones
        ("1" * 21 + "-0", False),
    ],
)
def test_a_stream_position_is_two_ascii_numbers_within_64_bits(cursor: str, valid: bool) -> None:
    assert is_stream_position(cursor) is valid


def test_nothing_can_follow_the_last_stream_position() -> None:
    assert exclusive_start(None) == "-"
    assert exclusive_start("5-1") == "(5-1"
    assert exclusive_start(LAST_STREAM_ID) is None


@pytest.mark.parametrize("path", ["/v1/messages", f"/v1/threads/{THREAD}/items"])
async def test_the_last_stream_position_reads_an_empty_page(agent: httpx.AsyncClient, path: str) -> None:
    response = await agent.get(path, params={"after": LAST_STREAM_ID})
    assert response.status_code == 200, response.text
    assert response.json()["items"] == []


@pytest.mark.parametrize("cursor", BEYOND_REDIS)
async def test_positions_beyond_redis_are_422_on_every_feed(agent: httpx.AsyncClient, cursor: str) -> None:
    for path in ("/v1/messages", f"/v1/threads/{THREAD}/items", "/v1/events"):
        response = await agent.get(path, params={"after": cursor})
        assert (response.status_code, response.json()["error"]["code"]) == (422, "INVALID_PARAMS"), path
    response = await agent.get("/v1/events", headers={"Last-Event-ID": cursor})
    assert response.status_code == 422


async def test_web_chat_refuses_a_position_beyond_redis_before_streaming(real_redis: str) -> None:
    async with web_gateway(real_redis) as web, web.client() as client:
        for cursor in BEYOND_REDIS:
            by_header = await client.get("/chat/room/events", headers={"Last-Event-ID": cursor})
            by_query = await client.get("/chat/room/events", params={"after": cursor})
            for response in (by_header, by_query):
                assert response.status_code == 422, cursor
                assert response.json()["error"]["code"] == "INVALID_PARAMS"


async def test_web_chat_stream_stays_open_after_the_last_position(real_redis: str) -> None:
    async with web_gateway(real_redis) as web, web.client() as client:
        async with asyncio.timeout(5):
            headers = {"Last-Event-ID": LAST_STREAM_ID}
            async with client.stream("GET", "/chat/room/events", headers=headers) as response:
                assert response.status_code == 200
                lines = response.aiter_lines()
                async for line in lines:
                    if line.startswith(": heartbeat"):
                        break


def test_a_history_cursor_carries_a_position_in_every_partition() -> None:
    cursor = history_vector_cursor(SOME_POSITIONS)
    assert history_positions(cursor, WIDTH) == SOME_POSITIONS
    widest = tuple(f"{U64 - n * 2**50}-{U64}" for n in range(WIDTH))
    longest = history_vector_cursor(widest)
    assert history_positions(longest, WIDTH) == widest
    assert len(longest) <= 600 and longest.replace("-", "").replace("_", "").isalnum()


def test_a_history_cursor_of_an_earlier_version_stands_at_its_position_in_every_partition() -> None:
    assert history_positions(history_cursor("1712345678901-0"), WIDTH) == ("1712345678901-0",) * WIDTH
    assert (
        history_positions("aDE6MTc2OTg1MDAwMTIzNC0w", WIDTH) == ("1769850001234-0",) * WIDTH
    )  # as docs gave


A_CURSOR = history_vector_cursor(SOME_POSITIONS)


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "h1:1712345678901-0",  # not encoded
        _opaque(b"h1:1712345678901"),  # not a position
        history_cursor("1712345678901-0") + "=",  # padded
        _opaque(b"h2:1712345678901-0"),  # a single position where the vector goes
        _opaque(b"h2:f1."),
        _opaque(b"h3:" + feed_cursor(SOME_POSITIONS).encode()),  # a prefix this gateway never made
        _opaque(feed_cursor(SOME_POSITIONS).encode()),  # a feed's cursor, not the history's
        history_vector_cursor(SOME_POSITIONS[:-1]),  # one partition short
        A_CURSOR[:-3],  # cut short
        A_CURSOR + "AAAA",  # bytes after its end
        _opaque(
            b"h2:f1." + base64.urlsafe_b64encode(bytes([WIDTH, 0x81, 0x00, *[0] * WIDTH]))
        ),  # 1 as 2 bytes
        "A" * 601,
        A_CURSOR[:10] + "é" + A_CURSOR[11:],
        A_CURSOR[:10] + "+" + A_CURSOR[11:],  # not the URL-safe alphabet
    ],
)
def test_anything_else_is_refused_as_a_history_cursor(cursor: str) -> None:
    with pytest.raises(ValueError, match="earlier history page"):
        history_positions(cursor, WIDTH)
