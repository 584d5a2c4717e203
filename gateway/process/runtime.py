"""Everything one gateway process runs, wired from settings: store, core service, channels."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from dataclasses import dataclass, field

from gateway.base import metrics
from gateway.base.collector import tune_collector
from gateway.base.logs import event, observe_loop
from gateway.base.models import InboundMessage
from gateway.base.ratelimit import RateLimiter
from gateway.base.settings import DAY_S, Settings
from gateway.decision.service import Gateway
from gateway.delivery.channel import ChannelContext, ChannelRuntime, Channels, CountedInbound
from gateway.delivery.channel_services import ProcessState, Services, SignedInPeople, ThreadLog
from gateway.delivery.feeds import StreamCaps
from gateway.delivery.lease import Lease
from gateway.delivery.plugins import build_channels
from gateway.delivery.push import push_targets
from gateway.delivery.webhooks import WebhookDispatcher
from gateway.rules.audience import Audiences
from gateway.rules.outcomes import Received
from gateway.store import Connection, Store, connect
from gateway.store.outage import StoreHealth


@dataclass
class Runtime:
    """One process's parts. ``start()`` and ``stop()`` bring them up and down in order."""

    settings: Settings
    connection: Connection
    store: Store
    gateway: Gateway
    health: StoreHealth
    channels: list[ChannelRuntime] = field(default_factory=list)
    webhooks: WebhookDispatcher | None = None
    leases: dict[str, Lease] = field(default_factory=dict)  # the channels' leases, by name (readiness)
    stopping: bool = False
    flush_timeout_s: float = 5.0
    streams: StreamCaps = field(default_factory=StreamCaps)  # API streams and long-polls, per token
    # Where people open this gateway (THREADGATE_PUBLIC_URL, else the bound address): links into its pages.
    public_url: str | None = None
    # Whether this process adopts the prompts waiting in Redis at start: of ``serve --workers``, one does.
    adopts: bool = True
    # Who a session cookie is, for channels whose pages people sign in to (set by the app when sign-in is
    # configured: the sign-in itself lives with the HTTP routes).
    signed_in: SignedInPeople | None = None

    @classmethod
    def build(
        cls,
        settings: Settings,
        channels: list[ChannelRuntime] | None = None,
        *,
        public_url: str | None = None,
        adopts: bool = True,
    ) -> Runtime:
        if channels is None:
            channels = build_channels(settings)
        connection = connect(settings.redis_url, max_connections=settings.threadgate_redis_connections)
        store = Store(
            connection.client,
            retain_ms=settings.threadgate_retain_seconds * 1000,
            thread_idle_ms=settings.threadgate_thread_idle_seconds * 1000,
            feed_max_age_ms=settings.threadgate_stream_retention_seconds * 1000,
            feed_maxlen=settings.threadgate_stream_max_entries,
            history_max_age_ms=settings.threadgate_history_days * DAY_S * 1000,
            history_maxlen=settings.threadgate_history_max_entries,
            dedupe_ttl_s=settings.threadgate_dedupe_seconds,
            feed_dedupe_s=settings.threadgate_feed_once_seconds,
        )
        health = StoreHealth(connection.client)
        gateway = Gateway(
            store, Channels(list(channels)), health=health, outbox_lock_ms=settings.threadgate_outbox_lock_ms
        )
        gateway.claim_seconds = settings.threadgate_claim_seconds
        webhooks = WebhookDispatcher.from_settings(
            settings, connection.client, health=health, local=push_targets(settings, store)
        )
        streams = StreamCaps(settings.threadgate_max_streams_per_token, settings.threadgate_max_streams)
        return cls(
            settings,
            connection,
            store,
            gateway,
            health,
            list(channels),
            webhooks,
            streams=streams,
            public_url=public_url or settings.threadgate_public_url,
            adopts=adopts,
        )

    def lease(self, name: str) -> Lease:
        lease = Lease(
            self.connection.client, name, ttl_ms=self.settings.threadgate_lease_ttl_ms, health=self.health
        )
        self.leases[name] = lease
        return lease

    def channel_services(self) -> Services:
        """What the core lends any channel that asks (docs/channels/plugins.md, "What a channel may ask
        for"): a thread's item log, who may read a thread, rate limits counted in Redis, whether the
        store answers and the process is draining, and (with sign-in configured) who a session is."""
        lent: list[object] = [
            ThreadLog(self.gateway.read_thread),
            Audiences(self.store),
            RateLimiter(self.store, limit=1, window_s=1),  # each rule gives its own
            ProcessState(
                store_available=lambda: self.health.available, draining=lambda: self.gateway.feeds.draining
            ),
        ]
        if self.signed_in is not None:
            lent.append(self.signed_in)
        return Services(*lent)

    async def receive_signed_in(self, message: InboundMessage, groups: Collection[str]) -> Received:
        """A signed-in person's message, with the groups their session vouches for (``SignedInPeople``
        alone calls this), counted as every inbound message is."""
        received = await self.gateway.receive(message, groups)
        metrics.inbound(message.thread_id, received.outcome)
        return received

    async def start(self) -> None:
        observe_loop(asyncio.get_running_loop())
        if not self.connection.durable:
            event(
                "startup.store",
                logging.WARNING,
                store=self.connection.description,
                warning="REDIS_URL is unset: prompts, allow-lists and queued messages die with this process",
            )
        else:
            event("startup.store", store=self.connection.description)
        await self.gateway.start(adopt=self.adopts)
        if self.webhooks is not None:
            await self.webhooks.start()
        context = ChannelContext(
            sink=CountedInbound(self.gateway),
            lease=self.lease,
            public_url=self.public_url,
            services=self.channel_services(),
        )
        for channel in self.channels:
            await channel.start(context)
            event("startup.channel", platform=channel.platform)
        tune_collector()  # what start-up built stays; requests' garbage is collected less often

    def drain(self) -> None:
        """The server was told to stop (SIGTERM), before it waits for open requests: every long-poll
        answers now as on a timeout (the prompt still pending, no messages), every event stream ends
        with a reconnect hint, so nobody waiting on this process sees an error. Once is enough."""
        if self.gateway.feeds.draining:
            return
        event("shutdown.draining")
        self.gateway.waiters.drain()
        self.gateway.feeds.drain()

    async def stop(self) -> None:
        """Graceful stop (SIGTERM, after the server finished its in-flight requests): deliver what this
        process owes while the channels can still post, then stop them and hand their leases over at once.
        Nothing pending is lost either way: prompts and outboxes live in Redis for the other processes."""
        self.stopping = True
        event("shutdown.started")
        if self.webhooks is not None:
            await self.webhooks.stop()
        await self.gateway.stop()
        await self._flush_outbox()
        for channel in reversed(self.channels):
            try:
                await channel.stop()
            except Exception as exc:
                event("shutdown.channel_failed", logging.WARNING, platform=channel.platform, error=str(exc))
        for lease in self.leases.values():
            lease.stop()
            await lease.release()
        await self.gateway.outbox.idle()
        await self.health.close()
        await self.connection.client.aclose()
        event("shutdown.finished")

    async def _flush_outbox(self) -> None:
        """Drain every thread with work owed (this process's and any other's), within a deadline."""
        try:
            drained = await asyncio.wait_for(
                self.gateway.outbox.sweep(everything=True), timeout=self.flush_timeout_s
            )
            event("shutdown.outbox_flushed", threads=drained)
        except Exception as exc:  # Redis away or too slow: the other processes' sweepers deliver it
            event("shutdown.outbox_unflushed", logging.WARNING, error=str(exc) or type(exc).__name__)
