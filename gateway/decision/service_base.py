"""What every part of the core's service shares: the store, the channels, the outbox, the clock."""

from __future__ import annotations

from collections.abc import Callable

from gateway.decision.outbox import Outbox
from gateway.delivery.channel import Channels
from gateway.delivery.feeds import Feeds
from gateway.delivery.waiters import Waiters
from gateway.store import Store
from gateway.store.outage import StoreHealth


class ServiceBase:
    """The state the service's parts (raising, settling, receiving) work on; ``Gateway`` builds it."""

    store: Store
    channels: Channels
    clock: Callable[[], float]
    health: StoreHealth
    outbox: Outbox
    waiters: Waiters
    feeds: Feeds

    def now_ms(self) -> int:
        return int(self.clock() * 1000)
