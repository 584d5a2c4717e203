"""The chat page and its assets, served from files shipped with the package."""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

STATIC = Path(__file__).parent / "static"
ASSETS = {"chat.js": "text/javascript", "chat.css": "text/css"}
# The page runs only its own script and style; nothing else may load into it.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@cache
def _read(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def chat_page(room: str, sign_in: str) -> HTMLResponse:
    """The page for ``web:<room>``; ``sign_in`` is ``name`` (pick a name) or ``token``."""
    body = _read("chat.html").replace("__ROOM__", html.escape(room)).replace("__SIGN_IN__", sign_in)
    return HTMLResponse(body, headers=PAGE_HEADERS)


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    media_type = ASSETS.get(name)
    if media_type is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    return Response(_read(name), media_type=media_type, headers={"Cache-Control": "no-cache"})
