"""Every route, one place: a Redis outage answers 503 STORE_UNAVAILABLE with ``Retry-After``, never a 500."""

from __future__ import annotations

import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.asgi import HttpMiddleware
from gateway.api.errors import envelope_response
from gateway.store.outage import StoreHealth, is_store_outage, store_unavailable


class StoreOutageGuard(HttpMiddleware):
    """ASGI middleware: a store outage raised anywhere below becomes the contract's 503, logged once
    per outage by ``health``. A response already under way (an event stream) is ended cleanly instead;
    its client reconnects and resumes from its cursor once the store is back."""

    def __init__(self, app: ASGIApp, health: StoreHealth) -> None:
        super().__init__(app)
        self.health = health

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False
        began_at = self.health.clock()

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if not is_store_outage(exc):
                raise
            self.health.failed(exc, scope.get("path", ""), began_at)
            if started:
                with contextlib.suppress(Exception):  # the client may be gone already
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            error = store_unavailable()
            response = envelope_response(error, {"Retry-After": str(error.details["retry_after"])})
            await response(scope, receive, send)
