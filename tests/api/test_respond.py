"""Seed 003 over real HTTP: answer or skip a pending question set, hot or parked, and every error code."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from gateway.api.deps import ApiOptions
from gateway.store import keys
from tests.api.conftest import (
    DEPLOY_QUESTIONS,
    OPERATOR_AUTH,
    STARTER,
    THREAD,
    TOKENS,
    Served,
    raise_prompt,
    respond_path,
    served_gateway,
    start_run,
)
from tests.support.conditions import until_watched

AS_STARTER = {"X-Threadgate-From": STARTER}
DEPLOY_ANSWERS = [
    {"questionId": "q1", "selected": ["staging"]},
    {"questionId": "q2", "selected": ["KPI cards", "Table"]},
    {"questionId": "q3", "otherText": "dark theme"},
]


async def _asked(agent: httpx.AsyncClient, **body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    run = await start_run(agent)
    body.setdefault("kind", "ask_user_question")
    body.setdefault("questions", DEPLOY_QUESTIONS)
    return run, await raise_prompt(agent, run["run_id"], **body)


async def _respond(
    operator: httpx.AsyncClient, run: dict[str, Any], prompt_id: str, **body: Any
) -> httpx.Response:
    """The run's starter answers (or skips) the prompt through the respond endpoint."""
    return await operator.post(respond_path(run, prompt_id), json=body, headers=AS_STARTER)


async def _long_poll(
    agent: httpx.AsyncClient, served: Served, prompt_id: str
) -> asyncio.Task[httpx.Response]:
    """The agent waiting on the prompt, its long-poll in place at the gateway."""
    poll = asyncio.create_task(agent.get(f"/v1/prompts/{prompt_id}", params={"wait": 5}))
    await until_watched(served.runtime.store.redis, THREAD, prompt_id)
    return poll


