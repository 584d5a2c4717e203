"""``threadgate doctor`` for Slack: the bot token (and the app token) asked who they are."""

from __future__ import annotations

from channels.doctor import TIMEOUT_S, secret_text, unreachable
from channels.slack.settings import APP_TOKEN_EXAMPLE, SlackSettings
from gateway.checks import Check


async def check(settings: SlackSettings) -> list[Check]:
    """``auth.test`` with the bot token; ``apps.connections.open`` with the app token when one is set."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    bot, app = secret_text(settings.slack_bot_token), secret_text(settings.slack_app_token)
    if not bot:
        return []  # nothing to ask Slack; check_settings says what is missing
    checks: list[Check] = []
    client = AsyncWebClient(token=bot, base_url=settings.slack_api_url, timeout=int(TIMEOUT_S))
    try:
        who = await client.auth_test()
        checks.append(Check.ok("slack", f"bot token works: {who.get('user')} in team {who.get('team')}"))
    except SlackApiError as exc:
        error = exc.response.get("error", "refused")
        checks.append(
            Check.fail("slack", f"auth.test refused SLACK_BOT_TOKEN ({error}); check the bot token")
        )
    except Exception as exc:
        checks.append(unreachable("slack", "SLACK_API_URL", settings.slack_api_url, exc))
    if app:
        app_client = AsyncWebClient(token=app, base_url=settings.slack_api_url, timeout=int(TIMEOUT_S))
        try:
            await app_client.apps_connections_open(app_token=app)
            checks.append(Check.ok("slack", "app token works: Socket Mode can connect"))
        except SlackApiError as exc:
            error = exc.response.get("error", "refused")
            checks.append(
                Check.fail(
                    "slack",
                    f"apps.connections.open refused SLACK_APP_TOKEN ({error}); it needs {APP_TOKEN_EXAMPLE}",
                )
            )
        except Exception as exc:
            checks.append(unreachable("slack", "SLACK_API_URL", settings.slack_api_url, exc))
    return checks
