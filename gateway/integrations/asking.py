"""One question to a person, start to finish: find the session's thread and run, raise, wait.

Every question of a session is asked in the session's one run (``PUT /v1/sessions/{key}/run``), which
outlives the question: a grant a person makes on one ("approve for this session") answers the session's
later identical calls.

An approval of a tool call goes through the agent's approval policy (``POST /v1/runs/{run_id}/approvals``):
the gateway either allows the call outright, asking nobody (the policy, or a person's grant for the run),
or raises the approval prompt that is waited on.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from gateway.base.models import Prompt, PromptState, ReasonCode, call_digest
from gateway.client import Allowed, Threadgate, ThreadgateError
from gateway.client.target import Target
from gateway.client.waiting import GAVE_UP_REASON, say_where
from gateway.integrations.sessions import NotConfigured, thread_for
from gateway.rules.call_identity import identity, identity_arguments

logger = logging.getLogger("threadgate.integrations")

CALL_CHANGED_REASON = "the agent made a different call under the same id"


class Unavailable(Exception):
    """The person could not be asked or did not answer in time: never a denial."""


class StillPending(Unavailable):
    """Nobody has answered yet, and the prompt stays open: a later attempt at the same call finds it."""

    def __init__(self, message: str, prompt_id: str) -> None:
        super().__init__(message)
        self.prompt_id = prompt_id


@dataclass(frozen=True, slots=True)
class Ask:
    """What to ask: the prompt's kind and questions, the real tool call for approvals, and whose session.

    ``call_id`` (a PreToolUse ``tool_use_id``) makes the question resumable: the prompt is bound to the call
    in the gateway, outlives this process when nobody answers in time, and is found again when the session
    resumes. ``body`` carries the fields of forms and URL steps (``message``, ``requested_schema``, ``url``).
    An approval with a ``tool_call`` is put to the agent's approval policy first; ``destructive`` is the
    caller's word on whether the call changes something (MCP ``destructiveHint``), else the gateway judges.
    ``editable`` lets the person edit the call's arguments (to fit ``input_schema``) before approving; the
    tool's policy rule may allow edits too.
    """

    kind: Literal["approval", "ask_user_question", "text", "form", "url"]
    questions: list[dict[str, Any]]
    session_key: str
    header: str
    tool_call: dict[str, Any] | None = None
    call_id: str | None = None
    body: dict[str, Any] | None = None
    destructive: bool | None = None
    editable: bool = False
    input_schema: dict[str, Any] | None = None


async def ask(
    tg: Threadgate, target: Target, request: Ask, *, on_raised: Callable[[Prompt], None] = say_where
) -> Prompt | Allowed:
    """Ask in the session's thread and return the settled prompt (answered, or cancelled with a reason);
    Allowed when the request is an approval nobody needs asking about: the agent's approval policy allows
    it (``by: policy``), or a grant a person made for the session's run matches it (``by: grant:<grant_id>``).

    Raises Unavailable when the gateway cannot be reached, the prompt cannot be posted, or ``target.wait_s``
    passes unanswered (the prompt is then cancelled, so the chat shows it is no longer waiting). A resumable
    question (``call_id``) raises StillPending instead and leaves its prompt open for the next attempt.
    """
    try:
        stale: str | None = None
        if request.call_id is not None:
            found = await _resume(tg, target, request)
            if isinstance(found, Prompt):
                return found
            stale = found
        thread = await thread_for(tg, target, key=request.session_key, header=request.header)
        run = await tg.session_run(request.session_key, thread, target.agent, target.started_by)
    except NotConfigured as exc:
        raise Unavailable(str(exc)) from exc
    except (httpx.HTTPError, ThreadgateError) as exc:
        raise Unavailable(f"the gateway could not start the question ({_describe(exc)})") from exc
    # The session's run outlives the question (a grant made on it answers the session's later calls):
    # only a prompt left behind is cancelled, never the run ended.
    prompt_id: str | None = None
    nothing_to_cancel = False  # it settled, or stays open for the next attempt (resumable)
    try:
        raised = await _raise(tg, run.run_id, request)
        if isinstance(raised, Allowed):
            return raised
        on_raised(raised)  # where it waits: a line on stderr, or a log event inside the gateway
        prompt_id = raised.prompt_id
        if request.call_id is None:
            settled = await tg.wait_prompt(prompt_id, timeout=target.wait_s)
            nothing_to_cancel = True
            return settled
        bound = await tg.bind_session_call(
            request.session_key, request.call_id, prompt_id, replaces=stale, tool_call=request.tool_call
        )
        if bound != prompt_id:  # another process asked about this call first: wait on its prompt
            with contextlib.suppress(httpx.HTTPError, ThreadgateError):
                await tg.cancel_prompt(prompt_id, "asked twice")
            nothing_to_cancel = True
            if not asks_about(await tg.get_prompt(bound), request):
                raise Unavailable("another call with the same id is being asked about; try again")
            return await _wait_open(tg, target, bound)
        nothing_to_cancel = True
        return await _wait_open(tg, target, prompt_id)
    except TimeoutError as exc:
        raise Unavailable(f"nobody answered within {target.wait_s} s") from exc
    except (httpx.HTTPError, ThreadgateError) as exc:
        raise Unavailable(_describe(exc)) from exc
    finally:
        if prompt_id is not None and not nothing_to_cancel:  # timed out, failed or interrupted while waiting
            with contextlib.suppress(httpx.HTTPError, ThreadgateError):
                await tg.cancel_prompt(prompt_id, GAVE_UP_REASON)


async def _raise(tg: Threadgate, run_id: str, request: Ask) -> Prompt | Allowed:
    kind = request.kind
    if kind == "form" or kind == "url":  # the gateway derives their questions from the body
        return await tg.raise_step(run_id, kind, **(request.body or {}))
    if kind == "approval" and request.tool_call is not None:  # the policy may allow it without asking
        question = request.questions[0].get("question") if request.questions else None
        return await tg.approval_decision(
            run_id,
            request.tool_call["name"],
            request.tool_call.get("arguments"),
            destructive=request.destructive,
            question=question,
            editable=request.editable,
            input_schema=request.input_schema,
        )
    return await tg.raise_prompt(run_id, kind, request.questions, tool_call=request.tool_call)


async def _resume(tg: Threadgate, target: Target, request: Ask) -> Prompt | str | None:
    """The prompt bound to the call once it settled (waiting while it is open); else the id of a bound
    prompt to replace: one that settled unanswered, or one raised for another call under the same ids (both
    asked again). None when the call was never asked."""
    assert request.call_id is not None
    prompt_id = await tg.session_call(request.session_key, request.call_id)
    if prompt_id is None:
        return None
    bound = await tg.get_prompt(prompt_id)
    if not asks_about(bound, request):
        # The ids are the same but the call is not: its decision is not this call's, so ask afresh.
        with contextlib.suppress(httpx.HTTPError, ThreadgateError):
            await tg.cancel_prompt(prompt_id, CALL_CHANGED_REASON)
        return prompt_id
    prompt = await _wait_open(tg, target, prompt_id)
    if prompt.prompt_state is PromptState.CANCELLED and prompt.reason_code is not ReasonCode.DECLINED:
        return prompt_id  # expired or superseded while nobody was there: ask again
    return prompt


def asks_about(prompt: Prompt, request: Ask) -> bool:
    """Whether ``prompt`` was raised for exactly the call ``request`` asks about: for an approval the same
    tool and input (by digest of the call's identity, ``gateway.rules.call_identity``), for a question the
    same
    questions and options."""
    if request.tool_call is not None:
        name, arguments = request.tool_call["name"], request.tool_call.get("arguments", {})
        if isinstance(arguments, dict):  # a command tool's call is its command: descriptions change
            arguments = identity_arguments(name, arguments)
        wanted = call_digest(name, arguments)
        return prompt.tool_call is not None and identity(prompt.tool_call).digest() == wanted
    asked = [(q.question, [option.label for option in q.options or []]) for q in prompt.questions or []]
    wanted_questions = [
        (q.get("question"), [option.get("label") for option in q.get("options") or []])
        for q in request.questions
    ]
    return prompt.kind.value == request.kind and prompt.tool_call is None and asked == wanted_questions


async def _wait_open(tg: Threadgate, target: Target, prompt_id: str) -> Prompt:
    """Wait up to ``target.wait_s`` for a resumable prompt; StillPending (it stays open) when it does not
    settle. Its run is the session's and goes on."""
    try:
        return await tg.wait_prompt(prompt_id, timeout=target.wait_s)
    except TimeoutError as exc:
        raise StillPending(f"nobody has answered yet (prompt {prompt_id})", prompt_id) from exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ThreadgateError):
        return exc.message
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
