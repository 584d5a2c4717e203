"""The email channel: each prompt a mail with a link per choice; a link's page answers with one POST;
a reply by mail comes back through the provider's inbound webhook (``POST /email/inbound``).

Threads are mailboxes (``email:<address>``), and so are people: whoever holds the mailbox a prompt went
to answers as ``email:<address>``, through the core's one answer step. Every mail of a thread names the
same root in ``References``, so a mail client shows one conversation per thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any
from urllib.parse import quote

import aiosmtplib
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from channels.email.compose import Choice, compose, html_body, plain_body, threading
from channels.email.inbound import InboundMail, authorized, reply_text
from channels.email.pages import confirm_page, outcome_page, sign_in_page
from channels.email.settings import SmtpServer
from channels.email.tokens import Link, LinkRefused, Signer
from gateway.sdk import (
    MAX_TEXT_CHARS,
    ChannelContext,
    ChannelError,
    GatewayError,
    InboundMessage,
    InboundSink,
    MessageRef,
    Prompt,
    PromptKind,
    PromptView,
    RateLimiter,
    SignedIn,
    SignedInPeople,
    ThreadItem,
    ThreadRef,
    event,
    failure,
    is_destructive,
    is_store_outage,
    notices,
    parse_json,
    parse_thread_id,
    steps,
    tool_call_arguments,
)

LINKS_PATH = "/email/links/"
INBOUND_PATH = "/email/inbound"
NO_EXPIRY_S = 30 * 86_400  # the longest a prompt may wait: the links of a prompt not found live that long
SEND_TIMEOUT_S = 30.0
ARGUMENT_CHARS = 3_000
EMPTY_REPLY = "Your reply had no text Threadgate could read, so it answered nothing. Reply with your answer."


@dataclass(frozen=True, slots=True)
class _Running:
    """What the channel holds while the gateway runs: the sink, where people open the gateway, the
    store's counter that spends each link once, and sign-in when the gateway has it."""

    sink: InboundSink
    public_url: str | None
    spent: RateLimiter
    sessions: SignedInPeople | None


