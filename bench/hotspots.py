"""``python -m bench.hotspots``: where a resolve's CPU goes, as cProfile's top frames.

Runs the resolve path of figure 1 (``--ops`` resolves at ``--threads`` concurrent threads, outbox drains
inside) under cProfile on a private redis-server, and prints the frames with the most time, by own time
and by cumulative time, with the process's CPU per resolve. Profiling slows Python several times over:
compare the shares between runs, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections.abc import Sequence

from bench.redis_proc import PrivateRedis
from bench.resolve import measure_floor, measure_gateway
from bench.workload import running_gateway


async def _profiled(url: str, threads: int, ops: int, profile: cProfile.Profile) -> float:
    async with running_gateway(url, counted=False) as gateway:
        await measure_floor(gateway.store.redis, 4, 200)  # warm the pool
        await measure_gateway(gateway, threads, min(ops, 200))  # warm the process's caches
        measured = await measure_gateway(gateway, threads, ops, profile)
        return measured.process_cpu_us


def top_frames(profile: cProfile.Profile, sort: str, count: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.strip_dirs().sort_stats(sort).print_stats(count)
    text = out.getvalue()
    return text[text.index("   ncalls") :] if "   ncalls" in text else text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hotspots", description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--cpu", action="store_true", help="time frames by process CPU, not wall clock")
    args = parser.parse_args(argv)
    import uvloop

    profile = cProfile.Profile(time.process_time) if args.cpu else cProfile.Profile()
    with PrivateRedis() as redis_server:
        cpu_us = uvloop.run(_profiled(redis_server.url, args.threads, args.ops, profile))
    timer = "CPU time" if args.cpu else "wall time"
    print(f"{args.ops} resolves at {args.threads} threads; process CPU {cpu_us:,.0f} µs per resolve")
    print(f"(profiled by {timer}: profiling slows Python several times over)")
    print("\nBy own time:\n" + top_frames(profile, "tottime", args.top))
    print("By cumulative time:\n" + top_frames(profile, "cumulative", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
