"""The operator inbox page (``/inbox``): static files that answer through the API's operator endpoints."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gateway.api import assets
from gateway.people.signin import SESSION_COOKIE, SignIn

router = APIRouter(include_in_schema=False)

ASSETS = {
    "inbox.js": assets.STATIC / "inbox.js",
    "history.js": assets.STATIC / "history.js",
    "inbox.css": assets.STATIC / "inbox.css",
    "history.css": assets.STATIC / "history.css",
    "push.js": assets.STATIC / "push.js",
    "manifest.webmanifest": assets.STATIC / "manifest.webmanifest",
    "icon.svg": assets.STATIC / "icon.svg",
    **assets.COMMON,
}


@router.get("/inbox", response_class=HTMLResponse)
async def inbox(request: Request) -> Response:
    """Every pending prompt across agents and threads, newest first, and the history of settled ones;
    sign in at the identity provider when one is configured (else with an operator token)."""
    signin: SignIn | None = request.app.state.signin
    if signin is not None and await signin.person(request.cookies.get(SESSION_COOKIE)) is None:
        return RedirectResponse("/auth/login?next=/inbox", status_code=302)
    return assets.page(assets.STATIC / "inbox.html")


@router.get("/inbox-assets/{name}")
async def inbox_asset(name: str) -> Response:
    """One of the inbox's scripts or styles."""
    return assets.asset(ASSETS, name)


@router.get("/inbox-sw.js")
async def inbox_service_worker() -> Response:
    """The inbox's service worker (Web Push notifications, and opening a prompt on a tap); served from the
    root so its scope may be the whole gateway."""
    response = assets.asset({"sw.js": assets.STATIC / "sw.js"}, "sw.js")
    response.headers["Service-Worker-Allowed"] = "/"
    return response
