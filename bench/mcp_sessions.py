"""Memory an open ``/mcp`` session holds: open N sessions on an in-process gateway, measure the growth.

    PYTHONPATH=. python -m bench.mcp_sessions [N]

Each session is initialized (``initialize`` and ``notifications/initialized``) and left open, as an agent
that connected and waits would leave it. Reported: the growth of Python's allocations (tracemalloc, the
server's and this client's, which keeps only the session ids) and of the process's RSS, divided by N.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
from pathlib import Path

import httpx
import uvicorn

from gateway.api.app import create_app
from gateway.base.settings import Settings
from gateway.process.preflight import bind
from gateway.process.runtime import Runtime

TOKEN = "bench-agent-token-8c1d"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    },
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": f"Bearer {TOKEN}",
}


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def open_session(client: httpx.AsyncClient) -> str:
    opened = await client.post("/mcp", json=INITIALIZE, headers=HEADERS)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    headers = {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post("/mcp", content=json.dumps(note), headers=headers)
    return session_id


async def measure(count: int) -> dict[str, float]:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        threadgate_api_tokens=f"bench:agent:{TOKEN}",
        threadgate_mcp_sessions_per_token=count + 100,
    )
    runtime = Runtime.build(settings, channels=[])
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(runtime), lifespan="on", log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # noqa: ASYNC110 - uvicorn only offers the flag
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            for _ in range(20):  # warm up: imports, caches, the first sessions' one-off allocations
                await open_session(client)
            gc.collect()
            tracemalloc.start()
            before_py, before_rss = tracemalloc.get_traced_memory()[0], rss_bytes()
            ids = [await open_session(client) for _ in range(count)]
            gc.collect()
            after_py, after_rss = tracemalloc.get_traced_memory()[0], rss_bytes()
            tracemalloc.stop()
            assert len(set(ids)) == count
    finally:
        server.should_exit = True
        await task
        sock.close()
    return {
        "sessions": count,
        "python_bytes_per_session": (after_py - before_py) / count,
        "rss_bytes_per_session": (after_rss - before_rss) / count,
    }


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(json.dumps(asyncio.run(measure(count))))


if __name__ == "__main__":
    main()
