"""Grants in the store, on the embedded store, a redis-server and a Redis Cluster: recorded only for an
approve that settled its prompt in a running run, counted as used, revoked, and gone with the run."""

from __future__ import annotations

from gateway.base.ids import new_id
from gateway.base.models import PromptKind, PromptRequest, Question, RunRequest, ToolCall, from_ms
from gateway.decision.granting import granted, record_grant
from gateway.decision.service import AnswerStatus, Gateway
from gateway.rules.grants import Grant, GrantMatch, GrantRequest
from gateway.store import keys
from gateway.store.grants import GrantStatus

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
STATUS = ToolCall(name="Bash", arguments={"command": "git status"})
GIT = GrantRequest(scope="run", match=GrantMatch(name="Bash", arguments={"command": "git *"}))


def approval(call: ToolCall = STATUS) -> PromptRequest:
    return PromptRequest(kind=PromptKind.APPROVAL, questions=[Question(question="Run it?")], tool_call=call)


async def test_a_grant_is_recorded_used_and_gone_with_the_run(gateway: Gateway) -> None:
    store = gateway.store
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, approval())
    answered = await gateway.answer(prompt.prompt_id, ALICE, text="approve")
    assert answered.status is AnswerStatus.ANSWERED
    grant = await record_grant(store, answered.prompt, ALICE, GIT, gateway.now_ms())
    assert grant is not None
    first = await granted(store, run, ToolCall(name="Bash", arguments={"command": "git log"}))
    second = await granted(store, run, ToolCall(name="Bash", arguments={"command": "git diff"}))
    other = await granted(store, run, ToolCall(name="Bash", arguments={"command": "git log | sh"}))
    lifetime = await store.redis.pttl(keys.grants(THREAD, run.run_id))
    await gateway.end_run(run.run_id)
    after = await granted(store, run, ToolCall(name="Bash", arguments={"command": "git log"}))
    assert first is not None and second is not None
    assert (first.grant_id, first.uses, second.uses) == (grant.grant_id, 1, 2)
    assert other is None
    assert lifetime > 0
    assert after is None
    assert await store.grants.in_force(THREAD, run.run_id) == []
    assert await store.redis.exists(keys.grants(THREAD, run.run_id)) == 0


async def test_a_grant_is_not_recorded_for_a_prompt_its_maker_did_not_approve(gateway: Gateway) -> None:
    store = gateway.store
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    pending = await gateway.raise_prompt(run.run_id, approval())

    def grant_for(prompt_id: str, by: str = ALICE) -> Grant:
        return Grant(
            grant_id=new_id("grt"),
            run_id=run.run_id,
            match=GIT.match,
            created_by=by,
            created_at=from_ms(gateway.now_ms()),
            prompt_id=prompt_id,
        )

    while_pending = await store.grants.add(THREAD, grant_for(pending.prompt_id))
    await gateway.answer(pending.prompt_id, ALICE, text="deny")
    after_deny = await store.grants.add(THREAD, grant_for(pending.prompt_id))
    approved = await gateway.raise_prompt(run.run_id, approval())
    await gateway.answer(approved.prompt_id, ALICE, text="yes")
    by_someone_else = await store.grants.add(THREAD, grant_for(approved.prompt_id, "slack:UMALLORY"))
    made = await store.grants.add(THREAD, grant_for(approved.prompt_id))
    await gateway.end_run(run.run_id)
    after_end = await store.grants.add(THREAD, grant_for(approved.prompt_id))
    assert (while_pending, after_deny, by_someone_else) == (GrantStatus.NOT_APPROVED,) * 3
    assert made is GrantStatus.OK
    assert after_end is GrantStatus.RUN_ENDED
    assert await store.grants.in_force(THREAD, run.run_id) == []


async def test_a_revoked_grant_counts_no_use_and_a_run_keeps_a_bounded_number(gateway: Gateway) -> None:
    store = gateway.store
    store.grants.max_per_run = 2
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    statuses = []
    for _ in range(3):
        prompt = await gateway.raise_prompt(run.run_id, approval())
        answered = await gateway.answer(prompt.prompt_id, ALICE, text="approve")
        grant = Grant(
            grant_id=new_id("grt"),
            run_id=run.run_id,
            match=GIT.match,
            created_by=ALICE,
            created_at=from_ms(gateway.now_ms()),
            prompt_id=answered.prompt.prompt_id,
        )
        statuses.append(await store.grants.add(THREAD, grant))
    kept = await store.grants.in_force(THREAD, run.run_id)
    revoked = await store.grants.revoke(THREAD, run.run_id, kept[0].grant_id)
    use_after = await store.grants.use(THREAD, run.run_id, kept[0].grant_id)
    again = await store.grants.revoke(THREAD, run.run_id, kept[0].grant_id)
    assert statuses == [GrantStatus.OK, GrantStatus.OK, GrantStatus.FULL]
    assert revoked is not None and revoked.grant_id == kept[0].grant_id
    assert use_after is None and again is None
    assert [g.grant_id for g in await store.grants.in_force(THREAD, run.run_id)] == [kept[1].grant_id]
