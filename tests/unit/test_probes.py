"""A platform's doctor probe: an answer is ok, a refusal names the setting, anything else is out of reach."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from pydantic import SecretStr

from gateway.base.checks import Check
from gateway.process import probes
from gateway.process.probes import probe, secret_text


class Refused(Exception):
    pass


def answering(value: object) -> Callable[[], Awaitable[object]]:
    async def ask() -> object:
        return value

    return ask


def raising(exc: BaseException) -> Callable[[], Awaitable[object]]:
    async def ask() -> object:
        raise exc

    return ask


async def run(ask: Callable[[], Awaitable[object]]) -> Check:
    return await probe(
        "chat",
        ask,
        lambda me: f"token works: {me}",
        (Refused,),
        lambda exc: f"chat refused CHAT_TOKEN ({exc}); check the token",
        ("CHAT_URL", "https://chat.example/api"),
    )


@pytest.mark.parametrize(
    ("ask", "status", "detail"),
    [
        (answering("bot"), "ok", "token works: bot"),
        (raising(Refused("invalid_auth")), "fail", "chat refused CHAT_TOKEN (invalid_auth); check the token"),
        (
            raising(OSError("connection refused")),
            "fail",
            "could not reach https://chat.example/api (connection refused); check the network or CHAT_URL",
        ),
        (
            raising(ValueError()),
            "fail",
            "could not reach https://chat.example/api (ValueError); check the network or CHAT_URL",
        ),
    ],
)
async def test_an_answer_is_ok_a_refusal_names_the_setting_and_anything_else_is_out_of_reach(
    ask: Callable[[], Awaitable[object]], status: str, detail: str
) -> None:
    assert await run(ask) == Check("chat", status, detail)  # type: ignore[arg-type]


async def test_a_service_that_never_answers_is_out_of_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes, "PROBE_TIMEOUT_S", 0.01)

    check = await run(asyncio.Event().wait)

    assert check.status == "fail" and "(TimeoutError); check the network or CHAT_URL" in check.detail


def test_an_unreachable_reason_never_carries_a_secret() -> None:
    token = "xoxb-" + "123-456-abcdef"  # built here, so no token-shaped literal sits in the repository
    check = probes.unreachable("chat", "CHAT_URL", "https://chat.example", OSError(f"Bearer {token}"))
    assert token not in check.detail


@pytest.mark.parametrize(("value", "text"), [(None, ""), (SecretStr("s3"), "s3")])
def test_a_secret_settings_text_is_empty_when_unset(value: object, text: str) -> None:
    assert secret_text(value) == text
