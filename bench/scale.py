"""Figure 3: resolve latency with few and with a million waiting prompts, and Redis memory per prompt.

The waiting prompts are loaded fast but faithfully: runs as ``create_run`` writes them, then per prompt
the store's own ``open_prompt`` script with the commands that precede it, plus the message reference a
post records, in pipelines. The outbox entries a raise leaves are dropped, as a drain would.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from bench.resolve import measure_gateway
from bench.stats import Summary
from bench.workload import AGENT, STARTER, running_gateway, typical_request
from gateway.base.ids import new_id
from gateway.base.models import Prompt, from_ms
from gateway.decision.service import SUPERSEDED_REASON
from gateway.store import Store, calls, keys
from gateway.store.codec import prompt_record

PIPELINE = 1000
LOADERS = 2
EXPIRES_IN_MS = 7 * 24 * 3600 * 1000
PLACEHOLDER_RUN = "run_00000000000000000000000000"
PLACEHOLDER_PROMPT = "prm_00000000000000000000000000"
PLACEHOLDER_THREAD = "slack:CSCALE:0.000100"


@dataclass(frozen=True, slots=True)
class ScaleFigure:
    concurrency: int
    few: int
    many: int
    at_few: Summary
    at_many: Summary
    load_seconds: float
    bytes_per_prompt: float
    bytes_per_run: float
    sample_keys: dict[str, int]

    @property
    def ratio(self) -> float:
        return self.at_many.p50_ms / self.at_few.p50_ms if self.at_few.p50_ms else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "few": self.few,
            "many": self.many,
            "at_few": self.at_few.as_dict(),
            "at_many": self.at_many.as_dict(),
            "p50_ratio": round(self.ratio, 3),
            "load_seconds": round(self.load_seconds, 1),
            "bytes_per_pending_prompt": round(self.bytes_per_prompt),
            "bytes_per_run": round(self.bytes_per_run),
            "memory_usage_sample": self.sample_keys,
        }


def _record_template(now_ms: int) -> str:
    """A typical prompt's stored record with placeholder ids, so a million need no model validation."""
    prompt = Prompt(
        prompt_id=PLACEHOLDER_PROMPT,
        run_id=PLACEHOLDER_RUN,
        thread_id=PLACEHOLDER_THREAD,
        agent=AGENT,
        kind=typical_request().kind,
        questions=typical_request().questions,
        created_at=from_ms(now_ms),
        expires_at=from_ms(now_ms + EXPIRES_IN_MS),
        started_by=STARTER,
    )
    return prompt_record(prompt)


def _thread(index: int) -> str:
    return f"slack:CSCALE:{index}.000100"


async def _load_runs(store: Store, first: int, count: int, now_ms: int) -> None:
    ttl = store.retain_ms // 1000 + 365 * 24 * 3600
    for start in range(first, first + count, PIPELINE):
        pipe = store.redis.pipeline(transaction=False)
        for index in range(start, min(start + PIPELINE, first + count)):
            thread, run_id = _thread(index), f"run_scale{index:021d}"
            record = (
                f'{{"run_id":"{run_id}","thread_id":"{thread}","agent":"{AGENT}",'
                f'"started_by":"{STARTER}","state":"running","created_at":"{from_ms(now_ms).isoformat()}"}}'
            )
            pipe.set(keys.run_index(run_id), thread, ex=ttl)
            pipe.hset(keys.run(thread, run_id), mapping={"rec": record, "state": "running"})
        await pipe.execute()


