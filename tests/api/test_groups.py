"""Groups with members and a rotation over real HTTP and a real Redis (contract §11 "On duty"): the routes
and their codes, ``group:<name>`` admitting a group's listed members, and ``group:<name>:on-duty``
admitting only the person whose shift it is now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.api.conftest import AGENT_AUTH, Served, raise_prompt, start_run

DANA, ERIN, MALLORY = "slack:U0DANA", "slack:U0ERIN", "slack:U0MALLORY"
CALL = {"name": "Bash", "arguments": {"command": "make deploy"}}


def _rotation(hours_ago: float, order: list[str], shift_hours: int = 8) -> dict[str, Any]:
    starts = datetime.now(UTC) - timedelta(hours=hours_ago)
    return {"starts_at": starts.isoformat(), "shift_seconds": shift_hours * 3600, "order": order}


async def _setup(operator: httpx.AsyncClient, approvers: list[str], group: dict[str, Any]) -> None:
    for person, identity in (("dana", DANA), ("erin", ERIN)):
        assert (
            await operator.put(f"/v1/people/{person}", json={"identities": [identity]})
        ).status_code == 200
    assert (await operator.put("/v1/groups/sre", json=group)).status_code == 200
    human = {"human_input": {"approvers": approvers}}
    assert (await operator.put("/v1/agents/ops", json=human)).status_code == 200


async def _answer(agent: httpx.AsyncClient, operator: httpx.AsyncClient, *who: str) -> list[int]:
    """Each of ``who`` tries to approve one fresh prompt: the status codes, in order."""
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
    codes = []
    for identity in who:
        body = {"action": "accept", "from": identity}
        codes.append(
            (await operator.post(f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json=body)).status_code
        )
    return codes


async def test_a_group_round_trips_with_who_is_on_duty_now(operator: httpx.AsyncClient) -> None:
    body = {"members": ["dana", "person:erin"], "rotation": _rotation(9, ["erin", "dana"])}
    put = await operator.put("/v1/groups/group:sre", json=body)
    assert put.status_code == 200, put.text
    shown = (await operator.get("/v1/groups/sre")).json()
    assert shown["group"] == "sre" and shown["members"] == ["dana", "erin"]
    assert shown["rotation"]["order"] == ["erin", "dana"] and shown["rotation"]["shift_seconds"] == 28_800
    assert shown["on_duty"] == "dana", "9 hours into 8-hour shifts: the second person's"
    listed = (await operator.get("/v1/groups")).json()
    assert [group["group"] for group in listed["items"]] == ["sre"] and listed["cursor"] is None
    gone = await operator.delete("/v1/groups/sre")
    assert gone.status_code == 200 and gone.json()["members"] == ["dana", "erin"]
    missing = await operator.get("/v1/groups/sre")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "GROUP_NOT_FOUND")


async def test_bad_groups_are_refused_with_the_envelope(operator: httpx.AsyncClient) -> None:
    outsider = {"members": ["dana"], "rotation": _rotation(1, ["erin"])}
    refused = await operator.put("/v1/groups/sre", json=outsider)
    assert refused.status_code == 400 and "rotation.order" in refused.text
    short = {"members": ["dana"], "rotation": {**_rotation(1, ["dana"]), "shift_seconds": 5}}
    assert (await operator.put("/v1/groups/sre", json=short)).status_code == 400
    naive = {"members": ["dana"], "rotation": {**_rotation(1, ["dana"]), "starts_at": "2026-01-01T00:00:00"}}
    assert (await operator.put("/v1/groups/sre", json=naive)).status_code == 400
    bad_name = await operator.get("/v1/groups/no%20spaces")
    assert (bad_name.status_code, bad_name.json()["error"]["code"]) == (422, "INVALID_PARAMS")


async def test_groups_are_for_operator_tokens_only(served: Served) -> None:
    async with served.client(AGENT_AUTH) as agent, served.client() as nobody:
        for method, path in (("GET", "/v1/groups"), ("GET", "/v1/groups/sre"), ("PUT", "/v1/groups/sre")):
            refused = await agent.request(method, path, json={} if method == "PUT" else None)
            assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")
            assert (
                await nobody.request(method, path, json={} if method == "PUT" else None)
            ).status_code == 401


async def test_a_group_approver_admits_the_groups_listed_members(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    """``members`` puts a person in the group as their record's ``groups`` does."""
    await _setup(operator, ["group:sre"], {"members": ["erin"]})
    assert await _answer(agent, operator, DANA, MALLORY, ERIN) == [403, 403, 200]


async def test_on_duty_admits_only_the_person_whose_shift_it_is(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(
        operator,
        ["group:sre:on-duty"],
        {"members": ["dana", "erin"], "rotation": _rotation(1, ["dana", "erin"])},
    )
    assert await _answer(agent, operator, ERIN, DANA) == [403, 200]
    # A handover: the rotation moved on (as the clock would), so the next prompt is Erin's. A change made
    # through this process is seen at once (other processes within 2 s, as for people).
    await operator.put(
        "/v1/groups/sre", json={"members": ["dana", "erin"], "rotation": _rotation(9, ["dana", "erin"])}
    )
    assert await _answer(agent, operator, DANA, ERIN) == [403, 200]


async def test_before_a_rotation_starts_nobody_is_on_duty(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _setup(operator, ["group:sre:on-duty"], {"members": ["dana"], "rotation": _rotation(-2, ["dana"])})
    assert (await operator.get("/v1/groups/sre")).json()["on_duty"] is None
    assert await _answer(agent, operator, DANA) == [403]
