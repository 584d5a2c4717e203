"""The web channel: its "platform" is the thread's item log, which the chat page reads live.

Posting needs no network: the core logs every item it posts, and the page renders that log. People's
messages arrive at ``POST /chat/{room}/messages`` and go to the core like any platform's.
"""

from __future__ import annotations

import hmac
import uuid
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from gateway.channel import ChannelContext, MessageRef
from gateway.errors import GatewayError
from gateway.ids import ThreadRef, parse_thread_id
from gateway.models import InboundMessage, ThreadItem

MAX_BODY = 64 * 1024


class WebPost(BaseModel):
    """A message typed on the chat page: who (a chosen name) and what."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    text: str = Field(default="", max_length=40_000)
    answers: list[dict[str, Any]] | None = None
    prompt_id: str | None = Field(default=None, max_length=64)
    client_id: str | None = Field(default=None, max_length=64)


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse(GatewayError(code, message, status).envelope(), status_code=status)


class WebChannel:
    """A chat channel served by the gateway. With a token set, posting requires it (Bearer)."""

    platform = "web"

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self._context: ChannelContext | None = None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        return MessageRef(thread.thread_id, uuid.uuid4().hex)

    async def start(self, context: ChannelContext) -> None:
        self._context = context

    async def stop(self) -> None:
        self._context = None

    def routes(self) -> list[BaseRoute]:
        return [Route("/chat/{room}/messages", self._receive, methods=["POST"])]

    def _authorized(self, request: Request) -> bool:
        if self.token is None:
            return True
        supplied = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(supplied.encode(), self.token.encode())

    async def _receive(self, request: Request) -> JSONResponse:
        if not self._authorized(request):
            return _error("UNAUTHORIZED", "Posting to this chat needs the web chat token.", 401)
        if self._context is None:
            return _error("UNAVAILABLE", "The web chat is starting or stopping; try again.", 503)
        body = await request.body()
        if len(body) > MAX_BODY:
            return _error("PAYLOAD_TOO_LARGE", f"A chat message is at most {MAX_BODY} bytes.", 413)
        try:
            post = WebPost.model_validate_json(body)
            thread = parse_thread_id(f"web:{request.path_params['room']}")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            return _error("INVALID_PARAMS", f"{where}: {first['msg']}", 400)
        except GatewayError as exc:
            return JSONResponse(exc.envelope(), status_code=exc.status)
        message = InboundMessage(
            thread_id=thread.thread_id,
            sender=f"web:{post.name}",
            text=post.text,
            answers=post.answers,
            prompt_id=post.prompt_id,
            event_id=f"web:{post.client_id}" if post.client_id else None,
        )
        received = await self._context.sink.receive(message)
        return JSONResponse({"outcome": received.outcome.value}, status_code=202)
