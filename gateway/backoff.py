"""Exponential backoff with jitter, shared by whatever retries (webhooks, platform lookups, clients)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Retry:
    """Backoff: ``base_s`` doubling per failure up to ``max_s``; given up ``give_up_s`` after the first."""

    base_s: float = 2.0
    max_s: float = 3600.0
    give_up_s: float = 3 * 24 * 3600.0

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th failure in a row (1 for the first), ±20 % so that many
        waiters retrying together spread out."""
        raw: float = min(self.base_s * 2.0 ** (max(failures, 1) - 1), self.max_s)
        return raw * random.uniform(0.8, 1.2)
