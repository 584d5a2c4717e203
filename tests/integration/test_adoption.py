"""A restarted gateway serves at once: the prompts left waiting are adopted in the background, a failed pass
is logged and tried again, and the scan of the inbox misses nothing that settles while it runs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.backoff import Retry
from gateway.base.models import InboundMessage, PromptRequest, PromptState, RunRequest
from gateway.decision import adoption
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.store import Store, keys
from tests.support.conditions import eventually
from tests.support.log_capture import captured_logs
from tests.support.memory_channel import MemoryChannel

ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch should I deploy?"}]}
START_TIMEOUT_S = 5.0


def thread(n: int) -> str:
    return f"slack:C0456:1712345678.{n:06d}"


async def raise_in(gateway: Gateway, n: int) -> str:
    run = await gateway.create_run(RunRequest(thread_id=thread(n), agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    return prompt.prompt_id


class HeldInbox(Store):
    """A store whose scan of the inbox waits for ``release``, as a scan of a million entries takes a while;
    with ``failures`` its first scans fail instead."""

    def __init__(self, redis: Any, failures: int = 0) -> None:
        super().__init__(redis)
        self.release = asyncio.Event()
        self.failures = failures

    async def pending_states(self, batch: int = 1000) -> AsyncIterator[list[tuple[str, str | None]]]:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the scan broke")
        await self.release.wait()
        async for states in super().pending_states(batch):
            yield states


async def until_adopted(gateway: Gateway) -> None:
    async def done() -> bool:
        return gateway.adoption.done

    await eventually(done, "the waiting prompts adopted")


async def test_a_restarted_gateway_raises_and_resolves_before_adoption_finishes(store: Store) -> None:
    first = Gateway(store, Channels([MemoryChannel("slack")]))
    await first.start()
    waiting = [await raise_in(first, n) for n in range(3)]
    await first.stop()

    held = HeldInbox(store.redis)
    second = Gateway(held, Channels([MemoryChannel("slack")]))
    await asyncio.wait_for(second.start(), START_TIMEOUT_S)  # start does not wait for the scan
    try:
        assert not second.adoption.done
        assert second.adoption.describe().startswith("in progress")
        fresh = await raise_in(second, 9)
        answered = await second.receive(InboundMessage(thread_id=thread(9), sender=ALICE, text="main"))
        assert answered.outcome is Outcome.ANSWERED
        left = await second.receive(InboundMessage(thread_id=thread(0), sender=ALICE, text="dev"))
        assert left.outcome is Outcome.ANSWERED  # a prompt waiting from before is served too
        assert (await second.get_prompt(fresh)).prompt_state is PromptState.ANSWERED

        held.release.set()
        await until_adopted(second)
        assert second.adoption.adopted == len(waiting) - 1  # the answered one left the inbox
        assert second.adoption.describe() == "done: 2 waiting prompts"
    finally:
        await second.stop()


async def test_a_failed_adoption_is_logged_and_tried_again_without_stopping_the_process(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(adoption, "RETRY", Retry(base_s=0.01, max_s=0.01))
    first = Gateway(store, Channels([MemoryChannel("slack")]))
    await first.start()
    await raise_in(first, 1)
    await first.stop()

    failing = HeldInbox(store.redis, failures=2)
    failing.release.set()
    second = Gateway(failing, Channels([MemoryChannel("slack")]))
    with captured_logs() as records:
        await second.start()
        try:
            await until_adopted(second)
            assert (await raise_in(second, 2)).startswith("prm_")
        finally:
            await second.stop()
    failed = [r for r in records if r.getMessage() == "startup.adoption_failed"]
    assert len(failed) == 2 and all(r.levelno == logging.WARNING for r in failed)
    adopted = [r for r in records if r.getMessage() == "startup.adopted"]
    assert [r.fields["pending"] for r in adopted] == [1]  # type: ignore[attr-defined]


async def test_the_inbox_scan_misses_no_entry_when_others_leave_the_inbox_meanwhile(store: Store) -> None:
    ids = [f"prm_{n:026d}" for n in range(3000)]
    await store.redis.zadd(keys.PENDING, {prompt_id: n for n, prompt_id in enumerate(ids)})
    seen: list[str] = []
    async for batch in store.pending_states(batch=200):
        if not seen:  # entries already read settle and leave the inbox, as answers do meanwhile
            await store.redis.zrem(keys.PENDING, *[prompt_id for prompt_id, _ in batch])
        seen.extend(prompt_id for prompt_id, _ in batch)
    assert set(seen) == set(ids)


async def test_only_the_adopting_process_scans_the_inbox(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    held = HeldInbox(store.redis, failures=1)  # a scan would fail, and be logged
    gateway = Gateway(held, Channels([MemoryChannel("slack")]))
    with captured_logs() as records:
        await gateway.start(adopt=False)
        await asyncio.sleep(0.05)
        await gateway.stop()
    assert held.failures == 1 and not [r for r in records if r.getMessage().startswith("startup.adopt")]
    assert gateway.adoption.describe() == "not run by this process"
