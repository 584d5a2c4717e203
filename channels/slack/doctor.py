"""``threadgate doctor`` for Slack: the bot token (and the app token) asked who they are."""

from __future__ import annotations

from channels.slack.settings import APP_TOKEN_EXAMPLE, SlackSettings
from gateway.sdk import PROBE_TIMEOUT_S, Check, probe, secret_text


async def check(settings: SlackSettings) -> list[Check]:
    """``auth.test`` with the bot token; ``apps.connections.open`` with the app token when one is set."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    bot, app = secret_text(settings.slack_bot_token), secret_text(settings.slack_app_token)
    if not bot:
        return []  # nothing to ask Slack; check_settings says what is missing
    checks: list[Check] = []

    def client(token: str) -> AsyncWebClient:
        return AsyncWebClient(token=token, base_url=settings.slack_api_url, timeout=int(PROBE_TIMEOUT_S))

    def error(exc: BaseException) -> object:
        return exc.response.get("error", "refused") if isinstance(exc, SlackApiError) else "refused"

    where = ("SLACK_API_URL", settings.slack_api_url)
    checks.append(
        await probe(
            "slack",
            client(bot).auth_test,
            lambda who: f"bot token works: {who.get('user')} in team {who.get('team')}",
            (SlackApiError,),
            lambda exc: f"auth.test refused SLACK_BOT_TOKEN ({error(exc)}); check the bot token",
            where,
        )
    )
    if app:
        checks.append(
            await probe(
                "slack",
                lambda: client(app).apps_connections_open(app_token=app),
                lambda _: "app token works: Socket Mode can connect",
                (SlackApiError,),
                lambda exc: (
                    f"apps.connections.open refused SLACK_APP_TOKEN ({error(exc)}); "
                    f"it needs {APP_TOKEN_EXAMPLE}"
                ),
                where,
            )
        )
    return checks
