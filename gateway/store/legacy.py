"""Moving the one-key indexes of earlier versions into the partitions (see ``keys.PARTITIONS``).

Readers merge the legacy keys as one more partition, so nothing in them is missed meanwhile; moving them
lets the settle path (which removes from the thread's partition only) keep them current. Runs in the
background after adoption; safe to run in several processes at once and to stop half way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.store import keys

BATCH = 1000

# The legacy sorted sets by what their members are: prompt ids, "<prompt id>:<step>", thread ids.
_BY_PROMPT = ((keys.EXPIRY, keys.expiry_index), (keys.PENDING, keys.pending_index))
_AGENT_INBOXES = "tg:pending:*"


async def move_legacy_indexes(redis: Any) -> int:
    """Move every member of the legacy inbox, expiry, escalation and dirty sets (and the agents' legacy
    inboxes) into its thread's partition, keeping its score; a member whose prompt is gone is dropped.
    Returns how many members were moved. Nothing to do (one round trip) once ``tg:pending``,
    ``tg:expiry``, ``tg:dirty`` and ``tg:escalation`` are gone: the agents' inboxes are moved before the
    inbox itself."""
    if not await redis.exists(keys.PENDING, keys.DIRTY, keys.ESCALATION, keys.EXPIRY):
        return 0
    moved = 0
    inboxes = [str(key) async for key in redis.scan_iter(match=_AGENT_INBOXES, count=BATCH, _type="zset")]
    for key in inboxes:
        agent = key[len("tg:pending:") :]
        moved += await _move(redis, key, _agent_inbox(agent), _prompt)
    moved += await _move(redis, keys.ESCALATION, keys.escalation_schedule, _step_prompt)
    moved += await _move(redis, keys.DIRTY, keys.dirty_threads, None)
    for legacy, partitioned in _BY_PROMPT:
        moved += await _move(redis, legacy, partitioned, _prompt)
    return moved


def _agent_inbox(agent: str) -> Callable[[int], str]:
    return lambda part: keys.agent_pending(agent, part)


def _prompt(member: str) -> str:
    return member


def _step_prompt(member: str) -> str:
    return member.rpartition(":")[0]


async def _move(
    redis: Any,
    legacy: str,
    partitioned: Callable[[int], str],
    prompt_of: Callable[[str], str] | None,
) -> int:
    """Move ``legacy``'s members a batch at a time until it is empty. ``prompt_of`` names the prompt a
    member belongs to (its thread is read from the prompt's index); None: the member is a thread id."""
    moved = 0
    while rows := await redis.zrange(legacy, 0, BATCH - 1, withscores=True):
        members = [str(member) for member, _ in rows]
        threads = members if prompt_of is None else await _threads(redis, [prompt_of(m) for m in members])
        pipe = redis.pipeline(transaction=False)
        for (member, score), thread in zip(rows, threads, strict=True):
            if thread is not None:
                pipe.zadd(partitioned(keys.partition(thread)), {member: score}, nx=True)
                moved += 1
        await pipe.execute()
        await redis.zrem(legacy, *members)  # once they are in place: a crash in between loses none
    return moved


async def _threads(redis: Any, prompt_ids: list[str]) -> list[str | None]:
    pipe = redis.pipeline(transaction=False)
    for prompt_id in prompt_ids:
        pipe.get(keys.prompt_index(prompt_id))
    return [None if thread is None else str(thread) for thread in await pipe.execute()]
