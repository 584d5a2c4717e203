"""Slack as a Threadgate platform: its grammar, settings and checks. Imports no Slack SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from channels.slack.settings import SlackSettings, check_settings
from gateway.sdk import channel_spec, lazy_doctor

if TYPE_CHECKING:
    from channels.slack.channel import SlackChannel


def build(settings: SlackSettings) -> SlackChannel:
    """The Slack channel from ``SLACK_*`` settings (contract §4)."""
    from channels.slack.channel import SlackChannel

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


def enabled(settings: SlackSettings) -> bool:
    """A bot token, and a way for Slack to reach the gateway (a signing secret or an app token)."""
    return settings.slack_bot_token is not None and (
        settings.slack_signing_secret is not None or settings.slack_app_token is not None
    )


SPEC = channel_spec(
    "slack",
    "Slack",
    SlackSettings,
    threads=r"slack:(?P<channel>[A-Z0-9]{2,32}):(?P<ts>\d{1,12}\.\d{1,9})",
    channels=r"slack:(?P<channel>[A-Z0-9]{2,32})",
    thread_example="slack:<channel_id>:<thread_ts>",
    channel_example="slack:<channel_id>",
    person_example="slack:U0123ABC",
    enabled=enabled,
    build=build,
    doctor=lazy_doctor("channels.slack.doctor"),
    check_settings=check_settings,
    secrets=(r"xox[abpe]-[0-9A-Za-z-]+", r"xapp-[0-9A-Za-z-]+"),
    extra="slack",
    direct_messages=True,  # a person and the bot alone: where a link code may be typed
)
