"""On every ingress the credential is checked before the body is parsed, and a body that then fails to
parse is a 4xx: the web chat's token, Telegram's secret header (Slack's signature: tests/channels)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fuzz.conftest import TELEGRAM_SECRET, IngressGateway, auth

DEEP = b"[" * 100_000 + b"]" * 100_000
BAD_BODIES = [DEEP, b"{not json", b'{"name": "\xff"}', b'{"name": "\\ud800"}']
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(ingress: IngressGateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ingress.base_url, timeout=15) as http:
        yield http


@pytest.mark.parametrize("path", ["/chat/fuzz/messages", "/chat/fuzz/session"])
@pytest.mark.parametrize("body", BAD_BODIES, ids=["deep", "not-json", "not-utf8", "surrogate"])
def test_web_chat_refuses_a_missing_or_wrong_token_before_reading_the_body(
    client: httpx.Client, path: str, body: bytes
) -> None:
    for headers in (JSON, {**JSON, **auth("not-a-web-token")}):
        response = client.post(path, content=body, headers=headers)
        assert response.status_code == 401, response.text
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize("body", BAD_BODIES, ids=["deep", "not-json", "not-utf8", "surrogate"])
def test_telegram_refuses_a_wrong_secret_whatever_the_body(client: httpx.Client, body: bytes) -> None:
    for secret in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
        assert client.post("/telegram/webhook", content=body, headers={**JSON, **secret}).status_code == 401


@pytest.mark.parametrize("body", BAD_BODIES, ids=["deep", "not-json", "not-utf8", "surrogate"])
def test_telegram_answers_a_body_it_cannot_read_with_400(client: httpx.Client, body: bytes) -> None:
    headers = {**JSON, "X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
    response = client.post("/telegram/webhook", content=body, headers=headers)
    assert response.status_code == 400, response.text
