"""How a Slack modal shows what came of it: a notice in place of the modal, or an input's error. Pure."""

from __future__ import annotations

from typing import Any

from channels.slack.controls import plain

BUSY_ERROR = "The answer could not be checked just now; please submit again."


def notice_view(text: str) -> dict[str, Any]:
    """A modal replaced by a notice: what happened, and a Close button."""
    return {
        "type": "modal",
        "title": plain("Answer"),
        "close": plain("Close"),
        "blocks": [{"type": "section", "text": plain(text)}],
    }
