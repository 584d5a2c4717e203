"""The Python clients and grants: an answer that grants, a call the grant lets through reported as allowed
by it (never by the policy, never asked), and the run's grants listed and revoked."""

from __future__ import annotations

import asyncio

from gateway.base.models import PromptState, ToolCall
from gateway.client import Allowed, Client, Threadgate
from gateway.rules.grants import widened_match
from tests.api.conftest import AGENT_TOKEN, OPERATOR_TOKEN, STARTER, THREAD, Served

STATUS = ToolCall(name="Bash", arguments={"command": "git status"})


async def test_an_approval_a_grant_lets_through_is_allowed_by_that_grant(served: Served) -> None:
    async with (
        Threadgate(served.base_url, AGENT_TOKEN) as agent,
        Threadgate(served.base_url, OPERATOR_TOKEN) as operator,
    ):
        run = await agent.create_run(THREAD, "ops", STARTER)
        asked = await agent.request_approval(run.run_id, "Bash", STATUS.arguments)
        assert asked is not None
        match = widened_match(STATUS)
        assert match is not None
        answered = await operator.answer_input("ops", asked.prompt_id, "accept", from_=STARTER, grant=match)
        (grant,) = await agent.list_grants(run.run_id)
        approval = await agent.approval(run.run_id, "Bash", {"command": "git log"})
        decided = await agent.approval_decision(run.run_id, "Bash", {"command": "git diff"})
        plain = await agent.request_approval(run.run_id, "Bash", {"command": "git show"})
        revoked = await operator.revoke_grant(run.run_id, grant.grant_id, from_=STARTER)
        after = await agent.approval_decision(run.run_id, "Bash", {"command": "git log"})
    assert answered.prompt_state is PromptState.ANSWERED
    assert (grant.match, grant.created_by) == (match, STARTER)
    assert (bool(approval), approval.by, approval.prompt) == (True, f"grant:{grant.grant_id}", None)
    assert decided == Allowed(f"grant:{grant.grant_id}") and decided.grant_id == grant.grant_id
    assert plain is None
    assert (revoked.grant_id, revoked.uses) == (grant.grant_id, 3)
    assert not isinstance(after, Allowed)


async def test_the_sync_client_lists_and_revokes_grants(served: Served) -> None:
    def work() -> tuple[int, int, str | None]:
        with (
            Client(served.base_url, AGENT_TOKEN) as agent,
            Client(served.base_url, OPERATOR_TOKEN) as operator,
        ):
            run = agent.create_run(THREAD, "ops", STARTER)
            asked = agent.request_approval(run.run_id, "Bash", STATUS.arguments)
            assert asked is not None
            operator.answer_input(
                "ops",
                asked.prompt_id,
                "accept",
                from_=STARTER,
                grant={"name": "Bash", "arguments": {"command": "git status"}},
            )
            grants = agent.list_grants(run.run_id)
            by = agent.approval(run.run_id, "Bash", STATUS.arguments).by
            agent.revoke_grant(run.run_id, grants[0].grant_id)
            return len(grants), len(agent.list_grants(run.run_id)), by

    made, left, by = await asyncio.to_thread(work)
    assert (made, left) == (1, 0)
    assert by is not None and by.startswith("grant:grt_")
