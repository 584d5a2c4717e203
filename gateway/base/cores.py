"""How many worker processes: ``auto`` (the cores this process may use) or a number, read once for the
``--workers`` option and the ``THREADGATE_WORKERS`` setting alike (``gateway.process.workers`` runs them)."""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path

MAX_WORKERS = 64


def worker_count(value: str, name: str = "--workers") -> int:
    """``auto`` (the cores this process may use) or a whole number from 1 to ``MAX_WORKERS``; ``name``
    is what the error calls the option or setting."""
    text = value.strip().lower()
    if text == "auto":
        return min(usable_cores(), MAX_WORKERS)
    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKERS:
        raise ValueError(f"{name} takes auto or a number from 1 to {MAX_WORKERS}, not {value!r}")
    return int(text)


def usable_cores(cgroup: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The cores this process may run on, lowered to a container's CPU quota (cgroup v2) when it has one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError):
        quota, period = cgroup.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    return max(1, cores)


__all__ = ["MAX_WORKERS", "usable_cores", "worker_count"]
