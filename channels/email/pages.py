"""The page a mail's link opens: what the click will answer, and one button that answers it.

Opening it changes nothing (mail scanners fetch every link in a mail, and some run its scripts); only the
button's POST answers. The page carries no script and sends no referrer (its address is the link).
"""

from __future__ import annotations

from html import escape

from starlette.responses import HTMLResponse

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
}
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
    "pre{white-space:pre-wrap;background:#f4f4f4;padding:.75rem;border-radius:4px}"
    "button{font-size:1.1rem;padding:.6rem 1.4rem;border-radius:4px;border:1px solid #333;cursor:pointer}"
)


def _page(title: str, body: str, status: int) -> HTMLResponse:
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def confirm_page(question: str, choice: str, action: str) -> HTMLResponse:
    """The request as asked, and the button that answers it with ``choice`` (a POST to ``action``)."""
    body = (
        f"<h1>Confirm your answer</h1><pre>{escape(question)}</pre>"
        f'<form method="post" action="{escape(action, quote=True)}">'
        f'<button type="submit">{escape(choice)}</button></form>'
        "<p><small>Nothing is answered until you press the button. The link works once.</small></p>"
    )
    return _page(f"Confirm: {choice}", body, 200)


def sign_in_page(question: str, choice: str, login_url: str) -> HTMLResponse:
    """A call that changes or deletes something is answered only by someone signed in."""
    body = (
        f"<h1>Sign in to answer</h1><pre>{escape(question)}</pre>"
        f"<p>This request lets an agent change or delete something, so answering <strong>{escape(choice)}"
        f'</strong> needs you signed in. <a href="{escape(login_url, quote=True)}">Sign in</a>, then open '
        "the link from the mail again.</p>"
    )
    return _page("Sign in to answer", body, 401)


def outcome_page(title: str, notice: str, status: int = 200) -> HTMLResponse:
    """What came of a press (or why there was none)."""
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(notice)}</p>", status)
