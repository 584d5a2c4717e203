"""Agent side: the thread of an agent session (Claude Code, Codex, an MCP client), found or started."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from gateway.api.auth import AgentCaller, Caller, Principal
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.scope import (
    own_prompt,
    own_session,
    require_agent,
    require_thread,
    session_agent,
    session_not_found,
    thread_open,
    visible,
)
from gateway.base.errors import GatewayError
from gateway.base.models import Model, Prompt, PromptState, Run, RunRequest, ToolCall
from gateway.decision.session_runs import session_run
from gateway.decision.session_threads import SessionThreads
from gateway.rules.call_identity import same_call

router = APIRouter(prefix="/v1", tags=["agent side"])

SessionKey = Annotated[str, Path(min_length=1, max_length=160, pattern=r"^[A-Za-z0-9_.:-]+$")]
CallId = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:-]+$")]


class SessionThreadBody(Model):
    """Where a new session's header goes (a channel, not a thread) and what it says."""

    channel: str = Field(min_length=1, max_length=200, description="a channel, <platform>:<channel>")
    header: str = Field(min_length=1, max_length=500, description="e.g. Claude Code in api, session 1b2c")


class SessionThreadOut(Model):
    session_key: str
    thread_id: str
    created: bool
    thread_url: str | None = Field(
        default=None, description="where a person opens the thread, when its channel can say"
    )


class SessionCallBody(Model):
    """The prompt that asks about a tool call, the stale one it may replace, and the call itself."""

    prompt_id: str = Field(min_length=1, max_length=64, pattern=r"^prm_[A-Za-z0-9]+$")
    replaces: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^prm_[A-Za-z0-9]+$")
    tool_call: ToolCall | None = Field(
        default=None,
        description="The call being bound: the prompt must be the approval of exactly this call.",
    )


class SessionCallOut(Model):
    session_key: str
    call_id: str
    prompt_id: str
    created: bool


def _threads(request: Request, core: Core) -> SessionThreads:
    threads: SessionThreads | None = getattr(request.app.state, "session_threads", None)
    if threads is None:
        threads = SessionThreads(core.store, core.channels)
        request.app.state.session_threads = threads
    return threads


Threads = Annotated[SessionThreads, Depends(_threads)]


async def _own_session(core: Core, caller: Principal, session_key: str, thread_id: str | None) -> None:
    """404 SESSION_NOT_FOUND unless the session is one of the caller's agents' and has a thread the caller
    may act in."""
    own_session(caller, session_key)
    if thread_id is None or not await thread_open(core.store, caller, thread_id):
        raise session_not_found(session_key)


@router.put(
    "/sessions/{session_key}/thread",
    response_model=SessionThreadOut,
    responses={201: {"model": SessionThreadOut}, **error_responses(400, 403, 404, 503)},
)
async def ensure_session_thread(
    session_key: SessionKey, body: SessionThreadBody, threads: Threads, core: Core, caller: AgentCaller
) -> JSONResponse:
    """The session's thread: 200 with the one it has, or 201 after posting ``header`` into ``channel``.

    The binding lives in Redis, so later prompts, other gateway processes and restarts find the same thread.
    503 SESSION_THREAD_UNAVAILABLE when the header could not be posted (nothing was asked). A session whose
    thread only other agents own is 404 SESSION_NOT_FOUND; a channel only other agents claim is 403.
    """
    own_session(caller, session_key)
    existing = await threads.get(session_key)
    if existing is not None:
        await _own_session(core, caller, session_key, existing)
    else:
        await require_thread(core.store, caller, body.channel)
    found = await threads.thread_for(session_key, body.channel, body.header)
    out = SessionThreadOut(
        session_key=found.session_key,
        thread_id=found.thread_id,
        created=found.created,
        thread_url=core.channels.permalink(found.thread_id),
    )
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if found.created else 200)


@router.get("/sessions/{session_key}/thread", response_model=SessionThreadOut, responses=error_responses(404))
async def get_session_thread(
    session_key: SessionKey, threads: Threads, core: Core, caller: Caller
) -> SessionThreadOut:
    """The session's thread, or 404 SESSION_NOT_FOUND when no prompt of the session has started one (or
    only other agents own its thread)."""
    thread_id = await threads.get(session_key)
    await _own_session(core, caller, session_key, thread_id)
    assert thread_id is not None
    url = core.channels.permalink(thread_id)
    return SessionThreadOut(session_key=session_key, thread_id=thread_id, created=False, thread_url=url)


class SessionRunOut(Model):
    session_key: str
    run: Run
    created: bool


