"""The Slack channel: Slack threads over the HTTP Events API or Socket Mode, built on slack-bolt."""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Exported lazily: ``channels.slack.spec`` is read at every start, and must not load the platform's SDK.
_LAZY = {"SlackChannel": "channels.slack.channel"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SlackChannel"]