async def _load_prompts(store: Store, first: int, count: int, now_ms: int) -> None:
    template = _record_template(now_ms)
    sha = store.scripts.shas["open_prompt"]
    expires_ms = now_ms + EXPIRES_IN_MS
    for start in range(first, first + count, PIPELINE):
        pipe = store.redis.pipeline(transaction=False)
        for index in range(start, min(start + PIPELINE, first + count)):
            thread, run_id, prompt_id = _thread(index), f"run_scale{index:021d}", new_id("prm")
            record = (
                template.replace(PLACEHOLDER_PROMPT, prompt_id)
                .replace(PLACEHOLDER_RUN, run_id)
                .replace(PLACEHOLDER_THREAD, thread)
            )
            pipe.set(keys.prompt_index(prompt_id), thread, px=EXPIRES_IN_MS + store.retain_ms)
            part = keys.partition(thread)
            pipe.zadd(keys.expiry_index(part), {prompt_id: expires_ms})
            pipe.zadd(keys.pending_index(part), {prompt_id: now_ms})
            pipe.zadd(keys.agent_pending(AGENT, part), {prompt_id: now_ms})
            call = calls.open_prompt(
                store._lead(now_ms),
                thread,
                prompt_id,
                run_id,
                record,
                now_ms,
                expires_ms,
                store.retain_ms,
                SUPERSEDED_REASON,
                AGENT,
            )
            pipe.evalsha(sha, len(call.keys), *call.keys, *call.args)
            pipe.hset(keys.prompt(thread, prompt_id), "msg", f"m{index}")
            pipe.delete(keys.pub_outbox(thread))
        await pipe.execute()


async def _in_parallel(job: Any, store: Store, first: int, count: int, now_ms: int) -> None:
    share = -(-count // LOADERS)
    await asyncio.gather(
        *(
            job(store, first + part * share, max(0, min(share, count - part * share)), now_ms)
            for part in range(LOADERS)
        )
    )


async def _used_memory(store: Store) -> int:
    info = await store.redis.info("memory")
    return int(info["used_memory"])


async def _sample(store: Store) -> dict[str, int]:
    """MEMORY USAGE of one loaded prompt's own keys and of its run."""
    thread = _thread(0)
    prompt_id = await store.redis.get(keys.active(thread))
    run_id = f"run_scale{0:021d}"
    sample = {
        "prompt hash": keys.prompt(thread, prompt_id),
        "prompt record": keys.prompt_record(thread, prompt_id),
        "prompt index": keys.prompt_index(prompt_id),
        "active pointer": keys.active(thread),
        "run hash": keys.run(thread, run_id),
        "run index": keys.run_index(run_id),
    }
    return {name: int(await store.redis.memory_usage(key, samples=0) or 0) for name, key in sample.items()}


async def scale_figure(url: str, few: int, many: int, ops: int, concurrency: int) -> ScaleFigure:
    async with running_gateway(url, counted=False) as gateway:
        store = gateway.store
        now_ms = int(time.time() * 1000)
        await _in_parallel(_load_runs, store, 0, few, now_ms)
        await _in_parallel(_load_prompts, store, 0, few, now_ms)
        await measure_gateway(gateway, concurrency, min(ops, 200))  # warm up
        at_few = (await measure_gateway(gateway, concurrency, ops)).summary
        began = time.perf_counter()
        before_runs = await _used_memory(store)
        await _in_parallel(_load_runs, store, few, many - few, now_ms)
        before_prompts = await _used_memory(store)
        await _in_parallel(_load_prompts, store, few, many - few, now_ms)
        after = await _used_memory(store)
        loaded = time.perf_counter() - began
        pending = await store.pending_count()
        if pending < many:
            raise RuntimeError(f"only {pending} of {many} prompts are pending after loading")
        await measure_gateway(gateway, concurrency, min(ops, 200))
        at_many = (await measure_gateway(gateway, concurrency, ops)).summary
        sample = await _sample(store)
        added = many - few
        return ScaleFigure(
            concurrency=concurrency,
            few=few,
            many=many,
            at_few=at_few,
            at_many=at_many,
            load_seconds=loaded,
            bytes_per_prompt=(after - before_prompts) / added,
            bytes_per_run=(before_prompts - before_runs) / added,
            sample_keys=sample,
        )
