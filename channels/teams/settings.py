"""The Teams channel's settings (``TEAMS_*``), read from the environment and ``.env``."""

from __future__ import annotations

from pydantic import Field, SecretStr

from gateway.sdk import PlatformSettings

BOT_FRAMEWORK_METADATA = "https://login.botframework.com/v1/.well-known/openidconfiguration"
BOT_FRAMEWORK_TOKEN_URL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
GLOBAL_SERVICE_URL = "https://smba.trafficmanager.net/teams/"


class TeamsSettings(PlatformSettings):
    """The Azure bot's credentials and the Bot Framework endpoints it talks to."""

    teams_app_id: str | None = None
    teams_app_password: SecretStr | None = None
    # Single-tenant apps get their token from their own tenant; unset = multi-tenant.
    teams_tenant_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9.-]{1,100}$")
    teams_openid_metadata_url: str = BOT_FRAMEWORK_METADATA
    teams_token_url: str | None = None  # unset: the Bot Framework's, or the tenant's when one is set
    # Where replies go for a conversation this process has not heard from since it started.
    teams_service_url: str = GLOBAL_SERVICE_URL

    @property
    def token_url(self) -> str:
        if self.teams_token_url:
            return self.teams_token_url
        if self.teams_tenant_id:
            return f"https://login.microsoftonline.com/{self.teams_tenant_id}/oauth2/v2.0/token"
        return BOT_FRAMEWORK_TOKEN_URL

    @property
    def enabled(self) -> bool:
        return bool(self.teams_app_id) and self.teams_app_password is not None
