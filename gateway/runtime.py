"""Everything one gateway process runs, wired from settings: store, core service, channels."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from gateway.channel import ChannelContext, ChannelRuntime, Channels
from gateway.lease import Lease
from gateway.logs import event
from gateway.service import Gateway
from gateway.settings import Settings
from gateway.store import Connection, Store, connect


@dataclass
class Runtime:
    """One process's parts. ``start()`` and ``stop()`` bring them up and down in order."""

    settings: Settings
    connection: Connection
    store: Store
    gateway: Gateway
    channels: list[ChannelRuntime] = field(default_factory=list)

    @classmethod
    def build(cls, settings: Settings, channels: list[ChannelRuntime] | None = None) -> Runtime:
        if channels is None:
            from channels import build_channels

            channels = build_channels(settings)
        connection = connect(settings.redis_url)
        store = Store(connection.client)
        gateway = Gateway(store, Channels(list(channels)))
        return cls(settings, connection, store, gateway, list(channels))

    def lease(self, name: str) -> Lease:
        return Lease(self.connection.client, name, ttl_ms=self.settings.threadgate_lease_ttl_ms)

    async def start(self) -> None:
        if not self.connection.durable:
            event(
                "startup.store",
                logging.WARNING,
                store=self.connection.description,
                warning="REDIS_URL is unset: prompts, allow-lists and queued messages die with this process",
            )
        else:
            event("startup.store", store=self.connection.description)
        await self.gateway.start()
        context = ChannelContext(sink=self.gateway, lease=self.lease)
        for channel in self.channels:
            await channel.start(context)
            event("startup.channel", platform=channel.platform)

    async def stop(self) -> None:
        for channel in reversed(self.channels):
            try:
                await channel.stop()
            except Exception as exc:
                event("shutdown.channel_failed", logging.WARNING, platform=channel.platform, error=str(exc))
        await self.gateway.stop()
        await self.connection.client.aclose()