@router.put(
    "/sessions/{session_key}/run",
    response_model=SessionRunOut,
    responses={201: {"model": SessionRunOut}, **error_responses(400, 403, 404)},
)
async def ensure_session_run(
    session_key: SessionKey, body: RunRequest, core: Core, caller: AgentCaller
) -> JSONResponse:
    """The run the session's questions share in ``thread_id``: 200 with the running one, or 201 after
    starting it (on first use, or when the one it had ended). A grant a person makes on one of the
    session's prompts lasts as long as this run, so it answers the session's later identical calls.

    404 SESSION_NOT_FOUND for another agent's session; 403 FORBIDDEN for an agent the token does not act
    for, one the session key does not name, or a thread only other agents own.
    """
    own_session(caller, session_key)
    require_agent(caller, body.agent)
    if session_agent(session_key) != body.agent:
        raise GatewayError(
            "FORBIDDEN",
            f"Session {session_key!r} is not agent {body.agent!r}'s (session keys are <agent>:<session>).",
            403,
            {"session_key": session_key, "agent": body.agent},
        )
    await require_thread(core.store, caller, body.thread_id)
    run, created = await session_run(core, session_key, body)
    out = SessionRunOut(session_key=session_key, run=run, created=created)
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if created else 200)


def _call_mismatch(session_key: str, call_id: str, prompt_id: str, why: str) -> GatewayError:
    return GatewayError(
        "CALL_MISMATCH",
        f"Prompt {prompt_id} cannot answer call {call_id!r} of session {session_key!r}: {why}. "
        "Raise a prompt for this call and bind that one.",
        409,
        {"session_key": session_key, "call_id": call_id, "prompt_id": prompt_id},
    )


async def _check_binding(
    threads: SessionThreads, session_key: str, call_id: str, prompt: Prompt, tool_call: ToolCall | None
) -> None:
    """A decision answers only the call it was raised for: the prompt asks about exactly ``tool_call`` (when
    named; the same call's identity, so a command's fresh description is the same call), and a settled
    prompt is never bound to a call that was not already its own."""
    if tool_call is not None and (prompt.tool_call is None or not same_call(prompt.tool_call, tool_call)):
        raise _call_mismatch(session_key, call_id, prompt.prompt_id, "it asked about another call")
    settled = prompt.prompt_state is not PromptState.PENDING
    if settled and await threads.bindings.call_prompt(session_key, call_id) != prompt.prompt_id:
        raise _call_mismatch(session_key, call_id, prompt.prompt_id, "it was settled before it was bound")


@router.put(
    "/sessions/{session_key}/calls/{call_id}",
    response_model=SessionCallOut,
    responses={201: {"model": SessionCallOut}, **error_responses(400, 404, 409)},
)
async def bind_session_call(
    session_key: SessionKey,
    call_id: CallId,
    body: SessionCallBody,
    threads: Threads,
    core: Core,
    caller: AgentCaller,
) -> JSONResponse:
    """Remember which prompt asks about one tool call of the session (``tool_use_id``), so a resumed session
    finds the same prompt and its answer. 201 when ``prompt_id`` was bound; 200 with the prompt already bound
    to the call when another was first (``replaces`` names a settled one it may take over from). Only a
    prompt of the caller's own agents can be bound (404 PROMPT_NOT_FOUND otherwise), and only one still
    pending, or already bound to this call; with ``tool_call``, only the approval of exactly that call
    (409 CALL_MISMATCH otherwise).
    """
    own_session(caller, session_key)
    prompt = await own_prompt(core.store, caller, body.prompt_id)
    await _check_binding(threads, session_key, call_id, prompt, body.tool_call)
    bound = await threads.bindings.bind_call(session_key, call_id, body.prompt_id, body.replaces)
    out = SessionCallOut(
        session_key=session_key, call_id=call_id, prompt_id=bound, created=bound == body.prompt_id
    )
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if out.created else 200)


@router.get(
    "/sessions/{session_key}/calls/{call_id}", response_model=SessionCallOut, responses=error_responses(404)
)
async def get_session_call(
    session_key: SessionKey, call_id: CallId, threads: Threads, core: Core, caller: Caller
) -> SessionCallOut:
    """The prompt bound to the tool call, or 404 CALL_NOT_FOUND when none is (SESSION_NOT_FOUND when the
    session is another agent's)."""
    own_session(caller, session_key)
    prompt_id = await threads.bindings.call_prompt(session_key, call_id)
    prompt = await core.store.get_prompt(prompt_id) if prompt_id is not None else None
    if prompt is None or not visible(caller, prompt.agent):
        raise GatewayError(
            "CALL_NOT_FOUND",
            f"No prompt asks about call {call_id!r} of session {session_key!r}.",
            404,
            {"session_key": session_key, "call_id": call_id},
        )
    return SessionCallOut(session_key=session_key, call_id=call_id, prompt_id=prompt.prompt_id, created=False)
