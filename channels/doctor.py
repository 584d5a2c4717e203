"""Credential checks for ``threadgate doctor``: each configured platform's own SDK asks who its token is."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.checks import Check
from gateway.logs import redact
from gateway.settings import Settings

TIMEOUT_S = 10.0


def _secret(value: Any) -> str:
    return str(value.get_secret_value()) if value is not None else ""


def _unreachable(platform: str, knob: str, url: str, exc: BaseException) -> Check:
    reason = redact(str(exc)) or type(exc).__name__
    return Check.fail(platform, f"could not reach {url} ({reason}); check the network or {knob}")


async def check_slack(settings: Settings) -> list[Check]:
    """``auth.test`` with the bot token; ``apps.connections.open`` with the app token when one is set."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    bot, app, secret = (
        _secret(settings.slack_bot_token),
        _secret(settings.slack_app_token),
        _secret(settings.slack_signing_secret),
    )
    if not (bot or app or secret):
        return []
    if not bot:
        return [
            Check.fail("slack", "SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not")
        ]
    checks: list[Check] = []
    if not (secret or app):
        checks.append(
            Check.fail(
                "slack",
                "SLACK_BOT_TOKEN is set but Slack cannot reach the gateway: set SLACK_SIGNING_SECRET "
                "(Events API over HTTP) or SLACK_APP_TOKEN (Socket Mode)",
            )
        )
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
        checks.append(_unreachable("slack", "SLACK_API_URL", settings.slack_api_url, exc))
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
                    f"apps.connections.open refused SLACK_APP_TOKEN ({error}); it needs an app-level "
                    "token (xapp-…) with the connections:write scope",
                )
            )
        except Exception as exc:
            checks.append(_unreachable("slack", "SLACK_API_URL", settings.slack_api_url, exc))
    return checks


async def check_telegram(settings: Settings) -> list[Check]:
    """``getMe`` with the bot token, through python-telegram-bot."""
    from telegram import Bot
    from telegram.error import InvalidToken, TelegramError

    token = _secret(settings.telegram_bot_token)
    if not token:
        return []
    checks: list[Check] = []
    if settings.telegram_webhook_url and settings.telegram_webhook_secret is None:
        checks.append(
            Check.warn(
                "telegram",
                "TELEGRAM_WEBHOOK_URL is set without TELEGRAM_WEBHOOK_SECRET: anyone who finds the URL "
                "could post updates; set a secret",
            )
        )
    bot = Bot(token, base_url=settings.telegram_base_url)
    try:
        async with asyncio.timeout(TIMEOUT_S):
            me = await bot.get_me()
        checks.append(Check.ok("telegram", f"bot token works: @{me.username}"))
    except InvalidToken:
        checks.append(
            Check.fail("telegram", "getMe refused TELEGRAM_BOT_TOKEN; copy it again from @BotFather")
        )
    except (TelegramError, TimeoutError, OSError) as exc:
        checks.append(_unreachable("telegram", "TELEGRAM_BASE_URL", settings.telegram_base_url, exc))
    finally:
        await bot.shutdown()
    return checks


async def check_discord(settings: Settings) -> list[Check]:
    """``GET /users/@me`` with the bot token, through discord.py's own HTTP client."""
    import discord

    from channels.discord.channel import point_discord_py_at

    token = _secret(settings.discord_bot_token)
    if not token:
        return []
    point_discord_py_at(settings.discord_api_base_url, settings.discord_gateway_url)
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    try:
        async with asyncio.timeout(TIMEOUT_S):
            me = await http.static_login(token)
        return [Check.ok("discord", f"bot token works: {me.get('username')}")]
    except discord.LoginFailure:
        return [Check.fail("discord", "Discord refused DISCORD_BOT_TOKEN; reset it in the developer portal")]
    except (discord.HTTPException, TimeoutError, OSError) as exc:
        return [_unreachable("discord", "DISCORD_API_BASE_URL", settings.discord_api_base_url, exc)]
    finally:
        await http.close()


async def check_platforms(settings: Settings) -> list[Check]:
    """Every configured platform's checks, run side by side."""
    results = await asyncio.gather(check_slack(settings), check_telegram(settings), check_discord(settings))
    return [check for checks in results for check in checks]
