"""``POST /telegram/webhook``: Telegram's pushes, taken only with the secret token (constant-time check)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway.sdk import GatewayError, event, parse_json, redact, same_text

PATH = "/telegram/webhook"
SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_BODY = 1024 * 1024
_SECRET_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

UpdateHandler = Callable[[dict[str, object]], Awaitable[bool]]


def check_secret(secret: str) -> None:
    """Telegram accepts 1–256 characters from ``A-Z a-z 0-9 _ -``; anything else fails at setWebhook."""
    if not 1 <= len(secret) <= 256 or not set(secret) <= _SECRET_CHARS:
        raise ValueError("TELEGRAM_WEBHOOK_SECRET must be 1 to 256 characters from A-Z, a-z, 0-9, _ and -")


def secret_matches(supplied: str | None, secret: str) -> bool:
    return same_text(supplied, secret)


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse(GatewayError(code, message, status).envelope(), status_code=status)


def webhook_route(secret: str, handle: UpdateHandler) -> Route:
    """The route; ``handle`` takes the update's JSON and returns False while the channel is not running.

    A failure answers 500 so Telegram delivers the update again (the core drops the duplicate if the
    first attempt got through).
    """

    async def endpoint(request: Request) -> Response:
        if not secret_matches(request.headers.get(SECRET_HEADER), secret):
            return _error("UNAUTHORIZED", "Missing or wrong X-Telegram-Bot-Api-Secret-Token.", 401)
        body = await request.body()
        if len(body) > MAX_BODY:
            return _error("PAYLOAD_TOO_LARGE", f"An update is at most {MAX_BODY} bytes.", 413)
        try:
            data = parse_json(body)
        except GatewayError as exc:
            return _error(exc.code, exc.message, exc.status)
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
            return _error("INVALID_PARAMS", "The body is not a Telegram update (no update_id).", 400)
        try:
            running = await handle(data)
        except Exception as exc:
            event(
                "telegram.webhook.failed",
                logging.WARNING,
                update_id=data["update_id"],
                error=redact(str(exc)),
            )
            return _error("INTERNAL", "The update could not be handled; Telegram will retry it.", 500)
        if not running:
            return _error("UNAVAILABLE", "The Telegram channel is starting or stopping; retry.", 503)
        return Response(status_code=200)

    return Route(PATH, endpoint, methods=["POST"])
