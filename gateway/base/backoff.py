"""Exponential backoff with jitter, shared by whatever retries (webhooks, platform lookups, clients)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any


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


def retry_after(headers: Mapping[str, Any] | None, *, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for (seconds, or an HTTP date), never negative; None when
    there is none or it does not read as a finite wait."""
    raw = headers.get("Retry-After") if headers is not None else None
    if not isinstance(raw, str):
        return None
    try:
        wait = float(raw)
    except ValueError:
        try:
            wait = parsedate_to_datetime(raw).timestamp() - (time.time() if now is None else now)
        except (TypeError, ValueError):
            return None
    return max(wait, 0.0) if math.isfinite(wait) else None
