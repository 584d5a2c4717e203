"""What a token may see and act on (contract §6): the one place every route asks.

A token acts for its agents (``Principal.agents``; None is every agent). Runs, prompts and sessions of
any other agent do not exist for it (404 with the usual code); naming another agent outright (starting a
run, an agent's definition) is 403. Threads belong to the agents with runs in them and to the agents
claiming their channel (``gateway.rules.ownership``).
"""

from __future__ import annotations

from typing import Any

from gateway.api.auth import Principal
from gateway.base.errors import GatewayError, not_found
from gateway.base.models import Prompt, Run
from gateway.decision.service import Gateway
from gateway.rules.ownership import message_reaches
from gateway.store import Store


def visible(caller: Principal, agent: str | None) -> bool:
    """Whether the caller's token acts for ``agent`` (its runs, prompts and sessions exist for it)."""
    return caller.agents is None or (agent is not None and caller.acts_for(agent))


def require_agent(caller: Principal, agent: str) -> None:
    """403 FORBIDDEN unless the caller's token acts for ``agent``."""
    if not visible(caller, agent):
        raise GatewayError(
            "FORBIDDEN",
            f"This token does not act for agent {agent!r}; use that agent's token "
            "(THREADGATE_API_TOKENS name:role:token[:agents]).",
            403,
            {"agent": agent},
        )


async def own_run(store: Store, caller: Principal, run_id: str) -> Run:
    """The run, or 404 RUN_NOT_FOUND when there is none or it is another agent's."""
    run = await store.get_run(run_id, state_may_be_stale=True)
    if run is None or not visible(caller, run.agent):
        raise not_found("RUN_NOT_FOUND", "run", run_id)
    return run


async def own_prompt(
    store: Store, caller: Principal, prompt_id: str, code: str = "PROMPT_NOT_FOUND"
) -> Prompt:
    """The prompt, or 404 ``code`` when there is none or it is another agent's."""
    prompt = await store.get_prompt(prompt_id)
    if prompt is None or not visible(caller, prompt.agent):
        raise not_found(code, "prompt", prompt_id)
    return prompt


def session_agent(session_key: str) -> str | None:
    """The agent a session key (``<agent>:<session>``) belongs to; None for a key without one."""
    agent, separator, session = session_key.partition(":")
    return agent if separator and agent and session else None


def own_session(caller: Principal, session_key: str) -> None:
    """404 SESSION_NOT_FOUND unless the caller's token acts for the agent the session key names.

    Every session route asks this first, whatever the verb: another agent's sessions do not exist for it.
    """
    if not visible(caller, session_agent(session_key)):
        raise session_not_found(session_key)


def session_not_found(session_key: str) -> GatewayError:
    return GatewayError(
        "SESSION_NOT_FOUND",
        f"Session {session_key!r} has no thread yet (session keys are <agent>:<session>, "
        "and exist only for tokens acting for that agent).",
        404,
        {"session_key": session_key},
    )


async def thread_open(store: Store, caller: Principal, thread_id: str) -> bool:
    """Whether the caller may post into, read, start a run in or bind a session to the thread."""
    return await store.owners.open_to(caller.agents, thread_id)


async def require_thread(store: Store, caller: Principal, thread_id: str) -> None:
    """403 FORBIDDEN when only other agents own the thread."""
    if not await thread_open(store, caller, thread_id):
        raise GatewayError(
            "FORBIDDEN",
            f"Thread {thread_id} belongs to other agents (their runs, or a channel they claim); "
            "this token's agents cannot act in it.",
            403,
            {"thread_id": thread_id},
        )


async def message_visible(store: Store, caller: Principal, thread_id: str | None) -> bool:
    """Whether a person's message in the thread reaches the caller (``message.received``, the feed)."""
    if caller.agents is None:
        return True
    if thread_id is None:
        return False
    if not await store.owners.claimants(thread_id):
        return True  # the common case, from the cached claims: no Redis read per message
    return message_reaches(caller.agents, await store.owners.owners(thread_id, caller.agents))


async def event_visible(core: Gateway, caller: Principal, entry: dict[str, Any]) -> bool:
    """Whether an event of the feed reaches the caller: prompts by agent, people's messages by thread."""
    if caller.agents is None:
        return True
    data = entry.get("data") or {}
    if entry.get("type") == "message.received":
        return await message_visible(core.store, caller, data.get("thread_id"))
    return visible(caller, data.get("agent"))
