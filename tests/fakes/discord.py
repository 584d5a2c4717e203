"""A wire-level fake of Discord on 127.0.0.1: the REST API and the gateway websocket, recording every call.

discord.py is pointed at it (``DISCORD_API_BASE_URL``, ``DISCORD_GATEWAY_URL``) and runs its real code:
login, IDENTIFY/READY, heartbeats, RESUME with replay, rate-limit buckets, nonces. Tests inject events as
Discord would (``MESSAGE_CREATE`` dispatches) and inspect what the bot sent.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1_420_070_400_000
BOT_ID = 900_000_000_000_000_001
APPLICATION_ID = 900_000_000_000_000_002
MAX_CONTENT = 2000


@dataclass
class Call:
    """One REST request the bot made."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]
    at: float


@dataclass
class Failure:
    """An injected answer for the next message POSTs. ``create`` makes the message before failing."""

    status: int
    retry_after: float | None = None
    create: bool = False


@dataclass
class Session:
    """One gateway session: its events (for RESUME replay) and the sockets that carried it."""

    session_id: str
    identify: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    socket: web.WebSocketResponse | None = None
    resumes: int = 0

    @property
    def open(self) -> bool:
        return self.socket is not None and not self.socket.closed


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py parses JSON only when Content-Type is exactly application/json (no charset).
    return web.Response(
        body=json.dumps(data).encode(), status=status, content_type="application/json", headers=headers
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"message": message, "code": code}, status)


