"""A local Slack that speaks Slack's wire protocols, for driving slack-bolt and slack_sdk unmodified.

- Web API: ``POST /api/<method>`` with the bot token (or the app token for ``apps.connections.open``),
  answering ``{"ok": ...}`` the way Slack does, checking message limits as Slack does, recording each call.
- Events API: ``deliver()`` POSTs an ``event_callback`` to a gateway, signed with the signing secret
  (v0 HMAC-SHA256 over ``v0:<timestamp>:<body>``), optionally as a retry (``X-Slack-Retry-Num``).
- Socket Mode: ``apps.connections.open`` hands out ``ws://`` URLs to this server; ``push()`` sends an
  envelope over the open connection and waits for the client's acknowledgement.
- Interactivity: ``press()`` presses a control found in a posted message (a button, a select menu's
  option, a checkbox, a link button) as a person would and sends the ``block_actions`` payload Slack
  sends, form-encoded and signed (or over Socket Mode); ``submit()`` fills in and submits a modal the app
  opened with ``views.open`` (text, email and number inputs, date and date-time pickers, selects,
  radio buttons and checkboxes), and checks that ``response_action: errors`` names its input blocks.
  Each press carries a fresh ``trigger_id`` (valid 3 s, once) and a ``response_url``
  on this server. Like Slack, a gateway that does not acknowledge within 3 s has failed the interaction.
- Messages are kept as they are now: ``chat.update`` replaces one, and ``message()`` shows it.
- Rate limits and refusals: ``rate_limit()``, ``refuse()`` and ``fail()`` (an HTTP status, or a dropped
  connection) make the next calls to a method fail; ``heal()`` forgets the failures still queued.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import math
import re
import socket
import time
import urllib.parse
import uuid
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

SECTION_LIMIT = 3_000
TEXT_LIMIT = 40_000
MAX_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
INTERACTION_DEADLINE_S = 3.0  # Slack's wait for an acknowledgement, and a trigger id's life
OPTION_TEXT_LIMIT = 75


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
    ack_deadline: float = INTERACTION_DEADLINE_S  # how long Slack waits for an interaction's ack
    messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (channel, ts) → now
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # modals opened, by view id
    responses: list[dict[str, Any]] = field(default_factory=list)  # bodies posted to response_urls
    interactions: list[tuple[int, bytes]] = field(default_factory=list)  # (status, body) per interaction
    _triggers: dict[str, float] = field(default_factory=dict)  # trigger id → when issued
    _response_urls: set[str] = field(default_factory=set)

    # Server ----------------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)
        app.router.add_post("/respond/{token}", self._respond)
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

    def message(self, posted: dict[str, Any]) -> dict[str, Any]:
        """A posted message (as ``posted()`` lists it) as it is now, after any ``chat.update``."""
        return self.messages[(posted["channel"], posted["ts"])]

    def private_notices(self) -> list[str]:
        """Texts only one person saw: ephemeral messages and ephemeral responses, oldest first."""
        texts = [params.get("text", "") for params in self.ephemerals()]
        return texts + [
            body.get("text", "") for body in self.responses if body.get("response_type") == "ephemeral"
        ]

    def rate_limit(self, method: str, retry_after: float, times: int = 1, after: int = 0) -> None:
        """After ``after`` more calls, the next ``times`` calls to ``method`` answer 429 with Retry-After."""
        self._failures[method].extend([None] * after)
        self._failures[method].extend([_Failure(429, "ratelimited", retry_after)] * times)

    def refuse(self, method: str, error: str, times: int = 1, after: int = 0) -> None:
        """After ``after`` more calls, the next ``times`` calls answer ``{"ok": false, "error": error}``."""
        self._failures[method].extend([None] * after)
        self._failures[method].extend([_Failure(200, error)] * times)

    def fail(self, method: str, status: int, times: int = 1) -> None:
        """The next ``times`` calls to ``method`` answer HTTP ``status`` (0: the connection is dropped)."""
        self._failures[method].extend([_Failure(status, "fatal_error" if status else "")] * times)

    def heal(self, method: str) -> None:
        """Slack is back: the failures still queued for ``method`` are forgotten."""
        self._failures[method].clear()

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
        if failure is not None and failure.status == 0:  # a network failure: no answer at all
            assert request.transport is not None
            request.transport.abort()
            return web.Response(status=500)
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
        message: dict[str, Any] = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id}
        message["ts"] = ts
        message.update({key: params[key] for key in ("text", "blocks", "thread_ts") if key in params})
        message["blocks"] = _blocks(params)
        self.messages[(params["channel"], ts)] = message
        return {"ok": True, "channel": params["channel"], "ts": ts, "message": message}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        current = self.messages.get((params.get("channel", ""), params.get("ts", "")))
        if current is None:
            return {"ok": False, "error": "message_not_found"}
        problem = _message_problem(params)
        if problem:
            return {"ok": False, "error": problem}
        current.update(text=params.get("text", ""), blocks=_blocks(params), edited={"user": self.bot_user_id})
        return {"ok": True, "channel": params["channel"], "ts": params["ts"], "text": current["text"]}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        issued = self._triggers.pop(str(params.get("trigger_id")), None)
        if issued is None:
            return {"ok": False, "error": "invalid_trigger_id"}
        if time.monotonic() - issued > INTERACTION_DEADLINE_S:
            return {"ok": False, "error": "expired_trigger_id"}
        raw = params.get("view")
        view = json.loads(raw) if isinstance(raw, str) else raw
        problem = _view_problem(view)
        if problem or not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": [problem]}}
        view_id = f"V{uuid.uuid4().hex[:10].upper()}"
        opened = {**view, "id": view_id, "hash": uuid.uuid4().hex, "team_id": self.team_id}
        self.views[view_id] = opened
        return {"ok": True, "view": opened}

    def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        problem = _message_problem(params)
        if problem:
            return {"ok": False, "error": problem}
        if not params.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        return {"ok": True, "message_ts": self.next_ts()}

    def _conversations_open(self, params: dict[str, Any]) -> dict[str, Any]:
        """The app's direct message with one person: ``D`` and the rest of their user id."""
        users = str(params.get("users") or "")
        if not re.fullmatch(r"[UW][A-Z0-9]+", users):
            return {"ok": False, "error": "user_not_found"}
        channel = {"id": f"D{users[1:]}", "is_im": True, "user": users}
        return {"ok": True, "channel": channel}

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

    # Interactivity ---------------------------------------------------------------------------------

    def _user(self, user: str) -> dict[str, Any]:
        return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": self.team_id}

    def _trigger(self) -> str:
        trigger_id = f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex}"
        self._triggers[trigger_id] = time.monotonic()
        return trigger_id

    def press_payload(
        self,
        posted: dict[str, Any],
        label: str,
        *,
        user: str,
        ticked: list[str] | None = None,
        value: str | None = None,
    ) -> dict[str, Any]:
        """The ``block_actions`` payload for pressing the control labelled ``label`` in a posted message.

        ``label`` names a button, a select menu's option (chosen) or a checkbox (toggled). ``ticked``
        names the boxes the person has ticked in the message (its ``state.values``). ``value`` replaces
        the control's value, as a forged request would.
        """
        message = dict(self.message(posted))
        blocks = _blocks(posted)
        message["blocks"] = blocks  # what the person's client shows: the message as posted
        action = _find_action(blocks, label)
        if value is not None:
            target = action.get("selected_option") or action
            target["value"] = value
        response_url = f"http://127.0.0.1:{self.port}/respond/{uuid.uuid4().hex}"
        self._response_urls.add(response_url.rsplit("/", 1)[1])
        return {
            "type": "block_actions",
            "user": self._user(user),
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "container": {
                "type": "message",
                "message_ts": posted["ts"],
                "channel_id": posted["channel"],
                "is_ephemeral": False,
                "thread_ts": posted.get("thread_ts"),
            },
            "trigger_id": self._trigger(),
            "team": {"id": self.team_id, "domain": "fake"},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": posted["channel"], "name": "team"},
            "message": message,
            "state": {"values": _message_state(blocks, ticked or [])},
            "response_url": response_url,
            "actions": [action],
        }

    def opened_views(self) -> list[dict[str, Any]]:
        return list(self.views.values())

    def submit_payload(
        self, view: dict[str, Any], *, user: str, fill: Mapping[str, list[str] | str] | None = None
    ) -> dict[str, Any]:
        """The ``view_submission`` payload for a modal, its inputs filled in by label.

        A list names the options chosen in a radio group, checkboxes or a select menu; a string is typed
        into a text box. Inputs not named keep their initial value.
        """
        values: dict[str, Any] = {}
        fill = dict(fill or {})
        for block in view["blocks"]:
            if block.get("type") != "input":
                continue
            values[block["block_id"]] = {
                block["element"]["action_id"]: _input_state(
                    block["element"], fill.pop(block["label"]["text"], None)
                )
            }
        if fill:
            raise AssertionError(f"no input labelled {sorted(fill)} in the view")
        submitted = {**view, "state": {"values": values}}
        return {
            "type": "view_submission",
            "team": {"id": self.team_id, "domain": "fake"},
            "user": self._user(user),
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "trigger_id": self._trigger(),
            "view": submitted,
            "response_urls": [],
            "is_enterprise_install": False,
            "enterprise": None,
        }

    async def interact(self, url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Send an interaction payload as Slack does (form-encoded ``payload=``, signed); returns the
        gateway's status and JSON answer ({} when empty). Past ``ack_deadline`` Slack gives up: status 0."""
        raw = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        stamp = int(time.time())
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": str(stamp),
            "X-Slack-Signature": self.sign(raw, stamp),
        }
        timeout = aiohttp.ClientTimeout(total=self.ack_deadline)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, data=raw, headers=headers) as response,
            ):
                body = await response.read()
                status = response.status
        except TimeoutError:
            status, body = 0, b""
        self.interactions.append((status, body))
        return status, json.loads(body) if body.strip() else {}

    async def press(self, url: str, posted: dict[str, Any], label: str, **kwargs: Any) -> int:
        """Press a control of a posted message (see ``press_payload``) over HTTP; returns the status."""
        status, _ = await self.interact(url, self.press_payload(posted, label, **kwargs))
        return status

    async def submit(
        self, url: str, view: dict[str, Any], *, user: str, fill: Mapping[str, list[str] | str] | None = None
    ) -> dict[str, Any]:
        """Submit a modal over HTTP; returns the gateway's answer (``{}`` closes the modal)."""
        status, answer = await self.interact(url, self.submit_payload(view, user=user, fill=fill))
        if status != 200:
            raise AssertionError(f"the gateway answered the submission with HTTP {status}")
        if answer.get("response_action") == "errors":  # Slack shows each under an input block, by block_id
            inputs = {block["block_id"] for block in view["blocks"] if block.get("type") == "input"}
            errors = answer.get("errors")
            if not isinstance(errors, dict) or not errors or not set(errors) <= inputs:
                raise AssertionError(f"errors must name input blocks of the view: {errors}")
        return answer

    async def _respond(self, request: web.Request) -> web.Response:
        if request.match_info["token"] not in self._response_urls:
            return web.Response(status=404, text="no_such_response_url")
        self.responses.append(await request.json())
        return web.json_response({"ok": True})

    async def wait_for(self, condition: Any, timeout: float = 5.0) -> None:
        """Wait until ``condition()`` is true (a press is handled after it is acknowledged)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("the fake Slack did not see what was expected in time")
            await asyncio.sleep(0.01)

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
        self,
        body: dict[str, Any],
        *,
        retry_attempt: int = 0,
        timeout: float = 5.0,
        envelope_type: str = "events_api",
    ) -> dict[str, Any]:
        """Send an ``events_api`` (or ``interactive``) envelope over the open connection; returns the
        client's ack."""
        open_sockets = [ws for ws in self._sockets if not ws.closed]
        if len(open_sockets) != 1:
            raise AssertionError(f"{len(open_sockets)} Socket Mode connections open, expected 1")
        envelope_id = str(uuid.uuid4())
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[envelope_id] = waiter
        await open_sockets[0].send_json(
            {
                "envelope_id": envelope_id,
                "type": envelope_type,
                "accepts_response_payload": envelope_type == "interactive",
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
        if _blocks_problem(blocks, allow_inputs=False):
            return "invalid_blocks"
    return None


def _blocks(params: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = params.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else list(blocks)


def _text_problem(text: Any, limit: int, what: str) -> str | None:
    if not isinstance(text, dict) or text.get("type") not in ("plain_text", "mrkdwn"):
        return f"{what} is not a text object"
    if not text.get("text") or len(text["text"]) > limit:
        return f"{what} must be 1 to {limit} characters"
    return None


def _options_problem(element: dict[str, Any], limit: int) -> str | None:
    options = element.get("options") or []
    if not 1 <= len(options) <= limit:
        return f"{element['type']} takes 1 to {limit} options"
    values = [option.get("value") for option in options]
    if len(set(values)) != len(values) or not all(isinstance(v, str) and 0 < len(v) <= 150 for v in values):
        return "option values must be unique strings of at most 150 characters"
    for option in options:
        problem = _text_problem(option.get("text"), OPTION_TEXT_LIMIT, "an option's text")
        if problem or ("description" in option and _text_problem(option["description"], 75, "a description")):
            return problem or "an option's description is too long"
    return None


_OPTION_LIMITS = {
    "checkboxes": 10,
    "radio_buttons": 10,
    "static_select": 100,
    "multi_static_select": 100,
}
_TEXT_ELEMENTS = {"plain_text_input", "email_text_input", "number_input"}
_INPUT_ELEMENTS = {*_TEXT_ELEMENTS, "datepicker", "datetimepicker", *_OPTION_LIMITS}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _element_problem(element: dict[str, Any]) -> str | None:
    """What Slack would refuse in an interactive element (the limits the gateway relies on)."""
    kind = element.get("type")
    action_id = element.get("action_id")
    if not isinstance(action_id, str) or not 0 < len(action_id) <= 255:
        return "action_id must be 1 to 255 characters"
    if kind == "button":
        value = element.get("value", "")
        if len(value) > 2_000:
            return "a button's value is at most 2000 characters"
        url = element.get("url")
        if url is not None and not (isinstance(url, str) and 0 < len(url) <= 3_000):
            return "a button's url is 1 to 3000 characters"
        return _text_problem(element.get("text"), OPTION_TEXT_LIMIT, "a button's text")
    if kind in _OPTION_LIMITS:
        return _options_problem(element, _OPTION_LIMITS[kind])
    if kind == "plain_text_input":
        longest, shortest = element.get("max_length", 3_000), element.get("min_length", 0)
        if not (0 < longest <= 3_000 and 0 <= shortest <= 3_000 and shortest <= longest):
            return "min_length and max_length are 0 to 3000, the minimum no greater than the maximum"
        return None
    if kind == "number_input":
        return _number_input_problem(element)
    if kind == "datepicker":
        initial = element.get("initial_date")
        return None if initial is None or _DATE.fullmatch(str(initial)) else "initial_date is YYYY-MM-DD"
    if kind == "datetimepicker":
        initial = element.get("initial_date_time")
        return None if initial is None or isinstance(initial, int) else "initial_date_time is a timestamp"
    if kind == "email_text_input":
        return None
    return f"unknown element type {kind!r}"


def _number_input_problem(element: dict[str, Any]) -> str | None:
    """A number input: ``is_decimal_allowed`` given, bounds and initial value numbers as strings, in order."""
    if not isinstance(element.get("is_decimal_allowed"), bool):
        return "a number_input needs is_decimal_allowed"
    numbers: dict[str, float] = {}
    for key in ("min_value", "max_value", "initial_value"):
        if key in element:
            try:
                numbers[key] = float(element[key]) if isinstance(element[key], str) else float("nan")
            except ValueError:
                return f"{key} is a number as a string"
            if numbers[key] != numbers[key]:
                return f"{key} is a number as a string"
    if numbers.get("min_value", -math.inf) > numbers.get("max_value", math.inf):
        return "min_value cannot be greater than max_value"
    return None


def _blocks_problem(blocks: list[dict[str, Any]], *, allow_inputs: bool) -> str | None:
    """Block Kit rules for actions, input, context and rich_text blocks; unique block and action ids."""
    block_ids = [block["block_id"] for block in blocks if "block_id" in block]
    if len(set(block_ids)) != len(block_ids) or any(len(block_id) > 255 for block_id in block_ids):
        return "block_id values must be unique and at most 255 characters"
    for block in blocks:
        kind = block.get("type")
        if kind == "actions":
            elements = block.get("elements") or []
            action_ids = [element.get("action_id") for element in elements]
            if not 1 <= len(elements) <= 25 or len(set(action_ids)) != len(action_ids):
                return "an actions block takes 1 to 25 elements with unique action_id values"
            if any(element.get("type") == "plain_text_input" for element in elements):
                return "a text input belongs in an input block"
            problem = next(filter(None, map(_element_problem, elements)), None)
            if problem:
                return problem
        elif kind == "input":
            if not allow_inputs:
                return "input blocks belong in modals"
            element = block.get("element") or {}
            if element.get("type") not in _INPUT_ELEMENTS:
                return "unsupported input element"
            problem = _text_problem(block.get("label"), 2_000, "a label") or _element_problem(element)
            if problem:
                return problem
        elif kind == "context":
            if not 1 <= len(block.get("elements") or []) <= 10:
                return "a context block takes 1 to 10 elements"
        elif kind == "rich_text":
            if not block.get("elements"):
                return "a rich_text block needs elements"
        elif kind != "section":
            return f"unknown block type {kind!r}"
    return None


def _view_problem(view: Any) -> str | None:
    """What Slack would refuse in a modal opened with ``views.open``."""
    if not isinstance(view, dict) or view.get("type") != "modal":
        return "view must be a modal"
    for key in ("title", "submit", "close"):
        if key in view and _text_problem(view[key], 24, key):
            return f"{key} must be plain text of 1 to 24 characters"
    if len(view.get("private_metadata", "")) > 3_000 or len(view.get("callback_id", "")) > 255:
        return "private_metadata or callback_id too long"
    blocks = view.get("blocks") or []
    if not 1 <= len(blocks) <= MAX_VIEW_BLOCKS:
        return "a view takes 1 to 100 blocks"
    if any(block.get("type") == "input" for block in blocks) and "submit" not in view:
        return "a view with inputs needs a submit button"
    if sum(1 for block in blocks if (block.get("element") or {}).get("focus_on_load")) > 1:
        return "only one element may have focus_on_load"
    return _blocks_problem(blocks, allow_inputs=True)


def _find_action(blocks: list[dict[str, Any]], label: str) -> dict[str, Any]:
    """The action Slack reports when a person presses the control labelled ``label``."""
    now = f"{time.time():.6f}"
    for block in blocks:
        if block.get("type") != "actions":
            continue
        for element in block["elements"]:
            common = {
                "type": element["type"],
                "action_id": element["action_id"],
                "block_id": block["block_id"],
            }
            if element["type"] == "button" and element["text"]["text"] == label:
                return {**common, "text": element["text"], "value": element.get("value"), "action_ts": now}
            for option in element.get("options") or []:
                if option["text"]["text"] != label:
                    continue
                if element["type"] == "static_select":
                    return {**common, "selected_option": dict(option), "action_ts": now}
                return {**common, "selected_options": [dict(option)], "action_ts": now}
    raise AssertionError(f"no control labelled {label!r} in the message")


def _message_state(blocks: list[dict[str, Any]], ticked: list[str]) -> dict[str, Any]:
    """A message's ``state.values``: what its stateful elements hold for the person pressing."""
    values: dict[str, Any] = {}
    for block in blocks:
        for element in (block.get("elements") or []) if block.get("type") == "actions" else []:
            if element["type"] in ("checkboxes", "multi_static_select"):
                chosen = [dict(option) for option in element["options"] if option["text"]["text"] in ticked]
                state = {"type": element["type"], "selected_options": chosen}
                values.setdefault(block["block_id"], {})[element["action_id"]] = state
    return values


def _input_state(element: dict[str, Any], filled: list[str] | str | None) -> dict[str, Any]:
    """An input element's entry in a submitted view's ``state.values``."""
    kind = element["type"]
    if kind in _TEXT_ELEMENTS:
        value = filled if isinstance(filled, str) else element.get("initial_value")
        return {"type": kind, "value": value or None}
    if kind == "datepicker":
        day = filled if isinstance(filled, str) else element.get("initial_date")
        return {"type": kind, "selected_date": day or None}
    if kind == "datetimepicker":
        moment = int(filled) if isinstance(filled, str) else element.get("initial_date_time")
        return {"type": kind, "selected_date_time": moment}
    options = element.get("options") or []
    if filled is None:
        chosen = list(element.get("initial_options") or [])
        if "initial_option" in element:
            chosen = [element["initial_option"]]
    else:
        labels = [filled] if isinstance(filled, str) else filled
        chosen = [option for option in options if option["text"]["text"] in labels]
        if len(chosen) != len(labels):
            raise AssertionError(f"not every one of {labels} is an option of the input")
    if kind in ("checkboxes", "multi_static_select"):
        return {"type": kind, "selected_options": chosen}
    return {"type": kind, "selected_option": chosen[0] if chosen else None}


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
