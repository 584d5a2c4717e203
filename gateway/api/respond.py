"""Human side (seed 003): answer or skip a pending question set, rate-limited per person across processes."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse

from gateway.api import answering
from gateway.api.auth import PERSON, AnswerCaller, answering_as
from gateway.api.deps import Core, limiter_of, options_of
from gateway.api.errors import error_responses, invalid_param
from gateway.base.errors import GatewayError
from gateway.base.ids import is_identity, parse_thread_id, person_examples
from gateway.decision.answering.bodies import RespondBody, RespondResult

router = APIRouter(prefix="/v1", tags=["human side"])

RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")
PROMPT_ID = re.compile(r"prm_[0-9A-HJKMNP-TV-Z]{26}")
From = Annotated[
    str | None,
    Header(
        alias="X-Threadgate-From",
        max_length=160,
        description="The person answering, as <platform>:<id>. The rate limit counts per person.",
    ),
]


async def rate_limited(request: Request, caller: AnswerCaller, person: From = None) -> str | None:
    """Counted in Redis per token and person together (30 per 60 s), and per token whoever is named
    (``respond_token_limit``), so naming another person in each call escapes neither. A session answers
    as its own person, whoever is named."""
    person = answering_as(caller, person)
    if person is not None and caller.role != PERSON and not is_identity(person):
        problem = f"must be an identity of the form <platform>:<id>, such as {person_examples()}"
        raise invalid_param("X-Threadgate-From", "header", problem)
    options = options_of(request)
    await limiter_of(request).enforce(
        [
            (f"token:{caller.name}", options.respond_token_limit, None),
            (f"token:{caller.name}:person:{person or ''}", options.respond_limit, None),
        ],
        "answers",
    )
    return person


@router.post(
    "/agent-runs/{runId}/threads/{threadId}/user-inputs/{requestId}/respond",
    response_model=RespondResult,
    responses=error_responses(400, 403, 404, 409, 429),
)
async def respond(
    runId: str,
    threadId: str,
    requestId: str,
    body: RespondBody,
    core: Core,
    caller: AnswerCaller,
    person: Annotated[str | None, Depends(rate_limited)],
    groups: answering.SessionGroups,
) -> JSONResponse:
    """Answer (``answers``) or skip (``skip: true``) a pending question set.

    ``resolved_hot`` while the agent waits on it (an open long-poll, a filtered event stream, or a
    client wait in the last few seconds); otherwise ``resolved_parked``, and an answer is re-driven as
    the next turn's message tagged ``parked_answer`` whose id is ``turnId``.
    """
    if not RUN_ID.fullmatch(runId):
        raise invalid_param("runId", "path", "expected run_ followed by a 26-character ULID")
    if not PROMPT_ID.fullmatch(requestId):
        raise invalid_param("requestId", "path", "expected prm_ followed by a 26-character ULID")
    try:
        thread = parse_thread_id(threadId)
    except GatewayError as exc:
        raise invalid_param("threadId", "path", exc.message) from exc
    result = await answering.respond(core, caller, runId, thread.thread_id, requestId, body, person, groups)
    return JSONResponse(result.public())
