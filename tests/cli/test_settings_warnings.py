"""Settings that cannot work are said at start (``serve``) and by ``doctor``, each with an example of what
is expected; the platform's own package decides what its tokens look like."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from gateway.cli import main
from gateway.process import serving
from gateway.process.doctor import diagnose

TOKENS = "robot:agent:agent-token-1,desk:operator:operator-token-1"

# (variable, a value of the wrong shape, a value of the right shape, what the message shows as expected)
SHAPES = [
    ("SLACK_BOT_TOKEN", "xoxp-1-2-user", "xoxb-9-9-z", "xoxb-"),
    ("SLACK_BOT_TOKEN", "xapp-1-A0123-456-abc", "xoxb-9-9-z", "xoxb-"),
    ("SLACK_APP_TOKEN", "xoxb-9-9-z", "xapp-1-A0123-456-abc", "xapp-"),
    (
        "TELEGRAM_BOT_TOKEN",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        "123456789:AAHdqTcvCH1vGWJxf",
        "123456789:<",
    ),
    ("TELEGRAM_BOT_TOKEN", "bot123456:abc", "42:abc_DEF-1", "123456789:<"),
    ("DISCORD_BOT_TOKEN", "MTA1OTk2NzQ2", "MTA1.GhIjKl.AbCd-ef_GH", "three dot-separated parts"),
    ("DISCORD_BOT_TOKEN", "a.b", "a.b.c", "three dot-separated parts"),
]


class Announcing:
    """Stands in for the server: accepts at once, so ``serve`` prints its banner and returns."""

    def __init__(self, config: Any, runtime: Any, announce: Any) -> None:
        self.announce = announce

    def run(self, sockets: list[socket.socket]) -> None:
        self.announce()


@pytest.fixture
def serve(clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    clean_env.setattr(serving, "DrainingServer", Announcing)

    def run(**env: str) -> list[str]:
        for key, value in env.items():
            clean_env.setenv(key, value)
        assert main(["serve", "--port", "0"]) == 0
        return [line for line in capsys.readouterr().out.splitlines() if line.startswith("Warning: ")]

    return run


def _pair(variable: str) -> dict[str, str]:
    """What makes the platform's other settings complete, so only the token's shape is in question."""
    if variable == "SLACK_BOT_TOKEN":
        return {"SLACK_SIGNING_SECRET": "a-signing-secret"}
    if variable == "SLACK_APP_TOKEN":
        return {"SLACK_BOT_TOKEN": "xoxb-1-2-abc"}
    return {}


@pytest.mark.parametrize(("variable", "wrong", "right", "expected"), SHAPES)
def test_serve_names_a_token_of_the_wrong_shape_with_the_shape_expected(
    serve: Any, variable: str, wrong: str, right: str, expected: str
) -> None:
    warned = serve(THREADGATE_API_TOKENS=TOKENS, REDIS_URL="", **_pair(variable), **{variable: wrong})
    [line] = [line for line in warned if variable in line]
    assert f"{variable} is not " in line and expected in line.split("expected", 1)[1]
    assert wrong not in line  # never echo a secret
    assert not [line for line in serve(**{variable: right}) if variable in line and " is not " in line]


@pytest.mark.parametrize(("variable", "wrong", "right", "expected"), SHAPES)
async def test_doctor_warns_about_the_same_shapes(
    clean_env: pytest.MonkeyPatch, variable: str, wrong: str, right: str, expected: str
) -> None:
    clean_env.setenv("THREADGATE_API_TOKENS", TOKENS)
    for key, value in {**_pair(variable), variable: wrong}.items():
        clean_env.setenv(key, value)
    findings = [check for check in await _offline(variable) if f"{variable} is not " in check.detail]
    assert [check.status for check in findings] == ["warn"]
    assert wrong not in findings[0].detail


async def _offline(variable: str) -> list[Any]:
    """The doctor's checks of the platform the variable belongs to (its offline checks come first)."""
    from gateway.delivery.plugins import settings_checks, spec_for
    from gateway.process.doctor import load_settings

    settings, _ = load_settings()
    assert settings is not None
    spec = spec_for(variable.split("_", 1)[0].lower())
    assert spec is not None
    return settings_checks(spec, settings)


def test_serve_without_api_tokens_warns_that_every_call_will_be_refused(serve: Any) -> None:
    [tokens] = [line for line in serve() if "THREADGATE_API_TOKENS" in line]
    assert "every API call will be refused" in tokens and "such as my-agent:agent:<secret>" in tokens


@pytest.mark.parametrize(
    ("env", "missing", "example"),
    [
        (
            {"SLACK_BOT_TOKEN": "xoxb-1-2-abc"},
            "SLACK_SIGNING_SECRET",
            "Signing Secret under Basic Information",
        ),
        ({"SLACK_BOT_TOKEN": "xoxb-1-2-abc"}, "SLACK_APP_TOKEN", "xapp-1-A0123-456-abc"),
        ({"SLACK_SIGNING_SECRET": "s"}, "SLACK_BOT_TOKEN", "xoxb-<team>-<bot>-<secret>"),
        ({"SLACK_APP_TOKEN": "xapp-1-A-2-b"}, "SLACK_BOT_TOKEN", "xoxb-<team>-<bot>-<secret>"),
    ],
)
def test_half_a_slack_configuration_is_named_with_an_example_of_what_is_missing(
    serve: Any, env: dict[str, str], missing: str, example: str
) -> None:
    [line] = [line for line in serve(THREADGATE_API_TOKENS=TOKENS, **env) if "Slack stays off" in line]
    advice = line.split("Slack stays off", 1)[1]
    assert missing in advice and example in advice


async def test_doctor_reports_settings_that_cannot_work_before_any_platform_is_asked(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("TELEGRAM_BOT_TOKEN", "not-a-telegram-token")
    clean_env.setenv("TELEGRAM_BASE_URL", "http://127.0.0.1:1/bot")  # nothing there: getMe fails
    checks = [check for check in await diagnose() if check.name == "telegram"]
    assert checks[0].status == "warn" and "TELEGRAM_BOT_TOKEN is not a bot token" in checks[0].detail
    assert checks[1].status == "fail"  # and the platform is still asked
