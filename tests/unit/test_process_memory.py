"""What a process keeps in memory is bounded, and small at its bounds: full after a few thousand runs."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest

from bench.workload import TYPICAL_PROMPT
from gateway.base.models import Prompt, PromptKind, PromptRequest, Run
from gateway.decision import outbox
from gateway.decision.outbox import FAILURES_KEPT
from gateway.delivery.channel import ChannelError, Channels
from gateway.rules import render
from gateway.store import Store
from gateway.store.codec import RECORDS_KEPT, prompt_record
from gateway.store.lru import LATEST_KEPT, RUNS_KEPT, THREADS_OF_KEPT, drop_oldest
from gateway.store.owners import RUN_AGENTS_CACHE

ASKED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
BUDGET_MB = 28  # every cache below at its bound, with typical entries
QUESTIONS = PromptRequest.model_validate(TYPICAL_PROMPT).questions or []


def _ulid(n: int) -> str:
    return f"01JX{n:022d}"


def _prompt(n: int) -> Prompt:
    return Prompt(
        prompt_id=f"prm_{_ulid(n)}",
        run_id=f"run_{_ulid(n)}",
        thread_id=f"web:room-{n}",
        agent="ops",
        kind=PromptKind.ASK_USER_QUESTION,
        questions=[question.model_copy(deep=True) for question in QUESTIONS],
        created_at=ASKED,
        expires_at=ASKED + timedelta(days=7),
        started_by="web:alice",
    )


def _fill(store: Store, runs: int) -> None:
    """What ``runs`` runs leave in the caches, one thread and one prompt each, through their own paths:
    records read back, runs and prompts located, each thread's latest prompt and agents, rendered prompts."""
    for n in range(runs):
        thread = f"web:room-{n}"
        run = Run(
            run_id=f"run_{_ulid(n)}", thread_id=thread, agent="ops", started_by="web:alice", created_at=ASKED
        )
        store._runs.put(run.run_id, run)
        store._thread_of.put(run.run_id, thread)
        store.owners.remember_run(thread, run.agent)
        prompt = store.codec.pending(prompt_record(_prompt(n)))
        store._thread_of.put(prompt.prompt_id, thread)
        store._latest.put(thread, prompt)
        render.pending_prompt_item(prompt)


def test_every_cache_is_full_at_its_bound_and_holds_a_few_megabytes_not_tens() -> None:
    render._ASKED.clear()
    gc.collect()
    tracemalloc.start()
    try:
        store = Store(None)
        _fill(store, max(RUNS_KEPT, LATEST_KEPT, RUN_AGENTS_CACHE, RECORDS_KEPT, render.ASKED_CACHE) + 100)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(store.codec) == RECORDS_KEPT
    assert len(store._runs) == RUNS_KEPT
    assert len(store._latest) == LATEST_KEPT
    assert len(store.owners._run_agents) == RUN_AGENTS_CACHE
    assert len(render._ASKED) == render.ASKED_CACHE
    assert len(store._thread_of) <= THREADS_OF_KEPT <= 2 * 5_000  # full within a warm-up of 5,000 runs
    assert held < BUDGET_MB * 2**20, f"{held / 2**20:.1f} MB"


def test_a_record_is_kept_under_its_digest_not_a_second_copy_of_itself() -> None:
    store = Store(None)
    record = prompt_record(_prompt(1))
    first = store.codec.pending(record)
    assert store.codec.pending(str(record)) is first
    assert all(len(key) < 64 for key in store.codec._records)


@pytest.mark.parametrize("threads", [FAILURES_KEPT + 1, 2 * FAILURES_KEPT, 3 * FAILURES_KEPT + 7])
def test_the_outbox_remembers_failed_posts_of_at_most_its_bound_of_threads(
    monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """Threads whose post failed and that never post again (they went idle) are forgotten, oldest first."""
    monkeypatch.setattr(outbox, "event", lambda *args, **fields: None)
    monkeypatch.setattr(outbox.metrics, "platform_error", lambda *args: None)
    box = outbox.Outbox(Store(None), Channels([]))
    for n in range(threads):
        box._back_off(f"web:room-{n}", ChannelError("refused"))
    assert len(box._failures) == len(box._retry_at) == FAILURES_KEPT
    assert f"web:room-{threads - 1}" in box._retry_at and "web:room-0" not in box._retry_at


@pytest.mark.parametrize(("size", "added"), [(1, 5), (3, 3), (10, 25)])
def test_drop_oldest_keeps_the_latest_entries(size: int, added: int) -> None:
    mapping = {n: str(n) for n in range(added)}
    drop_oldest(mapping, size)
    assert list(mapping) == list(range(added))[-size:]
