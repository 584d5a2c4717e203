"""How many MCP sessions ``/mcp`` holds: at most ``per_token`` for each API token, and the SDK's cap in all.

Each session keeps a server task and its streams in memory until the client ends it or it sits idle for
30 minutes, so one token opening sessions in a loop would otherwise take the room (and the memory) every
other agent's sessions need. Beyond either cap the opening request is refused with 429 ``RATE_LIMITED`` and
``Retry-After``; the sessions already open go on. Counted per process, like the event streams.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from gateway.base.errors import GatewayError

DEFAULT_PER_TOKEN = 100
RETRY_AFTER_S = 60  # sessions end when their clients close them, or after 30 idle minutes


class TooManySessions(Exception):
    """A new session was refused at a cap; ``error`` is the answer to send."""

    def __init__(self, error: GatewayError) -> None:
        super().__init__(error.message)
        self.error = error


def _refused(message: str, limit: int) -> TooManySessions:
    details = {"retry_after": RETRY_AFTER_S, "limit": limit}
    return TooManySessions(GatewayError("RATE_LIMITED", message, 429, details))


class CappedSessions(StreamableHTTPSessionManager):
    """The SDK's session manager, counting each token's open sessions under the SDK's own admission lock
    (so concurrent openings cannot overshoot the cap)."""

    def __init__(self, app: Any, *, per_token: int = DEFAULT_PER_TOKEN, **options: Any) -> None:
        super().__init__(app, **options)
        self.per_token = per_token
        self.open_by_token: Counter[str] = Counter()
        self._token_of: dict[str, str] = {}

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        token = requestor["client_id"] if requestor is not None else ""
        if self.open_by_token[token] >= self.per_token:
            raise _refused(
                f"This token has {self.per_token} MCP sessions open: end one (DELETE /mcp) or wait for "
                "an idle one to expire.",
                self.per_token,
            )
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            message = "The gateway holds as many MCP sessions as it takes; retry later."
            raise _refused(message, self.max_sessions)
        transport = super()._admit_session(requestor)
        session_id = transport.mcp_session_id if transport is not None else None
        if session_id is not None:
            self.open_by_token[token] += 1
            self._token_of[session_id] = token
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        # Called once per way a session can end (DELETE, idle, crash, a refused opening): count it once.
        token = self._token_of.pop(session_id, None)
        if token is not None:
            self.open_by_token[token] -= 1
            if self.open_by_token[token] <= 0:
                del self.open_by_token[token]
        await super()._discard_session(session_id, transport)
