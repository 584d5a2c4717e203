"""``threadgate doctor``: each configured platform's real SDK asks our local fakes who its token is."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from gateway.cli import main
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.support.redis_server import RedisServer, free_port

TOKENS = "robot:agent:agent-token-1,desk:operator:operator-token-1"


@dataclass
class Platforms:
    slack: FakeSlack
    telegram: FakeTelegram
    discord: FakeDiscord


@pytest.fixture
async def platforms() -> AsyncIterator[Platforms]:
    slack, telegram, discord = FakeSlack(), FakeTelegram("123456:fake-telegram-token"), FakeDiscord()
    await slack.start()
    await telegram.start()
    await discord.start()
    yield Platforms(slack, telegram, discord)
    await discord.stop()
    await telegram.stop()
    await slack.stop()


def configure(env: pytest.MonkeyPatch, platforms: Platforms, **overrides: str) -> None:
    values = {
        "THREADGATE_API_TOKENS": TOKENS,
        "SLACK_BOT_TOKEN": platforms.slack.bot_token,
        "SLACK_SIGNING_SECRET": platforms.slack.signing_secret,
        "SLACK_API_URL": platforms.slack.api_url,
        "TELEGRAM_BOT_TOKEN": platforms.telegram.token,
        "TELEGRAM_BASE_URL": platforms.telegram.base_url,
        "DISCORD_BOT_TOKEN": platforms.discord.token,
        "DISCORD_API_BASE_URL": platforms.discord.api_base_url,
        **overrides,
    }
    for key, value in values.items():
        env.setenv(key, value)


async def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["doctor", "--json"])
    return code, json.loads(capsys.readouterr().out)


def by_name(report: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for check in report["checks"]:
        found.setdefault(check["name"], []).append((check["status"], check["detail"]))
    return found


async def test_working_credentials_and_redis_pass(
    clean_env: pytest.MonkeyPatch,
    platforms: Platforms,
    redis_server: RedisServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(clean_env, platforms, REDIS_URL=redis_server.url)
    code, report = await doctor(capsys)
    checks = by_name(report)
    assert code == 0 and report["ok"] is True
    assert (
        checks["slack"] == [("ok", "bot token works: threadgate in team Fake Team")]
        or checks["slack"][0][0] == "ok"
    )
    assert checks["telegram"][0] == ("ok", f"bot token works: @{platforms.telegram.username}")
    assert checks["discord"][0][0] == "ok"
    assert [status for status, _ in checks["redis"]] == ["ok"]


async def test_each_wrong_credential_is_named_with_what_to_fix(
    clean_env: pytest.MonkeyPatch, platforms: Platforms, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(
        clean_env,
        platforms,
        SLACK_BOT_TOKEN="xoxb-wrong",
        TELEGRAM_BOT_TOKEN="123456:wrong-token",
        DISCORD_BOT_TOKEN="wrong.discord.token",
        REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
    )
    code, report = await doctor(capsys)
    checks = by_name(report)
    assert code == 1 and report["ok"] is False
    assert checks["slack"] == [
        ("fail", "auth.test refused SLACK_BOT_TOKEN (invalid_auth); check the bot token")
    ]
    assert checks["telegram"][0][0] == "fail" and "TELEGRAM_BOT_TOKEN" in checks["telegram"][0][1]
    assert checks["discord"][0][0] == "fail" and "DISCORD_BOT_TOKEN" in checks["discord"][0][1]
    assert checks["redis"][0][0] == "fail" and "check REDIS_URL" in checks["redis"][0][1]
    assert "wrong" not in json.dumps(report)  # never echo a secret


async def test_half_configured_slack_and_missing_tokens_are_reported(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("SLACK_SIGNING_SECRET", "a-secret")
    code, report = await doctor(capsys)
    checks = by_name(report)
    assert code == 1
    [(status, detail)] = checks["slack"]
    assert status == "fail"
    assert "SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not" in detail
    assert "such as xoxb-" in detail  # what the missing setting looks like
    [(status, detail)] = checks["api tokens"]
    assert status == "fail" and "such as my-agent:agent:<secret>" in detail
    [(status, detail)] = checks["redis"]
    assert status == "warn" and "such as redis://" in detail


async def test_unparseable_settings_say_which_variable(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_PORT", "eighty")
    code, report = await doctor(capsys)
    assert code == 1
    assert report["checks"][0]["status"] == "fail" and "THREADGATE_PORT" in report["checks"][0]["detail"]


async def test_plain_report_marks_each_check(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("THREADGATE_WEB_CHAT", "open")
    code = await asyncio.to_thread(main, ["doctor"])
    out = capsys.readouterr().out
    assert code == 0
    assert "✓ settings" in out and "! redis" in out and "! web" in out
    assert out.rstrip().endswith("all good, 2 warning(s)")


async def test_web_chat_on_without_a_token_is_a_problem(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("THREADGATE_WEB_CHAT", "true")
    code, report = await doctor(capsys)
    web = next(check for check in report["checks"] if check["name"] == "web")
    assert code == 1
    assert web["status"] == "fail" and "THREADGATE_WEB_TOKEN" in web["detail"]


async def test_an_agent_token_acting_for_every_agent_is_flagged(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", "fleet:agent:tok-1:*,ops:agent:tok-2,desk:operator:tok-3:ops")
    code, report = await doctor(capsys)
    tokens = next(check for check in report["checks"] if check["name"] == "api tokens")
    assert code == 0
    assert tokens["status"] == "warn" and "fleet act for every agent (*)" in tokens["detail"]
    assert "ops (agent for ops)" in tokens["detail"] and "desk (operator for ops)" in tokens["detail"]
    assert "tok-" not in tokens["detail"]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:{port}/",
        "http://127.0.0.1:{port}/hook",
        "http://[::1]:{port}/",
        "http://0.0.0.0:{port}",
    ],
)
async def test_a_webhook_aimed_at_redis_fails(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    port = free_port()
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    clean_env.setenv("THREADGATE_WEBHOOKS", f"https://93.184.216.34/tg,{url.format(port=port)}")
    clean_env.setenv("THREADGATE_WEBHOOK_SECRET", "whsec-test")
    clean_env.setenv("THREADGATE_WEBHOOKS_ALLOW_PRIVATE", "true")  # allowing private targets is not enough
    code, report = await doctor(capsys)
    [(status, detail)] = by_name(report)["webhooks"]
    assert code == 1 and status == "fail"
    assert "THREADGATE_WEBHOOKS" in detail and f":{port}" in detail and "REDIS_URL" in detail


async def test_a_webhook_aimed_inside_the_network_warns_unless_allowed(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    clean_env.setenv("THREADGATE_WEBHOOKS", "http://192.168.1.5/hook,http://169.254.169.254/")
    clean_env.setenv("THREADGATE_WEBHOOK_SECRET", "whsec-test")
    _, warned = await doctor(capsys)
    clean_env.setenv("THREADGATE_WEBHOOKS_ALLOW_PRIVATE", "true")
    _, allowed = await doctor(capsys)
    assert [status for status, _ in by_name(warned)["webhooks"]] == ["warn", "warn"]
    assert all("THREADGATE_WEBHOOKS_ALLOW_PRIVATE" in detail for _, detail in by_name(warned)["webhooks"])
    assert [status for status, _ in by_name(allowed)["webhooks"]] == ["ok"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_doctor_and_serve_give_one_reason_for_a_dead_redis(
    clean_env: pytest.MonkeyPatch, platforms: Platforms, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    url = f"redis://{host}:{free_port()}/0"  # nothing listens there
    configure(clean_env, platforms, REDIS_URL=url)  # the platforms' checks run beside Redis's
    _, report = await doctor(capsys)
    [(status, detail)] = by_name(report)["redis"]
    assert await asyncio.to_thread(main, ["serve", "--port", "0"]) == 8
    served = capsys.readouterr().err.strip().removeprefix("threadgate: ")
    assert (status, detail) == ("fail", served)
    assert "(connection refused)" in detail


@pytest.mark.parametrize(
    ("bad", "named"),
    [  # the core's settings and a platform's, each unparseable
        ({"THREADGATE_PORT": "eighty", "THREADGATE_WEB_POSTS_PER_NAME": "many"}, ["PORT", "POSTS"]),
        ({"THREADGATE_LEASE_TTL_MS": "1", "THREADGATE_WEB_HEARTBEAT_S": "-1"}, ["LEASE", "HEARTBEAT"]),
        ({"THREADGATE_PORT": "0", "THREADGATE_WEB_POSTS_PER_NAME": "0"}, ["PORT", "POSTS"]),
    ],
)
async def test_doctor_names_every_bad_setting_at_once(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bad: dict[str, str], named: list[str]
) -> None:
    for key, value in bad.items():
        clean_env.setenv(key, value)
    code, report = await doctor(capsys)
    said = " ".join(check["detail"] for check in report["checks"] if check["status"] == "fail").upper()
    assert code == 1
    assert all(name in said for name in named), said


def test_the_slack_app_token_hint_nests_no_parentheses() -> None:
    from channels.slack.settings import SlackSettings, check_settings

    for given in (
        {"slack_bot_token": "xoxb-1-2-abc"},
        {"slack_bot_token": "xoxb-1", "slack_app_token": "xoxb-2"},
    ):
        for check in check_settings(SlackSettings(_env_file=None, **given)):  # type: ignore[call-arg]
            depth, deepest = 0, 0
            for char in check.detail:
                depth += {"(": 1, ")": -1}.get(char, 0)
                deepest = max(deepest, depth)
            assert deepest <= 1, check.detail
