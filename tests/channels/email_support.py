"""The email channel's test rig: a local aiosmtpd server that keeps every mail, and the gateway with only
the email channel, served on a loopback port that is also its public URL (the links point at it)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email
import email.policy
import re
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import httpx
import uvicorn
from aiosmtpd.controller import Controller

from channels.email.channel import EmailChannel
from channels.email.settings import EmailSettings
from channels.email.spec import SPEC, build
from gateway.api import create_app
from gateway.api.deps import ApiOptions
from gateway.base.settings import Settings
from gateway.delivery.channel_services import SignedInPeople
from gateway.delivery.plugins import register, spec_for, unregister
from gateway.process.runtime import Runtime

AGENT_TOKEN = "email-agent-token-5b2d"
AGENT_AUTH = {"Authorization": f"Bearer {AGENT_TOKEN}"}
INBOUND_SECRET = "inbound-secret-7c1e9a0b"
LINK_SECRET = "link-secret-for-the-tests-3f9a"
ALICE = "alice@example.com"
LINK = re.compile(r"https?://\S+/email/links/[A-Za-z0-9._-]+")


@dataclass
class Mailbox:
    """What the SMTP server was given, as parsed mails (aiosmtpd calls ``handle_DATA`` per mail)."""

    mails: list[EmailMessage] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)  # the server has its own thread

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        with self.arrived:
            self.mails.append(parsed)
            self.arrived.notify_all()
        return "250 OK"

    async def next(self, count: int) -> list[EmailMessage]:
        """The first ``count`` mails, waiting for them to arrive."""

        def wait() -> list[EmailMessage]:
            with self.arrived:
                if not self.arrived.wait_for(lambda: len(self.mails) >= count, timeout=10):
                    raise TimeoutError(f"{len(self.mails)} of {count} mails arrived")
                return self.mails[:count]

        return await asyncio.to_thread(wait)


def text_of(mail: EmailMessage) -> str:
    part = mail.get_body(("plain",))
    assert part is not None
    return str(part.get_content())


def html_of(mail: EmailMessage) -> str:
    part = mail.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def links_of(mail: EmailMessage) -> list[str]:
    return LINK.findall(text_of(mail))


def basic(password: str, user: str = "postmark") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@dataclass
class EmailGateway:
    base_url: str
    runtime: Runtime
    channel: EmailChannel
    mailbox: Mailbox

    def client(self, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, headers=headers or {}, timeout=10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def smtp_server() -> AsyncIterator[tuple[Mailbox, int]]:
    """A local aiosmtpd that keeps every mail it is given; its mailbox and port."""
    mailbox = Mailbox()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    try:
        yield mailbox, smtp.port
    finally:
        smtp.stop()


@asynccontextmanager
async def email_gateway(
    sessions: SignedInPeople | None = None,
    redis_url: str | None = None,
    smtp: tuple[Mailbox, int] | None = None,
) -> AsyncIterator[EmailGateway]:
    """The gateway with the email channel on the embedded store (or ``redis_url``), mailing through a local
    aiosmtpd of its own (or ``smtp``); ``sessions`` stands for sign-in (who a browser's cookie names)."""
    async with contextlib.AsyncExitStack() as stack:
        if smtp is None:
            smtp = await stack.enter_async_context(smtp_server())
        async with _gateway(sessions, redis_url, *smtp) as running:
            yield running


@asynccontextmanager
async def _gateway(
    sessions: SignedInPeople | None, redis_url: str | None, mailbox: Mailbox, smtp_port: int
) -> AsyncIterator[EmailGateway]:
    installed = spec_for("email") is not None
    if not installed:  # an editable install made before the entry point existed
        register(SPEC)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        redis_url=redis_url,
        threadgate_api_tokens=f"robot:agent:{AGENT_TOKEN}:*",
    )
    channel = build(
        EmailSettings(  # type: ignore[call-arg]
            _env_file=None,
            threadgate_email_from="Threadgate <gate@example.org>",
            threadgate_smtp_url=f"smtp://127.0.0.1:{smtp_port}",
            threadgate_email_inbound_secret=INBOUND_SECRET,
            threadgate_email_link_secret=LINK_SECRET,
            threadgate_email_reply_domain="inbound.example.org",
        )
    )
    runtime = Runtime.build(settings, channels=[channel], public_url=base_url)
    runtime.signed_in = sessions
    app = create_app(runtime, ApiOptions(max_wait_s=5, sse_heartbeat_s=0.2))
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1)
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield EmailGateway(base_url, runtime, channel, mailbox)
    finally:
        server.should_exit = True
        await task
        sock.close()
        if not installed:
            unregister("email")


async def start_run(agent: httpx.AsyncClient, address: str = ALICE) -> dict[str, Any]:
    response = await agent.post(
        "/v1/runs", json={"thread_id": f"email:{address}", "agent": "ops", "started_by": f"email:{address}"}
    )
    assert response.status_code == 201, response.text
    run: dict[str, Any] = response.json()
    return run


def inbound_reply(mail: EmailMessage, text: str, sender: str = ALICE) -> dict[str, Any]:
    """A provider's inbound webhook JSON (Postmark's shape) for a reply to ``mail``."""
    reply_to = str(mail["Reply-To"])
    return {
        "From": f"Alice <{sender}>",
        "To": f'"Threadgate" <{reply_to}>',
        "Subject": f"Re: {mail['Subject']}",
        "TextBody": text,
        "MessageID": f"reply-{abs(hash((reply_to, text, sender)))}",
        "InReplyTo": str(mail["Message-ID"]),
        "Headers": [{"Name": "In-Reply-To", "Value": str(mail["Message-ID"])}],
    }
