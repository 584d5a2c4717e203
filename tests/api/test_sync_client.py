"""The sync ``Client`` is the async ``Threadgate``'s twin: the same methods, the same answers and errors."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from gateway.client import Client, PromptCancelled, Threadgate, ThreadgateError
from tests.api.conftest import AGENT_TOKEN, OPERATOR_TOKEN, STARTER, THREAD, Served


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_")
    }


async def _first_pending(tg: Threadgate) -> str:
    for _ in range(250):
        page = await tg.list_prompts(agent="ops")
        if page.items:
            return page.items[0].prompt_id
        await asyncio.sleep(0.02)
    raise AssertionError("no pending prompt of ops appeared")


def test_the_sync_client_has_every_method_of_the_async_one_with_the_same_signature() -> None:
    twins = _public_methods(Client)
    for name, signature in _public_methods(Threadgate).items():
        if name == "aclose":
            assert "close" in twins
            continue
        assert name in twins, f"Client lacks {name}"
        assert str(twins[name]) == str(signature).replace("AsyncIterator", "Iterator"), name


async def test_ask_from_a_script_returns_the_answer(served: Served) -> None:
    def script() -> list[str]:
        with Client(served.base_url, AGENT_TOKEN) as tg:
            run = tg.create_run(THREAD, agent="ops", started_by=STARTER)
            return tg.ask(run.run_id, "Deploy where?", ["staging", "production"])

    asking = asyncio.create_task(asyncio.to_thread(script))
    async with Threadgate(served.base_url, OPERATOR_TOKEN) as desk:
        prompt_id = await _first_pending(desk)
        await desk.answer_input("ops", prompt_id, "accept", content="production", from_=STARTER)
    assert await asyncio.wait_for(asking, 5) == ["production"]


async def test_errors_and_cancellations_are_the_same_values(served: Served) -> None:
    with Client(served.base_url, AGENT_TOKEN) as tg:
        with pytest.raises(ThreadgateError) as raised:
            await asyncio.to_thread(tg.get_prompt, "prm_nope")
        assert (raised.value.code, raised.value.status) == ("PROMPT_NOT_FOUND", 404)
        run = await asyncio.to_thread(tg.create_run, THREAD, "ops", STARTER)
        approving = asyncio.create_task(asyncio.to_thread(tg.approval, run.run_id, "db__drop", timeout=5))
        async with Threadgate(served.base_url, AGENT_TOKEN) as agent:
            await _first_pending(agent)
            await agent.end_run(run.run_id)
        with pytest.raises(PromptCancelled) as cancelled:
            await approving
    assert cancelled.value.prompt.reason_code is not None
    assert cancelled.value.prompt.reason_code.value == "run_ended"
