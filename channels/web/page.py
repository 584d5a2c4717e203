"""The chat page and its assets, served from files shipped with the package."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from gateway.sdk import assets

STATIC = Path(__file__).parent / "static"
ASSETS = {
    "chat.js": STATIC / "chat.js",
    "view.js": STATIC / "view.js",
    "chat.css": STATIC / "chat.css",
    **assets.COMMON,
}


def chat_page(room: str, sign_in: str, signed_in: bool = False) -> HTMLResponse:
    """The page for ``web:<room>``; ``sign_in`` is ``name`` (pick a name) or ``token``; ``signed_in``: people
    may also sign in at the organisation's identity provider (the page offers it, and uses a session)."""
    values = {"__ROOM__": html.escape(room), "__SIGN_IN__": sign_in, "__IDP__": "yes" if signed_in else "no"}
    return assets.page(STATIC / "chat.html", values)


async def asset(request: Request) -> Response:
    """One of the chat page's scripts or styles."""
    return assets.asset(ASSETS, request.path_params["name"])
