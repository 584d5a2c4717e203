"""Figure 1: the resolve path end to end in-process, beside raw EVALSHA round trips on the same pool.

One operation: a person's reply reaches ``Gateway.receive`` → it is mapped → the prompt is resolved in
Redis (the audit item queued in the same script) → the agent's long-poll waiter wakes with the answer.
Each of ``concurrency`` workers answers prompts one after another; every prompt was raised beforehand,
in its own thread, with the agent already waiting on it. The outbox drains that follow each answer run
inside the timed window too: they are work the gateway must do per answer.
"""

from __future__ import annotations

import asyncio
import cProfile
import resource
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from bench.stats import BesideFloor, Summary, timed
from bench.workload import STARTER, open_prompts, running_gateway
from gateway.base.models import InboundMessage
from gateway.decision.service import Gateway, Outcome
from gateway.store import keys

TRIVIAL_SCRIPT = "return ARGV[1]"
WAIT_S = 300.0


@dataclass(frozen=True, slots=True)
class Measured:
    """The gateway's timed window, and the CPU it took per operation: this process's and Redis's."""

    summary: Summary
    process_cpu_us: float
    redis_cpu_us: float
    # The same for the setup before the window: per prompt, a run started and the prompt raised in it.
    raise_process_cpu_us: float = 0.0
    raise_redis_cpu_us: float = 0.0
    # Commands Redis ran in the window per operation, the scripts' own included (INFO commandstats).
    redis_commands: float = 0.0


@dataclass(frozen=True, slots=True)
class ResolveFigure(BesideFloor):
    process_cpu_us: float
    redis_cpu_us: float
    raise_process_cpu_us: float = 0.0
    raise_redis_cpu_us: float = 0.0
    redis_commands: float = 0.0

    def own(self) -> dict[str, Any]:
        return {
            "process_cpu_us_per_op": round(self.process_cpu_us),
            "redis_cpu_us_per_op": round(self.redis_cpu_us),
            "process_cpu_us_per_raise": round(self.raise_process_cpu_us),
            "redis_cpu_us_per_raise": round(self.raise_redis_cpu_us),
            "redis_commands_per_op": round(self.redis_commands, 1),
        }


async def _agents_waiting(gateway: Gateway, opened: list[tuple[str, str]]) -> list[asyncio.Task[Any]]:
    """One long-poll waiter per prompt, as an agent would hold; returns once every one is registered."""
    waiters = [asyncio.create_task(gateway.wait_prompt(pid, WAIT_S)) for _, pid in opened]
    pending = {keys.watch(thread, pid) for thread, pid in opened}
    while pending:
        await asyncio.sleep(0.01)
        pipe = gateway.store.redis.pipeline(transaction=False)
        ordered = sorted(pending)
        for key in ordered:
            pipe.exists(key)
        found = await pipe.execute()
        pending = {key for key, present in zip(ordered, found, strict=True) if not present}
    return waiters


async def _redis_cpu_s(gateway: Gateway) -> float:
    """Redis's CPU seconds so far (on a cluster, every node's summed)."""
    info = await gateway.store.redis.info("cpu")
    nodes = [info] if "used_cpu_user" in info else [node for node in info.values() if isinstance(node, dict)]
    return sum(float(node["used_cpu_user"]) + float(node["used_cpu_sys"]) for node in nodes)


async def _redis_commands(gateway: Gateway) -> int:
    """Commands Redis has run so far, those run inside scripts included (on a cluster, every node's
    summed). ``INFO`` is left out: the figure counts what the gateway asked for, not the probe."""
    info = await gateway.store.redis.info("commandstats")
    one_server = all("calls" in stats for stats in info.values() if isinstance(stats, dict))
    nodes = [info] if one_server else [node for node in info.values() if isinstance(node, dict)]
    return sum(
        int(stats["calls"])
        for node in nodes
        for name, stats in node.items()
        if name != "cmdstat_info" and isinstance(stats, dict)
    )


