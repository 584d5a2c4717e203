"""Open event streams and long-polls share the process's followers: they cost no Redis connection each,
every one gets each event, a resumed stream misses nothing, and too many are refused with 429."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import redis.asyncio as aioredis

from gateway.api.deps import ApiOptions
from gateway.base.cursors import FEED_WIDTH, feed_positions, position
from gateway.base.models import InboundMessage
from tests.api.conftest import (
    AGENT_AUTH,
    OPERATOR_AUTH,
    STARTER,
    Served,
    raise_prompt,
    respond_path,
    served_gateway,
    start_run,
)
from tests.support.conditions import eventually

STREAMS = 30


async def until_held(served: Served, count: int) -> None:
    """Until exactly ``count`` streams and long-polls are held open by the gateway."""

    async def held() -> bool:
        return served.runtime.streams.open_streams == count

    await eventually(held, f"{count} open streams")


async def redis_clients(url: str) -> list[dict[str, Any]]:
    """The private redis-server's client connections, apart from the one asking (``CLIENT LIST``)."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        me = await client.client_id()
        return [entry for entry in await client.client_list() if int(entry["id"]) != me]
    finally:
        await client.aclose()


async def redis_connections(url: str) -> int:
    """Client connections the private redis-server holds."""
    return len(await redis_clients(url))


async def blocked_connections(url: str) -> int:
    """Client connections held in a blocking read (``XREAD BLOCK``, ``BLPOP``) right now."""
    return sum("b" in entry["flags"] for entry in await redis_clients(url))


@contextlib.asynccontextmanager
async def open_stream(
    client: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None
) -> AsyncIterator[AsyncIterator[str]]:
    """An event stream, yielded once its first line arrived (it is following from then on)."""
    async with client.stream("GET", path, headers=headers or {}) as response:
        assert response.status_code == 200, await response.aread()
        lines = response.aiter_lines()
        async with asyncio.timeout(5):
            await lines.__anext__()
        yield lines


async def next_event(lines: AsyncIterator[str]) -> dict[str, Any]:
    event: dict[str, Any] = {}
    async with asyncio.timeout(5):
        async for line in lines:
            if line.startswith("id: "):
                event["cursor"] = line[4:]
            elif line.startswith("event: "):
                event["event"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = json.loads(line[6:])
            elif not line and "data" in event:
                return event
    raise AssertionError("the stream ended")


async def test_open_streams_hold_no_redis_connection_each_and_all_get_the_event(real_redis: str) -> None:
    # Streams on a run re-mark its prompt as waited on every half heartbeat; a long heartbeat keeps those
    # short round trips out of the count, which is of connections held.
    quiet = ApiOptions(max_wait_s=5, sse_heartbeat_s=30)
    async with contextlib.AsyncExitStack() as stack:
        served = await stack.enter_async_context(served_gateway(real_redis, quiet))
        client = await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=served.base_url,
                headers=AGENT_AUTH,
                timeout=10,
                limits=httpx.Limits(max_connections=STREAMS + 10),
            )
        )
        run = await start_run(client)
        first = await stack.enter_async_context(open_stream(client, "/v1/events"))
        before = await redis_connections(real_redis)
        blocked_before = await blocked_connections(real_redis)
        streams = [first]
        for index in range(STREAMS - 1):
            path = "/v1/events" if index % 2 else f"/v1/events?run_id={run['run_id']}"
            streams.append(await stack.enter_async_context(open_stream(client, path)))
        after = await redis_connections(real_redis)
        blocked_after = await blocked_connections(real_redis)
        prompt = await raise_prompt(client, run["run_id"])
        events = await asyncio.gather(*(next_event(lines) for lines in streams))
    assert after <= before + 2, f"{STREAMS} streams took {after - before} more Redis connections"
    assert blocked_after <= blocked_before + 1, f"{blocked_after - blocked_before} more blocking reads"
    assert {event["data"]["data"]["prompt_id"] for event in events} == {prompt["prompt_id"]}
    assert all(event["event"] == "input.requested" for event in events)


