"""``ask_form`` with a pydantic model, end to end: a person fills the form in the web chat, and the agent
gets a validated instance of the model back."""

from __future__ import annotations

import asyncio
import datetime
import enum
import functools
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field, field_validator, model_validator

from gateway.client import Client, Threadgate
from tests.web.conftest import AGENT_AUTH, AGENT_TOKEN, web_gateway


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Deploy(BaseModel):
    target: Literal["staging", "production"] = Field(title="Target", description="where it goes")
    replicas: int = Field(ge=1, le=5, title="Replicas")
    size: Size = Field(title="Size")
    checks: list[Literal["lint", "tests", "e2e"]] = Field(title="Checks", min_length=1)
    when: datetime.date = Field(title="When")
    notes: str | None = Field(default=None, title="Notes")


async def posted(agent: httpx.AsyncClient) -> None:
    """Returns once the form is pending in the chat."""
    while True:
        if (await agent.get("/v1/prompts", params={"state": "pending"})).json()["items"]:
            return
        await asyncio.sleep(0.02)


async def test_a_form_filled_in_chat_comes_back_as_an_instance_of_the_model() -> None:
    async with web_gateway() as web, Threadgate(web.base_url, AGENT_TOKEN) as tg:
        run = await tg.create_run("web:forms", "ops", started_by="web:alice")
        asking = asyncio.create_task(tg.ask_form(run.run_id, "Deploy settings", Deploy))
        async with web.client(AGENT_AUTH) as agent:
            await asyncio.wait_for(posted(agent), 10)
        reply = "Target: production\nReplicas: 3\nSize: large\nChecks: lint, e2e\nWhen: 2026-03-01"
        async with web.client() as person:
            said = await person.post("/chat/forms/messages", json={"name": "alice", "text": reply})
            assert said.status_code == 202, said.text
            assert "Optional, left empty: Notes (notes)" in said.json()["notice"]
        answer = await asyncio.wait_for(asking, 10)
    assert answer == Deploy(
        target="production",
        replicas=3,
        size=Size.LARGE,
        checks=["lint", "e2e"],
        when=datetime.date(2026, 3, 1),
    )


# The model's own validators --------------------------------------------------------------------------


class Service(BaseModel):
    name: str = Field(title="Name")
    port: int = Field(ge=1, le=65535, title="Port")

    @field_validator("name")
    @classmethod
    def not_reserved(cls, value: str) -> str:
        if value.strip().lower() in {"api", "admin"}:
            raise ValueError(f"{value} is a reserved name")
        return value


class Window(BaseModel):
    start: int = Field(ge=0, le=23, title="Start")
    end: int = Field(ge=0, le=23, title="End")

    @model_validator(mode="after")
    def ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError("the window must end after it starts")
        return self


class Owner(BaseModel):
    email: str = Field(title="Owner")
    team: str = Field(title="Team")

    @field_validator("email")
    @classmethod
    def company_address(cls, value: str) -> str:
        if not value.endswith("@example.com"):  # raised as assert would be (pytest rewrites asserts here)
            raise AssertionError("use a company address")
        return value


REFUSALS = [
    (Service, "Name: API\nPort: 8080", "Name: API is a reserved name", "Name: billing\nPort: 8080"),
    (Service, "Name: admin\nPort: 443", "Name: admin is a reserved name", "Name: admins\nPort: 443"),
    (Window, "Start: 18\nEnd: 9", "the window must end after it starts", "Start: 9\nEnd: 18"),
    (
        Owner,
        "Owner: bob@gmail.com\nTeam: ops",
        "Owner: use a company address",
        "Owner: bob@example.com\nTeam: ops",
    ),
]


async def pending_form(agent: httpx.AsyncClient, seen: set[str]) -> dict[str, Any]:
    """The pending form not among ``seen``, once it is posted."""
    while True:
        for item in (await agent.get("/v1/prompts", params={"state": "pending"})).json()["items"]:
            if item["prompt_id"] not in seen:
                seen.add(item["prompt_id"])
                return dict(item)
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize(("model", "refused", "why", "accepted"), REFUSALS)
async def test_an_answer_the_models_validators_refuse_is_not_taken_and_the_form_asked_again(
    model: type[BaseModel], refused: str, why: str, accepted: str, sync: bool
) -> None:
    async with web_gateway() as web, Threadgate(web.base_url, AGENT_TOKEN) as tg:
        run = await tg.create_run("web:forms", "ops", started_by="web:alice")
        if sync:  # a deadline, so that a failing test does not leave the thread waiting forever
            client = Client(web.base_url, AGENT_TOKEN)
            ask = functools.partial(client.ask_form, run.run_id, "Settings", model, timeout=30)
            asking = asyncio.create_task(asyncio.to_thread(ask))
        else:
            asking = asyncio.create_task(tg.ask_form(run.run_id, "Settings", model, timeout=30))
        seen: set[str] = set()
        async with web.client(AGENT_AUTH) as agent, web.client() as person:
            first = await asyncio.wait_for(pending_form(agent, seen), 10)
            said = await person.post("/chat/forms/messages", json={"name": "alice", "text": refused})
            assert said.status_code == 202, said.text
            again = await asyncio.wait_for(pending_form(agent, seen), 10)
            assert not asking.done()  # the agent is still waiting: no answer was final
            given = (await agent.get(f"/v1/prompts/{first['prompt_id']}")).json()["content"]
            defaults = {
                name: prop.get("default") for name, prop in again["requested_schema"]["properties"].items()
            }
            assert defaults == given  # the person's values, filled in
            log = await tg.thread_items("web:forms")
            notices = [item["content"][0]["text"] for item in log.items if item.get("role") == "agent"]
            assert notices == [f"Not taken: {why}. The form is asked again with your answers filled in."]
            said = await person.post("/chat/forms/messages", json={"name": "alice", "text": accepted})
            assert said.status_code == 202, said.text
        answer = await asyncio.wait_for(asking, 10)
        if sync:
            client.close()
    lines = dict(line.split(": ", 1) for line in accepted.splitlines())
    assert answer == model.model_validate(
        {key: lines[info.title] for key, info in model.model_fields.items()}
    )
