"""Agent side: runs, raising and waiting on prompts, cancelling them, and the inbox of pending ones."""

from __future__ import annotations

import contextlib
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from gateway.api.auth import AgentCaller, Caller, Principal
from gateway.api.deps import MAX_WAIT_S, ApiOptions, Core, Options, streams_of
from gateway.api.errors import error_responses
from gateway.api.inbox import pending_page
from gateway.api.schemas import ApprovalRequest, CancelBody, PolicyDecision, PromptList
from gateway.api.scope import own_prompt, own_run, require_agent, require_thread, visible
from gateway.base.cursors import PAGE_CURSOR
from gateway.base.errors import GatewayError
from gateway.base.models import Prompt, PromptRequest, PromptState, ReasonCode, Run, RunRequest
from gateway.decision.answering.refusals import already_resolved
from gateway.decision.service import Gateway
from gateway.delivery.feeds import StreamCaps
from gateway.rules.grants import Grant

router = APIRouter(prefix="/v1", tags=["agent side"])

RunId = Annotated[str, Path(min_length=1, max_length=100)]
PromptId = Annotated[str, Path(min_length=1, max_length=100)]


def linked(core: Gateway, prompt: Prompt) -> dict[str, object]:
    """The prompt's JSON with ``thread_url``, where a person opens its thread, when the channel can say."""
    return prompt.model_copy(update={"thread_url": core.channels.permalink(prompt.thread_id)}).public()


@router.post("/runs", status_code=201, response_model=Run, responses=error_responses(400, 403))
async def create_run(body: RunRequest, core: Core, caller: AgentCaller) -> Run:
    """Start a run in a chat thread; ``started_by`` may answer its prompts (with the agent's approvers).

    403 FORBIDDEN for an agent the token does not act for, or a thread only other agents own.
    """
    require_agent(caller, body.agent)
    await require_thread(core.store, caller, body.thread_id)
    return await core.create_run(body)


@router.post("/runs/{run_id}/end", response_model=Run, responses=error_responses(403, 404))
async def end_run(run_id: RunId, core: Core, caller: AgentCaller) -> Run:
    """End a run: its pending prompt is cancelled with reason ``the run ended``. Ending twice is fine."""
    await own_run(core.store, caller, run_id)
    return await core.end_run(run_id)


@router.post("/runs/{run_id}/abort", response_model=Run, responses=error_responses(403, 404))
async def abort_run(run_id: RunId, core: Core, caller: AgentCaller) -> Run:
    """Abort a run: it ends, and its pending prompt is cancelled with ``reason_code: aborted``."""
    await own_run(core.store, caller, run_id)
    return await core.end_run(run_id, aborted=True)


@router.post(
    "/runs/{run_id}/approvals",
    status_code=201,
    responses={
        200: {
            "model": PolicyDecision,
            "description": "Nobody is asked (the policy, or a grant of the run): run the call.",
        },
        201: {"model": Prompt, "description": "The approval prompt to wait on."},
        **error_responses(400, 403, 404, 409, 503),
    },
)
async def request_approval(
    run_id: RunId, body: ApprovalRequest, core: Core, caller: AgentCaller
) -> JSONResponse:
    """A tool call about to be made: 200 ``{decision: allow, by: "grant:<grant_id>"}`` when a grant a
    person made for the run matches it; else the agent's approval policy: 200 ``{decision: allow, by:
    policy}``, or 201 with the approval prompt it raised (the call runs only with exactly the arguments
    approved)."""
    await own_run(core.store, caller, run_id)
    try:
        decided = await core.request_approval(
            run_id,
            body.tool_call,
            body.destructive,
            body.question,
            body.expires_in_seconds,
            body.annotations,
            editable=body.editable,
            input_schema=body.input_schema,
        )
    except ValidationError as exc:  # what the request asks and the tool's rule sets cannot hold together
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise GatewayError("VALIDATION_FAILED", f"The request body is invalid: {problem}.", 400) from None
    if decided is None:
        return JSONResponse(PolicyDecision().model_dump(), status_code=200)
    if isinstance(decided, Grant):
        return JSONResponse(PolicyDecision(by=decided.by).model_dump(), status_code=200)
    return JSONResponse(linked(core, decided), status_code=201)


