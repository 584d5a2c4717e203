"""Pages, scripts and styles shipped with the package, served with the headers every page of ours uses."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from starlette.responses import HTMLResponse, Response

STATIC = Path(__file__).resolve().parent / "static"
# The scripts and styles the chat page and the inbox share; each page serves them beside its own.
COMMON = {
    "common.js": STATIC / "common.js",
    "forms.js": STATIC / "forms.js",
    "decisions.js": STATIC / "decisions.js",
    "common.css": STATIC / "common.css",
}
MEDIA_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
}
# A page runs only its own scripts and styles; nothing else may load into it.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@cache
def read(path: Path) -> str:
    """A packaged file's text, read once."""
    return path.read_text(encoding="utf-8")


def page(path: Path, fills: Mapping[str, str] | None = None) -> HTMLResponse:
    """The HTML page at ``path`` with each placeholder in ``fills`` replaced (values already escaped)."""
    body = read(path)
    for placeholder, value in (fills or {}).items():
        body = body.replace(placeholder, value)
    return HTMLResponse(body, headers=PAGE_HEADERS)


def asset(files: Mapping[str, Path], name: str) -> Response:
    """The script or style called ``name`` among ``files``; 404 for any other name."""
    path = files.get(name)
    if path is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    return Response(read(path), media_type=MEDIA_TYPES[path.suffix], headers={"Cache-Control": "no-cache"})
