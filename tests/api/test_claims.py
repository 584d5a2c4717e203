"""Claims over real HTTP and a real Redis (contract §11): one person takes a prompt, and until the claim
ends only they answer it, on every path (REST, a chat reply, a decline), from any of their identities."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

import httpx
import pytest

from gateway.base.errors import GatewayError
from gateway.base.models import InboundMessage
from gateway.decision.answering.claims import claim_for
from gateway.rules.outcomes import Outcome
from tests.api.conftest import (
    OPERATOR_AUTH,
    STARTER,
    THREAD,
    Served,
    raise_prompt,
    respond_path,
    served_gateway,
    start_run,
)
from tests.support.conditions import until_connected

SLACK_DANA, TEAMS_DANA = "slack:U0DANA", "teams:8f2c1d4e-1111-2222-3333-444455556666"
ERIN, MALLORY = "slack:U0ERIN", "slack:U0MALLORY"


async def _setup(operator: httpx.AsyncClient) -> None:
    """Dana (two identities) and Erin may answer ops's prompts; Mallory may not."""
    put = await operator.put("/v1/people/dana", json={"name": "Dana", "identities": [SLACK_DANA, TEAMS_DANA]})
    assert put.status_code == 200, put.text
    agent = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": ["person:dana", ERIN]}})
    assert agent.status_code == 200, agent.text


async def _approval(agent: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
    run = await start_run(agent)
    return run, await raise_prompt(agent, run["run_id"])


def _claim_path(prompt: dict[str, Any]) -> str:
    return f"/v1/prompts/{prompt['prompt_id']}/claim"


async def _accept(operator: httpx.AsyncClient, prompt: dict[str, Any], who: str) -> httpx.Response:
    return await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": who}
    )


async def test_a_claim_names_its_holder_as_a_person_until_when(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    assert prompt["claimed_by"] is None and prompt["claimed_until"] is None
    before = time.time()
    claimed = await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
    assert claimed.status_code == 200, claimed.text
    body = claimed.json()
    assert body["claimed_by"] == "person:dana"  # the person, so any of her identities holds it
    until = body["claimed_until"]
    seconds = datetime.fromisoformat(until).timestamp() - before
    assert 890 < seconds < 910  # THREADGATE_CLAIM_SECONDS, 900 by default
    shown = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (shown["claimed_by"], shown["claimed_until"]) == ("person:dana", until)
    listed = (await agent.get("/v1/prompts", params={"state": "pending"})).json()["items"]
    assert [item["claimed_by"] for item in listed] == ["person:dana"]


async def test_claiming_a_prompt_someone_else_holds_is_409_claimed(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    assert (await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})).status_code == 200
    taken = await operator.post(_claim_path(prompt), json={"from": ERIN})
    assert taken.status_code == 409, taken.text
    error = taken.json()["error"]
    assert error["code"] == "CLAIMED"
    assert error["details"]["claimed_by"] == "person:dana"
    assert error["details"]["claimed_until"]
    again = await operator.post(_claim_path(prompt), json={"from": TEAMS_DANA})  # her other identity
    assert again.status_code == 200, again.text


async def test_only_someone_who_may_answer_can_claim(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    refused = await operator.post(_claim_path(prompt), json={"from": MALLORY})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "FORBIDDEN"
    nobody = await operator.post(_claim_path(prompt))
    assert nobody.status_code == 403
    by_agent = await agent.post(_claim_path(prompt), json={"from": ERIN})
    assert by_agent.status_code == 403  # the agent's own token never answers, nor claims


async def test_an_answer_by_another_is_409_claimed_and_the_claimant_answers_from_a_second_identity(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    run, prompt = await _approval(agent)
    await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
    refused = await _accept(operator, prompt, ERIN)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "CLAIMED"
    assert refused.json()["error"]["details"]["claimed_by"] == "person:dana"
    respond = await operator.post(
        respond_path(run, prompt["prompt_id"]),
        json={"answers": [{"questionId": "q1", "selected": ["Approve"]}]},
        headers={"X-Threadgate-From": ERIN},
    )
    assert respond.status_code == 409 and respond.json()["error"]["code"] == "CLAIMED"
    declined = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "decline", "from": ERIN}
    )
    assert declined.status_code == 409 and declined.json()["error"]["code"] == "CLAIMED"
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"
    answered = await _accept(operator, prompt, TEAMS_DANA)
    assert answered.status_code == 200, answered.text
    assert answered.json()["prompt_state"] == "answered"
    assert answered.json()["answered_by"] == TEAMS_DANA


