"""Slack Web API calls: a short rate limit is waited out, every failure becomes a ChannelError."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError

from gateway.sdk import ChannelError, retry_after

MAX_INLINE_WAIT_S = 5.0
DEFAULT_RETRY_AFTER_S = 1.0

# Errors no retry will fix, with what the operator should do about them.
_PERMANENT: dict[str, str] = {
    "channel_not_found": "the channel does not exist or the app cannot see it",
    "not_in_channel": "invite the app to the channel (/invite @app)",
    "is_archived": "the channel is archived",
    "invalid_auth": "SLACK_BOT_TOKEN is not valid",
    "not_authed": "SLACK_BOT_TOKEN is missing",
    "token_revoked": "SLACK_BOT_TOKEN was revoked; reinstall the app",
    "account_inactive": "the app's bot user was deactivated",
    "missing_scope": "add the missing scope to the app (see docs/channels/slack.md) and reinstall it",
    "restricted_action": "the workspace does not let the app post there",
    "thread_not_found": "the thread's root message does not exist",
    "user_not_in_channel": "that person is not in the channel",
    "invalid_blocks": "Slack refused the message layout",
    "msg_too_long": "Slack refused the message as too long",
    "user_not_found": "no such person in the workspace",
    "user_disabled": "that person's account is deactivated",
    "cannot_dm_bot": "that identity is a bot, which takes no direct messages",
}


def _retry_after(exc: SlackApiError) -> float | None:
    """Seconds Slack asked us to wait, when the failure was a rate limit."""
    response = exc.response
    data = response.data if isinstance(response.data, dict) else {}
    if response.status_code != 429 and data.get("error") != "ratelimited":
        return None
    wait = retry_after(response.headers)
    return DEFAULT_RETRY_AFTER_S if wait is None else wait


def _failure(method: str, exc: SlackApiError) -> ChannelError:
    data = exc.response.data if isinstance(exc.response.data, dict) else {}
    code = str(data.get("error") or f"HTTP {exc.response.status_code}")
    hint = _PERMANENT.get(code)
    if hint is not None:
        return ChannelError(f"Slack refused {method}: {code} ({hint})", permanent=True)
    return ChannelError(f"Slack refused {method}: {code}")


async def call(
    method: str,
    request: Callable[[], Awaitable[Any]],
    *,
    max_wait: float = MAX_INLINE_WAIT_S,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Any:
    """Run ``request`` (one Web API call), waiting out rate limits while the total wait stays short.

    A longer rate limit is raised as a ChannelError carrying ``retry_after``, so the caller's queue waits.
    """
    waited = 0.0
    while True:
        try:
            return await request()
        except SlackApiError as exc:
            retry_after = _retry_after(exc)
            if retry_after is None:
                raise _failure(method, exc) from exc
            if waited + retry_after > max_wait:
                raise ChannelError(
                    f"Slack rate-limited {method}; retry in {retry_after:g} s", retry_after=retry_after
                ) from exc
            await sleep(retry_after)
            waited += retry_after
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelError(f"Slack could not be reached for {method} ({type(exc).__name__})") from exc
