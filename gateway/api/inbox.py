"""Pages of pending prompts: the inbox across agents and one agent's inputs (seed 002)."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.base.cursors import page_position
from gateway.base.errors import validation_failed
from gateway.base.ids import parse_thread_id
from gateway.decision.service import Gateway


async def pending_page(
    gateway: Gateway,
    *,
    agent: str | None,
    thread_id: str | None,
    cursor: str | None,
    limit: int,
    agents: frozenset[str] | None = None,
) -> dict[str, Any]:
    """``{"items": [prompt, ...], "cursor"}``, newest first; a thread has at most one pending prompt.

    ``agents`` (a token's scope) keeps other agents' prompts out; a page may then hold fewer than
    ``limit`` items, and the cursor still goes on.
    """
    store = gateway.store
    if agent is None and agents is not None and len(agents) == 1:
        (agent,) = agents  # that agent's own index: full pages
    if thread_id is not None:
        thread = parse_thread_id(thread_id)
        active = await store.active_prompt_id(thread.thread_id)
        ids, next_cursor = ([active] if active and not cursor else []), None
    else:
        ids, next_cursor = await store.pending_ids(agent, _position(cursor), limit)
    prompts = await asyncio.gather(*(store.get_prompt(prompt_id) for prompt_id in ids))
    items = [
        prompt.public()
        for prompt in prompts
        if prompt is not None
        and prompt.pending
        and (agent is None or prompt.agent == agent)
        and (agents is None or prompt.agent in agents)
    ]
    return {"items": items, "cursor": next_cursor}


def _position(cursor: str | None) -> tuple[int, str] | int | None:
    """Where a page cursor goes on; 400 VALIDATION_FAILED naming ``cursor`` for one not made here."""
    if not cursor:
        return None
    try:
        return page_position(cursor)
    except ValueError as exc:
        problem = {"field": "cursor", "in": "query", "problem": str(exc)}
        raise validation_failed(f"Parameter 'cursor' is invalid: {exc}.", [problem]) from None
