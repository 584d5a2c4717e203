"""The email channel's settings (``THREADGATE_EMAIL_*``, ``THREADGATE_SMTP_URL``): who mails, through which
server, how replies come back and what signs the links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from pydantic import SecretStr, field_validator

from gateway.sdk import Check, PlatformSettings

SMTP_URL_EXAMPLE = "smtps://user:password@smtp.example.com:465 (or smtp://… on 587 with STARTTLS)"
# An address as the channel names threads and people by it: plain ASCII, one @, a dotted domain, in
# lower case (so a reply from Alice@Example.com lands in the thread of alice@example.com).
ADDRESS = r"[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}"
_ADDRESS = re.compile(ADDRESS, re.ASCII)
MIN_SECRET_CHARS = 16


@dataclass(frozen=True, slots=True)
class SmtpServer:
    """Where mail goes out: ``smtps`` is TLS from the first byte (465), ``smtp`` upgrades with STARTTLS
    when the server offers it (587)."""

    host: str
    port: int
    tls: bool
    username: str | None = None
    password: str | None = None

    def __repr__(self) -> str:  # never the password, wherever this ends up printed
        return f"SmtpServer(host={self.host!r}, port={self.port}, tls={self.tls}, username={self.username!r})"


def smtp_server(url: str) -> SmtpServer:
    """``smtp[s]://[user[:password]@]host[:port]``; a ``ValueError`` that never repeats the password."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError(f"THREADGATE_SMTP_URL is not an SMTP URL; expected {SMTP_URL_EXAMPLE}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"THREADGATE_SMTP_URL has no valid port; expected {SMTP_URL_EXAMPLE}") from None
    tls = parts.scheme == "smtps"
    return SmtpServer(
        host=parts.hostname,
        port=port or (465 if tls else 587),
        tls=tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
    )


def plain_address(value: str) -> str | None:
    """``value`` when it is an address of the form the channel takes (lower-cased), else None."""
    text = value.strip().lower()
    return text if _ADDRESS.fullmatch(text) else None


class EmailSettings(PlatformSettings):
    threadgate_email_from: str | None = None  # the sender, "Threadgate <gate@example.com>" or bare
    threadgate_smtp_url: SecretStr | None = None
    threadgate_email_inbound_secret: SecretStr | None = None  # the Basic auth password of /email/inbound
    # What signs the links and reply addresses; unset, a key derived from THREADGATE_SESSION_SECRET.
    threadgate_email_link_secret: SecretStr | None = None
    threadgate_session_secret: SecretStr | None = None
    # The domain of the reply+<token>@ addresses (the provider's inbound domain); unset, the sender's.
    threadgate_email_reply_domain: str | None = None
    threadgate_email_subject: str = "Threadgate"  # one subject per thread, so every client threads it

    @field_validator("threadgate_email_from", "threadgate_email_reply_domain", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    def signing_secret(self) -> str | None:
        secret = self.threadgate_email_link_secret or self.threadgate_session_secret
        return secret.get_secret_value() if secret is not None else None


def sender_address(from_setting: str) -> str | None:
    """The bare address of ``THREADGATE_EMAIL_FROM`` (``Name <a@b.c>`` or ``a@b.c``), or None."""
    from email.utils import parseaddr

    return plain_address(parseaddr(from_setting)[1])


def check_settings(settings: EmailSettings) -> list[Check]:
    """What cannot work, found without a server: half a configuration, a URL or address of the wrong
    shape, nothing to sign links with, a short secret."""
    given = settings.threadgate_email_from is not None or settings.threadgate_smtp_url is not None
    if not given:
        return []
    checks: list[Check] = []
    if settings.threadgate_email_from is None or settings.threadgate_smtp_url is None:
        checks.append(Check.fail("email", "set both THREADGATE_EMAIL_FROM and THREADGATE_SMTP_URL"))
    if settings.threadgate_email_from is not None and sender_address(settings.threadgate_email_from) is None:
        checks.append(
            Check.fail(
                "email", "THREADGATE_EMAIL_FROM is not an address; expected Threadgate <gate@example.com>"
            )
        )
    if settings.threadgate_smtp_url is not None:
        try:
            smtp_server(settings.threadgate_smtp_url.get_secret_value())
        except ValueError as exc:
            checks.append(Check.fail("email", str(exc)))
    secret = settings.signing_secret()
    if secret is None:
        checks.append(
            Check.fail(
                "email",
                "nothing signs the mails' links: set THREADGATE_EMAIL_LINK_SECRET "
                "(or THREADGATE_SESSION_SECRET)",
            )
        )
    elif len(secret) < MIN_SECRET_CHARS:
        checks.append(
            Check.warn("email", f"the link secret is short; use at least {MIN_SECRET_CHARS} characters")
        )
    if settings.threadgate_email_inbound_secret is None:
        checks.append(
            Check.warn(
                "email",
                "THREADGATE_EMAIL_INBOUND_SECRET is unset: replies by mail are refused (links still answer)",
            )
        )
    return checks
