"""Figure 5: idle waiters. One gateway process holds thousands of long-polls and event streams; what they
cost it (Redis connections, memory), how fast an answer given on another process wakes them, and whether
the rest of its API stays quick meanwhile.

The waiters are raw asyncio sockets (one HTTP/1.1 request each, then a read), the cheapest client there is,
so the figure measures the gateway, not the client.
"""

from __future__ import annotations

import asyncio
import resource
import secrets
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from bench.http import AGENT, READY, STARTER, server_process
from bench.redis_proc import free_port
from bench.stats import percentile
from bench.workload import TYPICAL_PROMPT

HOLDER, ANSWERER = "threadgate-holder", "threadgate-answerer"  # Redis client names of the two processes
WAITERS_PER_PROMPT = 20
OPEN_BATCH = 500  # connections opened at once: below the listen backlog
WAKE_SAMPLES = 100  # prompts answered one by one on the other process, each waking its waiters
LIST_SAMPLES = 200
HELD_TIMEOUT_S = 300.0
HELD_SHARE = 0.995
SETTLE_S = 12.0  # longer than the gateway's pool trim interval (10 s)


@dataclass(frozen=True, slots=True)
class IdleFigure:
    long_polls: int
    streams: int
    held: int
    redis_connections: int
    bytes_per_waiter: int
    wake_ms: tuple[float, float]
    list_ms: tuple[float, float]
    ready_status: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.held,
            "long_polls": self.long_polls,
            "streams": self.streams,
            "redis_connections": self.redis_connections,
            "bytes_per_waiter": self.bytes_per_waiter,
            "wake_p50_ms": round(self.wake_ms[0], 2),
            "wake_p99_ms": round(self.wake_ms[1], 2),
            "list_prompts_p50_ms": round(self.list_ms[0], 2),
            "list_prompts_p99_ms": round(self.list_ms[1], 2),
            "readyz_status": self.ready_status,
        }


def raise_open_files(wanted: int) -> None:
    """Lift this process's (and its children's) open-file limit toward ``wanted``, up to the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class Waiter:
    """One raw HTTP/1.1 connection holding a request open; ``woke_at`` is when the settled answer came."""

    __slots__ = ("reader", "request", "task", "woke_at", "writer")

    def __init__(self) -> None:
        self.woke_at = 0.0
        self.task: asyncio.Task[None] | None = None

    async def open(self, port: int, request: bytes) -> None:
        self.request = request
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(request)

    async def wait_long_poll(self) -> None:
        """Hold the long-poll; one that ends still pending is asked again at once, as an agent's client
        chains them (opening thousands can outlast one ``wait``)."""
        while True:
            arrived, status, body = await self.response()
            if status == 200 and b'"prompt_state":"pending"' not in body:
                self.woke_at = arrived
                return
            self.writer.write(self.request)

    async def response(self) -> tuple[float, int, bytes]:
        """When the next response's first bytes came, its status and its body."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        arrived = time.perf_counter()
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return arrived, status, await self.reader.readexactly(length)

    async def wait_connected(self) -> None:
        """An event stream: read up to its ``: connected`` comment, then hold it idle."""
        seen = b""
        while b": connected" not in seen:
            chunk = await self.reader.read(4096)
            if not chunk:
                raise RuntimeError("an event stream closed before it connected")
            seen += chunk

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.writer.close()


