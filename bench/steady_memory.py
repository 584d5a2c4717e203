"""Figure 9: steady memory. One ``threadgate serve`` process under steady traffic over HTTP, as a soak
drives it: runs, each raising one to four prompts (questions, approvals, two-field forms answered a field
at a time, a text question, now and then a form left to expire), answered through the API and the web
chat while the agent long-polls each, plus a chat message per run queued for agents.

The server's RSS is read once the warm-up runs are done and again after the measured runs; the growth
per thousand runs is the figure. A gateway that holds nothing per finished run stays flat (within the
allocator's noise) once its bounded caches are full.

``python -m bench.steady_memory [--runs N] [--warmup N]`` runs it alone on a private redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import aiohttp

from bench.http import AGENT, READY, serve_command, server_process
from bench.idle import rss_bytes
from bench.redis_proc import PrivateRedis, free_port
from bench.workload import TYPICAL_PROMPT

CONCURRENCY = 16
NAME = "alice"  # the web chat name of every run's starter (web:alice), who answers in the chat
EXPIRING_EVERY = 10  # one run in this many leaves a form to expire
SETTLE_S = 3.0  # after the last run: the outbox drained, the expiries swept
KEEPALIVE_S = 1.0
READY_TIMEOUT_S = 120.0  # a long figure is often run on a busy machine: a slow start is no failure
FORM = {
    "kind": "form",
    "message": "Where should the report go?",
    "requested_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "copies": {"type": "integer"}},
        "required": ["city", "copies"],
    },
}
APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Run `make deploy`?", "header": "Deploy"}],
    "tool_call": {"name": "Bash", "arguments": {"command": "make deploy"}},
}
Session = aiohttp.ClientSession
TEXT = {"kind": "text", "questions": [{"question": "What should the release note say?", "header": "Note"}]}


@dataclass(frozen=True, slots=True)
class SteadyMemory:
    runs: int
    warmup: int
    prompts: int
    calls: int
    seconds: float
    rss_start: int
    rss_end: int

    @property
    def kb_per_1k_runs(self) -> float:
        return (self.rss_end - self.rss_start) / 1024 / max(1, self.runs) * 1000

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "warmup_runs": self.warmup,
            "prompts": self.prompts,
            "calls_per_second": round(self.calls / self.seconds, 1) if self.seconds else 0.0,
            "rss_start_mb": round(self.rss_start / 2**20, 1),
            "rss_end_mb": round(self.rss_end / 2**20, 1),
            "kb_per_1k_runs": round(self.kb_per_1k_runs, 1),
        }


class Soak:
    """Drives runs against one gateway: the agent's calls with its token, the operator's with another,
    the starter's chat posts with none (an open web chat)."""

    def __init__(self, agent: Session, operator: Session, visitor: Session) -> None:
        self.agent, self.operator, self.visitor = agent, operator, visitor
        self.calls = 0
        self.prompts = 0
        self._posts = itertools.count()

    async def call(self, session: Session, method: str, path: str, **options: Any) -> Any:
        self.calls += 1
        async with session.request(method, path, **options) as response:
            if response.status >= 300:
                raise RuntimeError(f"{method} {path} answered {response.status}: {await response.text()}")
            return await response.json()

    async def say(self, room: str, text: str, **fields: Any) -> str:
        """A chat post by the run's starter; its outcome."""
        body = {"name": NAME, "text": text, "client_id": f"soak-{next(self._posts)}", **fields}
        reply = await self.call(self.visitor, "POST", f"/chat/{room}/messages", json=body)
        return str(reply["outcome"])

    async def prompt(self, run_id: str, room: str, shape: int, expiring: bool) -> None:
        """Raise one prompt while the agent long-polls it, answer it (or let it expire), and check."""
        body, answer = _shape(shape, expiring)
        prompt = await self.call(self.agent, "POST", f"/v1/runs/{run_id}/prompts", json=body)
        self.prompts += 1
        prompt_id = prompt["prompt_id"]
        poll = asyncio.create_task(
            self.call(self.agent, "GET", f"/v1/prompts/{prompt_id}", params={"wait": "30"})
        )
        if answer is not None:
            await answer(self, room, prompt_id)
        settled = await poll
        while settled["prompt_state"] == "pending":  # a long-poll can end first; an agent asks again
            settled = await self.call(self.agent, "GET", f"/v1/prompts/{prompt_id}", params={"wait": "30"})

    async def run(self, index: int) -> None:
        room = f"soak-{index}"
        body = {"thread_id": f"web:{room}", "agent": AGENT, "started_by": f"web:{NAME}"}
        run_id = (await self.call(self.agent, "POST", "/v1/runs", json=body))["run_id"]
        for step in range(1 + index % 4):
            last = step == index % 4
            await self.prompt(run_id, room, index + step, last and index % EXPIRING_EVERY == 0)
        await self.say(room, f"thanks, that was run {index}")  # no prompt open: queued for agents
        await self.call(self.agent, "POST", f"/v1/runs/{run_id}/end")


