"""``POST /v1/agents/{agent}/policy``: whether the agent's approval policy asks anybody about a tool call.

Asks nobody and records nothing: a hook asks it first, so a call the policy lets through costs one small
request (gateway/integrations/quick_hook.py). A call to ask about is then put to
``POST /v1/runs/{run_id}/approvals``, where a grant a person made for the run may still allow it.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, StrictBool

from gateway.api.auth import Caller
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.inputs import AgentName
from gateway.api.scope import require_agent
from gateway.base.models import Model, ToolAnnotations, ToolCall

router = APIRouter(prefix="/v1", tags=["agent side"])


class PolicyQuestion(Model):
    """A tool call the agent is about to make, as ``POST /v1/runs/{run_id}/approvals`` takes it."""

    tool_call: ToolCall
    destructive: StrictBool | None = None
    annotations: ToolAnnotations | None = None


class PolicyAnswer(BaseModel):
    """``allow``: the policy asks nobody, run the call. ``ask``: raise it as an approval on a run."""

    decision: Literal["allow", "ask"]
    by: Literal["policy"] = "policy"


@router.post("/agents/{agent}/policy", response_model=PolicyAnswer, responses=error_responses(400, 403, 404))
async def policy_decision(agent: AgentName, body: PolicyQuestion, core: Core, caller: Caller) -> PolicyAnswer:
    """Whether the agent's approval policy lets the call run without asking anybody (``allow``) or a
    person approves it first (``ask``)."""
    require_agent(caller, agent)
    asks = await core.policy_asks(agent, body.tool_call, body.destructive, body.annotations)
    return PolicyAnswer(decision="ask" if asks else "allow")
