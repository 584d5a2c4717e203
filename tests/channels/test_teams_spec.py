"""The Teams plugin's spec: its thread and identity grammar, its settings, its light import, its doctor."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import SecretStr

from channels.teams.settings import BOT_FRAMEWORK_TOKEN_URL, TeamsSettings
from channels.teams.spec import SPEC, doctor
from channels.teams.threads import thread_id_for
from tests.channels.teams_support import fake_bot_framework, teams_settings

THREADS = [
    "teams:19:4d3a1b9c0e2f4a6b8c1d3e5f7a9b0c2d@thread.tacv2;messageid=1712345678901",
    "teams:19:4d3a1b9c0e2f4a6b8c1d3e5f7a9b0c2d@thread.skype;messageid=1",
    "teams:19:8f7e6d5c4b3a29180f1e2d3c4b5a6978@thread.v2",
    "teams:19:meeting_ZmY0NjM5Y2QtY2Y1Ny00@thread.v2",
    "teams:19:0b3e5c1a-aaaa-bbbb-cccc-0123456789ab_5d0c2f4e-dddd-eeee-ffff-0123456789ab@unq.gbl.spaces",
    "teams:a:1Xq9Zr7mK2pL8vN4tB6yC0dE3fG5hJ1kM9nP7qR2sT4uV6wX8yZ0aB2cD4eF6gH8-_",
]
NOT_THREADS = [
    "teams:",
    "teams:19:abc",  # no @domain
    "teams:19:abc@thread.v2;messageid=",
    "teams:19:abc@thread.v2;messageid=12a",
    "teams:19:abc@thread.v2;messageid=1;messageid=2",
    "teams:19:a b@thread.v2",
    "teams:19:abc@thread.v2\n",
    "teams:19:abc/../x@thread.v2",
    "teams:19:abc@thread.v2?x=1",
    "teams:19:abc@thread.v2#x",
    "teams:19:abc%2F@thread.v2",
    "teams:a:",
    "teams:a:abc:def",
    "teams:8:orgid:0b3e5c1a",
    "teams:29:1xyz",
    "teams:19:١٢٣@thread.v2",  # other scripts' digits and letters
    "teams:a:" + "x" * 181,
]


@pytest.mark.parametrize("thread_id", THREADS)
def test_teams_conversation_ids_are_thread_ids_that_fit_in_one_path_segment(thread_id: str) -> None:
    assert SPEC.threads.fullmatch(thread_id)
    assert len(thread_id) <= 200  # a run's thread_id field
    assert not set(thread_id) & set(" \t\n/?#%\\")


@pytest.mark.parametrize("thread_id", NOT_THREADS)
def test_anything_else_is_not_a_teams_thread_id(thread_id: str) -> None:
    assert SPEC.threads.fullmatch(thread_id) is None


def test_a_channel_is_a_channel_reference_and_its_threads_carry_their_root() -> None:
    assert SPEC.channels.fullmatch("teams:19:4d3a1b9c0e2f4a6b8c1d3e5f7a9b0c2d@thread.tacv2")
    assert SPEC.channels.fullmatch("teams:19:abc@thread.tacv2;messageid=1") is None
    match = SPEC.threads.fullmatch(THREADS[0])
    assert match is not None and match["root"] == "1712345678901"


def test_a_root_post_in_a_channel_starts_its_own_thread() -> None:
    channel = "19:abc@thread.tacv2"
    assert thread_id_for(channel, "channel", "1712345678999") == f"teams:{channel};messageid=1712345678999"
    assert thread_id_for(f"{channel};messageid=1", "channel", "2") == f"teams:{channel};messageid=1"
    assert thread_id_for("19:abc@thread.v2", "groupChat", "3") == "teams:19:abc@thread.v2"


@pytest.mark.parametrize(
    ("identity", "ok"),
    [
        ("teams:0b3e5c1a-1234-4abc-9def-0123456789ab", True),
        ("teams:0B3E5C1A-1234-4ABC-9DEF-0123456789AB", False),  # one spelling: lower case
        ("teams:29:1xyz", False),
        ("teams:0b3e5c1a12344abc9def0123456789ab", False),
    ],
)
def test_people_are_their_aad_object_ids(identity: str, ok: bool) -> None:
    assert bool(SPEC.people.fullmatch(identity)) is ok


def test_the_spec_module_imports_no_platform_sdk() -> None:
    code = "import sys, channels.teams.spec; print(any(m.startswith('microsoft_teams') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_token_url_follows_the_tenant() -> None:
    assert TeamsSettings(_env_file=None).token_url == BOT_FRAMEWORK_TOKEN_URL
    single = TeamsSettings(_env_file=None, teams_tenant_id="contoso.onmicrosoft.com")
    assert single.token_url == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
    with pytest.raises(ValueError):
        TeamsSettings(_env_file=None, teams_tenant_id="evil/../x")


def test_enabled_needs_both_credentials() -> None:
    assert not SPEC.enabled(TeamsSettings(_env_file=None, teams_app_id="x"))
    assert SPEC.enabled(TeamsSettings(_env_file=None, teams_app_id="x", teams_app_password="y"))


async def test_doctor_fetches_a_token_and_says_what_failed() -> None:
    async with fake_bot_framework() as fake:
        settings = teams_settings(fake)
        [ok] = await doctor(settings)
        assert ok.status == "ok"
        wrong = settings.model_copy(update={"teams_app_password": SecretStr("nope")})
        [failed] = await doctor(wrong)
        assert (
            failed.status == "fail"
            and "invalid_client" in failed.detail
            and "TEAMS_APP_PASSWORD" in failed.detail
        )
    [unreachable] = await doctor(settings)
    assert unreachable.status == "fail" and "could not be reached" in unreachable.detail
    assert await doctor(TeamsSettings(_env_file=None)) == []


def test_empty_variables_keep_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """``.env.example`` lists every knob empty: an empty one means the default, not an empty URL."""
    monkeypatch.setenv("TEAMS_OPENID_METADATA_URL", "")
    monkeypatch.setenv("TEAMS_SERVICE_URL", "")
    settings = TeamsSettings(_env_file=None)
    assert settings.teams_openid_metadata_url.startswith("https://login.botframework.com/")
    assert settings.teams_service_url == "https://smba.trafficmanager.net/teams/"