async def _inputs(soak: Soak, room: str, prompt_id: str) -> None:
    answer = {"action": "accept", "content": "staging", "from": f"web:{NAME}"}
    await soak.call(soak.operator, "POST", f"/v1/agents/{AGENT}/inputs/{prompt_id}", json=answer)


async def _form_in_steps(soak: Soak, room: str, prompt_id: str) -> None:
    """A field at a time: the first reply is kept as the form's draft, the second completes it."""
    if (kept := await soak.say(room, "Lisbon", prompt_id=prompt_id)) != "kept":
        raise RuntimeError(f"a form's first field was {kept}, not kept")
    await soak.say(room, "3", prompt_id=prompt_id)


async def _approve(soak: Soak, room: str, prompt_id: str) -> None:
    await soak.say(room, "approve", prompt_id=prompt_id)


async def _reply(soak: Soak, room: str, prompt_id: str) -> None:
    await soak.say(room, "Faster start-up and a smaller image.", prompt_id=prompt_id)


Answer = Callable[[Soak, str, str], Awaitable[None]]
SHAPES: tuple[tuple[dict[str, Any], Answer], ...] = (
    (TYPICAL_PROMPT, _inputs),
    (FORM, _form_in_steps),
    (APPROVAL, _approve),
    (TEXT, _reply),
)


def _shape(index: int, expiring: bool) -> tuple[dict[str, Any], Answer | None]:
    if expiring:
        return {**FORM, "expires_in_seconds": 1}, None
    return SHAPES[index % len(SHAPES)]


async def _drive(soak: Soak, start: int, count: int, concurrency: int) -> None:
    work = iter(range(start, start + count))

    async def worker() -> None:
        for index in work:
            await soak.run(index)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def server_env(redis_url: str, agent_token: str, operator_token: str) -> dict[str, str]:
    """One gateway with an open web chat whose post limits a soak from one address never reaches."""
    return {
        "REDIS_URL": redis_url,
        "THREADGATE_WEB_CHAT": "open",
        "THREADGATE_API_TOKENS": (
            f"bench-agent:agent:{agent_token}:{AGENT},bench-operator:operator:{operator_token}"
        ),
        "THREADGATE_WEB_POSTS_PER_NAME": "1000000",
        "THREADGATE_WEB_POSTS_PER_CLIENT": "1000000",
        "THREADGATE_WEB_NEW_ROOMS_PER_CLIENT": "1000000",
        "THREADGATE_LOG_LEVEL": "WARNING",
    }


async def steady_memory_figure(
    redis_url: str, runs: int, warmup: int, concurrency: int = CONCURRENCY, progress: bool = False
) -> SteadyMemory:
    agent_token, operator_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    port = free_port()
    env = server_env(redis_url, agent_token, operator_token)
    async with AsyncExitStack() as stack:
        server = await stack.enter_async_context(
            server_process(serve_command(port), env, port, READY, ready_timeout_s=READY_TIMEOUT_S)
        )

        def session(token: str | None) -> Session:
            # Idle connections closed well before the server's keep-alive (5 s) would: never a reset reuse.
            connector = aiohttp.TCPConnector(limit=4 * concurrency, keepalive_timeout=KEEPALIVE_S)
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return aiohttp.ClientSession(base_url=server.base, headers=headers, connector=connector)

        agent, operator, visitor = [
            await stack.enter_async_context(session(token)) for token in (agent_token, operator_token, None)
        ]
        soak = Soak(agent, operator, visitor)
        await _drive(soak, 0, warmup, concurrency)
        if progress:
            print(
                f"  warm-up of {warmup:,} runs done: RSS {rss_bytes(server.pid) / 2**20:.1f} MB",
                file=sys.stderr,
            )
        await asyncio.sleep(SETTLE_S)
        rss_start, calls, prompts, started = rss_bytes(server.pid), soak.calls, soak.prompts, time.monotonic()
        done = 0
        while done < runs:  # in slices, so a long figure can say how it goes
            size = min(runs - done, max(1000, runs // 10))
            await _drive(soak, warmup + done, size, concurrency)
            done += size
            if progress:
                rss = rss_bytes(server.pid) / 2**20
                print(f"  {done:,} runs: RSS {rss:.1f} MB", file=sys.stderr, flush=True)
        seconds = time.monotonic() - started
        await asyncio.sleep(SETTLE_S)
        rss_end = rss_bytes(server.pid)
    return SteadyMemory(runs, warmup, soak.prompts - prompts, soak.calls - calls, seconds, rss_start, rss_end)


async def _alone(runs: int, warmup: int, concurrency: int) -> SteadyMemory:
    with PrivateRedis() as redis_server:
        return await steady_memory_figure(redis_server.url, runs, warmup, concurrency, progress=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000, help="measured runs (default 20,000)")
    parser.add_argument("--warmup", type=int, default=5_000, help="runs before the first reading (5,000)")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY, help="runs at once (default 16)")
    args = parser.parse_args()
    figure = asyncio.run(_alone(args.runs, args.warmup, args.concurrency))
    print(json.dumps(figure.as_dict()))


if __name__ == "__main__":
    main()
