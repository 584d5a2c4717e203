"""Threadgate's Python clients, async (``Threadgate``) and sync (``Client``), a call per endpoint of the API,
plus ``ask`` and ``approve``; ``require_approval`` and ``ask_human`` for plain functions and agent tools.

Example (an agent asking a person in a chat thread, then acting on the answer)::

    import asyncio

    from gateway.client import Threadgate


    # A thread and a person as their platform spells them (docs/channels/plugins.md).
    THREAD_ID, PERSON = "<platform>:<coordinates>", "<platform>:<person>"


    async def main() -> None:
        # THREADGATE_URL (default http://127.0.0.1:8787) and THREADGATE_TOKEN come from the environment.
        async with Threadgate() as tg:
            run = await tg.create_run(THREAD_ID, agent="ops", started_by=PERSON)
            target = await tg.ask(run.run_id, "Deploy where?", ["staging", "production"])
            if await tg.approve(run.run_id, "deploy", {"target": target[0]}):
                await tg.post_message(run.thread_id, f"Deploying to {target[0]}.")
            await tg.end_run(run.run_id)


    asyncio.run(main())

``Client`` has the same methods without ``await`` (``with Client() as tg: ...``). ``ask`` and ``approve``
raise the prompt, then wait for its answer across as many long-polls as it takes, riding out gateway
restarts (the prompt lives in Redis, not in the gateway process).
"""

from gateway.client.approval import ask_human, ask_human_async, require_approval
from gateway.client.async_client import Threadgate
from gateway.client.calls import DEFAULT_URL, LONG_POLL_S, Allowed, Approval, Page
from gateway.client.errors import ApprovalMismatch, PromptCancelled, PromptUnavailable, ThreadgateError
from gateway.client.human import ApprovalDenied, Human, HumanUnavailable
from gateway.client.model_forms import FormNotFlat
from gateway.client.sse import Event
from gateway.client.sync_client import Client

__all__ = [
    "DEFAULT_URL",
    "LONG_POLL_S",
    "Allowed",
    "Approval",
    "ApprovalDenied",
    "ApprovalMismatch",
    "Client",
    "Event",
    "FormNotFlat",
    "Human",
    "HumanUnavailable",
    "Page",
    "PromptCancelled",
    "PromptUnavailable",
    "Threadgate",
    "ThreadgateError",
    "ask_human",
    "ask_human_async",
    "require_approval",
]
