"""A Slack person's direct message with the app: ``conversations.open`` names its ``D…`` conversation."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.calls import MAX_INLINE_WAIT_S, call
from gateway.sdk import ChannelError, event

_USER = re.compile(r"slack:(?P<user>[UW][A-Z0-9]{1,30})", re.ASCII)


async def direct_channel(
    client: AsyncWebClient, identity: str, *, max_wait: float = MAX_INLINE_WAIT_S
) -> str | None:
    """``slack:<D…>``, the conversation where ``identity`` and the app talk alone (a thread is started
    in it), or None when Slack will not open one (no such user, a deactivated one, a bot; logged). Needs
    the ``im:write`` scope; a missing scope is logged the same way, with what to add."""
    matched = _USER.fullmatch(identity)
    if matched is None:
        event("slack.direct_unavailable", logging.WARNING, identity=identity, reason="not a Slack user id")
        return None

    async def send() -> Any:
        return await client.conversations_open(users=matched["user"])

    try:
        response = await call("conversations.open", send, max_wait=max_wait)
    except ChannelError as exc:
        if not exc.permanent:
            raise
        event("slack.direct_unavailable", logging.WARNING, identity=identity, reason=str(exc))
        return None
    return f"slack:{response['channel']['id']}"
