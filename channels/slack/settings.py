"""Slack's settings (``SLACK_*``): a bot token, and a signing secret (Events API) or an app token."""

from __future__ import annotations

from pydantic import SecretStr

from gateway.sdk import Check, PlatformSettings


class SlackSettings(PlatformSettings):
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"


BOT_TOKEN_EXAMPLE = "xoxb-<team>-<bot>-<secret> (the Bot User OAuth Token, under OAuth & Permissions)"
APP_TOKEN_EXAMPLE = "an app-level token with connections:write, like xapp-1-A0123-456-abc"
SIGNING_SECRET_EXAMPLE = "the Signing Secret under Basic Information"


def check_settings(settings: SlackSettings) -> list[Check]:
    """What cannot work before Slack is asked: a token of another kind, or half a configuration."""
    bot, app = settings.slack_bot_token, settings.slack_app_token
    checks = []
    if bot is not None and not bot.get_secret_value().startswith("xoxb-"):
        checks.append(
            Check.warn("slack", f"SLACK_BOT_TOKEN is not a bot token; expected {BOT_TOKEN_EXAMPLE}")
        )
    if app is not None and not app.get_secret_value().startswith("xapp-"):
        checks.append(
            Check.warn("slack", f"SLACK_APP_TOKEN is not an app-level token; expected {APP_TOKEN_EXAMPLE}")
        )
    if bot is None and (app is not None or settings.slack_signing_secret is not None):
        checks.append(
            Check.fail(
                "slack",
                "SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not, so Slack stays "
                f"off; set SLACK_BOT_TOKEN, such as {BOT_TOKEN_EXAMPLE}",
            )
        )
    if bot is not None and app is None and settings.slack_signing_secret is None:
        checks.append(
            Check.fail(
                "slack",
                "SLACK_BOT_TOKEN is set but Slack cannot reach the gateway, so Slack stays off: set "
                f"SLACK_SIGNING_SECRET ({SIGNING_SECRET_EXAMPLE}) for the Events API over HTTP, or "
                f"SLACK_APP_TOKEN ({APP_TOKEN_EXAMPLE}) for Socket Mode",
            )
        )
    return checks
