"""The web channel: its "platform" is the thread's item log, which the chat page reads live.

Posting needs no network: the core logs every item it posts, and the page streams that log
(``GET /chat/{room}/events``, Server-Sent Events). People's messages arrive at
``POST /chat/{room}/messages`` and go to the core like any platform's. What it reads beyond its sink (the
log, who may read a room, rate limits, whether the store answers, who a session cookie is) it asks of the
core's services for channels at start (``ChannelContext.services``). With sign-in configured, a visitor
with a session is that person (``person:<id>``) on every route, whatever name they send.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, StrictBool, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from channels.web.access import NEEDS_TOKEN, SignInError, WebAccess, may_read_room
from channels.web.limits import MAX_MESSAGE_CHARS, WebLimits, admit_post, check_size
from channels.web.page import asset, chat_page
from gateway.sdk import (
    MAX_NOTE_CHARS,
    RESTART_HINT,
    STREAM_ID_PROBLEM,
    Audiences,
    ChannelContext,
    GatewayError,
    InboundMessage,
    InboundSink,
    MessageRef,
    ProcessState,
    PromptKind,
    PromptView,
    RateLimiter,
    Reader,
    Received,
    SignedIn,
    SignedInPeople,
    StreamCaps,
    ThreadItem,
    ThreadLog,
    ThreadRef,
    client_address,
    event_stream,
    is_json_media_type,
    is_stream_position,
    notices,
    parse_json,
    parse_thread_id,
    store_unavailable,
    unsupported_media_type,
)

# A message at its cap with every character sent as an escaped surrogate pair (12 bytes), and the rest.
MAX_BODY = 12 * MAX_MESSAGE_CHARS + 64 * 1024
MAX_ROOM = 64
SUFFIX_CHARS = 10


def session_room(room: str) -> str:
    """A fresh thread id for a session started from ``web:<room>``: the room name plus a random suffix."""
    return f"web:{room[: MAX_ROOM - SUFFIX_CHARS - 1]}-{uuid.uuid4().hex[:SUFFIX_CHARS]}"


def room_url(base_url: str, room: str) -> str:
    """Where a person opens ``web:<room>`` on a gateway reached at ``base_url``."""
    return f"{base_url.rstrip('/')}/chat/{room}"


def own_room(lobby: str, name: str) -> str:
    """The room a lobby sends ``name`` on to: ``<lobby>-<name>``. A room name has no dots, so a name with
    one (or one too long) is told apart from its look-alikes (``bob.smith``, ``bob_smith``) by a digest."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    slug = name if "." not in name else f"{name.replace('.', '_')}-{digest[:6]}"
    room = f"{lobby}-{slug}"
    return room if len(room) <= MAX_ROOM else f"{lobby[: MAX_ROOM - 13]}-{digest[:12]}"


class WebPost(BaseModel):
    """A message typed on the chat page: who (a chosen name, unless the token names them) and what."""

    name: str | None = Field(default=None, max_length=64)
    text: str = ""  # at most MAX_MESSAGE_CHARS with the answers: 413 TOO_LARGE, not a validation error
    answers: list[dict[str, Any]] | None = Field(default=None, max_length=10)
    prompt_id: str | None = Field(default=None, max_length=64)
    client_id: str | None = Field(default=None, max_length=64)
    decline: StrictBool = False  # the Decline button of a form or a URL step; JSON true only
    # An approval's Deny-with-reason words, and the call's arguments from its Edit-and-approve form.
    note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    arguments: dict[str, Any] | None = None
    grant: StrictBool = False  # "Approve for this session": with Approve, the exact call for the run


class SignIn(BaseModel):
    """A sign-in by name (and the web token); with a session, any ``name`` is ignored."""

    name: str | None = Field(default=None, max_length=64)


def _error(code: str, message: str, status: int) -> JSONResponse:
    return _refusal(GatewayError(code, message, status))


def _refusal(error: GatewayError) -> JSONResponse:
    """The error envelope; a refusal that says when to retry sends it as ``Retry-After`` too."""
    retry_after = error.details.get("retry_after")
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse(error.envelope(), status_code=error.status, headers=headers)


def _signed_out(error: GatewayError) -> JSONResponse:
    """A refusal of the session cookie; one that ended (401) is also cleared, so the page can sign in by
    name or token again without the dead cookie in the way."""
    response = _refusal(error)
    if error.status == 401:
        response.delete_cookie(SignedInPeople.cookie, path="/", httponly=True, samesite="lax")
    return response


