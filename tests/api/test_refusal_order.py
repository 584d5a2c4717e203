"""Answer routes refuse in one order (contract §6): credential, who may answer, existence, then state.

A stranger holding a valid operator token learns nothing about a prompt's state or its run: every answer
route tells them 403 first. Only a prompt that does not exist at all is 404 for them.
"""

from __future__ import annotations

from typing import Any

import httpx

from gateway.api.deps import ApiOptions
from tests.api.conftest import (
    DEPLOY_QUESTIONS,
    OPERATOR_AUTH,
    STARTER,
    raise_prompt,
    respond_path,
    served_gateway,
    start_run,
)

STRANGER = "slack:U0STRANGER"
AS_STRANGER = {"X-Threadgate-From": STRANGER}
ANSWER = {"answers": [{"questionId": "q1", "selected": ["staging"]}]}


def _code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


async def _asked(agent: httpx.AsyncClient, kind: str = "ask_user_question") -> tuple[dict[str, Any], str]:
    run = await start_run(agent)
    questions = DEPLOY_QUESTIONS[:1] if kind == "ask_user_question" else [{"question": "Deploy?"}]
    prompt = await raise_prompt(agent, run["run_id"], kind=kind, questions=questions)
    return run, prompt["prompt_id"]


async def test_respond_tells_a_stranger_403_even_on_an_ended_run(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt_id = await _asked(agent)
    await agent.post(f"/v1/runs/{run['run_id']}/end")
    stranger = await operator.post(respond_path(run, prompt_id), json=ANSWER, headers=AS_STRANGER)
    starter = await operator.post(
        respond_path(run, prompt_id), json=ANSWER, headers={"X-Threadgate-From": STARTER}
    )
    assert _code(stranger) == (403, "FORBIDDEN")
    assert _code(starter) == (409, "AGENT_RUN_ENDED")


async def test_respond_tells_a_stranger_403_before_which_run_or_thread(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt_id = await _asked(agent)
    other = await start_run(agent, thread_id="web:elsewhere")
    wrong_run = respond_path(other, prompt_id)
    stranger = await operator.post(wrong_run, json=ANSWER, headers=AS_STRANGER)
    starter = await operator.post(wrong_run, json=ANSWER, headers={"X-Threadgate-From": STARTER})
    missing = await operator.post(
        respond_path(run, "prm_01J00000000000000000000000"), json=ANSWER, headers=AS_STRANGER
    )
    assert _code(stranger) == (403, "FORBIDDEN")
    assert _code(starter) == (404, "AGENT_USER_INPUT_NOT_FOUND")
    assert _code(missing) == (404, "AGENT_USER_INPUT_NOT_FOUND")


async def test_inputs_tell_a_stranger_403_before_the_path_content_or_state(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    _, prompt_id = await _asked(agent)
    bad_content = await operator.post(
        f"/v1/agents/ops/inputs/{prompt_id}", json={"action": "accept", "content": True, "from": STRANGER}
    )
    wrong_agent = await operator.post(
        f"/v1/agents/deploy/inputs/{prompt_id}", json={"action": "accept", "content": "1", "from": STRANGER}
    )
    await operator.post(
        f"/v1/agents/ops/inputs/{prompt_id}", json={"action": "accept", "content": "1", "from": STARTER}
    )
    settled = await operator.post(
        f"/v1/agents/ops/inputs/{prompt_id}", json={"action": "accept", "content": "2", "from": STRANGER}
    )
    assert _code(bad_content) == (403, "FORBIDDEN")
    assert _code(wrong_agent) == (403, "FORBIDDEN")
    assert _code(settled) == (403, "FORBIDDEN")


async def test_a_strangers_decline_or_cancel_of_a_question_is_refused_and_leaves_it_pending(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    _, prompt_id = await _asked(agent)
    refused = [
        await operator.post(f"/v1/agents/ops/inputs/{prompt_id}", json={"action": action, "from": STRANGER})
        for action in ("decline", "cancel")
    ]
    state = (await operator.get(f"/v1/prompts/{prompt_id}")).json()["prompt_state"]
    assert [_code(response) for response in refused] == [(403, "FORBIDDEN"), (403, "FORBIDDEN")]
    assert state == "pending"


async def test_respond_rate_limit_counts_per_token_whoever_is_named(real_redis: str) -> None:
    options = ApiOptions(respond_limit=2, respond_token_limit=4, respond_window_s=60)
    path = respond_path(
        {"run_id": "run_01J00000000000000000000000", "thread_id": "web:room"},
        "prm_01J00000000000000000000000",
    )
    async with served_gateway(real_redis, options) as served, served.client(OPERATOR_AUTH) as operator:
        same = [
            (await operator.post(path, json={"skip": True}, headers=AS_STRANGER)).status_code
            for _ in range(3)
        ]
        rotated = [
            (
                await operator.post(path, json={"skip": True}, headers={"X-Threadgate-From": f"slack:U0{n}"})
            ).status_code
            for n in range(3)
        ]
    assert same == [404, 404, 429]  # per token and person
    assert rotated == [404, 429, 429]  # the token's own budget (4) is spent, whoever it names
