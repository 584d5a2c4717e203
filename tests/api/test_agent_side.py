"""Agent side over real HTTP: runs, raising (supersede, 503), long-polls, cancel, end, the inbox."""

from __future__ import annotations

import asyncio

import httpx

from gateway.store import keys
from tests.api.conftest import STARTER, THREAD, Served, raise_prompt, start_run
from tests.support.conditions import until_watched


async def test_creating_a_run_answers_201_with_the_run(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    assert run["run_id"].startswith("run_")
    assert (run["thread_id"], run["agent"], run["started_by"], run["state"]) == (
        THREAD,
        "ops",
        STARTER,
        "running",
    )


async def test_malformed_thread_id_is_400_invalid_thread_id(agent: httpx.AsyncClient) -> None:
    response = await agent.post("/v1/runs", json={"thread_id": "slack:nope", "agent": "ops"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_THREAD_ID"


async def test_unconfigured_channel_is_400_channel_not_configured(agent: httpx.AsyncClient) -> None:
    response = await agent.post("/v1/runs", json={"thread_id": "telegram:12345", "agent": "ops"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "CHANNEL_NOT_CONFIGURED"
    assert "slack" in error["details"]["configured"]


async def test_raising_answers_201_and_posts_the_prompt(agent: httpx.AsyncClient, served: Served) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    assert prompt["prompt_state"] == "pending"
    assert prompt["questions"][0]["options"] == [
        {"label": "Approve", "description": None},
        {"label": "Deny", "description": None},
    ]
    posted = served.channel.items_of("pending_prompt")
    assert posted[-1].metadata["prompt"]["prompt_id"] == prompt["prompt_id"]


async def test_a_new_prompt_supersedes_the_threads_active_one(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    first = await raise_prompt(agent, run["run_id"])
    await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": "Why?"}])
    old = (await agent.get(f"/v1/prompts/{first['prompt_id']}")).json()
    assert old["prompt_state"] == "cancelled"
    assert old["reason_code"] == "superseded"
    assert "answers" not in old


async def test_failed_chat_post_is_503_prompt_unavailable_never_a_denial(
    agent: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    served.channel.fail_next = 1
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts", json={"kind": "approval", "questions": [{"question": "Go?"}]}
    )
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "PROMPT_UNAVAILABLE"
    assert error["message"].startswith("Approval unavailable")
    assert "den" not in error["message"].lower()


async def test_question_unavailable_message_for_questions(agent: httpx.AsyncClient, served: Served) -> None:
    run = await start_run(agent)
    served.channel.fail_next = 1
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts", json={"kind": "text", "questions": [{"question": "Name?"}]}
    )
    assert response.status_code == 503
    assert response.json()["error"]["message"].startswith("Question unavailable")


async def test_long_poll_returns_the_moment_the_prompt_is_answered(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    poll = asyncio.create_task(agent.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": 5}))
    await until_watched(served.runtime.store.redis, THREAD, prompt["prompt_id"])
    assert not poll.done()
    answer = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    assert answer.status_code == 200, answer.text
    # Woken by the answer: left to run out its 5 s wait, the poll would fail this bound.
    settled = (await asyncio.wait_for(poll, 4)).json()
    assert settled["prompt_state"] == "answered"
    assert settled["answers"][0]["answer"] == ["Approve"]
    assert settled["resolution"] == "resolved_hot"
    assert "reason" not in settled


async def test_long_poll_gives_back_the_pending_prompt_when_wait_runs_out(
    agent: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await agent.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": 0.3})
    assert response.json()["prompt_state"] == "pending"
    # It did wait (and so counted as the agent waiting there), rather than answering at once.
    watch = keys.watch(THREAD, prompt["prompt_id"])
    assert await served.runtime.store.redis.pttl(watch) > 0


async def test_wait_over_sixty_seconds_is_422_invalid_params(agent: httpx.AsyncClient) -> None:
    response = await agent.get("/v1/prompts/prm_x", params={"wait": 61})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "INVALID_PARAMS"


async def test_unknown_prompt_is_404(agent: httpx.AsyncClient) -> None:
    response = await agent.get("/v1/prompts/prm_01J0000000000000000000000")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "PROMPT_NOT_FOUND"


async def test_cancel_settles_with_the_reason_and_twice_is_fine(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/prompts/{prompt['prompt_id']}/cancel"
    first = await agent.post(path, json={"reason": "no longer needed"})
    again = await agent.post(path)
    assert first.status_code == again.status_code == 200
    assert first.json()["reason"] == "no longer needed"
    assert first.json()["reason_code"] == "cancelled"
    assert again.json()["reason"] == "no longer needed"


async def test_cancelling_an_answered_prompt_is_409_with_how_it_settled(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    response = await agent.post(f"/v1/prompts/{prompt['prompt_id']}/cancel")
    assert response.status_code == 409
    details = response.json()["error"]["details"]
    assert (details["state"], details["by"], details["answers"][0]["answer"]) == (
        "answered",
        STARTER,
        ["Approve"],
    )


async def test_ending_a_run_cancels_its_pending_prompt(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    ended = await agent.post(f"/v1/runs/{run['run_id']}/end")
    assert ended.status_code == 200
    assert ended.json()["state"] == "ended"
    settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (settled["prompt_state"], settled["reason"], settled["reason_code"]) == (
        "cancelled",
        "the run ended",
        "run_ended",
    )
    refused = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts", json={"kind": "text", "questions": [{"question": "x"}]}
    )
    assert refused.status_code == 409


async def test_ending_an_unknown_run_is_404(agent: httpx.AsyncClient) -> None:
    response = await agent.post("/v1/runs/run_missing/end")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "RUN_NOT_FOUND"


async def test_inbox_pages_pending_prompts_across_agents(agent: httpx.AsyncClient) -> None:
    raised = []
    for index in range(3):
        run = await start_run(agent, thread_id=f"web:room-{index}", name=f"agent{index}")
        raised.append((await raise_prompt(agent, run["run_id"]))["prompt_id"])
    first = (await agent.get("/v1/prompts", params={"state": "pending", "limit": 2})).json()
    second = (await agent.get("/v1/prompts", params={"cursor": first["cursor"], "limit": 2})).json()
    assert [p["prompt_id"] for p in first["items"] + second["items"]] == raised[::-1]
    assert second["cursor"] is None
    only = (await agent.get("/v1/prompts", params={"agent": "agent1"})).json()
    assert [p["prompt_id"] for p in only["items"]] == [raised[1]]
    by_thread = (await agent.get("/v1/prompts", params={"thread_id": "web:room-2"})).json()
    assert [p["prompt_id"] for p in by_thread["items"]] == [raised[2]]
