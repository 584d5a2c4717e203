"""A wire-level fake of the Telegram Bot API on 127.0.0.1, for python-telegram-bot to talk to.

It speaks the real protocol (``/bot<token>/<method>``, form-encoded requests, ``{"ok": …}`` answers),
records every call, serves ``getUpdates`` long polls with Telegram's offset rules (an update stays until
an offset above it confirms it; a second concurrent poll ends the first with 409 Conflict), pushes
updates to a webhook with the secret header, and answers 429 with ``retry_after`` when told to.

It keeps each message the bot sent as Telegram shows it now (text and inline keyboard, after edits), so
a test presses the buttons the bot actually posted: a callback query carries the message as it stands,
and answerCallbackQuery is accepted once per query, as Telegram does.

With ``privacy_mode`` it withholds group messages the bot would not get (only replies to the bot's
messages, commands and service messages reach it), and ``type_message`` writes as a Telegram app does: a
ForceReply addressed to the writer makes the message a reply to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

JSON_FIELDS = frozenset(
    {"reply_markup", "reply_parameters", "allowed_updates", "entities", "link_preview_options"}
)
INT_FIELDS = frozenset(
    {"chat_id", "message_thread_id", "offset", "timeout", "limit", "reply_to_message_id", "message_id"}
)
BOOL_FIELDS = frozenset({"show_alert"})
CONFLICT_OTHER_POLL = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
CONFLICT_WEBHOOK = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete it first"
)


@dataclass
class Call:
    """One API request as the fake received it: the method and its decoded parameters."""

    method: str
    params: dict[str, Any]
    status: int = 200
    at: float = field(default_factory=time.monotonic)


@dataclass
class Sent:
    """A message the bot sent."""

    message_id: int
    chat_id: int
    text: str
    topic_id: int | None
    reply_to: int | None
    reply_markup: dict[str, Any] | None


@dataclass(frozen=True)
class Button:
    """An inline keyboard button as the bot posted it: its callback data, or the link it opens."""

    text: str
    data: str
    url: str | None = None


@dataclass
class Edit:
    """An edit of a message the bot sent: its new text (None: kept) and keyboard (None: removed)."""

    method: str
    message_id: int
    text: str | None
    reply_markup: dict[str, Any] | None


@dataclass
class _Poll:
    request: web.Request
    terminated: bool = False

    @property
    def connected(self) -> bool:
        transport = self.request.transport
        return transport is not None and not transport.is_closing()


def _decode(params: dict[str, str]) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    for name, value in params.items():
        if name in JSON_FIELDS:
            decoded[name] = json.loads(value)
        elif name in BOOL_FIELDS:
            decoded[name] = value.lower() in ("true", "1")
        elif name in INT_FIELDS:
            number = float(value)
            decoded[name] = int(number) if number.is_integer() else number
        else:
            decoded[name] = value
    return decoded


def _keyboard_problem(markup: dict[str, Any] | None) -> str | None:
    """What Telegram would refuse in an inline keyboard: a button needs exactly one action, callback data
    of 1-64 bytes, a link with a dotted host (``localhost`` is BUTTON_URL_INVALID)."""
    for row in (markup or {}).get("inline_keyboard", []):
        for button in row:
            actions = [key for key in button if key != "text"]
            if len(actions) != 1:
                return "can't parse inline keyboard button: exactly one optional field must be used"
            data = button.get("callback_data")
            if data is not None and not 1 <= len(data.encode()) <= 64:
                return "BUTTON_DATA_INVALID"
            url = button.get("url")
            if url is not None and "." not in (urlsplit(url).hostname or ""):
                return "BUTTON_URL_INVALID"
    return None


class FakeTelegram:
    """The Bot API for one bot ``token``. ``base_url`` is python-telegram-bot's ``base_url`` for it."""

    def __init__(self, token: str, *, username: str = "threadgate_bot", privacy_mode: bool = False) -> None:
        self.token = token
        self.privacy_mode = privacy_mode
        self.withheld: list[dict[str, Any]] = []  # group messages privacy mode kept from the bot
        self._written: dict[int, tuple[int, int]] = {}  # a person's message id → (chat id, user id)
        self.bot_id = int(token.split(":")[0])
        self.username = username
        self.calls: list[Call] = []
        self.sent: list[Sent] = []
        self.messages: dict[int, dict[str, Any]] = {}  # what the bot sent, as it stands now
        self.edits: list[Edit] = []
        self.press_answers: dict[str, dict[str, Any]] = {}  # callback query id → the bot's answer
        self._queries: set[str] = set()
        self._query_ids = itertools.count(9_000_000)
        self.updates: list[dict[str, Any]] = []
        self.confirmed_below = 0
        self.webhook: tuple[str, str | None] | None = None
        self.conflicts = 0
        self.max_concurrent_polls = 0
        self._polls: list[_Poll] = []
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(5000)
        self._limits: dict[str, list[float]] = {}
        self._outages: dict[str, list[int]] = {}
        self._forbidden: set[int] = set()
        self._not_started: set[int] = set()  # people who never started the bot: no private chat yet
        self._changed = asyncio.Condition()
        self._closing = False
        self._runner: web.AppRunner | None = None
        self.port = 0

    # Server ----------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        self._closing = True
        await self._notify()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.content_type == "application/json":
            raw = {
                key: json.dumps(value) if isinstance(value, dict | list) else str(value)
                for key, value in (await request.json()).items()
            }
        else:
            raw = {key: str(value) for key, value in (await request.post()).items()}
        call = Call(method, _decode(raw))
        self.calls.append(call)
        if request.match_info["token"] != self.token:
            return self._fail(call, 401, "Unauthorized")
        if self._outages.get(method):
            return self._fail(call, self._outages[method].pop(0), "Internal Server Error")
        limits = self._limits.get(method)
        if limits:
            retry_after = limits.pop(0)
            return self._fail(
                call, 429, f"Too Many Requests: retry after {retry_after:g}", {"retry_after": retry_after}
            )
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return self._fail(call, 404, "Not Found")
        response: web.Response = await handler(call, request)
        return response

    def _ok(self, result: Any) -> web.Response:
        return web.json_response({"ok": True, "result": result})

    def _fail(
        self, call: Call, code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> web.Response:
        call.status = code
        body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return web.json_response(body, status=code)

    # Methods ---------------------------------------------------------------------------------------

    def bot_user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": "Threadgate", "username": self.username}

    async def _m_getMe(self, call: Call, request: web.Request) -> web.Response:
        return self._ok({**self.bot_user(), "can_join_groups": True, "can_read_all_group_messages": False})

    async def _m_setWebhook(self, call: Call, request: web.Request) -> web.Response:
        self.webhook = (call.params["url"], call.params.get("secret_token"))
        return self._ok(True)

    async def _m_deleteWebhook(self, call: Call, request: web.Request) -> web.Response:
        self.webhook = None
        return self._ok(True)

    async def _m_sendMessage(self, call: Call, request: web.Request) -> web.Response:
        params = call.params
        chat_id = params["chat_id"]
        if chat_id in self._forbidden:
            return self._fail(call, 403, "Forbidden: bot was kicked from the group chat")
        if chat_id in self._not_started:
            return self._fail(call, 403, "Forbidden: bot can't initiate conversation with a user")
        refused = _keyboard_problem(params.get("reply_markup"))
        if refused is not None:
            return self._fail(call, 400, f"Bad Request: {refused}")
        reply = params.get("reply_parameters") or {}
        sent = Sent(
            message_id=next(self._message_ids),
            chat_id=chat_id,
            text=params["text"],
            topic_id=params.get("message_thread_id"),
            reply_to=reply.get("message_id", params.get("reply_to_message_id")),
            reply_markup=params.get("reply_markup"),
        )
        message: dict[str, Any] = {
            "message_id": sent.message_id,
            "date": int(time.time()),
            "chat": self._chat(chat_id),
            "from": self.bot_user(),
            "text": sent.text,
        }
        if sent.topic_id is not None:
            message.update(message_thread_id=sent.topic_id, is_topic_message=True)
        if params.get("entities"):
            message["entities"] = params["entities"]
        if sent.reply_markup and "inline_keyboard" in sent.reply_markup:  # ForceReply is not shown back
            message["reply_markup"] = sent.reply_markup
        self.messages[sent.message_id] = message
        self.sent.append(sent)
        await self._notify()
        return self._ok(message)

    def _editable(self, call: Call) -> dict[str, Any] | web.Response:
        message = self.messages.get(call.params.get("message_id", -1))
        if message is None or message["chat"]["id"] != call.params.get("chat_id"):
            return self._fail(call, 400, "Bad Request: message to edit not found")
        return message

    async def _m_editMessageText(self, call: Call, request: web.Request) -> web.Response:
        message = self._editable(call)
        if isinstance(message, web.Response):
            return message
        refused = _keyboard_problem(call.params.get("reply_markup"))
        if refused is not None:
            return self._fail(call, 400, f"Bad Request: {refused}")
        text, markup = call.params["text"], call.params.get("reply_markup")
        if text == message["text"] and markup == message.get("reply_markup"):
            return self._fail(
                call,
                400,
                "Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message",
            )
        message["text"] = text
        message.pop("entities", None)
        if markup is None:  # editing the text without a keyboard removes the keyboard
            message.pop("reply_markup", None)
        else:
            message["reply_markup"] = markup
        self.edits.append(Edit("editMessageText", message["message_id"], text, markup))
        await self._notify()
        return self._ok(message)

    async def _m_editMessageReplyMarkup(self, call: Call, request: web.Request) -> web.Response:
        message = self._editable(call)
        if isinstance(message, web.Response):
            return message
        markup = call.params.get("reply_markup")
        if markup == message.get("reply_markup"):
            return self._fail(call, 400, "Bad Request: message is not modified")
        if markup is None:
            message.pop("reply_markup", None)
        else:
            message["reply_markup"] = markup
        self.edits.append(Edit("editMessageReplyMarkup", message["message_id"], None, markup))
        await self._notify()
        return self._ok(message)

    async def _m_answerCallbackQuery(self, call: Call, request: web.Request) -> web.Response:
        query_id = call.params["callback_query_id"]
        if query_id not in self._queries or query_id in self.press_answers:
            return self._fail(
                call, 400, "Bad Request: query is too old and response timeout expired or query ID is invalid"
            )
        self.press_answers[query_id] = {
            "text": call.params.get("text"),
            "show_alert": call.params.get("show_alert", False),
        }
        await self._notify()
        return self._ok(True)

    async def _m_getUpdates(self, call: Call, request: web.Request) -> web.Response:
        if self.webhook is not None:
            return self._fail(call, 409, CONFLICT_WEBHOOK)
        offset = call.params.get("offset")
        if offset is not None:
            self.confirmed_below = max(self.confirmed_below, offset)
        for earlier in self._polls:  # Telegram ends the older long poll when a newer one arrives
            if not earlier.terminated and earlier.connected:
                self.conflicts += 1
            earlier.terminated = True
        poll = _Poll(request)
        self._polls.append(poll)
        self.max_concurrent_polls = max(self.max_concurrent_polls, sum(p.connected for p in self._polls))
        await self._notify()
        try:
            async with self._changed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._changed.wait_for(
                            lambda: poll.terminated or self._closing or bool(self.pending())
                        ),
                        float(call.params.get("timeout", 0)),
                    )
        finally:
            self._polls.remove(poll)
        if poll.terminated:
            return self._fail(call, 409, CONFLICT_OTHER_POLL)
        return self._ok(self.pending()[: call.params.get("limit", 100)])

    # What tests do ---------------------------------------------------------------------------------

    def pending(self) -> list[dict[str, Any]]:
        """Updates not yet confirmed by an offset, oldest first."""
        return [update for update in self.updates if update["update_id"] >= self.confirmed_below]

    def _chat(self, chat_id: int) -> dict[str, Any]:
        return {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}

    def message(
        self,
        chat_id: int,
        user_id: int,
        text: str | None,
        *,
        is_bot: bool = False,
        topic_id: int | None = None,
        reply_to: int | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """A message as Telegram would put it in an update (with a fresh message id)."""
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chat(chat_id),
            "from": {"id": user_id, "is_bot": is_bot, "first_name": f"user{user_id}"},
            **extra,
        }
        if text is not None:
            message["text"] = text
        if topic_id is not None:
            message.update(message_thread_id=topic_id, is_topic_message=True)
            message["chat"]["is_forum"] = True
        if reply_to is not None:
            message["reply_to_message"] = dict(self.messages[reply_to])
        self._written[message["message_id"]] = (chat_id, user_id)
        return message

    # What a Telegram app does ----------------------------------------------------------------------

    def force_reply_for(self, chat_id: int, user_id: int, topic_id: int | None = None) -> int | None:
        """The bot's message a person's app is set to reply to: the latest one in the chat (or topic) with
        a ForceReply for them (selective: they wrote the message it answers, or it mentions them) that
        came after their own last message there."""
        own = [mid for mid, written in self._written.items() if written == (chat_id, user_id)]
        since = max(own, default=0)
        for sent in reversed(self.sent):
            if sent.message_id <= since:
                return None
            if (sent.chat_id, sent.topic_id) == (chat_id, topic_id) and self._asks(sent, user_id):
                return sent.message_id
        return None

    def _asks(self, sent: Sent, user_id: int) -> bool:
        markup = sent.reply_markup or {}
        if not markup.get("force_reply"):
            return False
        if not markup.get("selective"):
            return True
        answered = self._written.get(sent.reply_to or 0)
        mentioned = any(
            entity.get("user", {}).get("id") == user_id
            for entity in self.messages[sent.message_id].get("entities", [])
        )
        return mentioned or (answered is not None and answered[1] == user_id)

    async def type_message(
        self, chat_id: int, user_id: int, text: str, *, topic_id: int | None = None
    ) -> dict[str, Any]:
        """Someone types ``text`` into the chat's input field and sends it, without choosing to reply: a
        ForceReply for them makes it a reply to that message, as their app would."""
        reply_to = self.force_reply_for(chat_id, user_id, topic_id)
        return await self.say(chat_id, user_id, text, topic_id=topic_id, reply_to=reply_to)

    def reaches_bot(self, message: dict[str, Any]) -> bool:
        """Whether Telegram gives the bot this message: in a group with privacy mode on, only replies to
        the bot's messages, commands and service messages."""
        if not self.privacy_mode or message["chat"]["id"] > 0:
            return True
        text = message.get("text")
        replied = message.get("reply_to_message") or {}
        to_bot = replied.get("from", {}).get("id") == self.bot_id
        return text is None or text.startswith("/") or to_bot

    # Buttons ---------------------------------------------------------------------------------------

    def buttons(self, message_id: int) -> list[Button]:
        """The inline buttons of a message the bot sent, as it shows them now, row by row."""
        markup = self.messages[message_id].get("reply_markup") or {}
        return [
            Button(button["text"], button.get("callback_data", ""), button.get("url"))
            for row in markup.get("inline_keyboard", [])
            for button in row
        ]

    def button(self, message_id: int, text: str) -> Button:
        """The button of that message whose text is ``text`` (or ends with it)."""
        [found] = [b for b in self.buttons(message_id) if b.text == text or b.text.endswith(text)]
        return found

    def press_update(
        self, user_id: int, message_id: int, data: str, *, first_name: str | None = None
    ) -> dict[str, Any]:
        """A callback query update: ``user_id`` pressed a button carrying ``data`` on that message."""
        query_id = str(next(self._query_ids))
        self._queries.add(query_id)
        user = {"id": user_id, "is_bot": False, "first_name": first_name or f"user{user_id}"}
        query = {
            "id": query_id,
            "from": user,
            "chat_instance": "-4242",
            "data": data,
            "message": dict(self.messages[message_id]),
        }
        return {"update_id": next(self._update_ids), "callback_query": query}

    async def press(self, user_id: int, message_id: int, data: str, **kwargs: Any) -> dict[str, Any]:
        """Someone presses a button: the callback query is queued for polling."""
        return await self.push(self.press_update(user_id, message_id, data, **kwargs))

    async def answered(self, update: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """The bot's answerCallbackQuery to a press, once it came."""
        query_id = update["callback_query"]["id"]
        await self.wait_for(lambda: query_id in self.press_answers, timeout)
        return self.press_answers[query_id]

    def update(self, message: dict[str, Any]) -> dict[str, Any]:
        """A fresh update carrying ``message``, not yet queued."""
        return {"update_id": next(self._update_ids), "message": message}

    async def push(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update for getUpdates (as Telegram does when someone writes to the bot); a message
        privacy mode keeps from the bot is withheld instead."""
        if "message" in update and not self.reaches_bot(update["message"]):
            self.withheld.append(update)
            return update
        self.updates.append(update)
        await self._notify()
        return update

    async def say(self, chat_id: int, user_id: int, text: str | None, **kwargs: Any) -> dict[str, Any]:
        """Someone writes ``text`` in ``chat_id``: the update is queued for polling."""
        return await self.push(self.update(self.message(chat_id, user_id, text, **kwargs)))

    def replay_from(self, update_id: int) -> None:
        """Forget confirmations from ``update_id`` on, as when a poller died before confirming them."""
        self.confirmed_below = min(self.confirmed_below, update_id)

    async def confirmed(self, update_id: int, timeout: float = 5.0) -> None:
        """Wait until a poll's offset confirms ``update_id`` (the poller handled it)."""
        await self.wait_for(lambda: self.confirmed_below > update_id, timeout)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    async def wait_sent(self, count: int, timeout: float = 5.0) -> list[Sent]:
        await self.wait_for(lambda: len(self.sent) >= count, timeout)
        return self.sent

    def rate_limit(self, method: str, retry_after: float, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with 429 and ``retry_after``."""
        self._limits.setdefault(method, []).extend([retry_after] * times)

    def fail(self, method: str, status: int = 500, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with HTTP ``status`` (Telegram is having trouble)."""
        self._outages.setdefault(method, []).extend([status] * times)

    def heal(self, method: str) -> None:
        """Telegram is back: the failures still queued for ``method`` are forgotten."""
        self._limits.pop(method, None)
        self._outages.pop(method, None)

    def forbid(self, chat_id: int) -> None:
        """The bot was removed from ``chat_id``: sending there answers 403."""
        self._forbidden.add(chat_id)

    def never_started(self, user_id: int) -> None:
        """``user_id`` never started the bot: it may not write in their private chat (403)."""
        self._not_started.add(user_id)

    def calls_of(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    async def deliver(
        self, update: dict[str, Any], *, secret: str | None = None, url: str | None = None
    ) -> int:
        """POST ``update`` to the webhook set with setWebhook (or to ``url``, another process's copy of
        it), with its secret (or ``secret``); the status."""
        assert self.webhook is not None, "no webhook is set"
        known_url, known_secret = self.webhook
        url = url or known_url
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret if secret is not None else known_secret or ""}
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, json=update, headers=headers) as reply,
        ):
            return reply.status
