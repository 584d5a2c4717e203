"""Figure 4: raise, answer and long-poll through the HTTP API of two gateway processes, beside a bare
FastAPI app (also two processes) answering the same number of requests with one Redis GET each.

One operation: the agent raises a prompt on process A and long-polls it there; an operator answers it
on process B (``POST /v1/agents/{agent}/inputs/{id}``); the operation ends when both calls returned.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.redis_proc import free_port
from bench.stats import BesideFloor, Summary, percentile, timed
from bench.workload import TYPICAL_PROMPT

PROCESSES = 2
STARTER = "web:alice"
AGENT = "bench"
REQUESTS_PER_OPERATION = 3
READY_TIMEOUT_S = 30.0
READY = "/readyz"
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class HttpFigure(BesideFloor):
    raise_ms: tuple[float, float]
    answer_ms: tuple[float, float]
    hot: int

    def own(self) -> dict[str, Any]:
        return {
            "raise_p50_p99_ms": [round(value, 3) for value in self.raise_ms],
            "answer_p50_p99_ms": [round(value, 3) for value in self.answer_ms],
            "resolved_hot": self.hot,
        }


@dataclass(frozen=True, slots=True)
class Server:
    base: str  # http://127.0.0.1:<port>
    pid: int


@asynccontextmanager
async def server_process(
    command: list[str],
    env: dict[str, str],
    port: int,
    ready_path: str,
    ready_line: str | None = None,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> AsyncIterator[Server]:
    """A server process on ``port`` (run from an empty directory, so no ``.env`` is read), until exit;
    ready once ``ready_path`` answers 200 and (if given) a line of its output starts with ``ready_line``."""
    workdir = Path(tempfile.mkdtemp(prefix="threadgate-bench-http-"))
    with (workdir / "server.log").open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=workdir, env=checkout_env(env), stdout=log, stderr=asyncio.subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession(base_url=base) as client:
            deadline = time.monotonic() + ready_timeout_s
            while True:
                if process.returncode is not None:
                    raise RuntimeError(f"a benchmark server exited at start: see {workdir / 'server.log'}")
                try:
                    async with client.get(ready_path) as response:
                        if response.status == 200 and _said(workdir / "server.log", ready_line):
                            break
                except aiohttp.ClientError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"a benchmark server did not get ready: see {workdir / 'server.log'}")
                await asyncio.sleep(0.1)
        yield Server(base, process.pid)
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout=15)
            except TimeoutError:
                process.kill()
                await process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def checkout_env(settings: dict[str, str]) -> dict[str, str]:
    """This environment plus ``settings``, importing this checkout's code first (not an installed copy)."""
    path = os.pathsep.join(part for part in (str(ROOT), os.environ.get("PYTHONPATH", "")) if part)
    return {**os.environ, **settings, "PYTHONPATH": path}


def _said(log: Path, line: str | None) -> bool:
    """Whether a line of ``log`` starts with ``line`` (always, for None)."""
    if line is None:
        return True
    return any(seen.startswith(line) for seen in log.read_text(errors="replace").splitlines())


async def _call(
    session: aiohttp.ClientSession, method: str, path: str, status: int, **options: Any
) -> dict[str, Any]:
    """One request; its JSON body, or an error naming the path when the status is not ``status``."""
    async with session.request(method, path, **options) as response:
        if response.status != status:
            raise RuntimeError(f"{path} answered {response.status}: {await response.text()}")
        body: dict[str, Any] = await response.json()
        return body


def _session(base: str, concurrency: int, token: str | None = None) -> aiohttp.ClientSession:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connector = aiohttp.TCPConnector(limit=4 * concurrency)
    return aiohttp.ClientSession(base_url=base, headers=headers, connector=connector)


@dataclass(frozen=True, slots=True)
class GatewayRun:
    summary: Summary
    raise_ms: tuple[float, float]
    answer_ms: tuple[float, float]
    hot: int


def _gateway_env(redis_url: str) -> tuple[dict[str, str], str, str]:
    """The servers' settings on ``redis_url``, with a fresh agent and operator token."""
    agent_token, operator_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    env = {
        "REDIS_URL": redis_url,
        "THREADGATE_WEB_CHAT": "open",
        "THREADGATE_API_TOKENS": (
            f"bench-agent:agent:{agent_token}:{AGENT},bench-operator:operator:{operator_token}"
        ),
    }
    return env, agent_token, operator_token


def serve_command(port: int, workers: int = 1) -> list[str]:
    return [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port), "--workers", str(workers)]


