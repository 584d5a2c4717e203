"""What the API's ASGI middlewares share: reading a header, answering an error, passing non-HTTP through."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.base.errors import GatewayError


def header_of(scope: Scope, name: bytes) -> str | None:
    """The first ``name`` header (lower-case bytes) of an ASGI scope, or None."""
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def send_error(
    send: Send, error: GatewayError, *, close: bool = False, challenge: str = "Bearer"
) -> None:
    """Answer ``error`` in the contract's envelope straight from the ASGI layer; ``close`` asks the
    client to drop the connection (the rest of its body is not read); ``challenge`` is a 401's
    ``WWW-Authenticate``."""
    body = json.dumps(error.envelope()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.status == 401:
        headers.append((b"www-authenticate", challenge.encode("latin-1")))
    retry_after = error.details.get("retry_after") if error.status in (429, 503) else None
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HttpMiddleware:
    """An ASGI middleware that acts on HTTP requests only: websockets and lifespan pass straight through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request; the default passes it on."""
        await self.app(scope, receive, send)
