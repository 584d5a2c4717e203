"""Who may read a thread's log: the one rule every reading route of a channel asks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gateway.rules.authz import ApproverLookup


@dataclass(frozen=True, slots=True)
class Audience:
    """What a thread's readers follow from: the agents and starters of its runs, the session that started
    it (if any), and whether anything was ever logged or run in it (``used``)."""

    agents: frozenset[str]
    starters: frozenset[str]
    session: str | None
    used: bool


@dataclass(frozen=True, slots=True)
class Reader:
    """Who asks to read: a person (``identity``, None when unnamed) or an operator token (``operator``),
    which answers for ``agents`` (None: every agent). A signed-in person reads as ``person:<id>`` with the
    chat identities linked to them (``identities``) and the groups their session vouches for (``groups``:
    the directory's and the identity provider's groups claim; only a session brings any)."""

    identity: str | None = None
    operator: bool = False
    agents: frozenset[str] | None = None
    identities: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()


async def may_read(approvers: ApproverLookup, audience: Audience, reader: Reader) -> bool:
    """A session's thread: the approvers of its agents (and operators). A thread with runs: their
    starters, their agents' approvers and operators. A thread nobody runs yet: anyone who may post there.

    A thread's runs only accumulate, so whoever started one keeps reading the thread's history.
    """
    if reader.operator:
        if reader.agents is None:
            return True
        if not audience.agents:  # nobody's thread, or a session whose agent has not run in it yet
            return audience.session is None
        return bool(reader.agents & audience.agents)
    if audience.session is None and not audience.agents:
        return True
    if reader.identity is None:
        return False
    if audience.session is None and not audience.starters.isdisjoint((reader.identity, *reader.identities)):
        return True
    for agent in sorted(audience.agents):
        if await approvers.is_approver(agent, reader.identity, reader.groups):
            return True
    return False


class AudienceStore(ApproverLookup, Protocol):
    async def thread_audience(self, thread_id: str) -> Audience: ...


class Audiences:
    """The rule above over the store's facts, for channels (which make no Redis call themselves)."""

    def __init__(self, store: AudienceStore) -> None:
        self.store = store

    async def of(self, thread_id: str) -> Audience:
        return await self.store.thread_audience(thread_id)

    async def may_read(self, thread_id: str, reader: Reader) -> bool:
        return await may_read(self.store, await self.of(thread_id), reader)
