"""Starting a Slack thread for an agent session: a top-level message whose ts names the thread."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.calls import MAX_INLINE_WAIT_S, call
from channels.slack.render import render_notice
from gateway.sdk import ThreadRef


async def start_thread(
    client: AsyncWebClient, channel: ThreadRef, text: str, *, max_wait: float = MAX_INLINE_WAIT_S
) -> str:
    """Post ``text`` at the top level of ``slack:<channel>``; the thread is ``slack:<channel>:<ts>``."""
    (channel_id,) = channel.parts
    header = render_notice(text)

    async def send() -> Any:
        return await client.chat_postMessage(
            channel=channel_id, text=header.text, blocks=header.blocks, unfurl_links=False, unfurl_media=False
        )

    response = await call("chat.postMessage", send, max_wait=max_wait)
    return f"slack:{channel_id}:{response['ts']}"
