"""Grants at work: checked on an approve, recorded once that approve settled its prompt, answering the
run's later matching calls, listed and revoked. The matching rule itself is
``gateway.rules.grants.matches``."""

from __future__ import annotations

import json
import logging

from gateway.base.errors import GatewayError, not_found, validation_failed
from gateway.base.logs import event
from gateway.base.models import Prompt, PromptKind, Run, ToolCall, from_ms
from gateway.decision.outbox import feed_event_json
from gateway.rules.grants import (
    Grant,
    GrantRequest,
    grant_id_of,
    grant_problem,
    matches,
    needs_several,
    normalized,
)
from gateway.store import FeedEntry, Store, keys
from gateway.store.grants import MAX_GRANTS_PER_RUN, GrantStatus


def _refused(problem: str) -> GatewayError:
    return validation_failed(
        f"The grant cannot be made: {problem}.", [{"field": "grant", "problem": problem}]
    )


def not_allowed(prompt: Prompt, why: str) -> GatewayError:
    """400 GRANT_NOT_ALLOWED: no grant may go with an answer to this prompt, whatever its pattern."""
    return GatewayError(
        "GRANT_NOT_ALLOWED",
        why[0].upper() + why[1:] + ". Approve without a grant.",
        400,
        {"prompt_id": prompt.prompt_id, "approvals": prompt.approvals},
    )


def check_grant(
    prompt: Prompt, request: GrantRequest, *, approving: bool, call: ToolCall | None = None
) -> None:
    """400 unless the grant may go with this answer: an approve of an approval of a tool call that one
    approver settles (else GRANT_NOT_ALLOWED), for that tool, with a pattern matching ``call``, the call
    being approved: the prompt's ``tool_call``, or the call as the person edited it (else
    VALIDATION_FAILED naming ``grant``)."""
    if prompt.kind is not PromptKind.APPROVAL:
        raise _refused(f"a grant goes with an approval, and this prompt is {prompt.kind.value}")
    if not approving:
        raise _refused("a grant goes with an approve, not a deny")
    several = needs_several(prompt)
    if several is not None:
        raise not_allowed(prompt, several)
    call = call or prompt.tool_call
    if call is None:
        raise _refused("this approval names no tool call to allow again")
    problem = grant_problem(request.match, call)
    if problem is None:
        return
    asked = prompt.tool_call
    if asked is not None and call != asked and grant_problem(request.match, asked) is None:
        problem = (
            "grant.match names the call as asked, but it was edited: a grant covers the call approved "
            "(approved_call), so name that one"
        )
    raise _refused(problem)


def not_recorded(status: GrantStatus) -> str:
    """Why an approve that asked for a grant settled its prompt without one, as the person is told."""
    if status is GrantStatus.FULL:
        return f"the run already has {MAX_GRANTS_PER_RUN} grants, the most it keeps; revoke one to add one"
    if status is GrantStatus.RUN_ENDED:
        return "the run ended meanwhile, and grants last only as long as their run"
    return "the approval was not the one that settled the prompt"


async def record_grant(
    store: Store, prompt: Prompt, identity: str, request: GrantRequest, now_ms: int
) -> Grant | GrantStatus:
    """Record the grant an approve asked for, once that approve settled ``prompt``; else why it was not
    recorded (the run ended meanwhile, or it has as many grants as it may keep), which is logged too.
    An answer that carried the grant (``gateway.rules.verdicts.verdict``) kept it already, under the same id
    and time, or found why not: that is what this confirms."""
    grant = Grant(
        grant_id=grant_id_of(prompt.prompt_id),
        run_id=prompt.run_id,
        match=normalized(request.match),
        created_by=identity,
        created_at=prompt.settled_at or from_ms(now_ms),
        prompt_id=prompt.prompt_id,
    )
    status = await store.grants.add(prompt.thread_id, grant)
    if status is not GrantStatus.OK:
        event(
            "grant.not_recorded",
            logging.WARNING,
            grant_id=grant.grant_id,
            run_id=grant.run_id,
            prompt_id=prompt.prompt_id,
            status=status.value,
        )
        return status
    event(
        "grant.created",
        grant_id=grant.grant_id,
        run_id=grant.run_id,
        prompt_id=prompt.prompt_id,
        tool=grant.match.name,
        by=identity,
    )
    await store.publish([grant_event("created", grant, prompt.agent, prompt.thread_id, identity)], [])
    return grant


def grant_event(change: str, grant: Grant, agent: str, thread_id: str, by: str) -> FeedEntry:
    """``grant.created`` / ``grant.revoked`` on the run's thread's partition of the event feed (so the
    webhooks and the event stream carry it); ``data`` the grant with its run's agent and thread, and who
    made or revoked it. Its id is stable, so a retry publishes it once."""
    event_id = f"{grant.grant_id}.{change}"
    data = {**grant.model_dump(mode="json"), "agent": agent, "thread_id": thread_id, "by": by}
    text = feed_event_json(event_id, f"grant.{change}", json.dumps(data, ensure_ascii=False))
    return FeedEntry(keys.events_feed(keys.partition(thread_id)), event_id, text)


async def granted(store: Store, run: Run, call: ToolCall) -> Grant | None:
    """The run's grant that lets ``call`` through, its use counted; None when none does (or the one that
    did was revoked, or the run ended, a moment ago)."""
    for grant in await store.grants.in_force(run.thread_id, run.run_id):
        if not matches(grant.match, call):
            continue
        uses = await store.grants.use(run.thread_id, run.run_id, grant.grant_id)
        if uses is None:
            continue
        event("approval.by_grant", run_id=run.run_id, tool=call.name, grant_id=grant.grant_id, uses=uses)
        return grant.model_copy(update={"uses": uses})
    return None


async def revoke_grant(store: Store, run: Run, grant_id: str, by: str) -> Grant:
    """Revoke one of the run's grants; what it was. 404 GRANT_NOT_FOUND when the run has no such grant."""
    grant = await store.grants.revoke(run.thread_id, run.run_id, grant_id)
    if grant is None:
        raise not_found("GRANT_NOT_FOUND", "grant of this run", grant_id)
    event("grant.revoked", run_id=run.run_id, grant_id=grant_id, by=by, uses=grant.uses)
    await store.publish([grant_event("revoked", grant, run.agent, run.thread_id, by)], [])
    return grant