async def test_held_long_polls_hold_no_redis_connection_each(served: Served, real_redis: str) -> None:
    limits = httpx.Limits(max_connections=2 * STREAMS + 10)
    async with (
        httpx.AsyncClient(base_url=served.base_url, headers=AGENT_AUTH, timeout=10, limits=limits) as agent,
        served.client(OPERATOR_AUTH) as operator,
    ):
        run = await start_run(agent)
        prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Name?"}])
        feed = {
            "wait": 5,
            **({"after": c} if (c := (await agent.get("/v1/messages")).json()["cursor"]) else {}),
        }
        before = await redis_connections(real_redis)
        polls = []
        for index in range(2 * STREAMS):  # one at a time: a burst would open pooled connections
            if index % 2:
                polls.append(asyncio.create_task(agent.get("/v1/messages", params=feed)))
            else:
                path = f"/v1/prompts/{prompt['prompt_id']}"
                polls.append(asyncio.create_task(agent.get(path, params={"wait": 5})))
            await until_held(served, index + 1)
        held = await redis_connections(real_redis)
        answered = await operator.post(
            respond_path(run, prompt["prompt_id"]),
            json={"answers": [{"questionId": "q1", "otherText": "Ada"}]},
            headers={"X-Threadgate-From": STARTER},
        )
        said = InboundMessage(thread_id="web:elsewhere", sender="web:bob", text="hello")
        await served.runtime.gateway.receive(said)  # queued for agents: every feed long-poll gets it
        results = await asyncio.wait_for(asyncio.gather(*polls), 10)
    assert held <= before + 2, f"{2 * STREAMS} long-polls took {held - before} more Redis connections"
    assert answered.status_code == 200, answered.text
    assert all(r.json()["prompt_state"] == "answered" for r in results[0::2])
    assert all([m["text"] for m in r.json()["items"]] == ["hello"] for r in results[1::2])


async def test_a_resumed_stream_gets_the_missed_events_then_the_live_ones_each_once(
    served: Served, agent: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    async with open_stream(agent, "/v1/events") as lines:
        first = await raise_prompt(agent, run["run_id"])
        seen = await next_event(lines)
    missed = [await raise_prompt(agent, run["run_id"]) for _ in range(2)]  # while nobody listens
    async with open_stream(agent, "/v1/events", {"Last-Event-ID": seen["cursor"]}) as lines:
        replayed = [await next_event(lines) for _ in range(4)]  # each missed raise: superseded + requested
        live = await raise_prompt(agent, run["run_id"])  # raised after the stream is following
        rest = [await next_event(lines) for _ in range(2)]
    got = replayed + rest
    assert seen["data"]["data"]["prompt_id"] == first["prompt_id"]
    requested = [e["data"]["data"]["prompt_id"] for e in got if e["event"] == "input.requested"]
    assert requested == [missed[0]["prompt_id"], missed[1]["prompt_id"], live["prompt_id"]]
    cursors = [e["cursor"] for e in got]
    assert len(set(cursors)) == len(cursors)
    vectors = [[position(one) for one in feed_positions(c, FEED_WIDTH)] for c in cursors]
    for before, after in itertools.pairwise(vectors):  # each cursor at or past the one before, everywhere
        assert all(a >= b for a, b in zip(after, before, strict=True)) and after != before


async def test_streams_beyond_the_cap_are_refused_with_429_and_retry_after(real_redis: str) -> None:
    async with (
        served_gateway(real_redis, threadgate_max_streams_per_token=2) as served,
        served.client(AGENT_AUTH) as agent,
        served.client(OPERATOR_AUTH) as operator,
    ):
        async with open_stream(agent, "/v1/events"), open_stream(agent, "/v1/events"):
            async with asyncio.timeout(5):  # refused at once, not held open
                refused = await agent.get("/v1/events")
                poll = await agent.get("/v1/messages", params={"wait": 1})
            quick = await agent.get("/v1/messages")  # not held: not counted
            other = await operator.get("/v1/messages", params={"wait": 0.1})  # another token
        await until_held(served, 0)  # closed streams give their slots back
        async with open_stream(agent, "/v1/events"):
            pass
    for response in (refused, poll):
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "RATE_LIMITED"
        assert int(response.headers["Retry-After"]) >= 1
    assert quick.status_code == 200 and other.status_code == 200
