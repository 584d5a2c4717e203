"""Escalation over HTTP: a raise's and an agent definition's steps are checked before anything is
kept, the prompt carries them, and what cannot be posted to is refused with a 400 that says why."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.store import keys
from tests.api.conftest import Served, raise_prompt, start_run

ONCALL = "web:oncall"
PLAN = [{"after_seconds": 900, "remind": True}, {"after_seconds": 3600, "to": [ONCALL]}]


@pytest.mark.parametrize(
    ("escalation", "code", "where"),
    [
        (
            [{"after_seconds": 60, "remind": True}, {"after_seconds": 60, "remind": True}],
            "VALIDATION_FAILED",
            "escalation",
        ),
        ([{"after_seconds": 0, "remind": True}], "VALIDATION_FAILED", "escalation.0.after_seconds"),
        ([{"after_seconds": 2_592_001, "remind": True}], "VALIDATION_FAILED", "escalation.0.after_seconds"),
        ([{"after_seconds": 60}], "VALIDATION_FAILED", "escalation.0"),
        ([{"after_seconds": 60, "to": []}], "VALIDATION_FAILED", "escalation.0"),
        ([{"after_seconds": 60, "remind": "yes"}], "VALIDATION_FAILED", "escalation.0.remind"),
        ([{"after_seconds": 60, "to": ["nowhere:1"]}], "VALIDATION_FAILED", "escalation"),
        ([{"after_seconds": 60, "to": [ONCALL, ONCALL]}], "VALIDATION_FAILED", "escalation.0.to"),
        (
            [{"after_seconds": 60, "to": [f"web:r{n}" for n in range(11)]}],
            "VALIDATION_FAILED",
            "escalation.0.to",
        ),
        ([{"after_seconds": n + 1, "remind": True} for n in range(6)], "VALIDATION_FAILED", "escalation"),
        ([{"after_seconds": 60, "to": ["telegram:12345"]}], "CHANNEL_NOT_CONFIGURED", None),
        ([{"after_seconds": 60, "to": ["slack:C0999"]}], "THREADS_NOT_SUPPORTED", None),
    ],
    ids=[
        "not-increasing",
        "zero-delay",
        "past-the-longest-expiry",
        "does-nothing",
        "no-targets",
        "remind-not-a-boolean",
        "not-a-platform",
        "a-target-twice",
        "eleven-targets",
        "six-steps",
        "platform-not-configured",
        "a-channel-that-cannot-start-threads",
    ],
)
async def test_an_invalid_escalation_is_400_on_a_raise_and_on_an_agent_definition(
    agent: httpx.AsyncClient,
    operator: httpx.AsyncClient,
    served: Served,
    escalation: list[dict[str, Any]],
    code: str,
    where: str | None,
) -> None:
    run = await start_run(agent)
    raised = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts",
        json={"kind": "approval", "questions": [{"question": "Deploy?"}], "escalation": escalation},
    )
    defined = await operator.put("/v1/agents/ops", json={"human_input": {"escalation": escalation}})

    for response in (raised, defined):
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == code
        if where is not None:
            fields = [one["field"] for one in error["details"]["errors"]]
            assert fields[0].endswith(where)
    assert served.channel.posts == [], "nothing was asked"
    assert await served.runtime.store.redis.zcard(keys.ESCALATION) == 0
    assert (await operator.get("/v1/agents/ops")).json()["human_input"]["escalation"] == []


async def test_a_raise_carries_its_escalation_and_an_agents_applies_otherwise(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    defined = await operator.put("/v1/agents/ops", json={"human_input": {"escalation": PLAN}})
    assert defined.status_code == 200, defined.text
    assert (await operator.get("/v1/agents/ops")).json()["human_input"]["escalation"] == [
        {"after_seconds": 900, "remind": True, "to": []},
        {"after_seconds": 3600, "remind": False, "to": [ONCALL]},
    ]
    run = await start_run(agent)

    inherited = await raise_prompt(agent, run["run_id"])
    assert [step["after_seconds"] for step in inherited["escalation"]] == [900, 3600]
    own = await raise_prompt(agent, run["run_id"], escalation=[{"after_seconds": 60, "remind": True}])
    assert own["escalation"] == [{"after_seconds": 60, "remind": True, "to": []}]
    none = await raise_prompt(agent, run["run_id"], escalation=[])
    assert "escalation" not in none and "escalations" not in none
    fetched = (await agent.get(f"/v1/prompts/{own['prompt_id']}")).json()
    assert fetched["escalation"] == own["escalation"] and "escalations" not in fetched
