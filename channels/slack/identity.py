"""Who the bot token belongs to (``auth.test``), resolved at start-up and retried in the background.

Bolt's own authorization calls ``auth.test`` on the first request and, when that call fails, answers 200
(an apology, or an error it logs), so Slack never delivers the event again. Here the identity is asked
once at start-up, retried with backoff until Slack answers, and handed to Bolt for every request; while
it is unknown every request is answered 500 so Slack redelivers it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware.authorization.async_authorization import AsyncAuthorization
from slack_bolt.middleware.authorization.async_internals import _is_no_auth_required
from slack_bolt.middleware.authorization.internals import _is_no_auth_test_call_required
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.calls import MAX_INLINE_WAIT_S, call
from channels.slack.redeliver import Redeliver
from gateway.sdk import ChannelError, Retry, event

# Slack delivers a refused event again about a minute and five minutes later, then gives it up: asking
# auth.test at least once a minute (whatever the jitter or a rate limit's Retry-After) means an outage
# costs at most a minute of events once Slack is back.
MAX_RESOLVE_WAIT_S = 60.0
RESOLVE_RETRY = Retry(base_s=1.0, max_s=MAX_RESOLVE_WAIT_S)


class AppIdentity:
    """The ``auth.test`` answer for the bot token, once Slack has given it."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        max_wait: float = MAX_INLINE_WAIT_S,
        retry: Retry = RESOLVE_RETRY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.max_wait = max_wait
        self.retry = retry
        self.sleep = sleep
        self.known: dict[str, Any] | None = None
        self.first_answer = asyncio.Event()  # set once the first auth.test has succeeded or failed

    async def resolve(self) -> None:
        """Ask ``auth.test`` until it answers: a network failure, a 5xx, a rate limit and even a refused
        token (which the operator may fix by reinstalling the app) are retried, never given up, and never
        more than ``MAX_RESOLVE_WAIT_S`` apart."""
        failures = 0
        while self.known is None:
            try:
                answer = await call("auth.test", self.client.auth_test, max_wait=self.max_wait)
            except ChannelError as exc:
                self.first_answer.set()
                failures += 1
                wait = min(max(exc.retry_after or 0.0, self.retry.delay(failures)), MAX_RESOLVE_WAIT_S)
                level = logging.ERROR if exc.permanent else logging.WARNING
                event("slack.auth_failed", level, error=str(exc), attempt=failures, retry_in_s=round(wait, 1))
                await self.sleep(wait)
                continue
            self.known = dict(answer.data)
            self.first_answer.set()
            event("slack.ready", team=self.known.get("team_id"), bot_user=self.known.get("user_id"))

    def authorize(self, token: str | None, request_user_id: str | None) -> AuthorizeResult:
        """Bolt's authorization of a request, from the known identity; Redeliver until it is known."""
        if self.known is None:
            raise Redeliver("Slack has not answered auth.test yet")
        is_bot = token is not None and token.startswith("xoxb-")
        user_id = self.known.get("user_id")
        return AuthorizeResult(
            enterprise_id=self.known.get("enterprise_id"),
            team_id=self.known.get("team_id"),
            bot_id=self.known.get("bot_id"),
            bot_user_id=user_id if is_bot else None,
            bot_token=token if is_bot else None,
            user_id=request_user_id or (None if is_bot else user_id),
            user_token=None if is_bot else token,
        )


class KnownIdentityAuthorization(AsyncAuthorization):
    """Bolt's single-workspace authorization, except that it never calls ``auth.test`` per request."""

    def __init__(self, identity: AppIdentity) -> None:
        self.identity = identity

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        if _is_no_auth_required(req):  # url_verification, ssl_check: answered without a token
            return await next()
        if _is_no_auth_test_call_required(req):  # app_uninstalled, tokens_revoked: Bolt asks nothing either
            context = req.context
            context.set_authorize_result(
                AuthorizeResult(
                    enterprise_id=context.enterprise_id, team_id=context.team_id, user_id=context.user_id
                )
            )
            return await next()
        req.context.set_authorize_result(
            self.identity.authorize(req.context.client.token, req.context.user_id)
        )
        return await next()
