"""Graceful stop of one process's runtime: deliver what is owed, then hand the platform connections over."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

from starlette.routing import BaseRoute

from gateway.base.collector import YOUNG_THRESHOLD
from gateway.base.ids import ThreadRef
from gateway.base.models import PromptRequest, ReasonCode, RunRequest, ThreadItem
from gateway.base.settings import Settings
from gateway.delivery.channel import ChannelContext, MessageRef
from gateway.delivery.lease import Lease
from gateway.process.runtime import Runtime
from gateway.store import keys

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


@dataclass
class RecordingChannel:
    """A running channel that records posts and refuses them once stopped (as a closed client would)."""

    platform: str = "slack"
    posted: list[ThreadItem] = field(default_factory=list)
    stopped: bool = False
    lease: Lease | None = None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        assert not self.stopped, "posted after the channel stopped"
        self.posted.append(item)
        return MessageRef(thread.thread_id, str(len(self.posted)))

    async def start(self, context: ChannelContext) -> None:
        self.lease = context.lease("slack:0123456789abcdef")
        assert await self.lease.try_acquire()

    async def stop(self) -> None:
        self.stopped = True  # forgets to release its lease: the runtime still hands it over

    def routes(self) -> list[BaseRoute]:
        return []


def runtime_with(channel: RecordingChannel) -> Runtime:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    return Runtime.build(settings, channels=[channel])


async def test_stop_delivers_audit_items_another_process_left_before_the_channels_stop() -> None:
    channel = RecordingChannel()
    runtime = runtime_with(channel)
    await runtime.start()
    gateway = runtime.gateway
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    await gateway.outbox.idle()
    # Settled by "another process": the audit item waits in Redis, and this process was never kicked.
    await runtime.store.cancel(
        THREAD, prompt.prompt_id, "the run ended", ReasonCode.RUN_ENDED, gateway.now_ms()
    )
    assert await runtime.connection.client.llen(keys.chat_outbox(THREAD)) == 1

    await runtime.stop()

    assert [item.type for item in channel.posted] == ["pending_prompt", "pending_prompt_resolved"]
    assert channel.stopped


async def test_stop_releases_channel_leases_so_another_process_takes_over_at_once() -> None:
    channel = RecordingChannel()
    runtime = runtime_with(channel)
    await runtime.start()
    redis = runtime.connection.client
    other = Lease(redis, "slack:0123456789abcdef", holder="other-host:1:beef")
    assert not await other.try_acquire()

    await runtime.stop()
    assert await other.try_acquire()  # the store outlives this process's client, as Redis would


async def test_stop_marks_the_process_as_stopping_first() -> None:
    channel = RecordingChannel()
    runtime = runtime_with(channel)
    await runtime.start()
    assert not runtime.stopping
    await runtime.stop()
    assert runtime.stopping


async def test_a_started_process_freezes_what_start_up_built_and_collects_less_often() -> None:
    runtime = runtime_with(RecordingChannel())
    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])  # Python's own, whatever an earlier start in this process set
    gc.unfreeze()
    try:
        await runtime.start()
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
        await runtime.stop()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