def _not_visible(room: str) -> JSONResponse:
    """A room the reader may not see does not exist for them (as another agent's run for a token)."""
    message = f"No room {room!r} here for you; check its name, or sign in as someone who takes part in it."
    return _error("ROOM_NOT_FOUND", message, 404)


def _not_json(request: Request) -> JSONResponse | None:
    """415 for a body of another type: a page on any site can make a browser post a form or
    ``text/plain`` here without asking first, but never ``application/json``."""
    content_type = request.headers.get("content-type")
    if is_json_media_type(content_type):
        return None
    refused = unsupported_media_type(content_type)
    return JSONResponse(refused.envelope(), status_code=refused.status)


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header[:7].lower() == "bearer " else None


def _with_typing_hint(item: dict[str, Any]) -> None:
    """A pending approval's card says how typing answers it in the core's words (``typing_hint``) and, when
    it is about a call one approver settles, labels its "Approve for this session" button in them
    (``session_label``)."""
    meta = item.get("metadata")
    prompt = meta.get("prompt") if isinstance(meta, dict) and item.get("type") == "pending_prompt" else None
    if isinstance(prompt, dict) and prompt.get("kind") == PromptKind.APPROVAL:
        prompt["typing_hint"] = notices.approval_hint(prompt.get("editable") is True)
        view = PromptView.of_fields(prompt)
        if view is not None and view.grantable:
            prompt["session_label"] = notices.APPROVE_FOR_SESSION


def _reader_of(person: SignedIn) -> Reader:
    """A signed-in person reads as ``person:<id>``, with their linked identities and session's groups."""
    return Reader(identity=person.identity, identities=person.identities, groups=person.groups)


@dataclass(frozen=True, slots=True)
class _Running:
    """What the channel holds while the gateway runs: from its context, and the core's services it uses.
    Without the facts of who may read a room (``audiences``) nothing is shown; without a limiter, posts
    are not counted; without ``signed_in`` (sign-in not configured) nobody chats as a signed-in person."""

    sink: InboundSink
    public_url: str | None
    log: ThreadLog
    audiences: Audiences | None
    limiter: RateLimiter | None
    state: ProcessState
    signed_in: SignedInPeople | None = None

    @classmethod
    def of(cls, context: ChannelContext) -> _Running:
        services = context.services
        return cls(
            context.sink,
            context.public_url,
            services.need(ThreadLog),  # the chat is the thread's log: nothing to serve without it
            services.get(Audiences),
            services.get(RateLimiter),
            services.get(ProcessState) or ProcessState(),
            services.get(SignedInPeople),
        )


