"""Which agents own a thread, and what that lets a token scoped to some agents see and do there.

A thread belongs to the agents with runs in it and to the agents whose definitions claim its channel
(a channel reference claims every thread in that channel; ``gateway.base.ids.is_channel_claim`` says which
claims are well formed). These are pure rules; the facts live in Redis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ThreadOwners:
    run_agents: frozenset[str]  # agents with a run in the thread
    claimants: frozenset[str]  # agents whose definitions claim the thread's channel

    @property
    def agents(self) -> frozenset[str]:
        return self.run_agents | self.claimants


def covers(channel: str, thread_id: str) -> bool:
    """Whether a claimed channel (``<platform>:<channel>``) holds the thread: the thread itself, or one
    whose id continues the claim with ``:``."""
    return thread_id == channel or thread_id.startswith(f"{channel}:")


def claimants(claims: Mapping[str, Sequence[str]], thread_id: str) -> frozenset[str]:
    found = (agent for agent, channels in claims.items() if any(covers(c, thread_id) for c in channels))
    return frozenset(found)


def message_reaches(scope: frozenset[str] | None, owners: ThreadOwners) -> bool:
    """A person's message reaches a token when its agents own the thread, or nobody claims the channel
    (the one-tenant default: every agent token hears unclaimed channels)."""
    return scope is None or not owners.claimants or bool(scope & owners.agents)


def thread_open_to(scope: frozenset[str] | None, owners: ThreadOwners) -> bool:
    """A token may post into, read, start a run in or bind a session to a thread its agents own, or a thread
    nobody owns yet (no run, no claim); never a thread that only other agents own."""
    return scope is None or not owners.agents or bool(scope & owners.agents)
