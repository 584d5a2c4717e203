"""What a mail carries that the gateway must trust later: links that answer, and reply addresses.

A link names one choice of one prompt for the address the mail went to, until the prompt expires; it is
signed with itsdangerous and spent once (the channel keeps the spent ones in the store). A reply address
``reply+<prompt>.<mac>@<domain>`` names the prompt and is bound to the address the mail went to by a MAC
short enough for a mailbox name, lower-case because some providers lower-case mailbox names.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeSerializer

PROMPT_PREFIX = "prm_"
REPLY_BOX = "reply"
MAC_CHARS = 20  # 100 bits of base32
MAX_TOKEN_CHARS = 1_000


@dataclass(frozen=True, slots=True)
class Link:
    """One choice of one prompt, for the person at ``address``: option ``option`` of question ``index``."""

    prompt_id: str
    address: str
    index: int
    option: int
    expires_at: int  # unix seconds: the prompt's own expiry
    nonce: str

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires_at


class LinkRefused(ValueError):
    """A link that does not answer: tampered with, of another shape, or expired (``expired``)."""

    def __init__(self, message: str, *, expired: bool = False) -> None:
        super().__init__(message)
        self.expired = expired


def _key(secret: str, purpose: bytes) -> bytes:
    """A key of its own for each use of the one secret (the links' key never signs a reply address)."""
    return hmac.new(secret.encode("utf-8", "surrogateescape"), purpose, hashlib.sha256).digest()


class Signer:
    """Signs and reads the links and reply addresses of one gateway (one secret)."""

    def __init__(self, secret: str) -> None:
        self._links = URLSafeSerializer(_key(secret, b"threadgate email links"), salt="threadgate.email.link")
        self._replies = _key(secret, b"threadgate email replies")

    def link(self, prompt_id: str, address: str, index: int, option: int, expires_at: int) -> str:
        nonce = secrets.token_urlsafe(12)
        token = self._links.dumps([prompt_id, address, index, option, expires_at, nonce])
        return token if isinstance(token, str) else token.decode()

    def read_link(self, token: str, now: float | None = None) -> Link:
        """The link a token names; ``LinkRefused`` when it is not one of ours or has expired."""
        if len(token) > MAX_TOKEN_CHARS:
            raise LinkRefused("This link is not one of ours.")
        try:
            fields = self._links.loads(token)
        except BadSignature:
            raise LinkRefused("This link is not one of ours, or it was changed.") from None
        if not (isinstance(fields, list) and len(fields) == 6):
            raise LinkRefused("This link is not one of ours.")
        prompt_id, address, index, option, expires_at, nonce = fields
        if not (
            isinstance(prompt_id, str)
            and isinstance(address, str)
            and isinstance(nonce, str)
            and all(type(value) is int for value in (index, option, expires_at))
        ):
            raise LinkRefused("This link is not one of ours.")
        link = Link(prompt_id, address, index, option, expires_at, nonce)
        if link.expired(now):
            raise LinkRefused("This link has expired with the request it answered.", expired=True)
        return link

    def reply_box(self, prompt_id: str, address: str) -> str:
        """The mailbox name (before the @) a reply to the prompt's mail to ``address`` goes to."""
        tail = prompt_id.removeprefix(PROMPT_PREFIX).lower()
        return f"{REPLY_BOX}+{tail}.{self._mac(prompt_id, address)}"

    def reply_prompt(self, mailbox: str) -> tuple[str, str] | None:
        """The prompt id and MAC a reply mailbox name carries (unchecked), or None for another name."""
        name, plus, tag = mailbox.lower().partition("+")
        tail, dot, mac = tag.partition(".")
        if name != REPLY_BOX or not plus or not dot or not tail.isalnum() or len(tail) > 64:
            return None
        return PROMPT_PREFIX + tail.upper(), mac

    def reply_from(self, prompt_id: str, mac: str, address: str) -> bool:
        """Whether the reply address was made for the prompt's mail to ``address``."""
        return hmac.compare_digest(mac.encode(), self._mac(prompt_id, address).encode())

    def _mac(self, prompt_id: str, address: str) -> str:
        digest = hmac.new(self._replies, f"{prompt_id}\n{address.lower()}".encode(), hashlib.sha256).digest()
        return base64.b32encode(digest).decode().lower()[:MAC_CHARS]
