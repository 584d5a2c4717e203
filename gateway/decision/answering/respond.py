"""Seed 003: answer or skip a pending question set of a run's thread, one answer admitted at a time."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Collection

from gateway.base.errors import GatewayError, validation_failed
from gateway.base.models import APPROVE, PromptKind, ReasonCode, Resolution, RunState
from gateway.decision.answering.bodies import RespondBody, RespondResult
from gateway.decision.answering.content import respond_content
from gateway.decision.answering.refusals import Sees, already_resolved, already_voted, check_may_answer
from gateway.decision.answering.settle import cancel_for, checked_grant, made_grant
from gateway.decision.service import AnswerStatus, Gateway, edited_call

SKIPPED_REASON = "the person skipped the question"
ADMISSION_TTL_MS = 5_000


@contextlib.asynccontextmanager
async def admission(gateway: Gateway, thread_id: str) -> AsyncIterator[None]:
    """One answer admitted per thread at a time; a concurrent one is told TURN_ALREADY_ACTIVE."""
    token = uuid.uuid4().hex
    if not await gateway.store.admit(thread_id, token, ADMISSION_TTL_MS):
        raise GatewayError(
            "TURN_ALREADY_ACTIVE",
            "Another answer for this thread is being admitted right now; retry when it settles.",
            409,
            {"thread_id": thread_id, "retry_after": 1},
        )
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await gateway.store.release_admission(thread_id, token)


def _no_thread(run_id: str, thread_id: str) -> GatewayError:
    return GatewayError(
        "AGENT_THREAD_NOT_FOUND", f"No thread {thread_id!r} with run {run_id!r}.", 404, {"id": thread_id}
    )


def _no_input(prompt_id: str) -> GatewayError:
    return GatewayError(
        "AGENT_USER_INPUT_NOT_FOUND", f"No user input {prompt_id!r} in this run.", 404, {"id": prompt_id}
    )


async def respond(
    gateway: Gateway,
    run_id: str,
    thread_id: str,
    prompt_id: str,
    body: RespondBody,
    identity: str | None,
    *,
    sees: Sees,
    asserted_by: str | None = None,
    groups: Collection[str] = (),
) -> RespondResult:
    """Answer or skip a pending prompt: hot while the agent waits on it, else parked as the next turn.

    Refusals in the contract's order: who may answer (403) before which run or thread (404) before the
    prompt's or run's state (409), so a stranger learns nothing about a prompt's state. A prompt the
    caller does not ``sees``, or none at all, is 404 (who may answer it cannot be asked). ``groups`` are
    a signed-in person's (see ``may_answer``).
    """
    prompt = await gateway.store.get_prompt(prompt_id)
    if prompt is not None and sees(prompt.agent):
        identity = await check_may_answer(gateway, prompt, identity, asserted_by, groups)
    run = await gateway.store.get_run(run_id)
    if run is None or not sees(run.agent) or run.thread_id != thread_id:
        raise _no_thread(run_id, thread_id)
    if prompt is None or not sees(prompt.agent):
        raise _no_input(prompt_id)
    assert identity is not None  # checked above: the prompt is visible
    if prompt.thread_id != thread_id or prompt.run_id != run_id:
        raise _no_input(prompt_id)
    if body.answers is not None and run.state is RunState.ENDED:
        raise GatewayError(
            "AGENT_RUN_ENDED",
            f"Run {run_id} has ended, so an answer cannot start a turn; only skip works now.",
            409,
            {"run_id": run_id},
        )
    if not prompt.pending:
        if body.skip and prompt.reason_code is ReasonCode.RUN_ENDED:
            return RespondResult(requestId=prompt_id, status=Resolution.PARKED)
        raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", prompt)
    answers, content = respond_content(prompt, body.answers) if body.answers is not None else (None, None)
    edited = None
    approving = prompt.kind is PromptKind.APPROVAL and answers is not None and answers[0].answer == [APPROVE]
    if body.arguments is not None:
        edited = edited_call(prompt, body.arguments)
        if not approving:
            raise validation_failed("Edited arguments approve the call; send them with Approve selected.")
    checked_grant(prompt, body.grant, approving, body.arguments)
    async with admission(gateway, thread_id):
        if answers is None:
            hot = await gateway.store.is_watched(prompt.thread_id, prompt.prompt_id)
            changed, current = await cancel_for(
                gateway, prompt, identity, SKIPPED_REASON, ReasonCode.DECLINED
            )
            if not changed:
                raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", current)
            return RespondResult(requestId=prompt_id, status=Resolution.HOT if hot else Resolution.PARKED)
        asked = body.grant.match if body.grant is not None else None
        result = await gateway.settle_answers(
            prompt,
            answers,
            identity,
            content,
            note=body.note,
            edited=edited,
            grant=asked,
            asserted_by=asserted_by,
        )
    if result.status is AnswerStatus.VOTED:
        return RespondResult(requestId=prompt_id, status="voted")
    if result.status is AnswerStatus.ALREADY_VOTED:
        raise already_voted(result.prompt, identity)
    if result.status is not AnswerStatus.ANSWERED:
        raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", result.prompt)
    settled = result.prompt
    grant, not_made = (None, None)
    if body.grant is not None:
        grant, not_made = await made_grant(gateway, settled, identity, body.grant)
    return RespondResult(
        requestId=prompt_id,
        status=settled.resolution or Resolution.PARKED,
        turnId=settled.turn_id,
        grant=grant,
        grant_not_made=not_made,
    )
