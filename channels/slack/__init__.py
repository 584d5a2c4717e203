"""The Slack channel: Slack threads over the HTTP Events API or Socket Mode, built on slack-bolt."""

from __future__ import annotations

from channels.slack.channel import SlackChannel
from gateway.settings import Settings


def build(settings: Settings) -> SlackChannel:
    """The Slack channel from ``SLACK_*`` settings (contract §4)."""
    if settings.slack_bot_token is None:
        raise ValueError("SLACK_BOT_TOKEN is not set")
    secret = settings.slack_signing_secret
    app_token = settings.slack_app_token
    return SlackChannel(
        settings.slack_bot_token.get_secret_value(),
        signing_secret=secret.get_secret_value() if secret else None,
        app_token=app_token.get_secret_value() if app_token else None,
        api_url=settings.slack_api_url,
    )


__all__ = ["SlackChannel", "build"]
