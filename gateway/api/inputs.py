"""Human side (seed 002): an agent's pending inputs, answering them, and agent definitions with approvers."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from gateway.api.answering import SessionGroups, act_on_input
from gateway.api.auth import AnswerCaller, Caller, OperatorCaller, answering_as
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.inbox import pending_page
from gateway.api.runs import PromptId
from gateway.api.schemas import AgentBody, AnsweredInput, PromptList
from gateway.api.scope import require_agent, visible
from gateway.base.cursors import PAGE_CURSOR
from gateway.base.models import AgentDefinition
from gateway.decision.answering.bodies import InputAction
from gateway.decision.escalation import check_owners, check_targets

router = APIRouter(prefix="/v1", tags=["human side"])

AgentName = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]


@router.get("/agents/{agent}/inputs", response_model=PromptList, responses=error_responses(400))
async def list_inputs(
    agent: AgentName,
    core: Core,
    caller: Caller,
    state: Annotated[Literal["pending"], Query()] = "pending",
    cursor: Annotated[str | None, Query(pattern=PAGE_CURSOR)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> JSONResponse:
    """The agent's inputs waiting for a person, newest first, paged (none for a token not acting for it)."""
    if not visible(caller, agent):
        return JSONResponse({"items": [], "cursor": None})
    return JSONResponse(await pending_page(core, agent=agent, thread_id=None, cursor=cursor, limit=limit))


@router.post(
    "/agents/{agent}/inputs/{prompt_id}",
    responses={200: {"model": AnsweredInput}, **error_responses(400, 403, 404, 409)},
)
async def answer_input(
    agent: AgentName,
    prompt_id: PromptId,
    body: InputAction,
    core: Core,
    caller: AnswerCaller,
    groups: SessionGroups,
) -> JSONResponse:
    """Accept (``content`` by kind), decline or cancel an input on behalf of ``from`` (an operator token),
    or as the signed-in person (a session: ``from`` is not taken; the groups of its identity provider's
    groups claim count where the agent's approvers name ``group:<name>``).

    The same answer twice is 200; a different answer to a settled input is 409 ALREADY_RESOLVED whose
    details say how it settled. Decline on an approval answers Deny; on questions it cancels the input
    with ``reason_code: declined``. ``grant`` on an approve lets the run's later calls matching its
    pattern through without asking; the grant made is returned as ``grant``.
    """
    body = body.model_copy(update={"from_": answering_as(caller, body.from_)})
    acted = await act_on_input(core, caller, agent, prompt_id, body, groups)
    return JSONResponse(acted.public())


@router.put("/agents/{agent}", response_model=AgentDefinition, responses=error_responses(400, 403))
async def put_agent(agent: AgentName, body: AgentBody, core: Core, caller: OperatorCaller) -> AgentDefinition:
    """Define the agent: how long its inputs wait, who besides the run's starter may answer them, what
    an unmatched chat reply does (``on_unmatched_reply``), which tool calls need approval, and which
    channels' messages are its (``channels``; omitted keeps the current claims), and how its prompts are
    reminded and escalated while nobody answers (``human_input.escalation``)."""
    require_agent(caller, agent)
    check_targets(core.channels, body.human_input.escalation)
    await check_owners(core.store, core.channels, agent, body.human_input.escalation)
    definition = AgentDefinition(
        name=agent, human_input=body.human_input, approval=body.approval, channels=body.channels
    )
    await core.store.put_agent(definition)
    if body.channels is None:
        definition.channels = await core.store.owners.claimed_by(agent)
    return definition


@router.get("/agents/{agent}", response_model=AgentDefinition, responses=error_responses())
async def get_agent(agent: AgentName, core: Core, caller: Caller) -> AgentDefinition:
    """The agent's definition; an agent never defined has the defaults and no approvers."""
    require_agent(caller, agent)
    return await core.store.get_agent(agent) or AgentDefinition(name=agent, channels=[])
