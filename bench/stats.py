"""Summaries of timed samples: throughput and latency percentiles, and a figure beside its floor."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """The ``q`` percentile (0..100) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True, slots=True)
class Summary:
    """``ops`` operations in ``seconds`` of wall time, with per-operation latencies in milliseconds."""

    ops: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def per_second(self) -> float:
        return self.ops / self.seconds if self.seconds > 0 else 0.0

    @classmethod
    def of(cls, latencies_s: list[float], seconds: float) -> Summary:
        return cls(
            ops=len(latencies_s),
            seconds=seconds,
            p50_ms=percentile(latencies_s, 50) * 1000,
            p99_ms=percentile(latencies_s, 99) * 1000,
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "ops": self.ops,
            "per_second": round(self.per_second, 1),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
        }


async def timed(concurrency: int, ops: int, operation: Callable[[int], Awaitable[None]]) -> Summary:
    """``operation(0)`` … ``operation(ops - 1)`` shared by ``concurrency`` workers, each call timed."""
    work = iter(range(ops))
    latencies: list[float] = []

    async def worker() -> None:
        for index in work:
            started = time.perf_counter()
            await operation(index)
            latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Summary.of(latencies, time.perf_counter() - began)


@dataclass(frozen=True, slots=True)
class BesideFloor:
    """The gateway at ``concurrency`` beside its floor: the same number of operations done the cheapest
    way. A figure adds its own fields, and their JSON in ``own``."""

    concurrency: int
    gateway: Summary
    floor: Summary

    @property
    def ratio(self) -> float:
        return self.gateway.per_second / self.floor.per_second if self.floor.per_second else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "gateway": self.gateway.as_dict(),
            "floor": self.floor.as_dict(),
            "ratio": round(self.ratio, 3),
            **self.own(),
        }

    def own(self) -> dict[str, Any]:
        return {}
