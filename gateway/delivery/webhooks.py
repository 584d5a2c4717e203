"""Signed webhooks: each event POSTed to every configured URL from a durable Redis queue, with retries.

Events reach the queue through a Redis consumer group on every partition's event stream (and the single
stream of earlier versions), so every event is taken by one gateway process, and entries a crashed
process held are claimed again. Each (event, URL) pair is queued once (keyed by the event's ``id``),
delivered by whichever process claims it first, and retried with exponential backoff for days; a restart
loses nothing because the queue lives in Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from gateway import __version__
from gateway.base import metrics
from gateway.base.backoff import Retry
from gateway.base.logs import event
from gateway.base.settings import Settings
from gateway.base.signed import same_text, unix_seconds
from gateway.base.tasks import cancel_and_wait
from gateway.delivery.webhook_signatures import standard_headers, standard_key
from gateway.store import keys
from gateway.store.outage import StoreHealth
from gateway.store.webhook_queue import GroupMissing, Row, WebhookQueue

SIGNATURE_HEADER = "X-Threadgate-Signature"


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """``t=<unix>,v1=<hex>``: HMAC-SHA256 of ``"<t>.<body>"`` with the webhook secret."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(
    secret: str, header: str, body: bytes, *, tolerance_s: int = 300, now: float | None = None
) -> bool:
    """Check an ``X-Threadgate-Signature`` header on a received body (for receivers; constant time).

    False for anything it cannot read, never an exception.

    >>> header = sign("s3cret", b'{"id":"e1"}', 1700000000)
    >>> verify("s3cret", header, b'{"id":"e1"}', now=1700000010)
    True
    """
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    stamp = unix_seconds(fields.get("t"))
    if stamp is None or "v1" not in fields:
        return False
    if abs((time.time() if now is None else now) - stamp) > tolerance_s:
        return False
    expected = sign(secret, body, stamp).split("v1=", 1)[1]
    return same_text(fields["v1"], expected)


class LocalTarget(Protocol):
    """A target the queue delivers to in-process instead of by HTTP (Web Push): it picks the events it
    wants (by its ``type``), and delivers one (None when done, else what failed, retried like a URL's)."""

    def wants(self, kind: str | None) -> bool: ...

    async def deliver(self, body: bytes, ident: str) -> str | None: ...


