"""Thread items as mails: plain text and HTML, one link per choice, headers that keep one mail thread."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from html import escape

REPLY_HINT = "Or reply to this mail: your reply is read as a reply in the chat would be."
FREE_TEXT_HINT = "Reply to this mail with your answer."


@dataclass(frozen=True, slots=True)
class Choice:
    """A link that answers: what it says, where it goes, and the question it answers when there are
    several (``heading``)."""

    label: str
    url: str
    heading: str | None = None


@dataclass(frozen=True, slots=True)
class Threading:
    """The headers that put a mail into its thread: its own id, the one it answers, and the chain."""

    message_id: str
    in_reply_to: str
    references: tuple[str, ...]


def _digest(text: str, chars: int = 24) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:chars]


def thread_root(thread_id: str, domain: str) -> str:
    """The Message-ID every mail of a thread refers to, the same in every process: mail clients gather
    the mails that name it in ``References`` into one conversation."""
    return f"<thread.{_digest(thread_id)}@{domain}>"


def prompt_message_id(prompt_id: str, thread_id: str, domain: str) -> str:
    """The Message-ID of a prompt's mail in a thread, so its outcome can answer it."""
    return f"<{prompt_id.lower()}.{_digest(thread_id, 12)}@{domain}>"


def threading(thread_id: str, domain: str, prompt_id: str | None, *, is_prompt: bool) -> Threading:
    """A prompt's mail has its own known id; its outcome answers it; anything else answers the root."""
    root = thread_root(thread_id, domain)
    if prompt_id is not None and is_prompt:
        return Threading(prompt_message_id(prompt_id, thread_id, domain), root, (root,))
    if prompt_id is not None:
        asked = prompt_message_id(prompt_id, thread_id, domain)
        return Threading(make_msgid(domain=domain), asked, (root, asked))
    return Threading(make_msgid(domain=domain), root, (root,))


def plain_body(text: str, choices: list[Choice], *, free_text: bool) -> str:
    parts = [text.strip() or "(empty message)"]
    if choices:
        lines = ["Answer with one click (the link opens a page where you confirm):"]
        heading: str | None = None
        for choice in choices:
            if choice.heading is not None and choice.heading != heading:
                heading = choice.heading
                lines.append(f"{heading}")
            lines.append(f"  {choice.label}: {choice.url}")
        parts.append("\n".join(lines))
    if free_text:
        parts.append(FREE_TEXT_HINT if not choices else REPLY_HINT)
    return "\n\n".join(parts) + "\n"


def html_body(text: str, choices: list[Choice], *, free_text: bool) -> str:
    paragraphs = "".join(
        f"<p>{escape(block).replace(chr(10), '<br>')}</p>"
        for block in (text.strip() or "(empty message)").split("\n\n")
    )
    links: list[str] = []
    heading: str | None = None
    for choice in choices:
        if choice.heading is not None and choice.heading != heading:
            heading = choice.heading
            links.append(f"<p><strong>{escape(heading)}</strong></p>")
        links.append(
            f'<p><a href="{escape(choice.url, quote=True)}" style="display:inline-block;padding:8px 16px;'
            f'border:1px solid #444;border-radius:4px;text-decoration:none">{escape(choice.label)}</a></p>'
        )
    hint = ""
    if free_text:
        hint = f"<p><small>{escape(FREE_TEXT_HINT if not choices else REPLY_HINT)}</small></p>"
    body = f"{paragraphs}{''.join(links)}{hint}"
    return f'<!doctype html><html><body style="font-family:sans-serif">{body}</body></html>'


def compose(
    *,
    sender: str,
    to: str,
    subject: str,
    text: str,
    html: str,
    headers: Threading,
    reply_to: str | None = None,
) -> EmailMessage:
    """One multipart/alternative mail, text first (what a client without HTML shows)."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(localtime=False, usegmt=True)
    mail["Message-ID"] = headers.message_id
    mail["In-Reply-To"] = headers.in_reply_to
    mail["References"] = " ".join(headers.references)
    if reply_to is not None:
        mail["Reply-To"] = reply_to
    mail["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to it
    mail.set_content(text)
    mail.add_alternative(html, subtype="html")
    return mail
