"""Sign-in settings (contract §10): a session secret is required with an issuer, and says so in one line
at ``threadgate serve`` and in ``threadgate doctor``; ``THREADGATE_OAUTH_CLIENTS`` is parsed or named."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from gateway.base.settings import Settings, settings_problems
from gateway.cli import main

ISSUER = "https://login.example.com/realms/acme"


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_an_issuer_without_a_session_secret_is_refused_in_one_line() -> None:
    with pytest.raises(ValidationError) as refused:
        settings(
            threadgate_oidc_issuer=ISSUER, threadgate_oidc_client_id="tg", threadgate_oidc_client_secret="s"
        )
    line = settings_problems(refused.value)
    assert line.startswith("THREADGATE_SESSION_SECRET is required when THREADGATE_OIDC_ISSUER is set")
    assert "\n" not in line


def test_sign_in_is_on_with_issuer_client_and_secret() -> None:
    found = settings(
        threadgate_oidc_issuer=ISSUER,
        threadgate_oidc_client_id="tg",
        threadgate_oidc_client_secret="s",
        threadgate_session_secret="x" * 32,
    )
    assert found.signin_configured()
    assert found.threadgate_oidc_scopes == "openid email profile"
    assert found.threadgate_oidc_groups_claim == "groups"
    assert found.threadgate_session_hours == 12
    assert not settings().signin_configured()
    assert "s" not in repr(found.threadgate_oidc_client_secret)


def test_oauth_clients_map_client_ids_to_agents() -> None:
    found = settings(threadgate_oauth_clients="claude:ops|deploy, api://inspector:ops")
    assert found.oauth_clients() == {
        "claude": frozenset({"ops", "deploy"}),
        "api://inspector": frozenset({"ops"}),
    }


@pytest.mark.parametrize("value", ["claude", ":ops", "claude:ops|bad agent"])
def test_a_malformed_oauth_clients_entry_is_named(value: str) -> None:
    with pytest.raises(ValidationError) as refused:
        settings(threadgate_oauth_clients=value)
    assert "THREADGATE_OAUTH_CLIENTS entry 1" in settings_problems(refused.value)


def test_an_issuer_that_is_not_a_url_is_refused() -> None:
    with pytest.raises(ValidationError) as refused:
        settings(threadgate_oidc_issuer="accounts.google.com", threadgate_session_secret="x")
    assert "THREADGATE_OIDC_ISSUER" in settings_problems(refused.value)


def test_serve_refuses_an_issuer_without_a_session_secret(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_OIDC_ISSUER", ISSUER)
    code = main(["serve", "--port", "0"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "THREADGATE_SESSION_SECRET is required" in err and "\n" not in err


async def test_doctor_reports_a_missing_session_secret(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_OIDC_ISSUER", ISSUER)
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    failed = [check for check in report["checks"] if check["status"] == "fail"]
    assert any("THREADGATE_SESSION_SECRET" in check["detail"] for check in failed)
