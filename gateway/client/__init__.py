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

from importlib import import_module

TYPE_CHECKING = False  # typing is not loaded for a hook answered by its policy, which uses one module here

# Each name is imported from its module on first use: a program that needs one part of the client (a
# hook answered by policy needs ``gateway.client.target`` alone) does not load httpx and pydantic.
_WHERE = {
    "Allowed": "gateway.client.calls",
    "Approval": "gateway.client.calls",
    "ApprovalDenied": "gateway.client.human",
    "ApprovalMismatch": "gateway.client.errors",
    "Client": "gateway.client.sync_client",
    "DEFAULT_URL": "gateway.client.env",
    "Event": "gateway.client.sse",
    "FormNotFlat": "gateway.client.model_forms",
    "Human": "gateway.client.human",
    "HumanUnavailable": "gateway.client.human",
    "LONG_POLL_S": "gateway.client.calls",
    "Page": "gateway.client.calls",
    "PromptCancelled": "gateway.client.errors",
    "PromptUnavailable": "gateway.client.errors",
    "Threadgate": "gateway.client.async_client",
    "ThreadgateError": "gateway.client.errors",
    "ask_human": "gateway.client.approval",
    "ask_human_async": "gateway.client.approval",
    "require_approval": "gateway.client.approval",
}

if TYPE_CHECKING:
    from gateway.client.approval import (
        ask_human as ask_human,
    )
    from gateway.client.approval import (
        ask_human_async as ask_human_async,
    )
    from gateway.client.approval import (
        require_approval as require_approval,
    )
    from gateway.client.async_client import (
        Threadgate as Threadgate,
    )
    from gateway.client.calls import (
        LONG_POLL_S as LONG_POLL_S,
    )
    from gateway.client.calls import (
        Allowed as Allowed,
    )
    from gateway.client.calls import (
        Approval as Approval,
    )
    from gateway.client.calls import (
        Page as Page,
    )
    from gateway.client.env import DEFAULT_URL as DEFAULT_URL
    from gateway.client.errors import (
        ApprovalMismatch as ApprovalMismatch,
    )
    from gateway.client.errors import (
        PromptCancelled as PromptCancelled,
    )
    from gateway.client.errors import (
        PromptUnavailable as PromptUnavailable,
    )
    from gateway.client.errors import (
        ThreadgateError as ThreadgateError,
    )
    from gateway.client.human import (
        ApprovalDenied as ApprovalDenied,
    )
    from gateway.client.human import (
        Human as Human,
    )
    from gateway.client.human import (
        HumanUnavailable as HumanUnavailable,
    )
    from gateway.client.model_forms import (
        FormNotFlat as FormNotFlat,
    )
    from gateway.client.sse import (
        Event as Event,
    )
    from gateway.client.sync_client import (
        Client as Client,
    )

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


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