class WebChannel:
    """A chat channel served by the gateway at ``/chat/<room>``.

    ``tokens`` is ``THREADGATE_WEB_TOKEN`` (see ``WebAccess``); without it anyone who reaches the page
    signs in with a name of their choosing, as in ``threadgate demo``. ``heartbeat_s`` is how often an
    idle event stream sends a comment line (and notices that the gateway is stopping); ``limits`` bound
    what one visitor may write and how many chat streams are open at once (``streams``, counted apart from
    agents' API streams, so visitors never take an agent's room). ``lobby`` names a room whose visitors
    are each sent on to a room of their own (``own_room``), so two people trying the demo never answer
    each other's prompts.
    """

    platform = "web"

    def __init__(
        self,
        tokens: str | None = None,
        *,
        heartbeat_s: float = 15.0,
        limits: WebLimits | None = None,
        lobby: str | None = None,
    ) -> None:
        self.access = WebAccess(tokens)
        self.heartbeat_s = heartbeat_s
        self.limits = limits or WebLimits()
        self.streams = StreamCaps(self.limits.streams_per_client, self.limits.streams)
        self.lobby = lobby
        self._context: _Running | None = None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        return MessageRef(thread.thread_id, uuid.uuid4().hex)

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        """A new room beside the channel's (``web:<room>-<suffix>``); the core logs the header into it."""
        return session_room(channel.parts[0])

    async def start(self, context: ChannelContext) -> None:
        self._context = _Running.of(context)

    def permalink(self, thread_id: str) -> str | None:
        """The room's chat page, under the gateway's public URL or bound address (None before start)."""
        base = self._context.public_url if self._context is not None else None
        if base is None or not thread_id.startswith("web:"):
            return None
        return room_url(base, thread_id.removeprefix("web:"))

    async def stop(self) -> None:
        self._context = None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/chat-assets/{name}", asset, methods=["GET"]),
            Route("/chat/{room}", self._page, methods=["GET"]),
            Route("/chat/{room}/session", self._session, methods=["POST"]),
            Route("/chat/{room}/events", self._events, methods=["GET"]),
            Route("/chat/{room}/messages", self._receive, methods=["POST"]),
        ]

    # Routes ---------------------------------------------------------------------------------------

    async def _page(self, request: Request) -> Response:
        try:
            thread = parse_thread_id(f"web:{request.path_params['room']}")
        except GatewayError as exc:
            return _refusal(exc)
        signed_in = self._context is not None and self._context.signed_in is not None
        return chat_page(thread.parts[0], "name" if self.access.open else "token", signed_in)

    async def _person(self, request: Request, *, write: bool = False) -> SignedIn | None:
        """The signed-in person of the request's session cookie (None: sign-in is not configured, or no
        cookie). A dead session is 401, unless the request also brings a web token, which then signs in
        as before; a ``write`` not sent as JSON from a same-origin page is 403 (``GatewayError``)."""
        people = self._context.signed_in if self._context is not None else None
        if people is None or not people.has_session(request.headers):
            return None
        try:
            return await people.person(request.headers, write=write)
        except GatewayError as exc:
            if exc.status == 401 and _bearer(request):
                return None
            raise

    def _signed(self, request: Request, name: str, identity: str, key: str, **more: Any) -> JSONResponse:
        """What a checked sign-in answers: the name shown, the identity posted as, and in the lobby the
        ``room`` the page moves on to (``key`` names it: the chosen name, or the person's id)."""
        signed: dict[str, Any] = {"name": name, "identity": identity, **more}
        if self.lobby is not None and request.path_params["room"] == self.lobby:
            signed["room"] = own_room(self.lobby, key)
        return JSONResponse(signed)

    async def _session(self, request: Request) -> JSONResponse:
        """Check a sign-in before the page uses it: answers the name the visitor chats as, and in the lobby
        the ``room`` the page moves on to. A signed-in person (session cookie) is that person, whatever
        ``name`` says; the answer then has ``person`` and ``signed_in: true``."""
        try:
            person = await self._person(request, write=True)
        except GatewayError as exc:
            return _signed_out(exc)
        if person is not None:
            name = person.name or person.person
            return self._signed(
                request, name, person.identity, person.person, person=person.person, signed_in=True
            )
        if not self.access.may_read(_bearer(request)):
            return _error("UNAUTHORIZED", NEEDS_TOKEN, 401)
        if (refused := _not_json(request)) is not None:
            return refused
        try:
            body = SignIn.model_validate_json(await request.body() or b"{}")
            name = self.access.identify(body.name, _bearer(request))
        except ValidationError:
            return _error("INVALID_PARAMS", 'Send {"name": "<your name>"}.', 400)
        except SignInError as exc:
            return _error("UNAUTHORIZED", str(exc), 401)
        return self._signed(request, name, f"web:{name}", name)

    async def _events(self, request: Request) -> Response:
        """The thread's item log as Server-Sent Events: everything after ``Last-Event-ID``, then live.

        Only for those who may read the room (``?name=`` says who a visitor reads as; a signed-in person
        reads as their person, with their linked identities and groups, and ``name`` is ignored); 404 for
        others.
        """
        try:
            person = await self._person(request)
            reader = (
                _reader_of(person)
                if person is not None
                else self.access.reader(
                    request.query_params.get("name"),
                    _bearer(request),
                    getattr(request.app.state, "tokens", None),
                )
            )
        except SignInError as exc:
            return _error("UNAUTHORIZED", str(exc), 401)
        except GatewayError as exc:
            return _signed_out(exc)
        try:
            thread = parse_thread_id(f"web:{request.path_params['room']}")
        except GatewayError as exc:
            return _refusal(exc)
        after = request.headers.get("last-event-id") or request.query_params.get("after") or None
        if after is not None and not is_stream_position(after):
            return _error("INVALID_PARAMS", f"after: {STREAM_ID_PROBLEM}.", 422)
        if self._context is None:
            return _error("UNAVAILABLE", "The web chat is starting or stopping; try again.", 503)
        if not self._context.state.store_available():
            return _refusal(store_unavailable())
        if not await may_read_room(self._context.audiences, thread.thread_id, reader):
            return _not_visible(thread.parts[0])
        try:
            slot = self.streams.open(self._stream_credential(request, person))
        except GatewayError as exc:
            return _refusal(exc)
        return event_stream(self._stream(thread.thread_id, after), self.heartbeat_s, slot)

    def _stream_credential(self, request: Request, person: SignedIn | None = None) -> str:
        """Whom an open event stream counts against: the signed-in person, the web token, or (open chat)
        the visitor's address."""
        if person is not None:
            return "web-person:" + person.person
        token = _bearer(request)
        if token:
            return "web-token:" + hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return "web-visitor:" + client_address(request)

    async def _stream(self, thread_id: str, after: str | None) -> AsyncIterator[bytes]:
        yield b"retry: 2000\n\n"
        cursor = after
        while (context := self._context) is not None:
            if context.state.draining():  # the process is stopping: the page reconnects to another one
                yield RESTART_HINT
                return
            # Served from the process's one follower of this thread's log: a waiting page holds no
            # Redis connection.
            for entry_id, entry in await context.log.read(thread_id, cursor, 100, self.heartbeat_s):
                cursor = entry_id
                item = {"id": entry_id, "role": entry.get("role", "person"), "type": "message", **entry}
                _with_typing_hint(item)
                data = json.dumps(item, ensure_ascii=False)
                yield f"id: {entry_id}\nevent: item\ndata: {data}\n\n".encode()

    async def _receive(self, request: Request) -> JSONResponse:
        """A message typed or a control pressed on the page: to the core as the signed-in person (whose
        groups the core takes from the session) or as ``web:<name>``."""
        try:  # who, before a byte of the body is parsed
            person = await self._person(request, write=True)
        except GatewayError as exc:
            return _signed_out(exc)
        if person is None and not self.access.may_read(_bearer(request)):
            return _error("UNAUTHORIZED", NEEDS_TOKEN, 401)
        if (refused := _not_json(request)) is not None:
            return refused
        if self._context is None:
            return _error("UNAVAILABLE", "The web chat is starting or stopping; try again.", 503)
        body = await request.body()
        if len(body) > MAX_BODY:
            # Only a message over its character cap (or padding) is this long: the same refusal.
            sent = f"A chat message is at most {MAX_MESSAGE_CHARS:,} characters ({MAX_BODY:,} bytes sent)."
            return _refusal(GatewayError("TOO_LARGE", sent, 413, {"max_chars": MAX_MESSAGE_CHARS}))
        try:
            parse_json(body)  # the limits of every request body (depth, valid Unicode) first
            post = WebPost.model_validate_json(body)
            thread = parse_thread_id(f"web:{request.path_params['room']}")
            sender = person.identity if person else f"web:{self.access.identify(post.name, _bearer(request))}"
            check_size(post.text, post.answers, post.note, post.arguments)
            if self._context.limiter is not None and self._context.audiences is not None:
                await admit_post(
                    self._context.limiter,
                    self._context.audiences,
                    self.limits,
                    thread.thread_id,
                    sender,
                    client_address(request),
                )
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            return _error("VALIDATION_FAILED", f"{where}: {first['msg']}", 400)
        except GatewayError as exc:
            return _refusal(exc)
        except SignInError as exc:
            return _error("UNAUTHORIZED", str(exc), 401)
        message = InboundMessage(
            thread_id=thread.thread_id,
            sender=sender,
            text=post.text,
            answers=post.answers,
            prompt_id=post.prompt_id,
            decline=post.decline,
            note=post.note,
            arguments=post.arguments,
            grant=post.grant,
            event_id=f"web:{post.client_id}" if post.client_id else None,
            notify=False,  # the page shows the notice to its sender itself
        )
        try:
            received = await self._hand_over(request, message, person)
        except GatewayError as exc:  # the session ended meanwhile
            return _signed_out(exc)
        reply: dict[str, Any] = {"outcome": received.outcome.value}
        if (notice := notices.for_sender(received)) is not None:
            reply["notice"] = notice
        if received.errors:  # a form's values or edited arguments not taken: the page marks each field
            reply["errors"] = [error.as_dict() for error in received.errors]
        if received.granted is not None:  # "Approve for this session": its card says what it lets through
            reply["granted"] = received.granted
        return JSONResponse(reply, status_code=202)

    async def _hand_over(
        self, request: Request, message: InboundMessage, person: SignedIn | None
    ) -> Received:
        """To the core: a signed-in person's message through the sign-in service, which reads who they are
        and their groups from the session again; anyone else's through the sink."""
        assert self._context is not None
        if person is not None and self._context.signed_in is not None:
            return await self._context.signed_in.receive(request.headers, message)
        return await self._context.sink.receive(message)