def _get(path: str, token: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode()


async def _open_all(port: int, requests: list[bytes]) -> list[Waiter]:
    waiters = [Waiter() for _ in requests]
    for start in range(0, len(requests), OPEN_BATCH):
        batch = range(start, min(start + OPEN_BATCH, len(requests)))
        await asyncio.gather(*(waiters[i].open(port, requests[i]) for i in batch))
    return waiters


async def _open_ramped(base: str, port: int, long_polls: list[bytes], streams: list[bytes]) -> list[Waiter]:
    """Open the waiters a batch at a time, each batch once the last is held: agents that come and wait,
    rather than all of them reconnecting in the same instant (a herd queues on the Redis pool)."""
    waiters: list[Waiter] = []
    for start in range(0, len(long_polls) + len(streams), OPEN_BATCH):
        batch = (long_polls + streams)[start : start + OPEN_BATCH]
        opened = await _open_all(port, batch)
        for waiter in opened:
            if b"/v1/prompts/" in waiter.request:
                waiter.task = asyncio.create_task(waiter.wait_long_poll())
            else:
                waiter.task = asyncio.create_task(waiter.wait_connected())
        waiters += opened
        await _until_held(base, len(waiters))
    return waiters


async def _open_streams(base: str) -> float:
    async with aiohttp.ClientSession(base_url=base) as client, client.get("/metrics") as response:
        for line in (await response.text()).splitlines():
            if line.startswith("threadgate_open_streams "):
                return float(line.split()[1])
    return 0.0


async def _until_held(base: str, count: int) -> int:
    """Until the gateway holds (nearly) ``count`` waiters; chained long-polls are briefly between two."""
    deadline = time.monotonic() + HELD_TIMEOUT_S
    while (held := await _open_streams(base)) < count * HELD_SHARE:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the gateway held {held:.0f} of {count} waiters after {HELD_TIMEOUT_S:.0f} s")
        await asyncio.sleep(0.2)
    return int(held)


async def _redis_connections(redis_url: str, name: str) -> int:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return sum(1 for line in await client.client_list() if line.get("name") == name)
    finally:
        await client.aclose()


async def _call(session: aiohttp.ClientSession, method: str, path: str, **options: Any) -> dict[str, Any]:
    async with session.request(method, path, **options) as response:
        if response.status >= 300:
            raise RuntimeError(f"{path} answered {response.status}: {await response.text()}")
        body: dict[str, Any] = await response.json()
        return body


async def _raise_prompts(agent: aiohttp.ClientSession, count: int) -> list[str]:
    async def one(index: int) -> str:
        body = {"thread_id": f"web:idle-{index}", "agent": AGENT, "started_by": STARTER}
        run_id = (await _call(agent, "POST", "/v1/runs", json=body))["run_id"]
        return str(
            (await _call(agent, "POST", f"/v1/runs/{run_id}/prompts", json=TYPICAL_PROMPT))["prompt_id"]
        )

    ids: list[str] = []
    for start in range(0, count, 16):
        ids += await asyncio.gather(*(one(i) for i in range(start, min(start + 16, count))))
    return ids


async def idle_figure(redis_url: str, long_polls: int, streams: int) -> IdleFigure:
    raise_open_files(2 * (long_polls + streams) + 1024)
    token = secrets.token_urlsafe(24)
    tokens = f"bench-agent:agent:{token}:{AGENT},bench-operator:operator:{token}x"
    env = {
        "THREADGATE_WEB_CHAT": "open",
        "THREADGATE_API_TOKENS": tokens,
        # one token holds every waiter here; the default allows 1,000 per token
        "THREADGATE_MAX_STREAMS_PER_TOKEN": str(long_polls + streams),
        "THREADGATE_MAX_STREAMS": str(long_polls + streams),
    }
    ports = [free_port(), free_port()]
    async with AsyncExitStack() as stack:
        holder, answerer = [
            await stack.enter_async_context(
                server_process(
                    [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port)],
                    {**env, "REDIS_URL": f"{redis_url}?client_name={name}"},
                    port,
                    READY,
                )
            )
            for port, name in zip(ports, (HOLDER, ANSWERER), strict=True)
        ]
        auth = {"Authorization": f"Bearer {token}"}
        agent = await stack.enter_async_context(aiohttp.ClientSession(base_url=holder.base, headers=auth))
        operator = await stack.enter_async_context(
            aiohttp.ClientSession(base_url=answerer.base, headers={"Authorization": f"Bearer {token}x"})
        )
        prompts = await _raise_prompts(agent, max(1, long_polls // WAITERS_PER_PROMPT))
        # warm the holder's code paths (a long-poll, a stream) before the baseline
        warm = await _open_all(
            ports[0], [_get("/v1/events", token), _get(f"/v1/prompts/{prompts[-1]}?wait=1", token)]
        )
        await warm[0].wait_connected()
        await warm[1].response()
        for waiter in warm:
            waiter.close()
        baseline = rss_bytes(holder.pid)

        waiters = await _open_ramped(
            holder.base,
            ports[0],
            [_get(f"/v1/prompts/{prompts[i % len(prompts)]}?wait=60", token) for i in range(long_polls)],
            [_get("/v1/events", token) for _ in range(streams)],
        )
        polls = waiters[:long_polls]
        held = await _until_held(holder.base, long_polls + streams)
        await asyncio.sleep(SETTLE_S)  # idle now: the connections the arrivals opened are closed again
        held_rss = rss_bytes(holder.pid)
        connections = await _redis_connections(redis_url, HOLDER)

        listing: list[float] = []
        for _ in range(LIST_SAMPLES):
            started = time.perf_counter()
            await _call(agent, "GET", "/v1/prompts")
            listing.append(time.perf_counter() - started)
        async with agent.get(READY) as response:
            ready_status = response.status

        wakes: list[float] = []
        for index in range(min(WAKE_SAMPLES, len(prompts))):
            prompt_id = prompts[index]
            mine = polls[index :: len(prompts)]
            body = {"action": "accept", "content": "1", "from": STARTER}
            await _call(operator, "POST", f"/v1/agents/{AGENT}/inputs/{prompt_id}", json=body)
            answered_at = time.perf_counter()  # the answer is given: the other process said so
            await asyncio.gather(*(waiter.task for waiter in mine if waiter.task is not None))
            wakes += [max(0.0, waiter.woke_at - answered_at) for waiter in mine]
        for waiter in waiters:
            waiter.close()
    return IdleFigure(
        long_polls,
        streams,
        held,
        connections,
        max(0, (held_rss - baseline) // max(1, held)),
        (percentile(wakes, 50) * 1000, percentile(wakes, 99) * 1000),
        (percentile(listing, 50) * 1000, percentile(listing, 99) * 1000),
        ready_status,
    )
