"""The API's door: the bearer token is checked on the raw request, and only then is the body parsed.

For every request under ``/v1`` and to ``/mcp`` this ASGI layer resolves the caller with ``TokenTable.find``
before a byte of the body is read (401 otherwise), hands the Principal to the routes in the scope, then reads
the body and parses it once within limits: JSON media type (415), UTF-8, nesting depth, valid Unicode text
(400). The routes see the same bytes afterwards and validate the parsed shape as usual.

Besides a token from ``THREADGATE_API_TOKENS``: under ``/v1``, a signed-in person's session cookie (its
writes only as JSON from a same-origin page); and an access token of the OIDC issuer for a client of
``THREADGATE_OAUTH_CLIENTS`` (``gateway.api.signin``). A 401 from ``/mcp`` names the resource metadata.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.asgi import header_of, send_error
from gateway.api.auth import PRINCIPAL_SCOPE_KEY, Principal, TokenTable, authenticate
from gateway.api.signin import (
    MCP_PATH,
    PERSON_STATE_KEY,
    OAuthResource,
    cookie_write_refusal,
    session_principal,
)
from gateway.base.errors import GatewayError
from gateway.base.jsonbody import MAX_DEPTH, is_json_media_type, parse_json, unsupported_media_type
from gateway.people.signin import SignIn

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

    def __init__(
        self,
        app: ASGIApp,
        tokens: TokenTable,
        max_depth: int = MAX_DEPTH,
        signin: SignIn | None = None,
        oauth: OAuthResource | None = None,
        public_origin: str | None = None,
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.max_depth = max_depth
        self.signin = signin  # when people sign in at the identity provider
        self.oauth = oauth
        self.public_origin = public_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        guarded = any(path == root or path.startswith(root + "/") for root in GUARDED_ROOTS)
        if scope["type"] != "http" or not guarded:
            await self.app(scope, receive, send)
            return
        try:
            scope[PRINCIPAL_SCOPE_KEY] = await self._caller(scope, path)
            if scope.get("method") in _BODY_METHODS:
                receive = await self._admit_body(scope, receive)
        except GatewayError as error:
            challenge = "Bearer"
            if error.status == 401 and path == MCP_PATH and self.oauth is not None:
                challenge = f'Bearer resource_metadata="{self.oauth.metadata_url(scope)}"'
            await send_error(send, error, challenge=challenge)
            return
        except Disconnected:
            return
        await self.app(scope, receive, send)

    async def _caller(self, scope: Scope, path: str) -> Principal:
        """The bearer token's caller; else, under /v1, the session cookie's person; else 401."""
        authorization = header_of(scope, b"authorization")
        if authorization is None and self.signin is not None and path.startswith(API_ROOT + "/"):
            found = await session_principal(self.signin, scope)
            if found is not None:
                caller, person = found
                if scope.get("method") in _BODY_METHODS:
                    refused = cookie_write_refusal(scope, self.public_origin)
                    if refused is not None:
                        raise refused
                scope.setdefault("state", {})[PERSON_STATE_KEY] = person
                return caller
        try:
            return authenticate(self.tokens, authorization)
        except GatewayError:
            scheme, _, presented = (authorization or "").partition(" ")
            if self.oauth is not None and scheme.lower() == "bearer" and presented.strip():
                found_token = await self.oauth.principal(presented.strip(), scope)
                if found_token is not None:
                    return found_token
            raise

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
