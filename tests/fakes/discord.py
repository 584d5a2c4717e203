"""A wire-level fake of Discord on 127.0.0.1: the REST API and the gateway websocket, recording every call.

discord.py is pointed at it (``DISCORD_API_BASE_URL``, ``DISCORD_GATEWAY_URL``) and runs its real code:
login, IDENTIFY/READY, heartbeats, RESUME with replay, rate-limit buckets, nonces, message components,
interaction responses and forms (modals). Tests inject events as Discord would (``MESSAGE_CREATE``,
``INTERACTION_CREATE`` for a person pressing a control found in a message the bot posted) and inspect what
the bot sent. What the bot sends is held to Discord's limits (custom ids, labels, rows, form fields) and
answered 400 ``Invalid Form Body`` when it breaks one, as Discord does.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1_420_070_400_000
BOT_ID = 900_000_000_000_000_001
APPLICATION_ID = 900_000_000_000_000_002
MAX_CONTENT = 2000
INTERACTION_DEADLINE_S = 3.0
EPHEMERAL = 64
BUTTON, SELECT, TEXT_INPUT, ROW, LABEL = 2, 3, 4, 1, 18
LINK_STYLE = 5


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


@dataclass
class Interaction:
    """One INTERACTION_CREATE the fake sent (a person pressed something), and how the bot answered it."""

    id: str
    token: str
    user_id: int
    payload: dict[str, Any]
    dispatched_at: float
    responses: list[dict[str, Any]] = field(default_factory=list)
    original_edits: list[dict[str, Any]] = field(default_factory=list)
    reply_message: dict[str, Any] | None = None

    @property
    def response(self) -> dict[str, Any] | None:
        return self.responses[0] if self.responses else None

    @property
    def form(self) -> dict[str, Any] | None:
        """The form (modal) the bot opened in answer, if it did."""
        response = self.response
        return response["data"] if response is not None and response["type"] == 9 else None

    @property
    def notice(self) -> str | None:
        """What the presser sees: the ephemeral answer, or the last edit of a deferred one."""
        if self.original_edits:
            return str(self.original_edits[-1].get("content"))
        response = self.response
        if response is None or response["type"] != 4:
            return None
        return str(response["data"].get("content"))

    @property
    def reply(self) -> dict[str, Any]:
        """The ephemeral message the presser sees, with its buttons (a form's Continue…), to press next."""
        if self.reply_message is None:
            raise LookupError(f"the bot sent no message in answer; it answered {self.responses}")
        return self.reply_message

    @property
    def private(self) -> bool:
        """True when every visible answer was ephemeral (only the presser saw it)."""
        shown = [r for r in self.responses if r["type"] in (4, 5)]
        return bool(shown) and all(r["data"].get("flags", 0) & EPHEMERAL for r in shown)


def _too_long(value: Any, limit: int) -> bool:
    return isinstance(value, str) and len(value) > limit


def _select_problem(select: dict[str, Any]) -> str | None:
    options = select.get("options") or []
    if not 1 <= len(options) <= 25:
        return "a select has 1 to 25 options"
    if _too_long(select.get("placeholder"), 150):
        return "a select placeholder is at most 150 characters"
    for option in options:
        if any(_too_long(option.get(key), 100) for key in ("label", "value", "description")):
            return "select option label, value and description are at most 100 characters"
    low, high = select.get("min_values", 1), select.get("max_values", 1)
    if not 0 <= low <= high <= len(options):
        return "a select needs 0 <= min_values <= max_values <= its options"
    return None


def _button_problem(button: dict[str, Any]) -> str | None:
    if button.get("style") == LINK_STYLE:
        url = button.get("url")
        if "custom_id" in button or not isinstance(url, str) or not url or _too_long(url, 512):
            return "a link button has a url of at most 512 characters and no custom_id"
    elif "url" in button or not button.get("custom_id"):
        return "a button that is not a link has a custom_id and no url"
    return None


def _text_input_problem(text: dict[str, Any]) -> str | None:
    low, high = text.get("min_length", 0), text.get("max_length", 4000)
    if not (0 <= low <= 4000 and 1 <= high <= 4000 and low <= high):
        return "a text input's 0 <= min_length <= max_length <= 4000"
    if _too_long(text.get("placeholder"), 100):
        return "a text input placeholder is at most 100 characters"
    if _too_long(text.get("value"), high):
        return "a text input's value fits its max_length"
    return None


def _custom_ids(components: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for component in components:
        if "custom_id" in component:
            found.append(component["custom_id"])
        found.extend(_custom_ids(component.get("components") or []))
        if isinstance(component.get("component"), dict):
            found.extend(_custom_ids([component["component"]]))
    return found


def message_problem(body: dict[str, Any]) -> str | None:
    """What in a message's components or embeds Discord would refuse (``None`` when it takes them)."""
    rows = body.get("components") or []
    if len(rows) > 5:
        return "a message has at most 5 action rows"
    for row in rows:
        children = row.get("components") or []
        if row.get("type") != ROW or not 1 <= len(children) <= 5:
            return "an action row holds 1 to 5 components"
        if any(child["type"] == SELECT for child in children) and len(children) != 1:
            return "a select fills its action row alone"
        for child in children:
            if child["type"] == BUTTON and (not child.get("label") or _too_long(child["label"], 80)):
                return "a button label is 1 to 80 characters"
            if child["type"] == BUTTON and (problem := _button_problem(child)):
                return problem
            if child["type"] == SELECT and (problem := _select_problem(child)):
                return problem
    ids = _custom_ids(rows)
    if any(len(custom_id) > 100 for custom_id in ids) or len(ids) != len(set(ids)):
        return "custom_ids are unique and at most 100 characters"
    for embed in body.get("embeds") or []:
        if _too_long(embed.get("title"), 256) or _too_long(embed.get("description"), 4096):
            return "an embed title is at most 256 characters and its description at most 4096"
    return None


def form_problem(form: dict[str, Any]) -> str | None:
    """What in a modal Discord would refuse."""
    fields = form.get("components") or []
    if not form.get("title") or _too_long(form["title"], 45):
        return "a modal title is 1 to 45 characters"
    if not 1 <= len(fields) <= 5:
        return "a modal has 1 to 5 components"
    for field_ in fields:
        if field_.get("type") != LABEL:
            return "modal fields are wrapped in labels"
        if not field_.get("label") or _too_long(field_["label"], 45):
            return "a label's text is 1 to 45 characters"
        if _too_long(field_.get("description"), 100):
            return "a label's description is at most 100 characters"
        inner = field_.get("component") or {}
        if inner.get("type") == SELECT and (problem := _select_problem(inner)):
            return problem
        if inner.get("type") == TEXT_INPUT and (problem := _text_input_problem(inner)):
            return problem
    ids = [*_custom_ids(fields), form.get("custom_id", "")]
    if any(len(custom_id) > 100 for custom_id in ids) or len(ids) != len(set(ids)):
        return "custom_ids are unique and at most 100 characters"
    return None


class FakeDiscord:
    """Discord's REST API under ``/api/v10`` and its gateway at ``/gw``."""

    def __init__(
        self, token: str = "fake-bot.fake-time.fake-signature", *, heartbeat_interval_ms: int = 45_000
    ) -> None:
        self.token = token
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.calls: list[Call] = []
        self.messages: list[dict[str, Any]] = []
        self.failures: list[Failure] = []
        self.sessions: list[Session] = []
        self.dm_channels: dict[int, int] = {}
        self.replay_from: int | None = None
        self.interactions: list[Interaction] = []
        self.edits: list[dict[str, Any]] = []
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
        app.router.add_patch("/api/v10/channels/{channel_id}/messages/{message_id}", self._edit_message)
        app.router.add_post("/api/v10/interactions/{interaction_id}/{token}/callback", self._callback)
        app.router.add_patch(
            "/api/v10/webhooks/{application_id}/{token}/messages/@original", self._edit_original
        )
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
        problem = message_problem(body)
        if problem is not None:
            return _error(400, 50035, f"Invalid Form Body: {problem}")
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
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
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

    async def dispatch(self, name: str, data: dict[str, Any], sessions: list[Session] | None = None) -> int:
        """Send an event to every open session (one, when the lease works), or to ``sessions``.
        Returns how many got it."""
        sessions = self.open_sessions() if sessions is None else sessions
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

    async def send_frame(self, text: str) -> None:
        """Send a raw text frame on every open session, outside the event sequence (a frame no client
        could read, as a broken proxy might deliver)."""
        for session in self.open_sessions():
            assert session.socket is not None
            await session.socket.send_str(text)

    async def ask_to_reconnect(self, *, replay_from: int | None = None) -> None:
        """Send RECONNECT (op 7) to every open session; on RESUME replay events after ``replay_from``
        (Discord replays what it thinks the client missed; ``0`` replays everything, as a duplicate)."""
        self.replay_from = replay_from
        for session in self.open_sessions():
            assert session.socket is not None
            await session.socket.send_json({"op": 7, "d": None})

    # Message edits --------------------------------------------------------------------------------

    async def _edit_message(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        if not self._authorized(call):
            return _error(401, 0, "401: Unauthorized")
        body = call.body or {}
        index = next(
            (i for i, m in enumerate(self.messages) if m["id"] == request.match_info["message_id"]), None
        )
        if index is None or self.messages[index]["channel_id"] != request.match_info["channel_id"]:
            return _error(404, 10008, "Unknown Message")
        if len(body.get("content") or "") > MAX_CONTENT:
            return _error(400, 50035, f"Invalid Form Body: content must be {MAX_CONTENT} or fewer in length.")
        problem = message_problem(body)
        if problem is not None:
            return _error(400, 50035, f"Invalid Form Body: {problem}")
        # A new dict: a message a test kept is what a person's client showed before the edit.
        edited = dict(self.messages[index], edited_timestamp="2026-01-01T00:00:01+00:00")
        for key in ("content", "components", "embeds"):
            if key in body:
                edited[key] = body[key] or ([] if key != "content" else "")
        self.messages[index] = edited
        self.edits.append({"message_id": edited["id"], **body})
        await self._changed_now()
        return _json(edited)

    def message(self, message_id: str) -> dict[str, Any]:
        """A message as it is now (after any edits)."""
        return next(m for m in self.messages if m["id"] == str(message_id))

    # Interactions: a person pressing what the bot posted ---------------------------------------------

    @staticmethod
    def controls(message: dict[str, Any]) -> list[dict[str, Any]]:
        """The buttons and selects of a message, in order."""
        return [child for row in message.get("components") or [] for child in row.get("components") or []]

    def button(self, message: dict[str, Any], label: str) -> dict[str, Any]:
        found = [c for c in self.controls(message) if c["type"] == BUTTON and c.get("label") == label]
        if not found:
            raise LookupError(f"no button {label!r} on the message; it has {self.controls(message)}")
        return found[0]

    async def press(
        self,
        message: dict[str, Any],
        label: str,
        *,
        user_id: int,
        guild_id: int | None = None,
        custom_id: str | None = None,
        session: Session | None = None,
    ) -> Interaction:
        """Press the button labelled ``label`` on ``message`` as shown to the person (``custom_id``
        replaces the button's own, as a forged or tampered press would)."""
        button = self.button(message, label)
        data = {"custom_id": custom_id or button["custom_id"], "component_type": BUTTON}
        return await self.interact(3, data, message, user_id=user_id, guild_id=guild_id, session=session)

    async def choose(
        self, message: dict[str, Any], labels: list[str], *, user_id: int, guild_id: int | None = None
    ) -> Interaction:
        """Choose ``labels`` in the message's select menu and close it."""
        [select] = [c for c in self.controls(message) if c["type"] == SELECT]
        values = [_option_value(select, label) for label in labels]
        data = {"custom_id": select["custom_id"], "component_type": SELECT, "values": values}
        return await self.interact(3, data, message, user_id=user_id, guild_id=guild_id)

    async def submit_form(
        self,
        opened: Interaction,
        answers: dict[str, str | list[str]],
        *,
        user_id: int | None = None,
        guild_id: int | None = None,
    ) -> Interaction:
        """Fill the form the bot opened in answer to ``opened`` (fields by their label: option labels
        for a select, text for a text field; a field not named keeps what the form filled in) and
        submit it."""
        form = opened.form
        if form is None:
            raise LookupError(f"the bot opened no form; it answered {opened.responses}")
        left = dict(answers)
        submitted = []
        for field_ in form["components"]:
            inner = field_["component"]
            given = left.pop(field_["label"], None)
            if inner["type"] == SELECT:
                chosen = [given] if isinstance(given, str) else given
                if chosen is None:
                    offered = inner.get("options") or []
                    chosen = [option["label"] for option in offered if option.get("default")]
                values = {"values": [_option_value(inner, label) for label in chosen]}
                submitted.append(
                    {"type": LABEL, "component": {"type": SELECT, "custom_id": inner["custom_id"], **values}}
                )
            else:
                value = given if isinstance(given, str) else str(inner.get("value") or "")
                text = {"type": TEXT_INPUT, "custom_id": inner["custom_id"], "value": value}
                submitted.append({"type": LABEL, "component": text})
        if left:
            raise LookupError(
                f"the form has no fields {sorted(left)}; it has {[f['label'] for f in form['components']]}"
            )
        data = {"custom_id": form["custom_id"], "components": submitted}
        message = opened.payload.get("message")
        return await self.interact(
            5, data, message, user_id=user_id or opened.user_id, guild_id=guild_id or _guild_of(opened)
        )

    async def interact(
        self,
        kind: int,
        data: dict[str, Any],
        message: dict[str, Any] | None,
        *,
        user_id: int,
        guild_id: int | None = None,
        channel_id: int | None = None,
        session: Session | None = None,
        mangle: Callable[[dict[str, Any]], object] | None = None,
    ) -> Interaction:
        """Dispatch an INTERACTION_CREATE (3 component, 5 form submitted) as Discord sends it (``mangle``
        edits the payload first, as a Discord change or bug would)."""
        channel = int(channel_id or (message or {})["channel_id"])
        interaction_id, token = str(self.snowflake()), f"tok-{uuid.uuid4().hex}"
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": str(APPLICATION_ID),
            "type": kind,
            "token": token,
            "version": 1,
            "data": data,
            "channel_id": str(channel),
            "locale": "en-US",
            "app_permissions": "0",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "attachment_size_limit": 8 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = copy.deepcopy(message)
        person = self.user(user_id)
        if guild_id is not None:
            payload["guild_id"] = str(guild_id)
            payload["channel"] = {
                "id": str(channel),
                "type": 0,
                "guild_id": str(guild_id),
                "name": "general",
                "position": 0,
                "permission_overwrites": [],
                "nsfw": False,
                "parent_id": None,
                "topic": None,
                "last_message_id": None,
                "rate_limit_per_user": 0,
                "flags": 0,
            }
            payload["member"] = {
                "user": person,
                "roles": [],
                "flags": 0,
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "permissions": "0",
            }
        else:
            payload["channel"] = {"id": str(channel), "type": 1, "recipients": [person]}
            payload["user"] = person
        if mangle is not None:
            mangle(payload)
        interaction = Interaction(interaction_id, token, user_id, payload, time.monotonic())
        self.interactions.append(interaction)
        await self.dispatch("INTERACTION_CREATE", payload, None if session is None else [session])
        return interaction

    async def answered(self, interaction: Interaction, timeout: float = 5.0) -> Interaction:
        """Wait until the bot answered ``interaction`` (and, when it deferred, edited its answer in)."""

        def done() -> bool:
            response = interaction.response
            return response is not None and (response["type"] != 5 or bool(interaction.original_edits))

        await self.wait_for(done, timeout)
        return interaction

    def _interaction(self, interaction_id: str | None = None, token: str | None = None) -> Interaction | None:
        return next(
            (
                i
                for i in self.interactions
                if (interaction_id is None or i.id == interaction_id) and (token is None or i.token == token)
            ),
            None,
        )

    async def _callback(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        interaction = self._interaction(request.match_info["interaction_id"], request.match_info["token"])
        if interaction is None or time.monotonic() - interaction.dispatched_at > INTERACTION_DEADLINE_S:
            return _error(404, 10062, "Unknown interaction")
        if interaction.responses:
            return _error(400, 40060, "Interaction has already been acknowledged.")
        body = call.body or {}
        kind, data = body.get("type"), body.get("data") or {}
        problem = form_problem(data) if kind == 9 else message_problem(data)
        if problem is None and len(data.get("content") or "") > MAX_CONTENT:
            problem = f"content must be {MAX_CONTENT} or fewer in length"
        if problem is not None:
            return _error(400, 50035, f"Invalid Form Body: {problem}")
        interaction.responses.append({"type": kind, "data": data, "at": time.monotonic()})
        await self._changed_now()
        flags = data.get("flags", 0)
        resource: dict[str, Any] = {"type": kind}
        answer = {
            "interaction": {
                "id": interaction.id,
                "type": interaction.payload["type"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            },
            "resource": resource,
        }
        if kind == 4:
            shown = {"content": data.get("content", ""), "components": data.get("components")}
            reply = self._message_for(interaction.payload["channel_id"], shown)
            self.messages.remove(reply)  # ephemeral: only the presser sees it, not the channel
            reply["flags"] = flags
            interaction.reply_message = reply
            resource["message"] = reply
            answer["interaction"]["response_message_id"] = reply["id"]
        return _json(answer)

    async def _edit_original(self, request: web.Request) -> web.Response:
        call = await self._record(request)
        interaction = self._interaction(token=request.match_info["token"])
        if interaction is None or not interaction.responses or interaction.responses[0]["type"] not in (4, 5):
            return _error(404, 10008, "Unknown Message")
        body = call.body or {}
        problem = message_problem(body)
        if problem is not None:
            return _error(400, 50035, f"Invalid Form Body: {problem}")
        interaction.original_edits.append(body)
        shown = {"content": body.get("content") or "…", "components": body.get("components")}
        reply = self._message_for(interaction.payload["channel_id"], shown)
        self.messages.remove(reply)
        reply["flags"] = EPHEMERAL
        interaction.reply_message = reply
        await self._changed_now()
        return _json(reply)


def _option_value(select: dict[str, Any], label: str) -> str:
    for option in select.get("options") or []:
        if option["label"] == label:
            return str(option["value"])
    raise LookupError(f"no option {label!r} in {[o['label'] for o in select.get('options') or []]}")


def _guild_of(interaction: Interaction) -> int | None:
    guild = interaction.payload.get("guild_id")
    return int(guild) if guild is not None else None
