"""Agent side: runs, raising and waiting on prompts, cancelling them, and the inbox of pending ones."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from gateway.api.answering import already_resolved
from gateway.api.auth import AgentCaller, Caller
from gateway.api.deps import MAX_WAIT_S, Core, Options
from gateway.api.errors import error_responses
from gateway.api.inbox import pending_page
from gateway.api.schemas import CancelBody, PromptList
from gateway.cursors import PAGE_CURSOR
from gateway.models import Prompt, PromptRequest, PromptState, ReasonCode, Run, RunRequest

router = APIRouter(prefix="/v1", tags=["agent side"])

RunId = Annotated[str, Path(min_length=1, max_length=100)]
PromptId = Annotated[str, Path(min_length=1, max_length=100)]


@router.post("/runs", status_code=201, response_model=Run, responses=error_responses(400, 403))
async def create_run(body: RunRequest, core: Core, _caller: AgentCaller) -> Run:
    """Start a run in a chat thread; ``started_by`` may answer its prompts (with the agent's approvers)."""
    return await core.create_run(body)


@router.post("/runs/{run_id}/end", response_model=Run, responses=error_responses(403, 404))
async def end_run(run_id: RunId, core: Core, _caller: AgentCaller) -> Run:
    """End a run: its pending prompt is cancelled with reason ``the run ended``. Ending twice is fine."""
    return await core.end_run(run_id)


@router.post(
    "/runs/{run_id}/prompts",
    status_code=201,
    responses={201: {"model": Prompt}, **error_responses(400, 403, 404, 409, 503)},
)
async def raise_prompt(run_id: RunId, body: PromptRequest, core: Core, _caller: AgentCaller) -> JSONResponse:
    """Raise a prompt, superseding the thread's active one. 503 PROMPT_UNAVAILABLE if the post fails."""
    prompt = await core.raise_prompt(run_id, body)
    return JSONResponse(prompt.public(), status_code=201)


@router.get("/prompts/{prompt_id}", responses={200: {"model": Prompt}, **error_responses(404)})
async def get_prompt(
    prompt_id: PromptId,
    core: Core,
    options: Options,
    _caller: Caller,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S, description="Seconds to hold while pending.")] = 0,
) -> JSONResponse:
    """The prompt; with ``wait``, returns the moment it settles (or after ``wait`` seconds, still pending).

    While a long-poll is open the agent counts as waiting: an answer then resolves ``resolved_hot``.
    """
    prompt = await core.wait_prompt(prompt_id, min(wait, options.max_wait_s))
    return JSONResponse(prompt.public())


@router.post(
    "/prompts/{prompt_id}/cancel", responses={200: {"model": Prompt}, **error_responses(400, 403, 404, 409)}
)
async def cancel_prompt(
    prompt_id: PromptId, core: Core, _caller: AgentCaller, body: CancelBody | None = None
) -> JSONResponse:
    """Cancel a pending prompt (``reason_code: cancelled``). Twice is fine; 409 if it was answered."""
    reason = (body or CancelBody()).reason
    settlement = await core.cancel_prompt(prompt_id, reason, ReasonCode.CANCELLED)
    prompt = await core.get_prompt(prompt_id)
    if not settlement.ok and prompt.prompt_state is PromptState.ANSWERED:
        raise await already_resolved(core, "ALREADY_RESOLVED", prompt)
    return JSONResponse(prompt.public())


@router.get("/prompts", response_model=PromptList, responses=error_responses(400))
async def list_prompts(
    core: Core,
    _caller: Caller,
    state: Annotated[Literal["pending"], Query()] = "pending",
    agent: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    thread_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    cursor: Annotated[str | None, Query(pattern=PAGE_CURSOR)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> JSONResponse:
    """The inbox: pending prompts across agents, newest first, filtered by agent or thread, paged."""
    page = await pending_page(core, agent=agent, thread_id=thread_id, cursor=cursor, limit=limit)
    return JSONResponse(page)
