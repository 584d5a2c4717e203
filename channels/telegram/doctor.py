"""``threadgate doctor`` for Telegram: the bot token asked who it is, and the webhook's secret."""

from __future__ import annotations

import asyncio

from channels.doctor import TIMEOUT_S, secret_text, unreachable
from channels.telegram.settings import TelegramSettings
from gateway.checks import Check


async def check(settings: TelegramSettings) -> list[Check]:
    """``getMe`` with the bot token, through python-telegram-bot."""
    from telegram import Bot
    from telegram.error import InvalidToken, TelegramError

    token = secret_text(settings.telegram_bot_token)
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
        checks.append(unreachable("telegram", "TELEGRAM_BASE_URL", settings.telegram_base_url, exc))
    finally:
        await bot.shutdown()
    return checks
