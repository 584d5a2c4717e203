"""The operator inbox page (``/inbox``): static files that answer through the API's operator endpoints."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

STATIC = Path(__file__).resolve().parent.parent / "web"
ASSETS = {"inbox.js": "text/javascript", "inbox.css": "text/css"}
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@cache
def _read(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


@router.get("/inbox", response_class=HTMLResponse)
async def inbox() -> HTMLResponse:
    """Every pending prompt across agents and threads, newest first; sign in with an operator token."""
    return HTMLResponse(_read("inbox.html"), headers=PAGE_HEADERS)


@router.get("/inbox-assets/{name}")
async def inbox_asset(name: str) -> Response:
    media_type = ASSETS.get(name)
    if media_type is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    return Response(_read(name), media_type=media_type, headers={"Cache-Control": "no-cache"})
