"""Telegram's settings (``TELEGRAM_*``): the bot token, and a webhook with its secret or long polling."""

from __future__ import annotations

from pydantic import SecretStr, field_validator

from gateway.plugins import PlatformSettings


class TelegramSettings(PlatformSettings):
    telegram_bot_token: SecretStr | None = None
    telegram_base_url: str = "https://api.telegram.org/bot"
    telegram_webhook_url: str | None = None
    telegram_webhook_secret: SecretStr | None = None

    @field_validator("telegram_webhook_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value
