"""What an "Approve for this session" press left behind: the run's grants, and what the agent asking for
the same call again is answered (what POST /v1/runs/{id}/approvals hands back)."""

from __future__ import annotations

from gateway.base.models import Prompt
from gateway.process.runtime import Runtime
from gateway.rules.grants import Grant


async def grants_of(runtime: Runtime, prompt: Prompt) -> list[Grant]:
    """The grants in force for the prompt's run."""
    return await runtime.store.grants.in_force(prompt.thread_id, prompt.run_id)


async def asked_again(runtime: Runtime, prompt: Prompt) -> str | None:
    """The agent asks for the prompt's call again: who let it through (``grant:<id>``), or None when it
    asked someone instead."""
    assert prompt.tool_call is not None
    decided = await runtime.gateway.request_approval(prompt.run_id, prompt.tool_call)
    return decided.by if isinstance(decided, Grant) else None
