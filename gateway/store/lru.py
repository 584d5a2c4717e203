"""A small bounded map for facts that never change once known."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

V = TypeVar("V")


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
