"""The Slack channel: Slack threads over the HTTP Events API or Socket Mode, built on slack-bolt."""

from __future__ import annotations

from gateway.sdk import lazy_exports

__getattr__ = lazy_exports(__name__, {"SlackChannel": "channels.slack.channel"})
__all__ = ["SlackChannel"]
