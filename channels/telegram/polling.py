"""Long polling, run only by the process that holds the bot token's lease.

An update's offset is confirmed to Telegram only after the update was handed to the core, so a process
that dies mid-batch leaves it unconfirmed and the next holder gets it again; the core's dedupe (by
message id) makes that second delivery resolve nothing. An update that cannot be read is logged with its
id and confirmed: fetched again, it would read no better. One the core cannot take while Redis is away is
retried, unconfirmed, until the store is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from telegram import Bot, Update
from telegram.error import Conflict, InvalidToken, RetryAfter

from channels.telegram.inbound import ALLOWED_UPDATES
from channels.telegram.send import retry_after_seconds, safe_text
from channels.telegram.updates import fetch_updates, read_update, update_id_of
from gateway.sdk import Handed, HandOver, event

T = TypeVar("T")
Handler = Callable[[Update], Awaitable[None]]

POLL_TIMEOUT_S = 25
MAX_BACKOFF_S = 30.0
INVALID_TOKEN_BACKOFF_S = 60.0
MAX_HANDLE_ATTEMPTS = 5
HANDLE_BACKOFF_S = 1.0


class Poller:
    """Fetches updates with ``getUpdates`` and hands each to ``handle``, in order, until closed."""

    def __init__(
        self,
        bot: Bot,
        token: str,
        handle: Handler,
        *,
        poll_timeout: int = POLL_TIMEOUT_S,
        max_backoff: float = MAX_BACKOFF_S,
        handle_backoff: float = HANDLE_BACKOFF_S,
    ) -> None:
        self.bot = bot
        self._token = token
        self.handle = handle
        self.poll_timeout = poll_timeout
        self.max_backoff = max_backoff
        self.handle_backoff = handle_backoff  # the first pause after a failed hand-off; doubled each time
        self._closing = asyncio.Event()

    def close(self) -> None:
        """Stop polling: the current long poll is abandoned and ``run`` returns."""
        self._closing.set()

    async def run(self, fence: int) -> None:
        """The lease's work: poll until closed (the lease cancels it if the lease is lost)."""
        event("telegram.polling.started", fence=fence)
        try:
            await self._loop()
        finally:
            event("telegram.polling.stopped", fence=fence)

    async def _loop(self) -> None:
        offset: int | None = None
        failures = 0
        dropped_webhook = False
        while not self._closing.is_set():
            try:
                if not dropped_webhook:
                    await self._unless_closing(self.bot.delete_webhook(drop_pending_updates=False))
                    dropped_webhook = True
                updates = await self._unless_closing(
                    fetch_updates(self.bot, offset, self.poll_timeout, ALLOWED_UPDATES)
                )
            except RetryAfter as exc:
                await self._pause(retry_after_seconds(exc))
                continue
            except Exception as exc:  # network trouble, a refused token
                failures += 1
                await self._pause(self._backoff(exc, failures))
                continue
            if updates is None:
                return
            failures = 0
            for data in updates:
                update = read_update(data, self.bot)
                if update is not None and not await self._deliver(update):
                    return
                update_id = update_id_of(data)
                if update_id is not None:  # confirmed even when unreadable: it would read no better again
                    offset = max(offset or 0, update_id + 1)

    async def _deliver(self, update: Update) -> bool:
        """Hand one update to the core by the core's hand-over rule (a store outage is retried for as long
        as it lasts, and the update is not confirmed meanwhile). False once closing."""

        def failed(exc: Exception, attempt: int, outage: bool, retry_in: float | None) -> None:
            event(
                "telegram.update.failed",
                logging.WARNING,
                update_id=update.update_id,
                attempt=attempt,
                store_outage=outage,
                error=safe_text(exc, self._token),
            )

        hand_over = HandOver(MAX_HANDLE_ATTEMPTS, self.handle_backoff, self.max_backoff)
        handed = await hand_over(
            lambda: self.handle(update), failed, closing=self._closing.is_set, pause=self._pause
        )
        if handed is Handed.DROPPED:
            event("telegram.update.dropped", logging.ERROR, update_id=update.update_id)
        return handed is not Handed.CLOSING

    def _backoff(self, exc: Exception, failures: int) -> float:
        if isinstance(exc, InvalidToken):
            event("telegram.polling.token_rejected", logging.ERROR, hint="check TELEGRAM_BOT_TOKEN")
            return INVALID_TOKEN_BACKOFF_S
        delay = min(2.0 ** (failures - 1), self.max_backoff)
        level = logging.WARNING if failures > 1 or isinstance(exc, Conflict) else logging.INFO
        hint = "another process or a webhook is using this bot token" if isinstance(exc, Conflict) else None
        event("telegram.polling.failed", level, error=safe_text(exc, self._token), retry_in=delay, hint=hint)
        return delay

    async def until(self, ready: asyncio.Event) -> bool:
        """Wait for ``ready``; False if polling is closed first."""
        return await self._unless_closing(ready.wait()) is not None

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)

    async def _unless_closing(self, call: Coroutine[Any, Any, T]) -> T | None:
        """``call``'s result, or None if polling is closed first (the call is then cancelled)."""
        work = asyncio.ensure_future(call)
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait({work, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, closing):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if not work.done() or work.cancelled():
            return None
        return work.result()