def _process_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure_gateway(
    gateway: Gateway,
    concurrency: int,
    ops: int,
    profile: cProfile.Profile | None = None,
    window: Callable[[], AbstractAsyncContextManager[object]] = nullcontext,
) -> Measured:
    """The timed window: ``ops`` hot answers by ``concurrency`` workers (``profile`` enabled only inside,
    and ``window()`` entered around it alone, after the prompts are raised and their waiters registered)."""
    raise_redis, raise_process = await _redis_cpu_s(gateway), _process_cpu_s()
    opened = await open_prompts(gateway, ops)
    raise_process = _process_cpu_s() - raise_process
    raise_redis = await _redis_cpu_s(gateway) - raise_redis
    waiters = await _agents_waiting(gateway, opened)
    work = iter(range(ops))
    latencies: list[float] = []

    async def worker() -> None:
        for index in work:
            thread, _ = opened[index]
            message = InboundMessage(thread_id=thread, sender=STARTER, text="2", event_id=f"ev{index}")
            started = time.perf_counter()
            received = await gateway.receive(message)
            answered = await waiters[index]
            latencies.append(time.perf_counter() - started)
            if received.outcome is not Outcome.ANSWERED or answered.pending:
                raise RuntimeError(f"a benchmark answer was not taken: {received.outcome}")

    async with window():
        commands_before = await _redis_commands(gateway)
        redis_before, process_before = await _redis_cpu_s(gateway), _process_cpu_s()
        began = time.perf_counter()
        if profile is not None:
            profile.enable()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        await gateway.outbox.idle()
        elapsed = time.perf_counter() - began
        if profile is not None:
            profile.disable()
    process_cpu, redis_cpu = _process_cpu_s() - process_before, await _redis_cpu_s(gateway) - redis_before
    commands = await _redis_commands(gateway) - commands_before
    return Measured(
        Summary.of(latencies, elapsed),
        process_cpu / ops * 1e6,
        redis_cpu / ops * 1e6,
        raise_process / ops * 1e6,
        raise_redis / ops * 1e6,
        commands / ops,
    )


async def measure_floor(client: Any, concurrency: int, ops: int) -> Summary:
    """The same number of operations, each one raw EVALSHA of a trivial script."""
    sha = await client.script_load(TRIVIAL_SCRIPT)

    async def operation(index: int) -> None:
        await client.evalsha(sha, 0, index)

    return await timed(concurrency, ops, operation)


async def resolve_figures(url: str, levels: list[tuple[int, int]]) -> list[ResolveFigure]:
    """For each (concurrency, operations): the gateway's resolve path and its floor, back to back."""
    figures: list[ResolveFigure] = []
    async with running_gateway(url, counted=False) as gateway:
        await measure_floor(gateway.store.redis, 4, 200)  # warm the pool and the interpreter
        for concurrency, ops in levels:
            floor = await measure_floor(gateway.store.redis, concurrency, ops)
            measured = await measure_gateway(gateway, concurrency, ops)
            figures.append(
                ResolveFigure(
                    concurrency,
                    measured.summary,
                    floor,
                    measured.process_cpu_us,
                    measured.redis_cpu_us,
                    measured.raise_process_cpu_us,
                    measured.raise_redis_cpu_us,
                    measured.redis_commands,
                )
            )
    return figures


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.resolve``: figure 1 alone (the quick profile's sizes unless given), one JSON line
    per level, on a private redis-server."""
    import argparse
    import json

    import uvloop

    from bench.profiles import PROFILES
    from bench.redis_proc import PrivateRedis

    parser = argparse.ArgumentParser(prog="python -m bench.resolve", description=main.__doc__)
    parser.add_argument(
        "levels", nargs="*", metavar="THREADS:RESOLVES", help="default: the quick profile's levels"
    )
    args = parser.parse_args(argv)
    pairs = (level.split(":", 1) for level in args.levels)
    chosen = [(int(threads), int(ops)) for threads, ops in pairs] or list(PROFILES["quick"].resolve_levels)
    with PrivateRedis() as redis_server:
        figures = uvloop.run(resolve_figures(redis_server.url, chosen))
    for figure in figures:
        print(json.dumps(figure.as_dict(), separators=(",", ":")))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
