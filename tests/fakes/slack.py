"""A local Slack that speaks Slack's wire protocols, for driving slack-bolt and slack_sdk unmodified.

- Web API: ``POST /api/<method>`` with the bot token (or the app token for ``apps.connections.open``),
  answering ``{"ok": ...}`` the way Slack does, checking message limits as Slack does, recording each call.
- Events API: ``deliver()`` POSTs an ``event_callback`` to a gateway, signed with the signing secret
  (v0 HMAC-SHA256 over ``v0:<timestamp>:<body>``), optionally as a retry (``X-Slack-Retry-Num``).
- Socket Mode: ``apps.connections.open`` hands out ``ws://`` URLs to this server; ``push()`` sends an
  envelope over the open connection and waits for the client's acknowledgement.
- Rate limits and refusals: ``rate_limit()`` and ``refuse()`` make the next calls to a method fail.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import socket
import time
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

SECTION_LIMIT = 3_000
TEXT_LIMIT = 40_000
MAX_BLOCKS = 50


@dataclass
class ApiCall:
    """One Web API call as the fake received it."""

    method: str
    params: dict[str, Any]
    token: str | None
    ok: bool = False


@dataclass
class _Failure:
    status: int
    error: str
    retry_after: float | None = None


@dataclass
class FakeSlack:
    """One Slack workspace with one app installed."""

    bot_token: str = "xoxb-fake"
    app_token: str = "xapp-fake"
    signing_secret: str = "fake-signing-secret-0123456789"
    team_id: str = "T0FAKE"
    bot_user_id: str = "U0BOT"
    bot_id: str = "B0BOT"
    api_app_id: str = "A0APP"
    calls: list[ApiCall] = field(default_factory=list)
    connections_opened: int = 0
    deliveries: list[tuple[int, bytes]] = field(default_factory=list)  # (status, body) the gateway answered
    _failures: dict[str, deque[_Failure | None]] = field(default_factory=lambda: defaultdict(deque))
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _acks: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None
    port: int = 0

    # Server ----------------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    # Inspection and failure injection ----------------------------------------------------------

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    def posted(self, thread_ts: str | None = None) -> list[dict[str, Any]]:
        """The messages ``chat.postMessage`` accepted (params plus the ``ts`` given), oldest first."""
        return [
            call.params
            for call in self.calls_to("chat.postMessage")
            if call.ok and (thread_ts is None or call.params.get("thread_ts") == thread_ts)
        ]

    def ephemerals(self) -> list[dict[str, Any]]:
        return [call.params for call in self.calls_to("chat.postEphemeral") if call.ok]

    def rate_limit(self, method: str, retry_after: float, times: int = 1, after: int = 0) -> None:
        """After ``after`` more calls, the next ``times`` calls to ``method`` answer 429 with Retry-After."""
        self._failures[method].extend([None] * after)
        self._failures[method].extend([_Failure(429, "ratelimited", retry_after)] * times)

    def refuse(self, method: str, error: str, times: int = 1, after: int = 0) -> None:
        """After ``after`` more calls, the next ``times`` calls answer ``{"ok": false, "error": error}``."""
        self._failures[method].extend([None] * after)
        self._failures[method].extend([_Failure(200, error)] * times)

    def next_ts(self) -> str:
        return f"{1_712_345_678 + next(self._ts)}.000100"

    # Web API ---------------------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        elif request.can_read_body:
            params.update(await request.post())
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else params.pop("token", None)
        call = ApiCall(method, params, token)
        self.calls.append(call)
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != expected:
            return self._answer(call, {"ok": False, "error": "invalid_auth"})
        failure = self._failures[method].popleft() if self._failures[method] else None
        if failure is not None:
            headers = {"Retry-After": f"{failure.retry_after:g}"} if failure.retry_after is not None else {}
            return self._answer(call, {"ok": False, "error": failure.error}, failure.status, headers)
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return self._answer(call, {"ok": False, "error": "unknown_method"})
        return self._answer(call, handler(params))

    @staticmethod
    def _answer(
        call: ApiCall, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
    ) -> web.Response:
        call.ok = bool(body.get("ok"))
        return web.json_response(body, status=status, headers=headers)

    def _auth_test(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.test/",
            "team": "Fake Team",
            "user": "threadgate",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = _message_problem(params)
        if problem:
            return {"ok": False, "error": problem}
        ts = self.next_ts()
        params["ts"] = ts
        message = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id, "ts": ts}
        message.update({key: params[key] for key in ("text", "blocks", "thread_ts") if key in params})
        return {"ok": True, "channel": params["channel"], "ts": ts, "message": message}

    def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = _message_problem(params)
        if problem:
            return {"ok": False, "error": problem}
        if not params.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        return {"ok": True, "message_ts": self.next_ts()}

    def _apps_connections_open(self, _params: dict[str, Any]) -> dict[str, Any]:
        self.connections_opened += 1
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket={uuid.uuid4().hex}"}

    # Events API ------------------------------------------------------------------------------------

    def sign(self, body: bytes, timestamp: int, secret: str | None = None) -> str:
        base = f"v0:{timestamp}:".encode() + body
        digest = hmac.new((secret or self.signing_secret).encode(), base, hashlib.sha256).hexdigest()
        return f"v0={digest}"

    def callback(self, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        """The ``event_callback`` body Slack wraps an event in."""
        return {
            "token": "legacy-verification-token",
            "team_id": self.team_id,
            "api_app_id": self.api_app_id,
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "team_id": self.team_id,
                    "user_id": self.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }

    async def deliver(
        self,
        url: str,
        body: dict[str, Any],
        *,
        retry_num: int | None = None,
        timestamp: int | None = None,
        signature: str | None = None,
        secret: str | None = None,
    ) -> int:
        """POST ``body`` to the gateway's Events API endpoint as Slack would; returns the HTTP status."""
        raw = json.dumps(body).encode()
        stamp = int(time.time()) if timestamp is None else timestamp
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": str(stamp),
            "X-Slack-Signature": signature if signature is not None else self.sign(raw, stamp, secret),
        }
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, data=raw, headers=headers) as response,
        ):
            self.deliveries.append((response.status, await response.read()))
            return response.status

    # Socket Mode -----------------------------------------------------------------------------------

    @property
    def open_sockets(self) -> int:
        return sum(1 for ws in self._sockets if not ws.closed)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": self.open_sockets, "debug_info": {}})
        try:
            async for frame in ws:
                if frame.type != aiohttp.WSMsgType.TEXT:
                    continue
                ack = json.loads(frame.data)
                waiter = self._acks.pop(str(ack.get("envelope_id")), None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(ack)
        finally:
            self._sockets.remove(ws)
        return ws

    async def wait_sockets(self, count: int, timeout: float = 5.0) -> None:
        """Wait until exactly ``count`` Socket Mode connections are open."""
        deadline = time.monotonic() + timeout
        while self.open_sockets != count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.open_sockets} Socket Mode connections open, expected {count}")
            await asyncio.sleep(0.02)

    async def push(
        self, body: dict[str, Any], *, retry_attempt: int = 0, timeout: float = 5.0
    ) -> dict[str, Any]:
        """Send an ``events_api`` envelope over the open connection; returns the client's ack."""
        open_sockets = [ws for ws in self._sockets if not ws.closed]
        if len(open_sockets) != 1:
            raise AssertionError(f"{len(open_sockets)} Socket Mode connections open, expected 1")
        envelope_id = str(uuid.uuid4())
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[envelope_id] = waiter
        await open_sockets[0].send_json(
            {
                "envelope_id": envelope_id,
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": retry_attempt,
                "retry_reason": "timeout" if retry_attempt else "",
                "payload": body,
            }
        )
        return await asyncio.wait_for(waiter, timeout)


def _message_problem(params: dict[str, Any]) -> str | None:
    """What Slack would refuse in a message: no text, over-long text, too many or too long blocks."""
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    text = params.get("text") or ""
    if not params.get("channel"):
        return "channel_not_found"
    if not text and not blocks:
        return "no_text"
    if len(text) > TEXT_LIMIT:
        return "msg_too_long"
    if blocks is not None:
        if len(blocks) > MAX_BLOCKS:
            return "invalid_blocks"
        for block in blocks:
            content = block.get("text", {}).get("text") if block.get("type") == "section" else None
            if block.get("type") == "section" and not (content and len(content) <= SECTION_LIMIT):
                return "invalid_blocks"
    return None


def message_event(
    channel: str,
    user: str,
    text: str,
    *,
    ts: str,
    thread_ts: str | None = None,
    channel_type: str = "channel",
    kind: str = "message",
    **extra: Any,
) -> dict[str, Any]:
    """A ``message`` (or ``app_mention``) event as Slack sends it."""
    event: dict[str, Any] = {"type": kind, "channel": channel, "user": user, "text": text, "ts": ts}
    if kind == "message":
        event["channel_type"] = channel_type
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    event.update(extra)
    return event
