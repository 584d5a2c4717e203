"""The Telegram channel: chats and forum topics as threads, long polling or a webhook."""

from __future__ import annotations

from channels.telegram.channel import TelegramChannel
from gateway.settings import Settings


def build(settings: Settings) -> TelegramChannel:
    """The channel from ``TELEGRAM_*`` settings; a webhook URL without a valid secret is refused."""
    if settings.telegram_bot_token is None:
        raise ValueError("TELEGRAM_BOT_TOKEN is not set")
    secret = settings.telegram_webhook_secret
    return TelegramChannel(
        settings.telegram_bot_token.get_secret_value(),
        base_url=settings.telegram_base_url,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=secret.get_secret_value() if secret is not None else None,
    )


__all__ = ["TelegramChannel", "build"]
