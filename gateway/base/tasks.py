"""Background task helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]], retry_s: float = 0.5) -> None:
    """Cancel ``tasks`` and wait until every one has ended.

    redis-py can swallow a cancellation that lands in the middle of a command, so a task is cancelled
    again until it is done, rather than awaited once and possibly forever.
    """
    pending = [task for task in tasks if not task.done()]
    while pending:
        for task in pending:
            task.cancel()
        _done, still = await asyncio.wait(pending, timeout=retry_s)
        pending = list(still)
