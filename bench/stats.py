"""Summaries of timed samples: throughput and latency percentiles."""

from __future__ import annotations

import math
from dataclasses import dataclass


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
