"""A small bounded map for facts that never change once known."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, TypeVar

V = TypeVar("V")

# The store's caches, each bounded so that it is full (and the process flat) after a few thousand runs; a
# miss costs one read from Redis. See docs/operations.md, "What a process keeps in memory".
THREADS_OF_KEPT = 8192  # which thread a run or prompt is in: about 250 B each
RUNS_KEPT = 2048  # run records: about 1.3 KB each
LATEST_KEPT = 2048  # each thread's latest open prompt (shared with the record cache while it is open)


class LRU(OrderedDict[str, V]):
    """Keeps the ``size`` most recently put entries (which thread a prompt lives in, a parsed record)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: str, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)


def drop_oldest(mapping: dict[Any, Any], size: int) -> None:
    """Forget a plain dict's earliest-added entries beyond ``size`` (a dict keeps the order they came in)."""
    while len(mapping) > size:
        del mapping[next(iter(mapping))]
