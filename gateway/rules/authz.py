"""Who may answer a prompt: the one rule every answer path (chat reply, control press, REST) uses."""

from __future__ import annotations

from typing import Protocol

from gateway.base.models import Prompt


class ApproverLookup(Protocol):
    async def is_approver(self, agent: str, identity: str) -> bool: ...


async def may_answer(approvers: ApproverLookup, prompt: Prompt, identity: str | None) -> bool:
    """The person whose message started the run, plus the agent's approvers. Nobody else.

    A run no person started (``started_by`` null) can be answered by approvers only.
    """
    return await may_decide(approvers, prompt.agent, prompt.started_by, identity)


async def may_decide(
    approvers: ApproverLookup, agent: str, started_by: str | None, identity: str | None
) -> bool:
    """``may_answer`` for a run of ``agent`` started by ``started_by``: who may answer its prompts, and so
    revoke the grants their approvals made."""
    if not identity:
        return False
    if started_by is not None and identity == started_by:
        return True
    return await approvers.is_approver(agent, identity)
