"""Email as a Threadgate platform: mailboxes as threads and people. Imports no mail library."""

from __future__ import annotations

from typing import TYPE_CHECKING

from channels.email.settings import ADDRESS, EmailSettings, check_settings, sender_address, smtp_server
from gateway.sdk import channel_spec, lazy_doctor

if TYPE_CHECKING:
    from channels.email.channel import EmailChannel


def build(settings: EmailSettings) -> EmailChannel:
    """The channel from its settings; nothing to sign links with, or a sender or URL of the wrong shape,
    stops ``serve`` with one line."""
    from channels.email.channel import EmailChannel
    from channels.email.tokens import Signer

    assert settings.threadgate_email_from is not None and settings.threadgate_smtp_url is not None
    sender = sender_address(settings.threadgate_email_from)
    if sender is None:
        raise ValueError("THREADGATE_EMAIL_FROM is not an address; expected Threadgate <gate@example.com>")
    secret = settings.signing_secret()
    if secret is None:
        raise ValueError(
            "the email channel signs its links: set THREADGATE_EMAIL_LINK_SECRET "
            "(or THREADGATE_SESSION_SECRET)"
        )
    inbound = settings.threadgate_email_inbound_secret
    return EmailChannel(
        settings.threadgate_email_from,
        smtp_server(settings.threadgate_smtp_url.get_secret_value()),
        Signer(secret),
        domain=sender.partition("@")[2],
        inbound_secret=inbound.get_secret_value() if inbound is not None else None,
        reply_domain=settings.threadgate_email_reply_domain,
        subject=settings.threadgate_email_subject,
    )


def enabled(settings: EmailSettings) -> bool:
    return settings.threadgate_email_from is not None and settings.threadgate_smtp_url is not None


SPEC = channel_spec(
    "email",
    "Email",
    EmailSettings,
    threads=rf"email:(?P<address>{ADDRESS})",
    thread_example="email:<address, lower-case>",
    person_example="email:alice@example.com",
    enabled=enabled,
    build=build,
    doctor=lazy_doctor("channels.email.doctor"),
    check_settings=check_settings,
    secrets=(r"smtps?://[^\s/@]*:[^\s/@]+@",),
    extra="email",
)
