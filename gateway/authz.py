"""Who may answer a prompt: the one rule every answer path (chat reply, control press, REST) uses."""

from __future__ import annotations

from typing import Protocol

from gateway.models import Prompt


class ApproverLookup(Protocol):
    async def is_approver(self, agent: str, identity: str) -> bool: ...


async def may_answer(approvers: ApproverLookup, prompt: Prompt, identity: str | None) -> bool:
    """The person whose message started the run, plus the agent's approvers. Nobody else.

    A run no person started (``started_by`` null) can be answered by approvers only.
    """
    if not identity:
        return False
    if prompt.started_by is not None and identity == prompt.started_by:
        return True
    return await approvers.is_approver(prompt.agent, identity)
