"""The inbox: the partitioned indexes of pending prompts (by creation, by agent, by expiry), paged, counted,
walked and pruned."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from gateway.base.cursors import page_cursor
from gateway.base.models import Prompt
from gateway.store import calls, keys
from gateway.store.base import StoreBase, ranked


def forget(pipe: Any, prompt_id: str, agent: str, parts: list[int]) -> None:
    """Queue on ``pipe`` what drops a settled prompt from the inbox and expiry indexes of ``parts``."""
    for part in parts:
        pipe.zrem(keys.pending_index(part), prompt_id)
        pipe.zrem(keys.agent_pending(agent, part), prompt_id)
        pipe.zrem(keys.expiry_index(part), prompt_id)


def unindexed(settled: list[Prompt]) -> list[tuple[Any, ...]]:
    """The ZREMs that drop settled prompts from the inbox and expiry indexes: one per index and
    partition for the whole batch."""
    by_part: dict[int, list[Prompt]] = {}
    for prompt in settled:
        by_part.setdefault(keys.partition(prompt.thread_id), []).append(prompt)
    commands: list[tuple[Any, ...]] = []
    for part, prompts in by_part.items():
        ids = [prompt.prompt_id for prompt in prompts]
        commands += [("ZREM", keys.pending_index(part), *ids), ("ZREM", keys.expiry_index(part), *ids)]
        by_agent: dict[str, list[str]] = {}
        for prompt in prompts:
            by_agent.setdefault(prompt.agent, []).append(prompt.prompt_id)
        commands += [("ZREM", keys.agent_pending(name, part), *group) for name, group in by_agent.items()]
    return commands


class Inbox(StoreBase):
    """Pending prompts across the partitions, merged as one inbox."""

    async def due_prompts(self, now_ms: int, limit: int = 200) -> list[str]:
        """Up to ``limit`` pending prompts whose expiry has passed, the longest overdue first."""
        return await self._scored_up_to(keys.expiry_index, now_ms, limit)

    async def forget_pending(self, prompt_id: str, agent: str, thread_id: str | None = None) -> None:
        """Drop a settled prompt from the inbox and expiry indexes (its partition's, and the legacy ones);
        its thread is read from its index unless given."""
        thread = thread_id or await self.prompt_thread(prompt_id)
        parts = [keys.partition(thread), keys.LEGACY] if thread is not None else list(keys.EVERY_PARTITION)
        pipe = self.redis.pipeline(transaction=False)
        forget(pipe, prompt_id, agent, parts)
        await pipe.execute()

    async def pending_ids(
        self, agent: str | None, position: tuple[int, str] | int | None, limit: int
    ) -> tuple[list[str], str | None]:
        """Pending prompt ids, newest first (by creation, then id), one page after ``position``: the
        (created ms, id) of the last prompt of the page before (see ``page_cursor``), or an earlier
        version's offset. Merged from every partition; the next page's cursor, None at the end."""

        def index(part: int) -> str:
            return keys.agent_pending(agent, part) if agent else keys.pending_index(part)

        if isinstance(position, int):  # an offset into the whole inbox: the first pages of each, merged
            replies = await self._each_partition(
                lambda pipe, part: pipe.zrevrange(index(part), 0, position + limit, withscores=True)
            )
            rows = ranked(replies, newest_first=True)[position:]
        else:
            score, member = position if position is not None else ("", "")
            pages = [calls.page_index(index(part), score, member, limit + 1) for part in keys.EVERY_PARTITION]
            replies = [
                [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]
                for reply in await self.scripts.call_many(self.redis, pages)
            ]
            rows = ranked(replies, newest_first=True)
        page = rows[:limit]
        more = len(rows) > limit
        return [member for _, member in page], (page_cursor(*page[-1]) if more and page else None)

    async def pending_count(self) -> int:
        """How many entries the inbox holds (every partition's, the legacy one's too)."""
        return sum(
            int(n)
            for n in await self._each_partition(lambda pipe, part: pipe.zcard(keys.pending_index(part)))
        )

    async def pending_states(self, batch: int = 1000) -> AsyncIterator[list[tuple[str, str | None]]]:
        """The inbox's prompt ids with their stored state (None: no record), a batch at a time.

        ``ZSCAN`` walks each partition of the inbox by cursor, so entries added or removed meanwhile
        (prompts raised and settled while this runs) never make it skip one that stays; one may come
        twice. Three pipelined round trips per batch, so a million waiting prompts are read in seconds.
        """
        for part in keys.EVERY_PARTITION:
            cursor = 0
            while True:
                cursor, members = await self.redis.zscan(keys.pending_index(part), cursor, count=batch)
                ids = [str(pid) for pid, _score in members]
                if ids:
                    yield await self._states(ids)
                if not cursor:
                    break

    async def _states(self, ids: list[str]) -> list[tuple[str, str | None]]:
        pipe = self.redis.pipeline(transaction=False)
        for prompt_id in ids:
            pipe.get(keys.prompt_index(prompt_id))
        threads = await pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for prompt_id, thread in zip(ids, threads, strict=True):
            if thread is not None:
                pipe.hget(keys.prompt(thread, prompt_id), "state")
        states = iter(await pipe.execute())
        return [
            (pid, next(states) if thread is not None else None)
            for pid, thread in zip(ids, threads, strict=True)
        ]