def target(url: str) -> str:
    """A URL fit for logs: scheme, host and path only (credentials and query strings stay out)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def delivery_id(event_id: str, url: str) -> str:
    return f"{event_id}@{hashlib.sha256(url.encode()).hexdigest()[:16]}"


class WebhookDispatcher:
    """Moves events from the event streams to the delivery queue, and delivers due entries."""

    def __init__(
        self,
        redis: Any,
        urls: list[str],
        secret: str,
        *,
        retry: Retry | None = None,
        timeout_s: float = 10.0,
        concurrency: int = 8,
        poll_s: float = 1.0,
        reclaim_idle_ms: int = 60_000,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        health: StoreHealth | None = None,
        local: dict[str, LocalTarget] | None = None,
    ) -> None:
        self.queue = WebhookQueue(redis)
        self.local = dict(local or {})
        self.health = health or StoreHealth(redis)
        self.urls = list(urls)
        self._secret = secret
        self._standard_key = standard_key(secret) if urls else b""  # no URL: only local targets
        self.retry = retry or Retry()
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.poll_s = poll_s
        self.reclaim_idle_ms = reclaim_idle_ms
        self.lease_ms = int(timeout_s * 3000)
        self.clock = clock
        self.consumer = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        redis: Any,
        health: StoreHealth | None = None,
        local: dict[str, LocalTarget] | None = None,
    ) -> WebhookDispatcher | None:
        """A dispatcher for ``THREADGATE_WEBHOOKS`` and the ``local`` targets, or None when there are
        none. Refuses to send unsigned."""
        urls = settings.webhook_urls()
        if not urls and not local:
            return None
        for url in urls:
            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
                raise ValueError(
                    f"THREADGATE_WEBHOOKS has an entry that is not an http(s) URL: {target(url)}"
                )
        secret = settings.threadgate_webhook_secret
        if urls and secret is None:
            raise ValueError("THREADGATE_WEBHOOKS is set but THREADGATE_WEBHOOK_SECRET is not: set a secret")
        return cls(redis, urls, secret.get_secret_value() if secret else "", health=health, local=local)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # Lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.queue.ensure_group(start="$")
        self._http = httpx.AsyncClient(
            timeout=self.timeout_s, follow_redirects=False, transport=self._transport
        )
        self._tasks = [
            asyncio.create_task(self._forever(self._fan_out_loop), name="threadgate.webhooks.fan_out"),
            asyncio.create_task(self._forever(self._deliver_loop), name="threadgate.webhooks.deliver"),
        ]
        event("webhooks.started", targets=[target(url) for url in self.urls] + list(self.local))

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        with contextlib.suppress(Exception):
            await self.queue.leave(self.consumer)

    async def _forever(self, loop: Callable[[], Any]) -> None:
        delay = 0.1
        while True:
            try:
                await loop()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: keep trying, the queue is durable
                outage = self.health.report(exc, "webhooks")  # logged once by the health record
                if not outage:
                    event("webhooks.loop_failed", logging.WARNING, error=type(exc).__name__, retry_in=delay)
                await asyncio.sleep(delay)
                # Back soon after an outage ends; slower on a failure that repeats for another reason.
                delay = min(delay * 2, 1.0 if outage else 5.0)

    # Fan-out: event streams → delivery queue --------------------------------------------------------

    async def _fan_out_loop(self) -> None:
        last_reclaim = 0.0  # reclaim first: what this consumer held when the loop last failed, too
        while True:
            try:
                if time.monotonic() - last_reclaim > self.reclaim_idle_ms / 2000:
                    last_reclaim = time.monotonic()
                    await self.reclaim()
                await self.fan_out(block_ms=int(self.poll_s * 1000))
            except GroupMissing:
                await self._recreate_group()
                last_reclaim = 0.0

    async def _recreate_group(self) -> None:
        """Redis came back without the group on some stream (restarted empty, or the stream was deleted):
        make it again there, reading the stream from its start, so events written since then are delivered
        too (receivers dedupe by ``id`` should any be sent twice)."""
        made = await self.queue.ensure_group(start="0")
        if made:
            event("webhooks.group_recreated", logging.WARNING, streams=made, group=keys.WEBHOOK_GROUP)

    async def fan_out(self, block_ms: int | None = None) -> int:
        """Queue deliveries for new events taken from the streams; returns how many were queued."""
        return await self._enqueue(await self.queue.read_new(self.consumer, 100, block_ms))

    async def reclaim(self) -> int:
        """Take over events a crashed process read but never queued, and queue those this one read before a
        failure cut its fan-out short."""
        held = await self.queue.read_held(self.consumer, 100)
        stale = await self.queue.claim_stale(self.consumer, self.reclaim_idle_ms, 100)
        return await self._enqueue([*held, *stale])

    async def _enqueue(self, rows: list[Row]) -> int:
        """Queue each event for every URL, then acknowledge them, stream by stream."""
        queued = 0
        taken: dict[str, list[str]] = {}
        for row in rows:
            queued += await self._queue_event(row)
            taken.setdefault(row.stream, []).append(row.entry_id)
        await asyncio.gather(*(self.queue.ack(stream, ids) for stream, ids in taken.items()))
        if queued:
            self._wake.set()
        return queued

    async def _queue_event(self, row: Row) -> int:
        """Queue one event for every URL (none for an entry trimmed away); how many deliveries were new."""
        raw = row.fields.get("j") if row.fields else None
        if not raw:
            return 0
        event_id, kind = _id_and_type(raw)
        event_id = event_id or row.entry_id
        deliveries = [(delivery_id(event_id, url), url) for url in self.urls]
        deliveries += [
            (delivery_id(event_id, name), name) for name, local in self.local.items() if local.wants(kind)
        ]
        if not deliveries:
            return 0
        ttl_s = int(self.retry.give_up_s) + 24 * 3600
        return await self.queue.enqueue(raw, deliveries, self.now_ms(), ttl_s)

    # Delivery ------------------------------------------------------------------------------------

    async def _deliver_loop(self) -> None:
        while True:
            if await self.deliver_due():
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)

    async def deliver_due(self) -> int:
        """Deliver what is due now (up to ``concurrency`` at once); returns how many were attempted."""
        ids = await self.queue.claim_due(self.now_ms(), self.lease_ms, self.concurrency)
        if not ids:
            return 0
        await asyncio.gather(*(self._attempt(ident) for ident in ids))
        return len(ids)

    async def _attempt(self, ident: str) -> None:
        record = await self.queue.record(ident)
        if not record:
            await self.queue.forget(ident)
            return
        url = record["url"]
        if url not in self.urls and url not in self.local:
            await self.queue.forget(ident)
            event("webhook.dropped", logging.WARNING, target=target(url), reason="no longer configured")
            return
        attempts = int(record.get("attempts", 0)) + 1
        body = record["body"].encode()
        local = self.local.get(url)
        failure = await (local.deliver(body, ident) if local is not None else self._post(url, body, ident))
        if failure is None:
            await self.queue.forget(ident)
            event("webhook.delivered", logging.DEBUG, target=target(url), attempts=attempts)
            metrics.webhook_delivery("delivered")
            return
        if self.now_ms() - int(record.get("first", 0)) > self.retry.give_up_s * 1000:
            await self.queue.forget(ident)
            event("webhook.given_up", logging.ERROR, target=target(url), attempts=attempts, error=failure)
            metrics.webhook_delivery("given_up")
            return
        delay = self.retry.delay(attempts)
        await self.queue.retry_at(ident, attempts, self.now_ms() + int(delay * 1000))
        event(
            "webhook.failed",
            logging.WARNING,
            target=target(url),
            attempts=attempts,
            error=failure,
            retry_in=round(delay, 3),
        )
        metrics.webhook_delivery("retry_scheduled")

    async def _post(self, url: str, body: bytes, ident: str) -> str | None:
        """POST one signed delivery. None on a 2xx answer, else what went wrong (no URL, no secret)."""
        assert self._http is not None
        now = int(self.clock())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"threadgate/{__version__}",
            "X-Threadgate-Delivery": ident,
            SIGNATURE_HEADER: sign(self._secret, body, now),  # kept for one release beside the standard ones
            **standard_headers(self._standard_key, ident, body, now),
        }
        try:
            response = await self._http.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            return type(exc).__name__
        return None if response.is_success else f"HTTP {response.status_code}"

    async def queued(self) -> int:
        """Deliveries waiting (for tests and operations)."""
        return await self.queue.depth()


def _id_and_type(raw: str) -> tuple[str | None, str | None]:
    """An event's ``id`` and ``type`` from its JSON, read once (None for what it lacks or cannot be read)."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None, None
    if not isinstance(parsed, dict):
        return None, None
    event_id, kind = parsed.get("id"), parsed.get("type")
    return (event_id if isinstance(event_id, str) else None, kind if isinstance(kind, str) else None)
