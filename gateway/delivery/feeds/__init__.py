"""Redis streams read once per process and fanned out in memory to every reader that follows them."""

from gateway.delivery.feeds.caps import StreamCaps, StreamSlot
from gateway.delivery.feeds.hub import Feeds
from gateway.delivery.feeds.tail import Entry, Tail

__all__ = ["Entry", "Feeds", "StreamCaps", "StreamSlot", "Tail"]