@router.post(
    "/runs/{run_id}/prompts",
    status_code=201,
    responses={201: {"model": Prompt}, **error_responses(400, 403, 404, 409, 503)},
)
async def raise_prompt(run_id: RunId, body: PromptRequest, core: Core, caller: AgentCaller) -> JSONResponse:
    """Raise a prompt, superseding the thread's active one. 503 PROMPT_UNAVAILABLE if the post fails."""
    await own_run(core.store, caller, run_id)
    prompt = await core.raise_prompt(run_id, body)
    return JSONResponse(linked(core, prompt), status_code=201)


@router.get("/prompts/{prompt_id}", responses={200: {"model": Prompt}, **error_responses(404, 429)})
async def get_prompt(
    request: Request,
    prompt_id: PromptId,
    core: Core,
    options: Options,
    caller: Caller,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S, description="Seconds to hold while pending.")] = 0,
) -> JSONResponse:
    """The prompt; with ``wait``, returns the moment it settles (or after ``wait`` seconds, still pending).

    While a long-poll is open the agent counts as waiting: an answer then resolves ``resolved_hot``. Open
    long-polls are capped per token and per process (429 ``RATE_LIMITED`` with ``Retry-After`` beyond).
    """
    # Served by ``gateway.api.waiting`` below FastAPI; this route gives the schema, and answers requests
    # whose parameters that path leaves to FastAPI's validation.
    return JSONResponse(await held_prompt(core, options, streams_of(request), caller, prompt_id, wait))


async def held_prompt(
    core: Gateway, options: ApiOptions, streams: StreamCaps, caller: Principal, prompt_id: str, wait: float
) -> dict[str, object]:
    """``GET /v1/prompts/{id}``'s body: the caller's prompt, held up to ``wait`` seconds while pending."""
    await own_prompt(core.store, caller, prompt_id)
    wait_s = min(wait, options.max_wait_s)
    with streams.open(caller.name) if wait_s > 0 else contextlib.nullcontext():
        prompt = await core.wait_prompt(prompt_id, wait_s)
    return linked(core, prompt)


@router.post(
    "/prompts/{prompt_id}/cancel", responses={200: {"model": Prompt}, **error_responses(400, 403, 404, 409)}
)
async def cancel_prompt(
    prompt_id: PromptId, core: Core, caller: AgentCaller, body: CancelBody | None = None
) -> JSONResponse:
    """Cancel a pending prompt (``reason_code: cancelled``). Twice is fine; 409 if it was answered."""
    await own_prompt(core.store, caller, prompt_id)
    reason = (body or CancelBody()).reason
    settlement = await core.cancel_prompt(prompt_id, reason, ReasonCode.CANCELLED)
    prompt = await core.get_prompt(prompt_id)
    if not settlement.ok and prompt.prompt_state is PromptState.ANSWERED:
        raise await already_resolved(core, "ALREADY_RESOLVED", prompt)
    return JSONResponse(prompt.public())


@router.get("/prompts", response_model=PromptList, responses=error_responses(400))
async def list_prompts(
    core: Core,
    caller: Caller,
    state: Annotated[Literal["pending"], Query()] = "pending",
    agent: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    thread_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    cursor: Annotated[str | None, Query(pattern=PAGE_CURSOR)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> JSONResponse:
    """The inbox: pending prompts across agents, newest first, filtered by agent or thread, paged.

    A token scoped to some agents sees theirs only.
    """
    if agent is not None and not visible(caller, agent):
        return JSONResponse({"items": [], "cursor": None})
    page = await pending_page(
        core, agent=agent, thread_id=thread_id, cursor=cursor, limit=limit, agents=caller.agents
    )
    return JSONResponse(page)
