"""Who owns a thread: the agents with runs in it (a set per thread) and the channels agents claim."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from typing import Any

from gateway.rules.ownership import ThreadOwners, claimants, thread_open_to
from gateway.store import keys

CLAIMS_CACHE_S = 1.0  # how long a process reuses the claims it read; a change reaches every process this fast
RUN_AGENTS_CACHE = 2048  # threads whose agents are known: about 400 B each


class Ownership:
    """Reads and writes ownership facts. Agents with runs in a thread only ever grow, so they are cached
    as found; claims are re-read at most every ``CLAIMS_CACHE_S``."""

    def __init__(self, client: Any) -> None:
        self.redis = client
        self._claims: tuple[float, dict[str, tuple[str, ...]]] | None = None
        self._run_agents: OrderedDict[str, frozenset[str]] = OrderedDict()

    def remember_run(self, thread_id: str, agent: str) -> None:
        known = self._run_agents.pop(thread_id, frozenset())
        self._run_agents[thread_id] = known | {agent}
        if len(self._run_agents) > RUN_AGENTS_CACHE:
            self._run_agents.popitem(last=False)

    async def run_agents(self, thread_id: str, wanted: frozenset[str] | None = None) -> frozenset[str]:
        """Agents with a run in the thread; from Redis unless the cache already holds one of ``wanted``."""
        known = self._run_agents.get(thread_id, frozenset())
        if wanted is not None and known & wanted:
            return known
        found = frozenset(await self.redis.smembers(keys.thread_agents(thread_id)))
        for agent in found - known:
            self.remember_run(thread_id, agent)
        return found | known

    async def claims(self) -> dict[str, tuple[str, ...]]:
        """Every agent's claimed channels."""
        now = time.monotonic()
        if self._claims is not None and self._claims[0] > now:
            return self._claims[1]
        raw = await self.redis.hgetall(keys.CLAIMS)
        claims = {agent: tuple(json.loads(value)) for agent, value in raw.items()}
        self._claims = (now + CLAIMS_CACHE_S, claims)
        return claims

    async def claimed_by(self, agent: str) -> list[str]:
        raw = await self.redis.hget(keys.CLAIMS, agent)
        return list(json.loads(raw)) if raw else []

    async def set_claims(self, agent: str, channels: list[str]) -> None:
        if channels:
            await self.redis.hset(keys.CLAIMS, agent, json.dumps(channels))
        else:
            await self.redis.hdel(keys.CLAIMS, agent)
        self._claims = None

    async def claimants(self, thread_id: str) -> frozenset[str]:
        """The agents whose definitions claim the thread's channel."""
        return claimants(await self.claims(), thread_id)

    async def owners(self, thread_id: str, wanted: frozenset[str] | None = None) -> ThreadOwners:
        """The thread's owners; ``wanted`` (the caller's agents) lets a claim or a cached run answer
        without reading the thread's runs (the result then names the claimants, or the cached runs)."""
        claiming = await self.claimants(thread_id)
        if wanted is not None and claiming & wanted:
            return ThreadOwners(frozenset(), claiming)
        return ThreadOwners(await self.run_agents(thread_id, wanted), claiming)

    async def open_to(self, scope: frozenset[str] | None, thread_id: str) -> bool:
        """Whether a token acting for ``scope`` (None: every agent) may post into, read, start a run in or
        bind a session to the thread or channel: the one question every such path asks, and the one an
        escalation asks of each target for the prompt's agent."""
        if scope is None:
            return True
        return thread_open_to(scope, await self.owners(thread_id, scope))
