"""Telegram's updates read one at a time, so one python-telegram-bot cannot read is logged and skipped."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from telegram import Bot, Update

from gateway.sdk import event, failure

# How much longer than the long poll itself a getUpdates call may take before it counts as lost.
READ_SLACK_S = 5.0


def update_id_of(data: object) -> int | None:
    """The update's id, which its offset confirms; None when it has none."""
    if isinstance(data, dict):
        update_id = data.get("update_id")
        if isinstance(update_id, int) and not isinstance(update_id, bool):
            return update_id
    return None


def read_update(data: object, bot: Bot) -> Update | None:
    """``data`` as an Update; None (and one line naming its id, never its content) when it cannot be read."""
    try:
        if not isinstance(data, dict):
            raise TypeError("an update is a JSON object")
        return Update.de_json(data, bot)
    except Exception as exc:  # de_json raises whatever the payload's shape provokes
        log_unreadable(update_id_of(data), exc)
        return None


def log_unreadable(update_id: int | None, exc: BaseException) -> None:
    event("telegram.update.unreadable", logging.WARNING, update_id=update_id, **failure(exc))


async def fetch_updates(
    bot: Bot, offset: int | None, timeout: int, allowed_updates: Sequence[str]
) -> list[Any]:
    """One ``getUpdates`` long poll, its updates as Telegram sent them.

    ``Bot.get_updates`` parses the whole batch at once: one update it cannot read fails every poll, so the
    offset never moves past it (and the library logs the batch's content). Here each is read on its own.
    """
    params: dict[str, Any] = {"offset": offset, "timeout": timeout, "allowed_updates": list(allowed_updates)}
    result = await bot._post("getUpdates", params, read_timeout=timeout + READ_SLACK_S)
    return list(result) if isinstance(result, list) else []
