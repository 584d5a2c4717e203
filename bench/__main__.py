"""``python -m bench``: run every figure on a private redis-server and print the tables (and JSON)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Sequence

import redis.asyncio as aioredis

from bench.cluster import cluster_figure
from bench.hook import hook_figure
from bench.http import http_figure, workers_figure
from bench.idle import idle_figure
from bench.machine import describe_machine
from bench.profiles import PROFILES, Profile
from bench.redis_proc import PrivateRedis
from bench.report import Results, markdown
from bench.resolve import resolve_figures
from bench.restart import restart_figure
from bench.roundtrips import round_trip_figures
from bench.scale import scale_figure
from bench.steady_memory import steady_memory_figure

CLUSTER_CONCURRENCY = 16


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def _flush(url: str) -> str:
    """Empty the benchmark's Redis between figures; returns its version."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        await client.flushall(asynchronous=True)  # a million prompts take seconds to free
        for _ in range(600):  # the next figure starts on a Redis that is done freeing
            if not int((await client.info("memory")).get("lazyfree_pending_objects", 0)):
                break
            await asyncio.sleep(0.1)
        info = await client.info("server")
        return str(info["redis_version"])
    finally:
        await client.aclose()


async def run(profile: Profile, url: str) -> Results:
    load_before = os.getloadavg()
    started = time.perf_counter()
    version = await _flush(url)
    _progress(f"[{profile.name}] 1/10 resolve path …")
    resolve = await resolve_figures(url, list(profile.resolve_levels))
    await _flush(url)
    _progress(f"[{profile.name}] 2/10 round trips …")
    trips = await round_trip_figures(url)
    await _flush(url)
    _progress(f"[{profile.name}] 3/10 scale to {profile.scale_many:,} pending prompts …")
    scale = await scale_figure(
        url, profile.scale_few, profile.scale_many, profile.scale_ops, profile.scale_concurrency
    )
    await _flush(url)
    _progress(f"[{profile.name}] 4/10 HTTP through two gateway processes …")
    http = await http_figure(url, profile.http_concurrency, profile.http_ops)
    await _flush(url)
    waiters = profile.idle_long_polls + profile.idle_streams
    _progress(f"[{profile.name}] 5/10 {waiters:,} idle waiters on one gateway process …")
    idle = await idle_figure(url, profile.idle_long_polls, profile.idle_streams)
    await _flush(url)
    counts = " and ".join(str(count) for count in profile.workers)
    _progress(f"[{profile.name}] 6/10 HTTP through serve --workers {counts} …")
    workers = await workers_figure(url, profile.http_concurrency, profile.http_ops, profile.workers)
    await _flush(url)
    _progress(f"[{profile.name}] 7/10 a restart with {profile.restart_pending:,} prompts waiting …")
    restart = await restart_figure(url, profile.restart_pending)
    _progress(f"[{profile.name}] 8/10 spread over a 3-master Redis Cluster …")
    cluster = await cluster_figure(CLUSTER_CONCURRENCY, profile.cluster_ops)
    await _flush(url)
    _progress(
        f"[{profile.name}] 9/10 memory of one process over {profile.steady_runs:,} runs after "
        f"{profile.steady_warmup:,} …"
    )
    steady = await steady_memory_figure(url, profile.steady_runs, profile.steady_warmup)
    await _flush(url)
    _progress(f"[{profile.name}] 10/10 a hook a policy lets through ({profile.hook_pairs} pairs) …")
    hook = await hook_figure(url, profile.hook_pairs)
    _progress(f"[{profile.name}] done in {time.perf_counter() - started:.0f} s")
    machine = describe_machine(version, load_before)
    return Results(
        profile.name, machine, resolve, trips, scale, http, idle, workers, restart, cluster, steady, hook
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure what a prompt costs the gateway, each figure beside its floor, on a private "
        "redis-server.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="the quick profile (a few minutes; idle waiters at full size)"
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), help="workload size (default: full)")
    parser.add_argument("--json", action="store_true", help="end with the results as one JSON line")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    profile = PROFILES[args.profile or ("quick" if args.quick else "full")]
    # Stopped with SIGTERM, unwind like Ctrl-C so the private redis-server and servers are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    import uvloop  # the event loop `threadgate serve` runs on, so the in-process figures match it

    with PrivateRedis() as redis_server:
        results = uvloop.run(run(profile, redis_server.url))
    print(markdown(results), flush=True)
    if args.json:
        print(json.dumps(results.as_dict(), separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
