"""Telegram's settings (``TELEGRAM_*``): the bot token, and a webhook with its secret or long polling."""

from __future__ import annotations

import re

from pydantic import SecretStr, field_validator

from gateway.sdk import Check, PlatformSettings

BOT_TOKEN = re.compile(r"\d{1,20}:[A-Za-z0-9_-]{1,200}", re.ASCII)
BOT_TOKEN_EXAMPLE = "123456789:<secret> (the bot's id, a colon and its secret, as @BotFather gives it)"


class TelegramSettings(PlatformSettings):
    telegram_bot_token: SecretStr | None = None
    telegram_base_url: str = "https://api.telegram.org/bot"
    telegram_webhook_url: str | None = None
    telegram_webhook_secret: SecretStr | None = None

    @field_validator("telegram_webhook_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value


def check_settings(settings: TelegramSettings) -> list[Check]:
    """A bot token of another shape cannot work: Telegram's is ``<digits>:<secret>``."""
    token = settings.telegram_bot_token
    if token is not None and not BOT_TOKEN.fullmatch(token.get_secret_value().strip()):
        return [
            Check.warn("telegram", f"TELEGRAM_BOT_TOKEN is not a bot token; expected {BOT_TOKEN_EXAMPLE}")
        ]
    return []
