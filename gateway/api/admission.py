"""The API's door: the bearer token is checked on the raw request, and only then is the body parsed.

For every request under ``/v1`` and to ``/mcp`` this ASGI layer resolves the caller with ``TokenTable.find``
before a byte of the body is read (401 otherwise), hands the Principal to the routes in the scope, then reads
the body and parses it once within limits: JSON media type (415), UTF-8, nesting depth, valid Unicode text
(400). The routes see the same bytes afterwards and validate the parsed shape as usual.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.asgi import header_of, send_error
from gateway.api.auth import PRINCIPAL_SCOPE_KEY, TokenTable, authenticate
from gateway.base.errors import GatewayError
from gateway.base.jsonbody import MAX_DEPTH, is_json_media_type, parse_json, unsupported_media_type

API_ROOT = "/v1"
GUARDED_ROOTS = (API_ROOT, "/mcp")  # the API and the MCP endpoint: both take bearer tokens
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Disconnected(Exception):
    """The client went away before its body arrived: nothing to answer."""


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands over the body already read, then the client's later messages."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class Admission:
    """ASGI middleware: authenticate requests under ``/v1`` on raw bytes, then parse JSON bodies safely."""

    def __init__(self, app: ASGIApp, tokens: TokenTable, max_depth: int = MAX_DEPTH) -> None:
        self.app = app
        self.tokens = tokens
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        guarded = any(path == root or path.startswith(root + "/") for root in GUARDED_ROOTS)
        if scope["type"] != "http" or not guarded:
            await self.app(scope, receive, send)
            return
        try:
            scope[PRINCIPAL_SCOPE_KEY] = authenticate(self.tokens, header_of(scope, b"authorization"))
            if scope.get("method") in _BODY_METHODS:
                receive = await self._admit_body(scope, receive)
        except GatewayError as error:
            await send_error(send, error)
            return
        except Disconnected:
            return
        await self.app(scope, receive, send)

    async def _admit_body(self, scope: Scope, receive: Receive) -> Receive:
        """Read and check the body; a receive that replays it to the route."""
        try:
            body = await read_body(receive)
        except HTTPException as exc:  # the body limit, streamed past its size
            raise GatewayError("PAYLOAD_TOO_LARGE", str(exc.detail), exc.status_code) from None
        if body:
            content_type = header_of(scope, b"content-type")
            if not is_json_media_type(content_type):
                raise unsupported_media_type(content_type)
            parse_json(body, max_depth=self.max_depth)
        return replay(body, receive)
