"""What the benchmarks drive: a typical two-question prompt, threads, runs, and a gateway on a no-op chat."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bench.counting import count_round_trips
from gateway.base.collector import tune_collector
from gateway.base.ids import ThreadRef
from gateway.base.models import PromptRequest, RunRequest, ThreadItem
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels, MessageRef
from gateway.store import Store, connect

AGENT = "bench"
STARTER = "slack:UBENCHALICE"
APPROVER = "slack:UBENCHBOB"
# A typical ask_user_question: two questions, three options each with a short description.
TYPICAL_PROMPT: dict[str, Any] = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Which environment should this deploy go to?",
            "header": "Target",
            "options": [
                {"label": "staging", "description": "push to staging.example.com"},
                {"label": "production", "description": "push to www.example.com"},
                {"label": "canary", "description": "5% of production traffic"},
            ],
        },
        {
            "question": "Run the database migrations first?",
            "header": "Migrations",
            "options": [
                {"label": "yes", "description": "apply pending migrations before the deploy"},
                {"label": "no", "description": "deploy code only"},
                {"label": "dry run", "description": "print the migration plan and stop"},
            ],
        },
    ],
}
_serial = itertools.count(1)
SETUP_CONCURRENCY = 64


def typical_request() -> PromptRequest:
    return PromptRequest.model_validate(TYPICAL_PROMPT)


def new_thread(prefix: str = "CBENCH") -> str:
    """A fresh Slack thread id, unique within this process."""
    return f"slack:{prefix}:{next(_serial)}.000100"


class NullChannel:
    """A chat that accepts every post at once: the benchmarks measure the gateway, not a platform."""

    platform = "slack"

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        return MessageRef(thread.thread_id, f"m{next(self._ids)}")

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        return None


@asynccontextmanager
async def running_gateway(url: str, *, counted: bool = True) -> AsyncIterator[Gateway]:
    """A started gateway on ``url`` (its own connection pool, counting round trips) over a NullChannel."""
    connection = connect(url)
    if counted:
        count_round_trips(connection.client)
    gateway = Gateway(Store(connection.client), Channels([NullChannel()]), sweep_interval=3600)
    await gateway.start()
    tune_collector()  # as `threadgate serve` does once started
    try:
        yield gateway
    finally:
        await gateway.stop()
        await connection.client.aclose()


async def open_prompts(gateway: Gateway, count: int, prefix: str = "CBENCH") -> list[tuple[str, str]]:
    """Create ``count`` runs on fresh threads and raise a typical prompt in each: (thread, prompt id)."""
    request = typical_request()

    async def one() -> tuple[str, str]:
        thread = new_thread(prefix)
        run = await gateway.create_run(RunRequest(thread_id=thread, agent=AGENT, started_by=STARTER))
        prompt = await gateway.raise_prompt(run.run_id, request)
        return thread, prompt.prompt_id

    opened: list[tuple[str, str]] = []
    for start in range(0, count, SETUP_CONCURRENCY):
        batch = min(SETUP_CONCURRENCY, count - start)
        opened.extend(await asyncio.gather(*(one() for _ in range(batch))))
    await gateway.outbox.idle()
    return opened