async def test_a_chat_reply_by_another_is_told_who_is_on_it_and_until_when(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    claimed = (await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})).json()
    gateway = served.runtime.gateway
    received = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ERIN, text="approve"))
    assert received.outcome is Outcome.CLAIMED
    hhmm = claimed["claimed_until"][11:16]
    assert received.notice == f"Dana is on it until {hhmm}"
    assert (ERIN, f"Dana is on it until {hhmm}") in [(who, text) for _, who, text in served.channel.notices]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"
    taken = await gateway.receive(InboundMessage(thread_id=THREAD, sender=TEAMS_DANA, text="approve"))
    assert taken.outcome is Outcome.ANSWERED


async def test_release_lets_others_answer_and_only_the_holder_or_an_operator_releases(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
    released = await operator.delete(_claim_path(prompt))  # an operator releases anyone's claim
    assert released.status_code == 200, released.text
    assert released.json()["claimed_by"] is None and released.json()["claimed_until"] is None
    await operator.post(_claim_path(prompt), json={"from": ERIN})
    own = await operator.request("DELETE", _claim_path(prompt), json={"from": ERIN})
    assert own.status_code == 200 and own.json()["claimed_by"] is None
    assert (await _accept(operator, prompt, STARTER)).status_code == 200


async def test_only_the_holder_releases_when_not_an_operator(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    """A person (a session, or the core for a chat) releasing another's claim is refused: 409 CLAIMED."""
    await _setup(operator)
    _, prompt = await _approval(agent)
    gateway = served.runtime.gateway
    await gateway.claim(await gateway.get_prompt(prompt["prompt_id"]), SLACK_DANA)
    with pytest.raises(GatewayError) as refused:
        await claim_for(gateway, prompt["prompt_id"], ERIN, sees=lambda _: True, release=True)
    assert (refused.value.status, refused.value.code) == (409, "CLAIMED")
    assert (await gateway.get_prompt(prompt["prompt_id"])).claimed_by == "person:dana"
    own = await claim_for(gateway, prompt["prompt_id"], TEAMS_DANA, sees=lambda _: True, release=True)
    assert own.claimed_by is None


async def test_a_claim_that_ran_out_lets_others_answer(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
    later = time.time() + 901  # past THREADGATE_CLAIM_SECONDS, by the gateway's and the store's clocks
    served.runtime.gateway.clock = lambda: later
    served.runtime.store.clock = lambda: later
    shown = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert shown["claimed_by"] is None and shown["claimed_until"] is None
    answered = await _accept(operator, prompt, ERIN)
    assert answered.status_code == 200, answered.text
    assert answered.json()["answered_by"] == ERIN


async def test_a_settled_prompt_cannot_be_claimed(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    assert (await _accept(operator, prompt, ERIN)).status_code == 200
    late = await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
    assert late.status_code == 409 and late.json()["error"]["code"] == "ALREADY_RESOLVED"


async def test_claim_and_release_go_out_as_input_claimed(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    claimed: list[dict[str, Any]] = []
    async with agent.stream("GET", "/v1/events") as stream:
        lines = stream.aiter_lines()
        await until_connected(lines)  # the stream starts from now
        await operator.post(_claim_path(prompt), json={"from": SLACK_DANA})
        await operator.post(_claim_path(prompt), json={"from": TEAMS_DANA})  # a renewal: no new event
        await operator.delete(_claim_path(prompt))
        async with asyncio.timeout(5):
            async for line in lines:
                if line.startswith("data:"):
                    entry = json.loads(line[5:])
                    if entry["type"] == "input.claimed":
                        claimed.append(entry["data"])
                    if len(claimed) == 2:
                        break
    assert [(data["prompt_id"], data["claimed_by"]) for data in claimed] == [
        (prompt["prompt_id"], "person:dana"),
        (prompt["prompt_id"], None),  # a release: claimed_by null
    ]
    assert claimed[0]["claimed_until"] and claimed[1]["claimed_until"] is None


async def test_a_claim_made_through_one_gateway_holds_on_another(
    real_redis: str, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator)
    _, prompt = await _approval(agent)
    async with served_gateway(real_redis) as other:
        async with other.client(OPERATOR_AUTH) as second:
            taken = await second.post(_claim_path(prompt), json={"from": SLACK_DANA})
            assert taken.status_code == 200, taken.text
        refused = await _accept(operator, prompt, ERIN)  # the first gateway
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "CLAIMED"
        received = await other.runtime.gateway.receive(
            InboundMessage(thread_id=THREAD, sender=ERIN, text="approve")
        )
        assert received.outcome is Outcome.CLAIMED
        assert (await _accept(operator, prompt, TEAMS_DANA)).status_code == 200
