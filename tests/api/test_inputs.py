"""Seed 002 over real HTTP: an agent's pending inputs; accept, decline and cancel for `from`."""

from __future__ import annotations

from datetime import datetime

import httpx

from tests.api.conftest import DEPLOY_QUESTIONS, STARTER, raise_prompt, start_run

APPROVER = "slack:U0APPROVER"


async def test_lists_the_agents_pending_inputs(agent: httpx.AsyncClient, operator: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    await start_run(agent, thread_id="web:other", name="someone-else")
    listed = (await operator.get("/v1/agents/ops/inputs", params={"state": "pending"})).json()
    assert [item["prompt_id"] for item in listed["items"]] == [prompt["prompt_id"]]
    assert listed["cursor"] is None


async def test_accept_without_content_approves(agent: httpx.AsyncClient, operator: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["prompt_state"], body["answers"][0]["answer"], body["answered_by"]) == (
        "answered",
        ["Approve"],
        STARTER,
    )
    listed = (await operator.get("/v1/agents/ops/inputs")).json()
    assert listed["items"] == []


async def test_same_answer_twice_is_200(agent: httpx.AsyncClient, operator: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
    first = await operator.post(path, json={"action": "accept", "content": False, "from": STARTER})
    again = await operator.post(path, json={"action": "decline", "from": STARTER})
    assert first.status_code == again.status_code == 200
    assert again.json()["answers"][0]["answer"] == ["Deny"]


async def test_different_answer_to_settled_input_is_409_saying_how_it_settled(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
    await operator.post(path, json={"action": "accept", "content": True, "from": STARTER})
    response = await operator.post(path, json={"action": "accept", "content": False, "from": STARTER})
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "ALREADY_RESOLVED"
    details = error["details"]
    assert details["state"] == "answered"
    assert details["answers"][0]["answer"] == ["Approve"]
    assert details["by"] == STARTER
    assert details["settled_at"]


async def test_answer_after_cancellation_is_409_with_the_reason(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    await agent.post(f"/v1/runs/{run['run_id']}/end")
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    assert response.status_code == 409
    details = response.json()["error"]["details"]
    assert (details["state"], details["reason"], details["reason_code"]) == (
        "cancelled",
        "the run ended",
        "run_ended",
    )


async def test_from_not_allowed_is_403_forbidden(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
    stranger = await operator.post(path, json={"action": "accept", "from": "slack:U0STRANGER"})
    nobody = await operator.post(path, json={"action": "accept"})
    assert stranger.status_code == nobody.status_code == 403
    assert stranger.json()["error"]["code"] == "FORBIDDEN"
    still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert still["prompt_state"] == "pending"


async def test_an_approver_may_answer_a_run_nobody_started(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await operator.put("/v1/agents/ops", json={"human_input": {"approvers": [APPROVER]}})
    run = await start_run(agent, started_by=None)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": APPROVER}
    )
    assert response.status_code == 200
    assert response.json()["answered_by"] == APPROVER


async def test_decline_on_a_question_cancels_it_as_declined(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="ask_user_question", questions=DEPLOY_QUESTIONS)
    path = f"/v1/agents/ops/inputs/{prompt['prompt_id']}"
    response = await operator.post(path, json={"action": "decline", "from": STARTER})
    assert response.status_code == 200
    body = response.json()
    assert (body["prompt_state"], body["reason_code"]) == ("cancelled", "declined")
    assert "answers" not in body
    again = await operator.post(path, json={"action": "decline", "from": STARTER})
    assert again.status_code == 200
    other = await operator.post(path, json={"action": "cancel", "from": STARTER})
    assert other.status_code == 409
    assert other.json()["error"]["details"]["by"] == STARTER


async def test_cancel_action_cancels_with_reason_code_cancelled(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Name?"}])
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "cancel", "from": STARTER}
    )
    assert response.json()["reason_code"] == "cancelled"


async def test_text_content_is_the_answer(agent: httpx.AsyncClient, operator: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Release name?"}])
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept", "content": "Blue Heron", "from": STARTER},
    )
    assert response.json()["answers"][0]["answer"] == ["Blue Heron"]


async def test_structured_answers_are_used_as_they_stand(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="ask_user_question", questions=DEPLOY_QUESTIONS)
    content = [
        {"question_id": "q1", "answer": ["staging"]},
        {"question": "Which sections?", "answer": ["KPI cards", "Table"]},
        {"question_id": "q3", "answer": ["dark theme"]},
    ]
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept", "content": content, "from": STARTER},
    )
    assert [a["answer"] for a in response.json()["answers"]] == [
        ["staging"],
        ["KPI cards", "Table"],
        ["dark theme"],
    ]


async def test_a_partial_structured_set_is_400_and_leaves_the_input_pending(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], kind="ask_user_question", questions=DEPLOY_QUESTIONS)
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept", "content": [{"question_id": "q1", "answer": ["staging"]}], "from": STARTER},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


async def test_a_string_for_questions_is_mapped_as_a_text_answer(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(
        agent, run["run_id"], kind="ask_user_question", questions=DEPLOY_QUESTIONS[:1]
    )
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        json={"action": "accept", "content": "2", "from": STARTER},
    )
    assert response.json()["answers"][0]["answer"] == ["production"]


async def test_an_input_of_another_agent_is_404(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await operator.post(
        f"/v1/agents/other/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    assert response.status_code == 404


async def test_agent_definition_round_trips_and_defaults_when_undefined(operator: httpx.AsyncClient) -> None:
    put = await operator.put(
        "/v1/agents/ops",
        json={"human_input": {"expires_in_seconds": 86400, "approvers": [APPROVER, APPROVER]}},
    )
    assert put.status_code == 200
    got = (await operator.get("/v1/agents/ops")).json()
    assert got == {
        "name": "ops",
        "human_input": {
            "expires_in_seconds": 86400,
            "approvers": [APPROVER],
            "on_unmatched_reply": "answer",
            "escalation": [],
            "require_sign_in": False,
        },
        "channels": [],
        "approval": {"default": "always", "tools": {}},
    }
    fresh = (await operator.get("/v1/agents/fresh")).json()
    assert fresh["human_input"] == {
        "expires_in_seconds": 604800,
        "approvers": [],
        "on_unmatched_reply": "answer",
        "escalation": [],
        "require_sign_in": False,
    }


async def test_agent_definition_refuses_a_malformed_identity(operator: httpx.AsyncClient) -> None:
    response = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": ["not an identity"]}})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"


async def test_agents_default_expiry_applies_to_its_prompts(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await operator.put("/v1/agents/ops", json={"human_input": {"expires_in_seconds": 3600}})
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    created = datetime.fromisoformat(prompt["created_at"])
    expires = datetime.fromisoformat(prompt["expires_at"])
    assert (expires - created).total_seconds() == 3600