async def test_answer_while_the_agent_long_polls_resolves_hot(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run, prompt = await _asked(agent)
    poll = await _long_poll(agent, served, prompt["prompt_id"])
    response = await _respond(operator, run, prompt["prompt_id"], answers=DEPLOY_ANSWERS)
    assert response.status_code == 200
    assert response.json() == {"requestId": prompt["prompt_id"], "status": "resolved_hot", "turnId": None}
    settled = (await poll).json()
    assert [a["answer"] for a in settled["answers"]] == [["staging"], ["KPI cards", "Table"], ["dark theme"]]


async def test_answer_while_nobody_waits_is_parked_and_redriven_as_the_next_turn(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    response = await _respond(operator, run, prompt["prompt_id"], answers=DEPLOY_ANSWERS)
    body = response.json()
    assert body["status"] == "resolved_parked"
    assert body["turnId"].startswith("turn_")
    feed = (await agent.get("/v1/messages", params={"wait": 2})).json()
    [message] = feed["items"]
    assert (message["message_id"], message["tag"], message["sender"]) == (
        body["turnId"],
        "parked_answer",
        STARTER,
    )
    assert message["metadata"]["prompt_id"] == prompt["prompt_id"]
    assert message["metadata"]["answers"][1]["answer"] == ["KPI cards", "Table"]


async def test_skip_settles_the_request_with_no_turn(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    response = await _respond(operator, run, prompt["prompt_id"], skip=True)
    assert response.json() == {"requestId": prompt["prompt_id"], "status": "resolved_parked", "turnId": None}
    settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (settled["prompt_state"], settled["reason_code"]) == ("cancelled", "declined")
    assert (await agent.get("/v1/messages")).json()["items"] == []


async def test_skip_while_the_agent_waits_is_hot(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run, prompt = await _asked(agent)
    poll = await _long_poll(agent, served, prompt["prompt_id"])
    response = await _respond(operator, run, prompt["prompt_id"], skip=True)
    assert response.json()["status"] == "resolved_hot"
    assert (await poll).json()["reason_code"] == "declined"


async def test_answer_on_an_ended_run_is_agent_run_ended_but_skip_works(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    await agent.post(f"/v1/runs/{run['run_id']}/end")
    path = respond_path(run, prompt["prompt_id"])
    answer = await operator.post(path, json={"answers": DEPLOY_ANSWERS}, headers=AS_STARTER)
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "AGENT_RUN_ENDED"
    skip = await operator.post(path, json={"skip": True}, headers=AS_STARTER)
    assert skip.status_code == 200
    assert skip.json()["turnId"] is None


async def test_a_second_resolution_is_already_resolved(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    path = respond_path(run, prompt["prompt_id"])
    await operator.post(path, json={"answers": DEPLOY_ANSWERS}, headers=AS_STARTER)
    again = await operator.post(path, json={"answers": DEPLOY_ANSWERS}, headers=AS_STARTER)
    skip = await operator.post(path, json={"skip": True}, headers=AS_STARTER)
    assert again.status_code == skip.status_code == 409
    assert again.json()["error"]["code"] == "AGENT_USER_INPUT_ALREADY_RESOLVED"
    assert again.json()["error"]["details"]["state"] == "answered"


async def test_concurrent_admission_on_the_thread_is_turn_already_active(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run, prompt = await _asked(agent)
    redis = served.runtime.connection.client
    admission = keys.admission(run["thread_id"])
    await redis.set(admission, "another-answer", px=5000)
    busy = await _respond(operator, run, prompt["prompt_id"], skip=True)
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "TURN_ALREADY_ACTIVE"
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"
    await redis.delete(admission)
    retried = await _respond(operator, run, prompt["prompt_id"], skip=True)
    assert retried.status_code == 200


async def test_answers_that_do_not_match_the_questions_are_validation_failed(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    path = respond_path(run, prompt["prompt_id"])
    wrong = [
        [{"questionId": "q1", "selected": ["staging"]}],  # q2 and q3 unanswered
        [*DEPLOY_ANSWERS[:2], {"questionId": "q9", "otherText": "x"}],  # no such question
        [
            {"questionId": "q1", "selected": ["staging", "production"]},
            *DEPLOY_ANSWERS[1:],
        ],  # two on single-select
        [{"questionId": "q1", "selected": ["moon"]}, *DEPLOY_ANSWERS[1:]],  # not an option
        [*DEPLOY_ANSWERS[:2], {"questionId": "q3", "selected": ["dark"]}],  # selection on free text
    ]
    for answers in wrong:
        response = await operator.post(path, json={"answers": answers}, headers=AS_STARTER)
        assert response.status_code == 400, answers
        assert response.json()["error"]["code"] == "VALIDATION_FAILED"
        assert response.json()["error"]["details"]["errors"]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


async def test_other_text_is_taken_verbatim_on_an_option_question(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent, questions=DEPLOY_QUESTIONS[:1])
    response = await _respond(
        operator, run, prompt["prompt_id"], answers=[{"questionId": "q1", "otherText": "the moon"}]
    )
    assert response.status_code == 200
    settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert settled["answers"][0]["answer"] == ["the moon"]


async def test_body_with_both_answers_and_skip_is_validation_failed(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    response = await _respond(operator, run, prompt["prompt_id"], answers=[], skip=True)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"


async def test_unknown_thread_and_unknown_request_are_404(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    other_thread = {**run, "thread_id": "web:elsewhere"}
    thread = await _respond(operator, other_thread, prompt["prompt_id"], skip=True)
    assert thread.status_code == 404
    assert thread.json()["error"]["code"] == "AGENT_THREAD_NOT_FOUND"
    missing = "prm_01J00000000000000000000000"
    request = await operator.post(respond_path(run, missing), json={"skip": True}, headers=AS_STARTER)
    assert request.status_code == 404
    assert request.json()["error"]["code"] == "AGENT_USER_INPUT_NOT_FOUND"


async def test_malformed_path_params_are_422_invalid_params(operator: httpx.AsyncClient) -> None:
    run = {"run_id": "run_01J00000000000000000000000", "thread_id": "web:room"}
    for case in ({**run, "run_id": "nope"}, {**run, "thread_id": "slack:bad"}):
        response = await operator.post(
            respond_path(case, "prm_01J00000000000000000000000"), json={"skip": True}
        )
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "INVALID_PARAMS"
    response = await operator.post(respond_path(run, "12"), json={"skip": True})
    assert response.status_code == 422


async def test_someone_who_may_not_answer_is_403_and_learns_nothing(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    path = respond_path(run, prompt["prompt_id"])
    stranger = await operator.post(
        path, json={"skip": True}, headers={"X-Threadgate-From": "slack:U0STRANGER"}
    )
    anonymous = await operator.post(path, json={"skip": True})
    assert stranger.status_code == anonymous.status_code == 403
    assert stranger.json()["error"]["details"] == {"prompt_id": prompt["prompt_id"]}


async def test_x_threadgate_from_names_a_platform_identity_as_from_does(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    """An operator token names who answers as ``from`` does: a person id, or a name of no installed
    platform, is 422 naming the header, and the prompt stays pending."""
    run, prompt = await _asked(agent)
    path = respond_path(run, prompt["prompt_id"])
    for named in ("person:alice", "nobody", "carrierpigeon:7"):
        response = await operator.post(path, json={"skip": True}, headers={"X-Threadgate-From": named})
        assert response.status_code == 422, named
        error = response.json()["error"]
        assert error["code"] == "INVALID_PARAMS"
        assert error["details"]["errors"][0]["field"] == "X-Threadgate-From"
    still = await agent.get(f"/v1/prompts/{prompt['prompt_id']}")
    assert still.json()["prompt_state"] == "pending"


async def test_thirty_first_respond_in_a_minute_is_429_with_retry_after(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    path = respond_path(run, prompt["prompt_id"])
    statuses = [
        (await operator.post(path, json={"skip": True}, headers=AS_STARTER)).status_code for _ in range(30)
    ]
    assert 429 not in statuses
    limited = await operator.post(path, json={"skip": True}, headers=AS_STARTER)
    assert limited.status_code == 429
    error = limited.json()["error"]
    assert error["code"] == "RATE_LIMITED"
    assert 1 <= error["details"]["retry_after"] <= 60
    assert limited.headers["Retry-After"] == str(error["details"]["retry_after"])
    other_person = await operator.post(
        path, json={"skip": True}, headers={"X-Threadgate-From": "slack:U0OTHER"}
    )
    assert other_person.status_code == 403


async def test_rate_limit_holds_across_gateway_processes(real_redis: str) -> None:
    options = ApiOptions(respond_limit=3, respond_window_s=60)
    async with served_gateway(real_redis, options) as one, served_gateway(real_redis, options) as two:
        path = respond_path(
            {"run_id": "run_01J00000000000000000000000", "thread_id": "web:room"},
            "prm_01J00000000000000000000000",
        )
        async with one.client(OPERATOR_AUTH) as first, two.client(OPERATOR_AUTH) as second:
            seen = []
            for client in (first, second, first, second):
                seen.append((await client.post(path, json={"skip": True}, headers=AS_STARTER)).status_code)
    assert seen == [404, 404, 404, 429]


async def test_one_operator_token_spending_a_persons_limit_leaves_another_tokens_alone(
    real_redis: str,
) -> None:
    """The limit counts per token and person together: two desks answering as the same person each get
    their own allowance, so one token cannot lock a person out of every other token."""
    second_token = "operator-token-second-41c9"
    tokens = f"{TOKENS},desk2:operator:{second_token}"
    options = ApiOptions(respond_limit=3, respond_window_s=60, respond_token_limit=100)
    async with served_gateway(real_redis, options, threadgate_api_tokens=tokens) as served:
        path = respond_path(
            {"run_id": "run_01J00000000000000000000000", "thread_id": "web:room"},
            "prm_01J00000000000000000000000",
        )
        async with (
            served.client(OPERATOR_AUTH) as first,
            served.client({"Authorization": f"Bearer {second_token}"}) as second,
        ):
            spent = [
                (await first.post(path, json={"skip": True}, headers=AS_STARTER)).status_code
                for _ in range(4)
            ]
            other = (await second.post(path, json={"skip": True}, headers=AS_STARTER)).status_code
    assert spent == [404, 404, 404, 429]
    assert other == 404


async def test_skip_must_be_the_json_boolean_true_and_the_prompt_stays_pending(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run, prompt = await _asked(agent)
    for skip in (1, "true", False, None):
        response = await _respond(operator, run, prompt["prompt_id"], skip=skip)
        assert response.status_code == 400, (skip, response.text)
        assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"
