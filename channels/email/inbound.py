"""Replies by mail, as a provider's inbound webhook posts them (Postmark's JSON and the same fields from
others): who may post, what the reply says once the quoted mail is cut away, and the address it went to."""

from __future__ import annotations

import base64
import binascii
import re
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from channels.email.settings import plain_address
from gateway.sdk import same_text

# The library reads a reply's head with patterns whose work grows faster than its input: it only ever
# sees this much, cut first at the first line that quotes.
PARSE_CHARS = 2_000
_QUOTE_START = re.compile(
    r"^(?:>|-{2,}\s*Original Message\s*-{2,}|_{10,}|From:\s|On .{0,200} wrote:\s*$)", re.MULTILINE
)


def basic_password(header: str | None) -> str | None:
    """The password of an ``Authorization: Basic`` header, or None for anything else."""
    if header is None or header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    _user, colon, password = decoded.partition(":")
    return password if colon else None


def authorized(header: str | None, secret: str | None) -> bool:
    """Whether the request carries the inbound secret as its Basic auth password (constant time)."""
    if secret is None:
        return False
    return same_text(basic_password(header), secret)


class Contact(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    email: str = Field(default="", alias="Email", max_length=320)


class InboundMail(BaseModel):
    """The fields of a provider's inbound webhook that a reply needs (everything else is ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    sender: str = Field(alias="From", max_length=1_000)
    to: str = Field(default="", alias="To", max_length=10_000)
    cc: str = Field(default="", alias="Cc", max_length=10_000)
    original_recipient: str = Field(default="", alias="OriginalRecipient", max_length=1_000)
    to_full: list[Contact] = Field(default_factory=list, alias="ToFull", max_length=100)
    subject: str = Field(default="", alias="Subject", max_length=2_000)
    text_body: str = Field(default="", alias="TextBody")
    html_body: str = Field(default="", alias="HtmlBody")
    stripped_reply: str = Field(default="", alias="StrippedTextReply")
    headers: list[dict[str, Any]] = Field(default_factory=list, alias="Headers", max_length=500)
    message_id: str = Field(default="", alias="MessageID", max_length=1_000)
    in_reply_to: str = Field(default="", alias="InReplyTo", max_length=1_000)

    def from_address(self) -> str | None:
        return plain_address(parseaddr(self.sender)[1])

    def recipients(self) -> list[str]:
        """Every address the mail was sent to (To, Cc, the provider's ToFull and original recipient)."""
        listed = [address for _name, address in getaddresses([self.to, self.cc, self.original_recipient])]
        listed += [contact.email for contact in self.to_full]
        return [found for found in (plain_address(address) for address in listed) if found]

    def event_id(self) -> str | None:
        """The mail's own id, the core's dedupe key (a provider posts the same mail again on a retry)."""
        mail_id = self.message_id.strip() or self._header("Message-ID")
        return f"email:{mail_id[:190]}" if mail_id else None

    def automatic(self) -> bool:
        """An auto-reply (out of office, a vacation responder, a bounce), by the headers RFC 3834 and the
        common responders set: never a person's answer."""
        auto = self._header("Auto-Submitted").lower()
        precedence = self._header("Precedence").lower()
        return (
            (auto not in ("", "no"))
            or precedence in ("auto_reply", "bulk", "junk", "list")
            or any(
                self._header(name) for name in ("X-Autoreply", "X-Autorespond", "X-Auto-Response-Suppress")
            )
        )

    def _header(self, name: str) -> str:
        for header in self.headers:
            if str(header.get("Name", "")).lower() == name.lower():
                return str(header.get("Value", "")).strip()
        return ""


def reply_text(mail: InboundMail, max_chars: int) -> str:
    """What the person wrote: the provider's stripped reply when it sends one, else the text body with
    the quoted mail, the reply header above it and the signature cut away (mail-parser-reply)."""
    text = mail.stripped_reply or mail.text_body or html_text(mail.html_body[: 64 * max_chars])
    return strip_quoted(text)[:max_chars]


class _HtmlText(HTMLParser):
    """The text of a mail's HTML as a person wrote it: quoted parts (``blockquote``, Gmail's and
    Outlook's quote containers) left out, blocks on lines of their own."""

    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3"})
    VOID = frozenset({"br", "img", "hr", "meta", "input", "wbr", "link", "col", "area", "source"})
    QUOTES = ("gmail_quote", "divrplyfwdmsg", "moz-cite-prefix", "yahoo_quoted")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.depth = 0  # inside a quote: how many of its elements are open
        self.hidden = 0  # inside <style>, <script> or <head>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "head"):
            self.hidden += 1
        classes = " ".join(value or "" for name, value in attrs if name in ("class", "id")).lower()
        quoted = self.depth or tag == "blockquote" or any(quote in classes for quote in self.QUOTES)
        if quoted and tag not in self.VOID:  # elements with no end tag never close a quote
            self.depth += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "head"):
            self.hidden = max(0, self.hidden - 1)
        elif self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth and not self.hidden:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The unquoted text of an HTML-only reply (linear in its length)."""
    if not html:
        return ""
    reader = _HtmlText()
    reader.feed(html)
    reader.close()
    lines = (" ".join(line.split()) for line in "".join(reader.parts).split("\n"))
    return "\n".join(line for line in lines if line)


def strip_quoted(text: str) -> str:
    from mailparser_reply import EmailReplyParser

    text = text.replace("\r\n", "\n")
    cut = _QUOTE_START.search(text)
    head = (text[: cut.start()] if cut else text).strip()
    if not head:  # written below the quote, or between its lines: the lines that quote nothing
        head = "\n".join(line for line in text.split("\n") if not line.startswith(">")).strip()
    if not head or len(head) > PARSE_CHARS:
        return head
    message = EmailReplyParser(languages=["en"]).read(head)
    body = message.replies[0].body if message.replies else head
    return str(body).strip() or head
