"""Request body size limit: refused with 413 before the body is read, or as soon as it grows too big."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.errors import GatewayError

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def _too_large(limit: int) -> GatewayError:
    return GatewayError(
        "PAYLOAD_TOO_LARGE",
        f"The request body is larger than {limit} bytes, the most this gateway accepts.",
        413,
        {"max_bytes": limit},
    )


class BodyLimit:
    """ASGI middleware: bodies over ``max_bytes`` get 413 PAYLOAD_TOO_LARGE in the contract's envelope."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, _too_large(self.max_bytes).message)
            return message

        await self.app(scope, limited_receive, send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(_too_large(self.max_bytes).envelope()).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
