"""Telegram as a Threadgate platform: its grammar, settings and checks. Imports no Telegram SDK."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from channels.telegram.settings import TelegramSettings, check_settings
from gateway.plugins import ChannelSpec, lazy_doctor

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


def enabled(settings: TelegramSettings) -> bool:
    return settings.telegram_bot_token is not None


SPEC = ChannelSpec(
    name="telegram",
    title="Telegram",
    threads=re.compile(_CHAT, re.ASCII),
    channels=re.compile(_CHAT, re.ASCII),
    people=re.compile(r"telegram:[^\s]{1,128}"),
    thread_example="telegram:<chat_id>[:<topic_id>]",
    channel_example="telegram:<chat_id>[:<topic_id>]",
    person_example="telegram:123456789",
    settings=TelegramSettings,
    enabled=enabled,
    build=build,
    doctor=lazy_doctor("channels.telegram.doctor"),
    check_settings=check_settings,
    secrets=(re.compile(r"\d{6,12}:[A-Za-z0-9_-]{30,}"),),
)
