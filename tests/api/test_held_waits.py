"""Long-polls and event streams are served below FastAPI, and answer exactly as their routes do.

``gateway.api.waiting`` serves plainly valid requests itself and leaves the rest to the FastAPI routes:
both must give the same bodies, statuses, headers and errors.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from gateway.delivery.waiters import READ_AGAIN, Waiters
from tests.api.conftest import Served, raise_prompt, start_run
from tests.api.test_stream_fanout import next_event, open_stream, until_held

# A wait with seven decimals is valid, but more than the raw path reads: FastAPI's route answers it.
BY_THE_ROUTE = "0.0000001"


async def test_a_long_poll_answers_as_its_route_does(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/prompts/{prompt['prompt_id']}"
    below = await agent.get(path, params={"wait": "0.1"})
    routed = await agent.get(path, params={"wait": BY_THE_ROUTE})
    exponent = await agent.get(path, params={"wait": "1e-3"})  # a float pydantic reads; so does the route
    plain = await agent.get(path)
    assert below.status_code == routed.status_code == plain.status_code == exponent.status_code == 200
    assert below.json() == routed.json() == plain.json() == exponent.json()
    assert below.json()["prompt_state"] == "pending"
    assert below.headers["content-type"] == routed.headers["content-type"] == "application/json"


@pytest.mark.parametrize("wait", ["61", "-1", "soon", "", "nan"])
async def test_a_wait_outside_the_contract_is_422_invalid_params(agent: httpx.AsyncClient, wait: str) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await agent.get(f"/v1/prompts/{prompt['prompt_id']}", params={"wait": wait})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "INVALID_PARAMS"


async def test_an_unknown_prompt_is_404_in_the_envelope_and_holds_no_slot(
    agent: httpx.AsyncClient, served: Served
) -> None:
    response = await agent.get("/v1/prompts/prm_missing", params={"wait": "2"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "PROMPT_NOT_FOUND"
    assert set(response.json()["error"]) == {"code", "message", "details"}
    await until_held(served, 0)


async def test_a_long_poll_wakes_with_the_answer(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    path = f"/v1/prompts/{prompt['prompt_id']}"
    held = asyncio.create_task(agent.get(path, params={"wait": "5"}))
    await until_held(served, 1)
    answered = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": run["started_by"]}
    )
    assert answered.status_code == 200, answered.text
    response = await asyncio.wait_for(held, 5)
    assert response.json()["prompt_state"] == "answered"


async def test_an_event_stream_sends_the_event_stream_headers(agent: httpx.AsyncClient) -> None:
    async with agent.stream("GET", "/v1/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        lines = response.aiter_lines()
        async with asyncio.timeout(5):
            assert await lines.__anext__() == "retry: 2000"
            assert (await lines.__anext__()).startswith(": connected at ")


async def test_a_quiet_stream_gets_heartbeats_while_other_threads_are_busy(agent: httpx.AsyncClient) -> None:
    mine = await start_run(agent)
    busy = await start_run(agent, thread_id="web:busy")
    async with open_stream(agent, f"/v1/events?run_id={mine['run_id']}") as lines:

        async def keep_busy() -> None:
            while True:  # events of another thread, which this stream filters out
                await raise_prompt(agent, busy["run_id"])

        feeding = asyncio.create_task(keep_busy())
        try:
            async with asyncio.timeout(5):
                async for line in lines:
                    if line == ": heartbeat":
                        break
        finally:
            feeding.cancel()


async def test_a_stream_that_is_left_gives_its_slot_back_and_a_new_one_gets_events(
    agent: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    async with open_stream(agent, "/v1/events"):
        await until_held(served, 1)
    await until_held(served, 0)  # the client left: the server saw it, without writing to it
    async with open_stream(agent, "/v1/events") as lines:
        prompt = await raise_prompt(agent, run["run_id"])
        seen = await next_event(lines)
    assert seen["data"]["data"]["prompt_id"] == prompt["prompt_id"]


async def test_a_wake_given_before_the_wait_is_kept_and_a_renewed_watch_waits_again() -> None:
    waiters = Waiters(redis=None)
    with waiters.watch("prm_1") as watch:
        waiters.notify("prm_1", fields={"prompt_state": "answered"})  # before anyone awaits it
        first = await asyncio.wait_for(watch.future, 1)
        renewed = watch.renew()
        assert not renewed.done()
        waiters.notify_all()
        assert await asyncio.wait_for(renewed, 1) is READ_AGAIN
    assert first.fields == {"prompt_state": "answered"}
    with waiters.watch("prm_2") as left:
        pass
    assert left.future.cancelled()
    waiters.notify("prm_2")  # nobody waits any more: nothing to wake, nothing kept
    assert not waiters._futures
