"""Who may answer a prompt: the one rule every answer path (chat reply, control press, REST) uses.

"Who" is a person where the directory knows one: an identity answers as its person, so the run's starter
may answer from any of their linked identities, and approver lists may name ``person:<id>`` and
``group:<name>`` (the store's ``is_approver`` resolves those, in one place). A signed-in person's
session also brings the groups its identity provider's groups claim names (``groups`` below); nothing
else may assert groups.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from gateway.base.ids import vouched_for
from gateway.base.models import HumanInput, Person, Prompt


class PeopleLookup(Protocol):
    async def whois(self, identity: str) -> Person | None: ...


class ApproverLookup(Protocol):
    async def is_approver(self, agent: str, identity: str, groups: Collection[str] = ()) -> bool: ...


async def person_of(approvers: ApproverLookup, identity: str | None) -> str | None:
    """The directory person ``identity`` belongs to (None: nobody, or a lookup without a directory)."""
    people: PeopleLookup | None = getattr(approvers, "people", None)
    if not identity or people is None:
        return None
    who = await people.whois(identity)
    return who.person if who is not None else None


async def same_person(approvers: ApproverLookup, one: str | None, other: str | None) -> bool:
    """Whether two identities are one person: equal, or linked to the same directory person."""
    if not one or not other:
        return False
    if one == other:
        return True
    mine = await person_of(approvers, one)
    return mine is not None and mine == await person_of(approvers, other)


async def requires_sign_in(approvers: ApproverLookup, agent: str) -> bool:
    """Whether the agent takes answers only from signed-in people and platform identities
    (``human_input.require_sign_in``)."""
    settings = getattr(approvers, "human_input", None)
    if settings is None:
        return False
    found: HumanInput = await settings(agent)
    return found.require_sign_in


async def may_answer(
    approvers: ApproverLookup, prompt: Prompt, identity: str | None, groups: Collection[str] = ()
) -> bool:
    """The person whose message started the run, plus the agent's approvers. Nobody else.

    A run no person started (``started_by`` null) can be answered by approvers only. ``groups`` are the
    groups a signed-in person's session vouches for (its identity provider's groups claim): only a
    session's answers pass any.
    """
    return await may_decide(approvers, prompt.agent, prompt.started_by, identity, groups)


async def may_decide(
    approvers: ApproverLookup,
    agent: str,
    started_by: str | None,
    identity: str | None,
    groups: Collection[str] = (),
) -> bool:
    """``may_answer`` for a run of ``agent`` started by ``started_by``: who may answer its prompts, and so
    revoke the grants their approvals made. A listed ``group:<name>`` admits members of the directory's
    group and, for a session, anyone whose ``groups`` name it."""
    if not identity:
        return False
    if not vouched_for(identity) and await requires_sign_in(approvers, agent):
        return False
    if started_by is not None and await same_person(approvers, identity, started_by):
        return True
    return await approvers.is_approver(agent, identity, groups)
