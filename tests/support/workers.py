"""Work run in separate processes (multiprocessing spawn), each with its own gateway on the same Redis."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from gateway.base.models import InboundMessage, PromptRequest, RunRequest
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import Decision, Store, connect
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0RACE:1712345678.000100"
QUESTION = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [{"label": "staging"}, {"label": "production"}],
        }
    ],
}


@asynccontextmanager
async def gateway_on(
    url: str,
    channel: MemoryChannel | None = None,
    store_type: type[Store] = Store,
    sweep_interval: float = 3600,
) -> AsyncIterator[Gateway]:
    connection = connect(url)
    service = Gateway(
        store_type(connection.client),
        Channels([channel or MemoryChannel("slack")]),
        sweep_interval=sweep_interval,
    )
    await service.start()
    try:
        yield service
    finally:
        await service.stop()
        await connection.client.aclose()


def _wait_for(start_at: float) -> None:
    time.sleep(max(0.0, start_at - time.time()))


def answer_many(
    url: str, prompt_id: str, identity: str, texts: list[str], start_at: float
) -> list[dict[str, Any]]:
    """Answer one prompt many times concurrently; report each call's status and the answers it saw."""

    async def main() -> list[dict[str, Any]]:
        async with gateway_on(url) as service:
            _wait_for(start_at)
            results = await asyncio.gather(*(service.answer(prompt_id, identity, text=t) for t in texts))
            await service.outbox.idle()
            return [
                {"status": r.status.value, "answers": [a.answer for a in r.prompt.answers or []]}
                for r in results
            ]

    return asyncio.run(main())


def raise_many(url: str, run_id: str, count: int, start_at: float) -> list[str]:
    """Raise ``count`` prompts concurrently on one run's thread; return their ids."""

    async def main() -> list[str]:
        async with gateway_on(url) as service:
            _wait_for(start_at)
            request = PromptRequest.model_validate(QUESTION)
            prompts = await asyncio.gather(*(service.raise_prompt(run_id, request) for _ in range(count)))
            await service.outbox.idle()
            return [prompt.prompt_id for prompt in prompts]

    return asyncio.run(main())


def sweep_for(url: str, seconds: float) -> list[str]:
    """Run a gateway whose sweepers run every 0.1 s for ``seconds``; the ids of the prompts it posted a
    reminder for."""

    async def main() -> list[str]:
        channel = MemoryChannel("slack")
        async with gateway_on(url, channel, sweep_interval=0.1) as service:
            await asyncio.sleep(seconds)
            await service.outbox.idle()
        return [
            str(posted.item.metadata.get("prompt_id"))
            for posted in channel.posts
            if posted.item.metadata.get("type") == "reminder"
        ]

    return asyncio.run(main())


def raise_and_hang(url: str, started_by: str, report_path: str) -> None:
    """Raise a prompt, write its id to ``report_path``, then wait to be killed with SIGKILL."""

    async def main() -> None:
        async with gateway_on(url) as service:
            run = await service.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=started_by))
            prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
            await service.outbox.idle()  # killed while idle, not while holding the thread's outbox lock
            report = json.dumps({"prompt_id": prompt.prompt_id, "pid": os.getpid()})
            await asyncio.to_thread(Path(report_path).write_text, report)
            await asyncio.sleep(3600)

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    asyncio.run(main())


class _KilledAfterHandBack(Store):
    """Kills its own process with SIGKILL right after the receive script handed the active prompt back."""

    async def receive(self, *args: Any, **kwargs: Any) -> Decision:
        decision = await super().receive(*args, **kwargs)
        if decision.status == "active":
            os.kill(os.getpid(), signal.SIGKILL)
        return decision


def receive_and_get_killed(url: str, sender: str, text: str, event_id: str) -> None:
    """Receive a reply to a prompt this process never saw, and die by kill -9 before deciding on it."""

    async def main() -> None:
        async with gateway_on(url, store_type=_KilledAfterHandBack) as service:
            await service.receive(
                InboundMessage(thread_id=THREAD, sender=sender, text=text, event_id=event_id)
            )

    asyncio.run(main())
