"""Slack's settings (``SLACK_*``): a bot token, and a signing secret (Events API) or an app token."""

from __future__ import annotations

from pydantic import SecretStr

from gateway.plugins import PlatformSettings


class SlackSettings(PlatformSettings):
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"

