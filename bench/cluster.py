"""Figure 8: how evenly a resolve-heavy run spreads over the masters of a 3-master Redis Cluster.

Figure 1's operation (a typical prompt raised in its own thread, the agent waiting, a person's reply
resolving it, the outbox drained) runs against a private cluster of three masters. Each master's
``INFO commandstats`` (calls, commands run inside scripts included) and ``INFO cpu`` are read before and
after the timed window; the figure is the largest master's share of each. One master carrying every
global key would show a share near 1; a perfect spread over three masters, 1/3.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.resolve import measure_gateway
from bench.workload import running_gateway
from tests.support.redis_cluster import RedisCluster


@dataclass(frozen=True, slots=True)
class MasterLoad:
    """What one master had done at one moment: commands called and CPU seconds used."""

    calls: int
    cpu_s: float


@dataclass(frozen=True, slots=True)
class ClusterSpread:
    masters: int
    ops: int
    commands: list[int]  # per master, in the timed window
    cpu_s: list[float]

    @property
    def max_share_commands(self) -> float:
        return max(self.commands) / max(1, sum(self.commands))

    @property
    def max_share_cpu(self) -> float:
        return max(self.cpu_s) / max(1e-9, sum(self.cpu_s))

    def as_dict(self) -> dict[str, Any]:
        return {
            "masters": self.masters,
            "ops": self.ops,
            "max_share_commands": round(self.max_share_commands, 3),
            "max_share_cpu": round(self.max_share_cpu, 3),
            "commands_per_master": self.commands,
            "cpu_ms_per_master": [round(cpu * 1000, 1) for cpu in self.cpu_s],
        }


async def _load(port: int) -> MasterLoad:
    node = aioredis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    try:
        stats = await node.info("commandstats")
        cpu = await node.info("cpu")
    finally:
        await node.aclose()
    # INFO itself is left out: the figure counts what the gateway asked for, not the probe.
    calls = sum(int(v["calls"]) for name, v in stats.items() if name != "cmdstat_info")
    return MasterLoad(calls, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]))


async def spread_over(cluster: RedisCluster, concurrency: int, ops: int) -> ClusterSpread:
    """Figure 1's resolve path on ``cluster``: each master's share of the commands and CPU it caused."""
    async with running_gateway(cluster.url, counted=False) as gateway:
        await measure_gateway(gateway, concurrency, max(32, ops // 10))  # warm the pools and scripts
        loads: list[list[MasterLoad]] = []

        @asynccontextmanager
        async def window() -> AsyncIterator[None]:
            loads.append([await _load(port) for port in cluster.ports])
            yield
            loads.append([await _load(port) for port in cluster.ports])

        await measure_gateway(gateway, concurrency, ops, window=window)
    before, after = loads
    return ClusterSpread(
        len(cluster.ports),
        ops,
        [a.calls - b.calls for a, b in zip(after, before, strict=True)],
        [a.cpu_s - b.cpu_s for a, b in zip(after, before, strict=True)],
    )


async def cluster_figure(concurrency: int, ops: int) -> ClusterSpread:
    """Start a private 3-master cluster, measure the spread of a resolve-heavy run on it, stop it."""
    with tempfile.TemporaryDirectory(prefix="threadgate-bench-cluster-") as directory:
        cluster = RedisCluster(Path(directory))
        try:
            cluster.start()
            return await spread_over(cluster, concurrency, ops)
        finally:
            cluster.stop()
