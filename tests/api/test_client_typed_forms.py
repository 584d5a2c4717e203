"""``ask_form`` with a pydantic model, end to end: a person fills the form in the web chat, and the agent
gets a validated instance of the model back."""

from __future__ import annotations

import asyncio
import datetime
import enum
from typing import Literal

import httpx
from pydantic import BaseModel, Field

from gateway.client import Threadgate
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
