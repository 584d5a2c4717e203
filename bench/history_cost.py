"""``python -m bench.history_cost``: Redis memory per audit record (the history's partitions), on a
private Redis.

Raises ``--count`` typical approvals (a shell command, as coding agents ask) in 50 threads through the API
and answers each, waits for the outbox to write their records, and divides the growth of ``MEMORY USAGE``
of every history stream (``keys.history_feed``) by the count; the once-markers beside them (gone after an
hour) are measured apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import httpx
import redis.asyncio as aioredis

from bench.redis_proc import PrivateRedis
from channels.web import WebChannel
from gateway.api import create_app
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from gateway.store import keys

AGENT, OPERATOR = "bench-agent-token", "bench-operator-token"
TOKENS = f"bench:agent:{AGENT}:*,desk:operator:{OPERATOR}"


def approval(n: int) -> dict[str, object]:
    command = f"kubectl rollout restart deployment/web-{n % 40} --namespace production"
    return {
        "kind": "approval",
        "questions": [{"question": "Allow Bash to run this command?"}],
        "tool_call": {
            "name": "Bash",
            "arguments": {"command": command, "description": "Restart the web pods"},
        },
    }


STREAMS = [keys.history_feed(part) for part in keys.EVERY_PARTITION]


async def memory(client: aioredis.Redis, key: str) -> int:
    return int(await client.memory_usage(key, samples=0) or 0)


async def streams_memory(client: aioredis.Redis) -> int:
    return sum([await memory(client, stream) for stream in STREAMS])


async def markers(client: aioredis.Redis) -> int:
    total = 0
    for stream in STREAMS:
        async for key in client.scan_iter(match=keys.feed_seen(stream, "*"), count=1000):
            total += await memory(client, key)
    return total


async def sample_record(client: aioredis.Redis) -> bytes:
    """One stored record's JSON, from the first partition that holds one."""
    for stream in STREAMS:
        rows: Any = await client.xrange(stream, count=1)
        if rows:
            return bytes(rows[0][1][b"j"])
    raise AssertionError("no history record was written")


async def measure(count: int) -> dict[str, float]:
    with PrivateRedis() as redis:
        settings = Settings(_env_file=None, redis_url=redis.url, threadgate_api_tokens=TOKENS)  # type: ignore[call-arg]
        runtime = Runtime.build(settings, channels=[WebChannel(None)])
        app = create_app(runtime)
        probe = aioredis.Redis.from_url(redis.url)
        await runtime.start()
        try:
            transport = httpx.ASGITransport(app=app)
            base = "http://127.0.0.1"
            agent = httpx.AsyncClient(
                transport=transport, base_url=base, headers={"Authorization": f"Bearer {AGENT}"}
            )
            desk = httpx.AsyncClient(
                transport=transport, base_url=base, headers={"Authorization": f"Bearer {OPERATOR}"}
            )
            async with agent, desk:
                before = await streams_memory(probe)
                for n in range(count):
                    body = {"thread_id": f"web:room{n % 50}", "agent": "ops", "started_by": "web:alice"}
                    run = (await agent.post("/v1/runs", json=body)).json()
                    prompt = (await agent.post(f"/v1/runs/{run['run_id']}/prompts", json=approval(n))).json()
                    answer = {"action": "accept", "content": n % 3 != 0, "from": "web:alice"}
                    response = await desk.post(f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json=answer)
                    assert response.status_code == 200, response.text
                await runtime.gateway.outbox.sweep(everything=True)
                await runtime.gateway.outbox.idle()
                records = sum([await probe.xlen(stream) for stream in STREAMS])
                stream = await streams_memory(probe) - before
                sample = await sample_record(probe)
                marked = await markers(probe)
        finally:
            await runtime.stop()
            await probe.flushall()
            await probe.aclose()
    assert records == count, records
    return {
        "records": records,
        "stream bytes per record": stream / count,
        "record JSON bytes": len(sample),
        "once-marker bytes per record (1 hour)": marked / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="approvals to settle (default 1000)")
    figures = asyncio.run(measure(parser.parse_args().count))
    print(json.dumps({name: round(value) for name, value in figures.items()}, indent=2))


if __name__ == "__main__":
    main()