async def measure_gateway(redis_url: str, concurrency: int, ops: int) -> GatewayRun:
    """The agent on process A, the operator on process B."""
    env, agent_token, operator_token = _gateway_env(redis_url)
    ports = [free_port() for _ in range(PROCESSES)]
    async with AsyncExitStack() as stack:
        bases = [
            await stack.enter_async_context(server_process(serve_command(port), env, port, READY))
            for port in ports
        ]
        agent = await stack.enter_async_context(_session(bases[0].base, concurrency, agent_token))
        operator = await stack.enter_async_context(_session(bases[1].base, concurrency, operator_token))
        return await _drive(agent, operator, concurrency, ops)


async def measure_workers(redis_url: str, concurrency: int, ops: int, workers: int) -> Summary:
    """The same operations against one ``serve --workers`` process: agent and operator on its one port."""
    env, agent_token, operator_token = _gateway_env(redis_url)
    port = free_port()
    command = serve_command(port, workers)
    async with AsyncExitStack() as stack:
        # With several workers, ready once the parent says every one accepts connections.
        ready_line = "Workers:" if workers > 1 else None
        server = await stack.enter_async_context(server_process(command, env, port, READY, ready_line))
        agent = await stack.enter_async_context(_session(server.base, concurrency, agent_token))
        operator = await stack.enter_async_context(_session(server.base, concurrency, operator_token))
        return (await _drive(agent, operator, concurrency, ops)).summary


async def _drive(
    agent: aiohttp.ClientSession, operator: aiohttp.ClientSession, concurrency: int, ops: int
) -> GatewayRun:
    """Warm up, then time ``ops`` operations at ``concurrency``: raise (agent), long-poll (agent), answer
    (operator)."""
    runs = []
    for index in range(ops + concurrency):
        body = {"thread_id": f"web:bench-{index}", "agent": AGENT, "started_by": STARTER}
        runs.append((await _call(agent, "POST", "/v1/runs", 201, json=body))["run_id"])
    raises: list[float] = []
    answers: list[float] = []
    hot = 0

    async def operation(index: int) -> None:
        nonlocal hot
        started = time.perf_counter()
        path = f"/v1/runs/{runs[index]}/prompts"
        prompt_id = (await _call(agent, "POST", path, 201, json=TYPICAL_PROMPT))["prompt_id"]
        raised = time.perf_counter()
        poll = asyncio.create_task(
            _call(agent, "GET", f"/v1/prompts/{prompt_id}", 200, params={"wait": "30"})
        )
        body = {"action": "accept", "content": "1", "from": STARTER}
        await _call(operator, "POST", f"/v1/agents/{AGENT}/inputs/{prompt_id}", 200, json=body)
        answers.append(time.perf_counter() - raised)
        settled = await poll
        if settled["prompt_state"] != "answered":
            raise RuntimeError(f"the long-poll returned {settled['prompt_state']}, not answered")
        hot += settled.get("resolution") == "resolved_hot"
        raises.append(raised - started)

    await timed(concurrency, concurrency, lambda i: operation(ops + i))  # warm up
    raises.clear()
    answers.clear()
    hot = 0
    summary = await timed(concurrency, ops, operation)
    raise_ms = (percentile(raises, 50) * 1000, percentile(raises, 99) * 1000)
    answer_ms = (percentile(answers, 50) * 1000, percentile(answers, 99) * 1000)
    return GatewayRun(summary, raise_ms, answer_ms, hot)


async def measure_floor(redis_url: str, concurrency: int, ops: int) -> Summary:
    """The same number of operations, each three requests (two to A, one to B) doing one GET each."""
    ports = [free_port() for _ in range(PROCESSES)]
    async with AsyncExitStack() as stack:
        bases = [
            await stack.enter_async_context(
                server_process(
                    [sys.executable, "-m", "uvicorn", "bench.http_floor:app", "--port", str(port),
                     "--log-level", "warning"],
                    {"REDIS_URL": redis_url},
                    port,
                    "/get",
                )
            )
            for port in ports
        ]  # fmt: skip
        first = await stack.enter_async_context(_session(bases[0].base, concurrency))
        second = await stack.enter_async_context(_session(bases[1].base, concurrency))

        async def operation(_index: int) -> None:
            await _call(first, "GET", "/get", 200)
            await _call(second, "GET", "/get", 200)
            await _call(first, "GET", "/get", 200)

        await timed(concurrency, concurrency, operation)
        return await timed(concurrency, ops, operation)


async def workers_figure(
    redis_url: str, concurrency: int, ops: int, counts: tuple[int, ...]
) -> dict[str, float]:
    """HTTP operations per second through one ``serve --workers N`` process, for each N in ``counts``."""
    return {
        str(count): round((await measure_workers(redis_url, concurrency, ops, count)).per_second, 1)
        for count in counts
    }


async def http_figure(redis_url: str, concurrency: int, ops: int) -> HttpFigure:
    floor = await measure_floor(redis_url, concurrency, ops)
    measured = await measure_gateway(redis_url, concurrency, ops)
    return HttpFigure(
        concurrency, measured.summary, floor, measured.raise_ms, measured.answer_ms, measured.hot
    )
