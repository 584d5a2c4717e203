"""The Telegram channel: chats and forum topics as threads, long polling or a webhook."""

from __future__ import annotations

from gateway.sdk import lazy_exports

__getattr__ = lazy_exports(__name__, {"TelegramChannel": "channels.telegram.channel"})
__all__ = ["TelegramChannel"]
