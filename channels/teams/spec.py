"""Microsoft Teams as a platform plugin: its id grammar, settings, builder and doctor check.

Light on purpose: the Teams SDK is imported only when the channel is built or checked.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from channels.teams.settings import TeamsSettings
from channels.teams.tenants import check_settings
from channels.teams.threads import (
    CHANNEL_EXAMPLE,
    CHANNELS,
    PEOPLE,
    PERSON_EXAMPLE,
    THREAD_EXAMPLE,
    THREADS,
)
from gateway.sdk import ChannelSpec, Check

if TYPE_CHECKING:
    from channels.teams.channel import TeamsChannel


def build(settings: TeamsSettings) -> TeamsChannel:
    """The Teams channel from ``TEAMS_*`` settings (contract §4)."""
    from channels.teams.auth import ConnectorAuth
    from channels.teams.channel import TeamsChannel
    from channels.teams.connector import Connector

    if not settings.teams_app_id or settings.teams_app_password is None:
        raise ValueError("TEAMS_APP_ID and TEAMS_APP_PASSWORD must both be set")
    auth = ConnectorAuth(settings.teams_app_id, settings.teams_openid_metadata_url)
    connector = Connector(
        settings.teams_app_id,
        settings.teams_app_password.get_secret_value(),
        settings.token_url,
        settings.teams_service_url,
    )
    return TeamsChannel(auth, connector, settings.teams_tenant_id)


async def doctor(settings: TeamsSettings) -> list[Check]:
    """Fetch a Bot Connector token with the app's credentials, and say what failed if it cannot."""
    if not settings.teams_app_id and settings.teams_app_password is None:
        return []
    if not settings.teams_app_id or settings.teams_app_password is None:
        return [
            Check.fail(
                "teams",
                "set both TEAMS_APP_ID and TEAMS_APP_PASSWORD (the Azure bot's app id, such as "
                "00000000-0000-0000-0000-000000000000, and its client secret)",
            )
        ]
    import httpx

    from channels.teams.connector import TIMEOUT_S, Tokens
    from gateway.sdk import ChannelError

    async with httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        tokens = Tokens(
            http, settings.token_url, settings.teams_app_id, settings.teams_app_password.get_secret_value()
        )
        try:
            await tokens.fetch()
        except ChannelError as exc:
            hint = (
                "check TEAMS_APP_ID, TEAMS_APP_PASSWORD and TEAMS_TENANT_ID"
                if exc.permanent
                else ("check the network or TEAMS_TOKEN_URL")
            )
            return [Check.fail("teams", f"no token from {settings.token_url}: {exc}; {hint}")]
    return [Check.ok("teams", f"the app's credentials work: a Bot Connector token from {settings.token_url}")]


SPEC = ChannelSpec(
    name="teams",
    title="Microsoft Teams",
    threads=THREADS,
    channels=CHANNELS,
    people=PEOPLE,
    thread_example=THREAD_EXAMPLE,
    channel_example=CHANNEL_EXAMPLE,
    person_example=PERSON_EXAMPLE,
    settings=TeamsSettings,
    enabled=lambda settings: bool(settings.enabled),
    build=build,
    doctor=doctor,
    check_settings=check_settings,
    # Bot Connector access tokens are JWTs; client secrets are not shaped enough to match safely.
    secrets=(re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),),
    extra="teams",
    direct_messages=True,  # a person and the bot alone: where a link code may be typed
)
