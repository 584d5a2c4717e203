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

from bench.http import http_figure
from bench.idle import idle_figure
from bench.machine import describe_machine
from bench.profiles import PROFILES, Profile
from bench.redis_proc import PrivateRedis
from bench.report import Results, markdown
from bench.resolve import resolve_figures
from bench.roundtrips import round_trip_figures
from bench.scale import scale_figure


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
    _progress(f"[{profile.name}] 1/5 resolve path …")
    resolve = await resolve_figures(url, list(profile.resolve_levels))
    await _flush(url)
    _progress(f"[{profile.name}] 2/5 round trips …")
    trips = await round_trip_figures(url)
    await _flush(url)
    _progress(f"[{profile.name}] 3/5 scale to {profile.scale_many:,} pending prompts …")
    scale = await scale_figure(
        url, profile.scale_few, profile.scale_many, profile.scale_ops, profile.scale_concurrency
    )
    await _flush(url)
    _progress(f"[{profile.name}] 4/5 HTTP through two gateway processes …")
    http = await http_figure(url, profile.http_concurrency, profile.http_ops)
    await _flush(url)
    waiters = profile.idle_long_polls + profile.idle_streams
    _progress(f"[{profile.name}] 5/5 {waiters:,} idle waiters on one gateway process …")
    idle = await idle_figure(url, profile.idle_long_polls, profile.idle_streams)
    _progress(f"[{profile.name}] done in {time.perf_counter() - started:.0f} s")
    return Results(profile.name, describe_machine(version, load_before), resolve, trips, scale, http, idle)


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
