"""Deliveries carry Standard Webhooks headers a receiver verifies with the ``standardwebhooks`` library, and
the ``X-Threadgate-Signature`` header beside them for one more release."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from standardwebhooks import Webhook, WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.delivery.webhook_signatures import (
    receiver_secret,
    standard_headers,
    standard_key,
    verify_standard,
)
from gateway.delivery.webhooks import SIGNATURE_HEADER, Retry, WebhookDispatcher, verify
from tests.api.conftest import AGENT_AUTH, FAST, raise_prompt, serve, served_gateway, start_run

PLAIN_SECRET = "plain-secret-7c2e"
STANDARD_SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


@dataclass
class StandardReceiver:
    """Verifies each delivery with the standardwebhooks library (and the old header); fails the first one."""

    secret: str
    legacy_secret: str
    seen: list[tuple[str, str]] = field(default_factory=list)
    accepted: list[dict[str, Any]] = field(default_factory=list)

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        try:
            payload = Webhook(self.secret).verify(body, dict(request.headers))
        except WebhookVerificationError:
            return Response(status_code=400)
        if not verify(self.legacy_secret, request.headers.get(SIGNATURE_HEADER, ""), body):
            return Response(status_code=401)
        self.seen.append((request.headers["webhook-id"], payload["id"]))
        if len(self.seen) == 1:
            return Response(status_code=503)  # the retry must carry the same webhook-id
        self.accepted.append(payload)
        return Response(status_code=204)


@contextlib.asynccontextmanager
async def receiving(receiver: StandardReceiver) -> AsyncIterator[str]:
    app = Starlette(routes=[Route("/hook", receiver.hook, methods=["POST"])])
    async with serve(app) as base_url:
        yield f"{base_url}/hook"


@pytest.mark.parametrize("secret", [PLAIN_SECRET, STANDARD_SECRET])
async def test_a_standard_webhooks_receiver_verifies_every_delivery(real_redis: str, secret: str) -> None:
    receiver = StandardReceiver(receiver_secret(secret), secret)
    async with receiving(receiver) as url:
        extra = {"threadgate_webhooks": url, "threadgate_webhook_secret": secret}
        async with served_gateway(real_redis, FAST, **extra) as served:
            assert served.runtime.webhooks is not None
            served.runtime.webhooks.retry = Retry(base_s=0.05, max_s=0.2)
            async with served.client(AGENT_AUTH) as agent:
                run = await start_run(agent)
                prompt = await raise_prompt(agent, run["run_id"])
            for _ in range(250):
                if receiver.accepted:
                    break
                await asyncio.sleep(0.02)
    assert receiver.accepted[0]["id"] == f"{prompt['prompt_id']}.requested"
    first_id, retried_id = receiver.seen[0][0], receiver.seen[1][0]
    assert first_id == retried_id


def test_a_whsec_secret_is_the_base64_key_and_any_other_secret_its_utf8_bytes() -> None:
    assert standard_key(STANDARD_SECRET) == b"0123456789abcdef0123456789abcdef"
    assert standard_key(PLAIN_SECRET) == PLAIN_SECRET.encode()
    body = json.dumps({"id": "prm_1.requested"}).encode()
    headers = standard_headers(standard_key(PLAIN_SECRET), "msg_1", body, 1_700_000_000)
    assert headers["webhook-id"] == "msg_1" and headers["webhook-timestamp"] == "1700000000"
    assert headers["webhook-signature"].startswith("v1,")


def test_a_whsec_secret_that_is_not_base64_refuses_to_start() -> None:
    with pytest.raises(ValueError, match="not base64"):
        WebhookDispatcher(None, ["http://127.0.0.1:9/hook"], "whsec_not*base64")


def test_signatures_match_the_standard_webhooks_test_vector() -> None:
    """The published vector every reference library checks: a receiver's library accepts what we sign."""
    key = standard_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    body = b'{"test": 2432232314}'
    headers = standard_headers(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", body, 1614265330)
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert verify_standard(key, headers, body, now=1614265330)
    other = {**headers, "webhook-signature": "v1,bm9wZQ== " + headers["webhook-signature"]}
    assert verify_standard(key, other, body, now=1614265330)
    assert not verify_standard(key, headers, body, now=1614265330 + 301)
