"""Telegram as a Threadgate platform: its grammar, settings and checks. Imports no Telegram SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from channels.telegram.settings import TelegramSettings, check_settings
from gateway.sdk import channel_spec, lazy_doctor, when_set

if TYPE_CHECKING:
    from channels.telegram.channel import TelegramChannel

# A chat, or a forum topic inside it: the same grammar names a thread and a channel reference.
_CHAT = r"telegram:(?P<chat>-?\d{1,20})(?::(?P<topic>\d{1,12}))?"


def build(settings: TelegramSettings) -> TelegramChannel:
    """The channel from ``TELEGRAM_*`` settings; a webhook URL without a valid secret is refused."""
    from channels.telegram.channel import TelegramChannel

    if settings.telegram_bot_token is None:
        raise ValueError("TELEGRAM_BOT_TOKEN is not set")
    secret = settings.telegram_webhook_secret
    return TelegramChannel(
        settings.telegram_bot_token.get_secret_value(),
        base_url=settings.telegram_base_url,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=secret.get_secret_value() if secret is not None else None,
    )


SPEC = channel_spec(
    "telegram",
    "Telegram",
    TelegramSettings,
    threads=_CHAT,
    thread_example="telegram:<chat_id>[:<topic_id>]",
    person_example="telegram:123456789",
    enabled=when_set("telegram_bot_token"),
    build=build,
    doctor=lazy_doctor("channels.telegram.doctor"),
    check_settings=check_settings,
    secrets=(r"\d{6,12}:[A-Za-z0-9_-]{30,}",),
    extra="telegram",
    direct_messages=True,  # a person and the bot alone: where a link code may be typed
)