def _error(code: str, message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(GatewayError(code, message, status).envelope(), status_code=status, headers=headers)


def _address(thread_id: str) -> str | None:
    return thread_id.removeprefix("email:") if thread_id.startswith("email:") else None


def _asked(prompt: Prompt, index: int) -> str:
    """A question as its confirm page shows it; an approval with the call it allows."""
    text = prompt.questions[index].question
    if prompt.kind is PromptKind.APPROVAL and prompt.tool_call is not None:
        text += f"\n\n{prompt.tool_call.name}\n{tool_call_arguments(prompt.tool_call, ARGUMENT_CHARS)}"
    return text


def _is_addressee(person: SignedIn, address: str) -> bool:
    """Whether the signed-in person holds the mailbox: their email, or a linked ``email:`` identity."""
    return (person.email or "").lower() == address or f"email:{address}" in person.identities


class EmailChannel:
    """Mailboxes as threads (``email:<address>``): mails out through ``smtp``, links signed by ``signer``,
    replies in through ``/email/inbound`` with ``inbound_secret`` as the Basic auth password."""

    platform = "email"

    def __init__(
        self,
        sender: str,
        smtp: SmtpServer,
        signer: Signer,
        *,
        domain: str,
        inbound_secret: str | None = None,
        reply_domain: str | None = None,
        subject: str = "Threadgate",
        send_timeout_s: float = SEND_TIMEOUT_S,
    ) -> None:
        self.sender = sender
        self.smtp = smtp
        self.signer = signer
        self.domain = domain
        self.reply_domain = reply_domain or domain
        self.subject = subject
        self.send_timeout_s = send_timeout_s
        self._inbound_secret = inbound_secret
        self._context: _Running | None = None

    async def start(self, context: ChannelContext) -> None:
        services = context.services
        self._context = _Running(
            context.sink, context.public_url, services.need(RateLimiter), services.get(SignedInPeople)
        )
        if context.public_url is None:
            event(
                "email.no_public_url",
                logging.WARNING,
                warning="mails go out without links: set THREADGATE_PUBLIC_URL",
            )

    async def stop(self) -> None:
        self._context = None

    def routes(self) -> list[BaseRoute]:
        return [
            Route(LINKS_PATH + "{token}", self._link, methods=["GET", "POST"]),
            Route(INBOUND_PATH, self._inbound, methods=["POST"]),
        ]

    # Outbound --------------------------------------------------------------------------------------

    async def direct_thread(self, identity: str) -> str | None:
        """A person's mailbox is already one-to-one: ``email:<address>`` is both the identity and its
        thread (addresses in lower case, as the inbound path files replies)."""
        address = _address(identity)
        return f"email:{address.lower()}" if address else None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Mail an item to the thread's address: a prompt with its links and a reply address, anything
        else (an outcome, an agent's message) as its text, in the same mail thread."""
        address = thread.parts[0]
        meta = item.metadata.get("prompt")
        prompt_id = meta.get("prompt_id") if isinstance(meta, dict) else None
        prompt_id = prompt_id if isinstance(prompt_id, str) else None
        is_prompt = item.type == "pending_prompt" and prompt_id is not None
        text, choices, reply_to = item.text, [], None
        if is_prompt:
            assert prompt_id is not None
            view = PromptView.of_metadata(item.metadata)
            choices = await self._choices(view, address) if view is not None else []
            if view is not None and view.tool_call is not None:
                call = view.tool_call
                text += f"\n\n{call.name}\n{tool_call_arguments(call, ARGUMENT_CHARS)}"
            reply_to = f"{self.signer.reply_box(prompt_id, address)}@{self.reply_domain}"
        headers = threading(thread.thread_id, self.domain, prompt_id, is_prompt=is_prompt)
        mail = compose(
            sender=self.sender,
            to=address,
            subject=self.subject,
            text=plain_body(text, choices, free_text=is_prompt),
            html=html_body(text, choices, free_text=is_prompt),
            headers=headers,
            reply_to=reply_to,
        )
        await self._send(mail, thread.thread_id)
        return MessageRef(thread.thread_id, headers.message_id)

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None:
        """A notice for one person (a reply that was not taken) is a mail to them in the thread."""
        address = identity.removeprefix("email:") if identity.startswith("email:") else None
        if address is None:
            return
        mail = compose(
            sender=self.sender,
            to=address,
            subject=self.subject,
            text=plain_body(text, [], free_text=False),
            html=html_body(text, [], free_text=False),
            headers=threading(thread.thread_id, self.domain, None, is_prompt=False),
        )
        await self._send(mail, thread.thread_id)

    async def _tell(self, thread_id: str, text: str) -> None:
        """A notice about a reply, mailed back; one that cannot go out is logged (the refusal stands)."""
        try:
            await self.notify_private(parse_thread_id(thread_id), thread_id, text)
        except ChannelError as exc:
            event("notice.failed", logging.WARNING, thread_id=thread_id, error=str(exc))

    async def _choices(self, view: PromptView, address: str) -> list[Choice]:
        """A link per option of each question; none without a public URL to link to."""
        context = self._context
        if context is None or context.public_url is None:
            return []
        prompt = await self._prompt(view.prompt_id, address)
        expires_at = (
            int(prompt.expires_at.timestamp()) if prompt is not None else int(time.time()) + NO_EXPIRY_S
        )
        base = context.public_url.rstrip("/") + LINKS_PATH
        several = len(view.questions) > 1
        return [
            Choice(
                label,
                base + self.signer.link(view.prompt_id, address, index, option, expires_at),
                question.question if several else None,
            )
            for index, question in enumerate(view.questions)
            for option, label in enumerate(question.labels)
        ]

    async def _prompt(self, prompt_id: str, address: str) -> Prompt | None:
        """The prompt as the core has it now (read only: opening changes nothing), when it is there."""
        if self._context is None:
            return None
        opened = await self._context.sink.step(steps.Open(prompt_id=prompt_id, sender=f"email:{address}"))
        return opened.prompt

    async def _send(self, mail: EmailMessage, thread_id: str) -> None:
        smtp = self.smtp
        try:
            await aiosmtplib.send(
                mail,
                hostname=smtp.host,
                port=smtp.port,
                username=smtp.username,
                password=smtp.password,
                use_tls=smtp.tls,
                start_tls=False if smtp.tls else None,  # smtp://: STARTTLS whenever the server offers it
                timeout=self.send_timeout_s,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            raise ChannelError("the mail server refused the address", permanent=True) from exc
        except aiosmtplib.SMTPResponseException as exc:
            permanent = 500 <= exc.code < 600 and not isinstance(exc, aiosmtplib.SMTPAuthenticationError)
            raise ChannelError(f"the mail server refused the mail ({exc.code})", permanent=permanent) from exc
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            raise ChannelError(f"the mail server cannot be reached ({type(exc).__name__})") from exc
        event("email.sent", thread_id=thread_id, message_id=str(mail["Message-ID"]))

    # Links -----------------------------------------------------------------------------------------

    async def _link(self, request: Request) -> Response:
        """GET shows what the link answers and changes nothing; POST (its button) answers, once."""
        context = self._context
        if context is None:
            return outcome_page("Try again", "The gateway is starting or stopping; try again.", 503)
        try:
            link = self.signer.read_link(request.path_params["token"])
        except LinkRefused as exc:
            return outcome_page(
                "Link expired" if exc.expired else "Link not valid", str(exc), 410 if exc.expired else 400
            )
        answerer = f"email:{link.address}"
        opened = await context.sink.step(
            steps.Open(prompt_id=link.prompt_id, sender=answerer, thread_id=answerer)
        )
        prompt = opened.prompt
        if prompt is None and opened.notice == notices.TRY_AGAIN:  # the store is away for now
            return outcome_page("Try again", opened.notice, 503)
        if prompt is None:
            return outcome_page("Not available", opened.notice, 404)
        if not prompt.pending:
            return outcome_page("Already settled", opened.notice, 409)
        if link.index >= len(prompt.questions) or link.option >= len(prompt.questions[link.index].labels):
            return outcome_page("Link not valid", "This link is not one of ours.", 400)
        question = prompt.questions[link.index]
        choice = question.labels[link.option]
        if context.sessions is not None and self._needs_session(prompt):
            try:  # the link is the capability; the session says who holds the mailbox
                person = await context.sessions.person(request.headers)
            except GatewayError:  # a session that ended: sign in again
                person = None
            if person is None:
                login = f"{SignedInPeople.login_path}?next={quote(request.url.path, safe='')}"
                return sign_in_page(_asked(prompt, link.index), choice, login)
            if not _is_addressee(person, link.address):
                notice = f"You are signed in as someone else; this request was mailed to {link.address}."
                return outcome_page("Signed in as someone else", notice, 403)
        if request.method == "GET":
            return confirm_page(_asked(prompt, link.index), choice, request.url.path)
        return await self._answer(context, link, question.multi_select)

    @staticmethod
    def _needs_session(prompt: Prompt) -> bool:
        """An approval of a call the approval policy counts as destructive (contract §8)."""
        return (
            prompt.kind is PromptKind.APPROVAL
            and prompt.tool_call is not None
            and is_destructive(prompt.tool_call)
        )

    async def _answer(self, context: _Running, link: Link, multi: bool) -> Response:
        answerer = f"email:{link.address}"
        try:  # spent in the store first, so two presses in two processes answer once
            spent = await context.spent.hit(
                f"email-link:{link.nonce}", limit=1, window_s=max(1, int(link.expires_at - time.time()) + 1)
            )
        except Exception as exc:
            if not is_store_outage(exc):
                raise
            return outcome_page(
                "Try again", "Threadgate could not take your answer just now; try again.", 503
            )
        if not spent.allowed:
            return outcome_page(
                "Link already used", "This link was used already: each link answers once.", 410
            )
        common: dict[str, Any] = {
            "prompt_id": link.prompt_id,
            "sender": answerer,
            "event_id": f"email-link:{link.nonce}",
            "thread_id": answerer,
            "index": link.index,
        }
        act: steps.StepRequest = (
            steps.Choose(options=(link.option,), **common)
            if multi
            else steps.Pick(option=link.option, **common)
        )
        result = await context.sink.step(act)
        event("email.link_pressed", prompt_id=link.prompt_id, status=result.status.value)
        if result.refused:
            return outcome_page("Not taken", result.notice, 409)
        notice = result.notice or "Your answer was taken."
        if result.next is not None:  # a question among several: the others have links of their own
            notice += " Answer it with its link in the mail, or reply to the mail."
        return outcome_page("Thank you", notice)

    # Inbound ---------------------------------------------------------------------------------------

    async def _inbound(self, request: Request) -> Response:
        """A reply by mail, as the provider's webhook posts it: Basic auth on the raw request first."""
        if not authorized(request.headers.get("authorization"), self._inbound_secret):
            return _error(
                "UNAUTHORIZED",
                "Post with HTTP Basic auth whose password is THREADGATE_EMAIL_INBOUND_SECRET.",
                401,
                {"WWW-Authenticate": 'Basic realm="threadgate-email"'},
            )
        context = self._context
        if context is None:
            return _error("UNAVAILABLE", "The email channel is starting or stopping; try again.", 503)
        try:
            parse_json(await request.body())
            mail = InboundMail.model_validate_json(await request.body())
        except GatewayError as exc:
            return JSONResponse(exc.envelope(), status_code=exc.status)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            return _error("VALIDATION_FAILED", f"{where}: {first['msg']}", 422)
        sender = mail.from_address()
        if sender is None:
            return _error("VALIDATION_FAILED", "From: not an address this channel takes.", 422)
        found = next(
            (
                parsed
                for parsed in (self.signer.reply_prompt(to.partition("@")[0]) for to in mail.recipients())
                if parsed
            ),
            None,
        )
        if found is None:
            event("email.reply_refused", logging.WARNING, reason="no_reply_address")
            return _error("NOT_A_REPLY", "The mail was not sent to a reply address of a request.", 404)
        prompt_id, mac = found
        if not self.signer.reply_from(prompt_id, mac, sender):
            wrong_sender = await self._mailed_elsewhere(prompt_id, mac, sender)
            event(
                "email.reply_refused",
                logging.WARNING,
                prompt_id=prompt_id,
                reason="wrong_sender" if wrong_sender else "bad_reply_address",
            )
            if wrong_sender:
                refusal = "Replies are taken only from the address the request was mailed to."
                return _error("FORBIDDEN", refusal, 403)
            return _error("NOT_A_REPLY", "The mail was not sent to a reply address of a request.", 404)
        if mail.automatic():  # an out-of-office answering the prompt's mail would otherwise deny it
            event("email.reply_ignored", prompt_id=prompt_id, reason="automatic")
            return JSONResponse({"outcome": "ignored"})
        text = await asyncio.to_thread(reply_text, mail, MAX_TEXT_CHARS)
        if not text.strip():  # read as a chat reply, an empty one would deny: say so instead
            event("email.reply_ignored", prompt_id=prompt_id, reason="empty")
            await self._tell(f"email:{sender}", EMPTY_REPLY)
            return JSONResponse({"outcome": "ignored"})
        message = InboundMessage(
            thread_id=f"email:{sender}",
            sender=f"email:{sender}",
            text=text,
            prompt_id=prompt_id,
            event_id=mail.event_id(),
        )
        try:
            received = await context.sink.receive(message)
        except GatewayError as exc:
            return JSONResponse(exc.envelope(), status_code=exc.status)
        except Exception as exc:
            if not is_store_outage(exc):
                raise
            event("email.inbound_failed", logging.WARNING, **failure(exc))
            return _error("STORE_UNAVAILABLE", "Try again shortly.", 503, {"Retry-After": "5"})
        event("email.inbound", prompt_id=prompt_id, outcome=received.outcome.value)
        return JSONResponse({"outcome": received.outcome.value})

    async def _mailed_elsewhere(self, prompt_id: str, mac: str, sender: str) -> bool:
        """Whether the reply address is one of the prompt's, made for another address than the sender's."""
        prompt = await self._prompt(prompt_id, sender)
        if prompt is None:
            return False
        threads = (prompt.thread_id, *prompt.copy_threads)
        return any(
            (address := _address(thread)) is not None and self.signer.reply_from(prompt_id, mac, address)
            for thread in threads
        )


__all__ = ["EmailChannel"]
