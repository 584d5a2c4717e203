"""Grants made and revoked are events: ``grant.created``, ``grant.revoked`` on the Standard Webhooks feed."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.delivery.webhook_signatures import receiver_secret
from gateway.delivery.webhooks import Retry
from tests.api.conftest import AGENT_AUTH, FAST, OPERATOR_AUTH, STARTER, serve, served_gateway, start_run

SECRET = "whsec_" + base64.b64encode(b"fedcba9876543210fedcba9876543210").decode()


@dataclass
class Receiver:
    secret: str
    events: list[dict[str, Any]] = field(default_factory=list)

    async def hook(self, request: Request) -> Response:
        try:
            payload = Webhook(self.secret).verify(await request.body(), dict(request.headers))
        except WebhookVerificationError:
            return Response(status_code=400)
        self.events.append(payload)
        return Response(status_code=204)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [payload for payload in self.events if payload["type"] == kind]


@contextlib.asynccontextmanager
async def receiving(receiver: Receiver) -> AsyncIterator[str]:
    app = Starlette(routes=[Route("/hook", receiver.hook, methods=["POST"])])
    async with serve(app) as base_url:
        yield f"{base_url}/hook"


@pytest.mark.parametrize(
    "match",
    [
        {"name": "Bash", "arguments": {"command": "git status"}},
        {"name": "Bash", "arguments": {"command": "git *"}},
    ],
)
async def test_grants_made_and_revoked_are_webhook_events(real_redis: str, match: dict[str, Any]) -> None:
    receiver = Receiver(receiver_secret(SECRET))
    async with receiving(receiver) as url:
        extra = {"threadgate_webhooks": url, "threadgate_webhook_secret": SECRET}
        async with served_gateway(real_redis, FAST, **extra) as served:
            assert served.runtime.webhooks is not None
            served.runtime.webhooks.retry = Retry(base_s=0.05, max_s=0.2)
            async with served.client(AGENT_AUTH) as agent, served.client(OPERATOR_AUTH) as operator:
                run = await start_run(agent)
                call = {"name": "Bash", "arguments": {"command": "git status"}}
                prompt = (
                    await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": call})
                ).json()
                made = await operator.post(
                    f"/v1/agents/{prompt['agent']}/inputs/{prompt['prompt_id']}",
                    json={"action": "accept", "from": STARTER, "grant": {"scope": "run", "match": match}},
                )
                grant = made.json()["grant"]
                revoked = await agent.delete(f"/v1/runs/{run['run_id']}/grants/{grant['grant_id']}")
                assert revoked.status_code == 200, revoked.text
            for _ in range(250):
                if receiver.of("grant.created") and receiver.of("grant.revoked"):
                    break
                await asyncio.sleep(0.02)
    (created,) = receiver.of("grant.created")
    (gone,) = receiver.of("grant.revoked")
    assert created["id"] == f"{grant['grant_id']}.created"
    assert gone["id"] == f"{grant['grant_id']}.revoked"
    for payload in (created, gone):
        data = payload["data"]
        assert (data["grant_id"], data["run_id"], data["match"]) == (grant["grant_id"], run["run_id"], match)
        assert (data["agent"], data["thread_id"]) == (run["agent"], run["thread_id"])
    assert created["data"]["by"] == STARTER
    assert gone["data"]["by"] == "robot"  # revoked by the run's agent token, named by the token
