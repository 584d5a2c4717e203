"""``/mcp``: the MCP tools over Streamable HTTP on the gateway itself, for agents on other machines.

The caller sends an agent token (``Authorization: Bearer``), checked by the admission layer like every
``/v1`` call. The session's agent is ``X-Threadgate-Agent`` (or ``?agent=``), which the token must act for;
left out, it is the token's own agent (the one it acts for, else the one named like the token). A session
answers only the token and agent that opened it. The tools then call the API in-process with the caller's
token, so every question passes the same scope checks, approval policy and who-may-answer rule as any
other client's. Where to ask: ``X-Threadgate-Session-Channel``/``?session_channel=`` (each MCP session gets
its own thread there) or ``X-Threadgate-Thread``/``?thread=``; ``X-Threadgate-Started-By``/``?started_by=``
may answer besides the agent's approvers.

Sessions are capped per token (``THREADGATE_MCP_SESSIONS_PER_TOKEN``) and in all (``mcp_sessions``). A body
that is not one JSON-RPC message (a batch, a request whose id is null or an object) is refused here with
-32600 before the SDK sees it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import DEFAULT_MAX_SESSIONS
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gateway.api.admission import Disconnected, read_body, replay
from gateway.api.asgi import send_error
from gateway.api.auth import AGENT, PRINCIPAL_SCOPE_KEY, Principal
from gateway.api.mcp_sessions import DEFAULT_PER_TOKEN, CappedSessions, TooManySessions
from gateway.api.scope import require_agent
from gateway.base.errors import GatewayError
from gateway.base.logs import event
from gateway.base.models import Prompt
from gateway.client import Threadgate
from gateway.client.target import Target, session_key
from gateway.integrations.mcp_protocol import refused_line, rewritten_line
from gateway.integrations.mcp_server import Asker, build_server

PATH = "/mcp"
AGENT_SCOPE_KEY = "threadgate.mcp_agent"
IN_PROCESS_URL = "http://localhost"  # a loopback name: the host allow-list always admits it
MAX_PARAM_CHARS = 200


def _param(request: Request, name: str) -> str | None:
    """``X-Threadgate-<Name>`` or, for clients that only take a URL, ``?name=``; None when empty."""
    header = "x-threadgate-" + name.replace("_", "-")
    value = (request.headers.get(header) or request.query_params.get(name) or "").strip()
    return value[:MAX_PARAM_CHARS] or None


def session_agent(caller: Principal, named: str | None) -> str:
    """The agent a session acts for: the one named (403 unless the token acts for it), else the token's."""
    if named is None:
        if caller.agents is not None and len(caller.agents) == 1:
            (named,) = caller.agents
        elif caller.agents is None or caller.name in caller.agents:
            named = caller.name
        else:
            raise GatewayError(
                "VALIDATION_ERROR",
                "This token acts for several agents: name one with X-Threadgate-Agent or ?agent=.",
                400,
                {"agents": sorted(caller.agents)},
            )
    require_agent(caller, named)
    return named


def _caller(scope: Scope) -> Principal:
    found = scope.get(PRINCIPAL_SCOPE_KEY)
    if not isinstance(found, Principal):  # the admission layer authenticates every request here first
        raise GatewayError("UNAUTHORIZED", "Send Authorization: Bearer <token>.", 401)
    if found.role != AGENT:
        raise GatewayError("FORBIDDEN", "/mcp needs an agent token.", 403, {"role": found.role})
    return found


def http_asker(ctx: Context) -> Asker:
    """The session behind one HTTP tool call: its agent, the place to ask, and an in-process client that
    calls the API with the caller's own token."""
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise RuntimeError("an HTTP tool call carries its request")
    agent = str(request.scope[AGENT_SCOPE_KEY])
    session_id = request.headers.get("mcp-session-id") or "stateless"
    target = Target(
        agent=agent,
        thread=_param(request, "thread"),
        session_channel=_param(request, "session_channel"),
        started_by=_param(request, "started_by"),
    )
    product = _param(request, "session_name") or "Agent"
    header = f"{product} over MCP, session {session_id[:8]}"
    token = request.headers.get("authorization", "").partition(" ")[2].strip()
    app = request.scope["app"]

    def client() -> Threadgate:
        return Threadgate(IN_PROCESS_URL, token, transport=httpx.ASGITransport(app=app))

    return Asker(target, session_key(agent, session_id), header, client, on_raised=_log_waiting)


def _log_waiting(prompt: Prompt) -> None:
    """Where a question asked over ``/mcp`` waits, as a log event: the gateway's stderr is JSON lines only."""
    event(
        "mcp.prompt_waiting",
        agent=prompt.agent,
        prompt_id=prompt.prompt_id,
        thread_id=prompt.thread_id,
        thread_url=prompt.thread_url,
    )


class McpEndpoint:
    """The ASGI endpoint at ``/mcp``: the caller's agent settled, then the SDK's session manager."""

    def __init__(
        self,
        *,
        progress_s: float,
        max_body_bytes: int,
        sessions_per_token: int = DEFAULT_PER_TOKEN,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        server = build_server(http_asker, progress_s=progress_s)
        self.sessions = CappedSessions(
            server._lowlevel_server,  # the SDK's own streamable_http_app builds its manager the same way
            per_token=sessions_per_token,
            # The gateway's own layers check Host and Origin before any request gets here.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=max_body_bytes,
            max_sessions=max_sessions,
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            caller = _caller(scope)
            agent = session_agent(caller, _param(Request(scope), "agent"))
        except GatewayError as error:
            await send_error(send, error)
            return
        if scope["method"] == "POST":
            try:
                body = await read_body(receive)
            except Disconnected:
                return
            text = body.decode("utf-8", "replace")
            refused = refused_line(text)
            if refused is not None:
                await _json_rpc_error(scope, receive, send, refused)
                return
            receive = replay(rewritten_line(text).encode(), receive)
        scope[AGENT_SCOPE_KEY] = agent
        # A session belongs to the token and agent that opened it: the SDK answers 404 to anyone else.
        owner = AccessToken(token="", client_id=caller.name, scopes=[], subject=agent)
        scope["user"] = AuthenticatedUser(owner)
        try:
            await self.sessions.handle_request(scope, receive, send)
        except TooManySessions as refusal:  # raised while admitting, before any response was sent
            await send_error(send, refusal.error)

    def route(self) -> Route:
        return Route(PATH, endpoint=self, methods=["GET", "POST", "DELETE"])


async def _json_rpc_error(scope: Scope, receive: Receive, send: Send, error: dict[str, Any]) -> None:
    """400 with a JSON-RPC error and no id, as the transport answers a message it cannot take."""
    await Response(json.dumps(error), status_code=400, media_type="application/json")(scope, receive, send)
