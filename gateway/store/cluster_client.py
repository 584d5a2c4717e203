"""A Redis Cluster client whose bursts wait for a connection instead of failing.

redis-py's cluster client opens at most ``max_connections`` connections per node and raises
``MaxConnectionsError`` on the next command while they are all busy: a burst of long-polls (hundreds of
agents asking at once) would turn into errors. The single-server pool waits for a free connection; this
client does the same by letting at most ``max_connections`` commands and pipelines run at once, so no
node is ever asked for more connections than it may open.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.exceptions import RedisClusterException

# Connections a node may open beyond the commands' turns: a pub/sub subscription borrows one for good.
_RESERVED = 8
# Set while a task holds a turn: a command the client sends on its own behalf inside one (a retry, a
# command split by slot) runs without waiting for a second turn, so nested sends cannot deadlock.
_holding = ContextVar("threadgate_cluster_turn", default=False)


class _Turns:
    """At most ``limit`` sends at a time across the client, re-entrant within one task."""

    def __init__(self, limit: int) -> None:
        self._free = asyncio.Semaphore(limit)

    async def run(self, send: Any) -> Any:
        if _holding.get():
            return await send()
        async with self._free:
            held = _holding.set(True)
            try:
                return await send()
            finally:
                _holding.reset(held)


class WaitingClusterPipeline(ClusterPipeline):
    """A cluster pipeline that takes one turn for its whole batch (one connection per node at most)."""

    def __init__(self, client: WaitingRedisCluster, transaction: Any = None) -> None:
        super().__init__(client, transaction)
        self._turns = client.turns

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        send = super().execute
        return list(await self._turns.run(lambda: send(raise_on_error, allow_redirections)))


class WaitingRedisCluster(RedisCluster):
    """``RedisCluster`` whose commands wait for a turn when ``max_connections`` are already busy."""

    def __init__(self, *, max_connections: int = 100, **kwargs: Any) -> None:
        super().__init__(max_connections=max_connections + _RESERVED, **kwargs)
        self.turns = _Turns(max_connections)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        send = super().execute_command
        return await self.turns.run(lambda: send(*args, **kwargs))

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> WaitingClusterPipeline:
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")
        return WaitingClusterPipeline(self, transaction)  # type: ignore[abstract]  # as redis-py's own
