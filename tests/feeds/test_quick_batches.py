"""The store's batches (scripts, feed appends) on the quick pool: replies in order, an error reply in its
place, and a batch whose connection died midway sent again on a fresh one."""

from __future__ import annotations

from redis.exceptions import ResponseError

from gateway.store import connect
from tests.support.redis_server import RedisServer


async def test_a_batch_answers_each_command_in_order_with_an_error_in_its_place(
    redis_server: RedisServer,
) -> None:
    redis_server.flush()
    client = connect(redis_server.url, max_connections=4).client
    try:
        replies = await client.connection_pool.execute(
            [("SET", "batch:k", "text"), ("INCR", "batch:k"), ("GET", "batch:k"), ("EVAL", "return 7", 0)]
        )
    finally:
        await client.aclose()
    assert replies[0] == "OK" and isinstance(replies[1], ResponseError) and replies[2:] == ["text", 7]


async def test_a_batch_whose_connection_dies_midway_is_sent_again_on_a_fresh_one(
    redis_server: RedisServer,
) -> None:
    redis_server.flush()
    client = connect(redis_server.url, max_connections=1).client
    try:
        [own_id] = await client.connection_pool.execute([("CLIENT", "ID")])
        # The batch's first command closes its own connection: the rest is never run there, and the
        # whole batch goes again on a new connection, where that id names nobody any more (0 killed).
        replies = await client.connection_pool.execute(
            [("CLIENT", "KILL", "ID", own_id, "SKIPME", "no"), ("INCR", "batch:n")]
        )
        again = await client.connection_pool.execute([("INCR", "batch:n")])
    finally:
        await client.aclose()
    assert replies == [0, 1] and again == [2]