class FakeDiscord:
    """Discord's REST API under ``/api/v10`` and its gateway at ``/gw``."""

    def __init__(self, token: str = "fake-discord-token", *, heartbeat_interval_ms: int = 45_000) -> None:
        self.token = token
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.calls: list[Call] = []
        self.messages: list[dict[str, Any]] = []
        self.failures: list[Failure] = []
        self.sessions: list[Session] = []
        self.dm_channels: dict[int, int] = {}
        self.replay_from: int | None = None
        self._ids = itertools.count(1)
        self._nonces: dict[str, dict[str, Any]] = {}
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # Server ---------------------------------------------------------------------------------------

    async def start(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gw", self._gateway)
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_get("/api/v10/gateway/bot", self._gateway_bot)
        app.router.add_post("/api/v10/channels/{channel_id}/messages", self._create_message)
        app.router.add_post("/api/v10/users/@me/channels", self._create_dm)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        for session in self.sessions:
            if session.open:
                assert session.socket is not None
                await session.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gw"

    def snowflake(self) -> int:
        """A Discord id: milliseconds since Discord's epoch, shifted, plus a counter."""
        return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) + next(self._ids)

    def user(self, user_id: int, *, bot: bool = False, name: str = "person") -> dict[str, Any]:
        return {"id": str(user_id), "username": name, "discriminator": "0", "avatar": None, "bot": bot}

    async def _changed_now(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` holds (checked whenever the fake records something)."""

        async def until() -> None:
            async with self._changed:
                await self._changed.wait_for(predicate)

        await asyncio.wait_for(until(), timeout)

    # Inspection -----------------------------------------------------------------------------------

    def posted(self, channel_id: int) -> list[dict[str, Any]]:
        """Messages the bot created in a channel, oldest first."""
        return [message for message in self.messages if message["channel_id"] == str(channel_id)]

    def calls_to(self, method: str, path_end: str) -> list[Call]:
        return [call for call in self.calls if call.method == method and call.path.endswith(path_end)]

    def open_sessions(self) -> list[Session]:
        return [session for session in self.sessions if session.open]

    # REST -----------------------------------------------------------------------------------------

    async def _record(self, request: web.Request) -> Call:
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        call = Call(request.method, request.path, body, dict(request.headers), time.monotonic())
        self.calls.append(call)
        await self._changed_now()
        return call

    def _authorized(self, call: Call) -> bool:
        return call.headers.get("Authorization") == f"Bot {self.token}"

    async def _me(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _error(401, 0, "401: Unauthorized")
        return _json(self.user(BOT_ID, bot=True, name="threadgate"))

    async def _application(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _error(401, 0, "401: Unauthorized")
        return _json(
            {
                "id": str(APPLICATION_ID),
                "name": "threadgate",
                "icon": None,
                "description": "",
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": self.user(1000, name="owner"),
                "verify_key": "0" * 64,
                "flags": 0,
            }
        )

    async def _gateway_bot(self, request: web.Request) -> web.Response:
        await self._record(request)
        limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
        return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})

    async def _create_dm(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _error(401, 0, "401: Unauthorized")
        user_id = int(call.body["recipient_id"])
        channel_id = self.dm_channels.setdefault(user_id, self.snowflake())
        return _json({"id": str(channel_id), "type": 1, "recipients": [self.user(user_id)]})

    async def _create_message(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _error(401, 0, "401: Unauthorized")
        body = call.body or {}
        content = body.get("content") or ""
        if not content.strip():
            return _error(400, 50006, "Cannot send an empty message")
        if len(content) > MAX_CONTENT:
            return _error(400, 50035, f"Invalid Form Body: content must be {MAX_CONTENT} or fewer in length.")
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None and failure.status == 429:
            retry_after = failure.retry_after or 1.0
            headers = {"Via": "1.1 google", "Retry-After": str(retry_after), "X-RateLimit-Scope": "user"}
            body_429 = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
            return _json(body_429, 429, headers)
        if failure is not None and not failure.create:
            return _error(failure.status, 0, "injected failure")
        message = self._message_for(request.match_info["channel_id"], body)
        await self._changed_now()
        if failure is not None:
            return _error(failure.status, 0, "injected failure after the message was created")
        return _json(message)

    def _message_for(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create the message, or return the earlier one with the same enforced nonce (as Discord does)."""
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce") and nonce in self._nonces:
            return self._nonces[nonce]
        message: dict[str, Any] = {
            "id": str(self.snowflake()),
            "channel_id": channel_id,
            "type": 19 if body.get("message_reference") else 0,
            "content": body["content"],
            "author": self.user(BOT_ID, bot=True, name="threadgate"),
            "timestamp": "2026-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "nonce": nonce,
            "allowed_mentions": body.get("allowed_mentions"),
        }
        if body.get("message_reference"):
            message["message_reference"] = body["message_reference"]
        self.messages.append(message)
        if nonce is not None and body.get("enforce_nonce"):
            self._nonces[nonce] = message
        return message

    # Gateway --------------------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
        session: Session | None = None
        async for frame in socket:
            if frame.type is not WSMsgType.TEXT:
                break
            payload = json.loads(frame.data)
            op, data = payload.get("op"), payload.get("d")
            if op == 1:
                await socket.send_json({"op": 11})
            elif op == 2:
                session = await self._identify(socket, data)
                if session is None:
                    break
            elif op == 6:
                session = await self._resume(socket, data)
        await self._changed_now()
        return socket

    async def _identify(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> Session | None:
        if data.get("token") != self.token:
            await socket.close(code=4004, message=b"Authentication failed.")
            return None
        session = Session(uuid.uuid4().hex, data, socket=socket)
        self.sessions.append(session)
        ready = {
            "v": 10,
            "user": self.user(BOT_ID, bot=True, name="threadgate"),
            "guilds": [],
            "session_id": session.session_id,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APPLICATION_ID), "flags": 0},
        }
        await self._send_event(session, "READY", ready)
        await self._changed_now()
        return session

    async def _resume(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> Session | None:
        session = next((s for s in self.sessions if s.session_id == data.get("session_id")), None)
        if session is None or data.get("token") != self.token:
            await socket.send_json({"op": 9, "d": False})
            return None
        session.socket = socket
        session.resumes += 1
        since = self.replay_from if self.replay_from is not None else int(data.get("seq") or 0)
        for frame in [f for f in session.events if f["s"] > since and f["t"] not in ("READY", "RESUMED")]:
            await socket.send_json(frame)
        await self._send_event(session, "RESUMED", {})
        await self._changed_now()
        return session

    async def _send_event(self, session: Session, name: str, data: dict[str, Any]) -> None:
        frame = {"op": 0, "t": name, "s": len(session.events) + 1, "d": data}
        session.events.append(frame)
        assert session.socket is not None
        await session.socket.send_json(frame)

    async def dispatch(self, name: str, data: dict[str, Any]) -> int:
        """Send an event to every open session (one, when the lease works). Returns how many got it."""
        sessions = self.open_sessions()
        for session in sessions:
            await self._send_event(session, name, data)
        return len(sessions)

    async def person_says(
        self,
        channel_id: int,
        author_id: int,
        content: str,
        *,
        guild_id: int | None = None,
        bot: bool = False,
        message_type: int = 0,
        webhook_id: int | None = None,
    ) -> dict[str, Any]:
        """Dispatch a MESSAGE_CREATE as Discord sends it for a message someone posted."""
        message: dict[str, Any] = {
            "id": str(self.snowflake()),
            "channel_id": str(channel_id),
            "type": message_type,
            "content": content,
            "author": self.user(author_id, bot=bot),
            "timestamp": "2026-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
        }
        if guild_id is not None:
            message["guild_id"] = str(guild_id)
        if webhook_id is not None:
            message["webhook_id"] = str(webhook_id)
        await self.dispatch("MESSAGE_CREATE", message)
        return message

    async def ask_to_reconnect(self, *, replay_from: int | None = None) -> None:
        """Send RECONNECT (op 7) to every open session; on RESUME replay events after ``replay_from``
        (Discord replays what it thinks the client missed; ``0`` replays everything, as a duplicate)."""
        self.replay_from = replay_from
        for session in self.open_sessions():
            assert session.socket is not None
            await session.socket.send_json({"op": 7, "d": None})
