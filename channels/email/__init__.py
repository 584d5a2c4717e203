"""The email channel: each thread a person's mailbox, prompts as mails with links, replies by mail."""

from __future__ import annotations

from gateway.sdk import lazy_exports

__getattr__ = lazy_exports(__name__, {"EmailChannel": "channels.email.channel"})
__all__ = ["EmailChannel"]
