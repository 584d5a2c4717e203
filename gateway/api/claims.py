"""Claims (contract §11): ``POST /v1/prompts/{id}/claim`` takes a prompt, ``DELETE`` releases it."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gateway.api.answering import SessionGroups
from gateway.api.auth import OPERATOR, PERSON, AnswerCaller, answering_as
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.runs import PromptId, linked
from gateway.api.scope import visible
from gateway.base.models import Prompt
from gateway.decision.answering.bodies import ClaimBody
from gateway.decision.answering.claims import claim_for

router = APIRouter(prefix="/v1", tags=["human side"])


@router.post(
    "/prompts/{prompt_id}/claim",
    responses={200: {"model": Prompt}, **error_responses(400, 403, 404, 409)},
)
async def claim_prompt(
    prompt_id: PromptId,
    core: Core,
    caller: AnswerCaller,
    groups: SessionGroups,
    body: ClaimBody | None = None,
) -> JSONResponse:
    """Take a pending prompt for ``THREADGATE_CLAIM_SECONDS``: until then only the claimant (as a person:
    any of their linked identities) may answer; anyone else gets 409 ``CLAIMED``. A session claims as its
    person; an operator token names who with ``from``. Claiming again renews the claim; a prompt someone
    else holds is 409 ``CLAIMED`` with ``details.claimed_by``; the claimant must be someone who may answer
    (403 otherwise); a settled prompt is 409 ``ALREADY_RESOLVED``."""
    return await _claim(core, caller, prompt_id, body, groups, release=False)


@router.delete(
    "/prompts/{prompt_id}/claim",
    responses={200: {"model": Prompt}, **error_responses(400, 403, 404, 409)},
)
async def release_prompt(
    prompt_id: PromptId,
    core: Core,
    caller: AnswerCaller,
    groups: SessionGroups,
    body: ClaimBody | None = None,
) -> JSONResponse:
    """Release a claim: its holder may (a session, or an operator token with ``from``), and an operator
    token releases anyone's. Releasing a prompt nobody holds changes nothing."""
    return await _claim(core, caller, prompt_id, body, groups, release=True)


async def _claim(
    core: Core,
    caller: AnswerCaller,
    prompt_id: str,
    body: ClaimBody | None,
    groups: tuple[str, ...],
    *,
    release: bool,
) -> JSONResponse:
    named = (body or ClaimBody()).from_
    prompt = await claim_for(
        core,
        prompt_id,
        answering_as(caller, named),
        sees=partial(visible, caller),
        asserted_by=None if caller.role == PERSON else caller.name,
        groups=groups if caller.role == PERSON else (),
        release=release,
        operator=caller.role == OPERATOR,
    )
    return JSONResponse(linked(core, prompt))
