"""``threadgate doctor`` for Telegram: the bot token asked who it is, and the webhook's secret."""

from __future__ import annotations

from channels.telegram.settings import TelegramSettings
from gateway.sdk import Check, probe, secret_text


async def check(settings: TelegramSettings) -> list[Check]:
    """``getMe`` with the bot token, through python-telegram-bot."""
    from telegram import Bot
    from telegram.error import InvalidToken

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
        checks.append(
            await probe(
                "telegram",
                bot.get_me,
                lambda me: f"bot token works: @{me.username}",
                (InvalidToken,),
                lambda _: "getMe refused TELEGRAM_BOT_TOKEN; copy it again from @BotFather",
                ("TELEGRAM_BASE_URL", settings.telegram_base_url),
            )
        )
    finally:
        await bot.shutdown()
    return checks
