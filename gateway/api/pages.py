"""The operator inbox page (``/inbox``): static files that answer through the API's operator endpoints."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from gateway.api import assets

router = APIRouter(include_in_schema=False)

ASSETS = {
    "inbox.js": assets.STATIC / "inbox.js",
    "history.js": assets.STATIC / "history.js",
    "inbox.css": assets.STATIC / "inbox.css",
    "history.css": assets.STATIC / "history.css",
    **assets.COMMON,
}


@router.get("/inbox", response_class=HTMLResponse)
async def inbox() -> HTMLResponse:
    """Every pending prompt across agents and threads, newest first, and the history of settled ones;
    sign in with an operator token."""
    return assets.page(assets.STATIC / "inbox.html")


@router.get("/inbox-assets/{name}")
async def inbox_asset(name: str) -> Response:
    """One of the inbox's scripts or styles."""
    return assets.asset(ASSETS, name)
