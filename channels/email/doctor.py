"""``threadgate doctor`` for email: the SMTP server asked to take a login, without sending anything."""

from __future__ import annotations

import aiosmtplib

from channels.email.settings import EmailSettings, smtp_server
from gateway.sdk import Check, probe


async def check(settings: EmailSettings) -> list[Check]:
    if settings.threadgate_smtp_url is None or settings.threadgate_email_from is None:
        return []
    try:
        server = smtp_server(settings.threadgate_smtp_url.get_secret_value())
    except ValueError:
        return []  # said by the settings' own checks

    async def hello() -> str:
        client = aiosmtplib.SMTP(
            hostname=server.host,
            port=server.port,
            use_tls=server.tls,
            start_tls=False if server.tls else None,
        )
        async with client:
            if server.username is not None and server.password is not None:
                await client.login(server.username, server.password)
        return f"{server.host}:{server.port}"

    return [
        await probe(
            "email",
            hello,
            lambda where: f"the mail server at {where} takes the login",
            (aiosmtplib.SMTPAuthenticationError,),
            lambda _: "the mail server refused the login in THREADGATE_SMTP_URL",
            ("THREADGATE_SMTP_URL", f"{server.host}:{server.port}"),
        )
    ]
