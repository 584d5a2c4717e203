"""Request body size limit: refused with 413 before the body is read, or as soon as it grows too big."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.asgi import HttpMiddleware, send_error
from gateway.base.errors import GatewayError

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def _too_large(limit: int) -> GatewayError:
    return GatewayError(
        "PAYLOAD_TOO_LARGE",
        f"The request body is larger than {limit} bytes, the most this gateway accepts.",
        413,
        {"max_bytes": limit},
    )


class BodyLimit(HttpMiddleware):
    """ASGI middleware: bodies over ``max_bytes`` get 413 PAYLOAD_TOO_LARGE in the contract's envelope."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await send_error(send, _too_large(self.max_bytes), close=True)
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
