"""How big each figure's workload is: the full run, the quick one, and a seconds-long smoke run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    resolve_levels: tuple[tuple[int, int], ...]  # (concurrent threads, operations)
    scale_few: int
    scale_many: int
    scale_ops: int
    scale_concurrency: int
    http_concurrency: int
    http_ops: int
    idle_long_polls: int
    idle_streams: int
    restart_pending: int  # prompts waiting in Redis when a fresh serve starts (figure 7)
    workers: tuple[int, ...] = (1, 2)  # serve --workers counts of figure 6
    cluster_ops: int = 4000  # resolves at 16 threads on the 3-master cluster (figure 8)
    steady_runs: int = 20_000  # runs measured for steady memory, after the warm-up (figure 9)
    steady_warmup: int = 5_000
    hook_pairs: int = 40  # hook runs, each paired with a bare interpreter start (figure 10)


PROFILES = {
    "full": Profile(
        "full",
        ((1, 1000), (16, 4000), (256, 4096)),
        1000,
        1_000_000,
        2000,
        16,
        16,
        2000,
        10_000,
        2000,
        1_000_000,
    ),
    # the idle-waiter figure runs at full size in the quick profile too
    "quick": Profile(
        "quick",
        ((1, 300), (16, 1200), (256, 1024)),
        1000,
        50_000,
        500,
        16,
        16,
        300,
        10_000,
        2000,
        50_000,
        cluster_ops=1200,
        steady_runs=5_000,
        steady_warmup=2_000,
        hook_pairs=20,
    ),
    "smoke": Profile(
        "smoke",
        ((1, 10), (16, 32), (256, 256)),
        100,
        1000,
        40,
        4,
        4,
        12,
        200,
        40,
        200,
        cluster_ops=64,
        steady_runs=24,
        steady_warmup=8,
        hook_pairs=2,
    ),
}
