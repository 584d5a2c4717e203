"""The email channel end to end: prompts mailed through a local aiosmtpd with a link per choice, links that
answer once and only by their button, replies by mail through the inbound webhook, one mail thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from channels.email.settings import EmailSettings
from channels.email.spec import build
from gateway.base.ids import ThreadRef
from gateway.base.models import AgentDefinition, HumanInput, Person, ThreadItem
from gateway.delivery.channel import ChannelError
from gateway.delivery.channel_services import SignedInPeople
from gateway.people.signin import SignedIn
from tests.channels.email_support import (
    AGENT_AUTH,
    ALICE,
    INBOUND_SECRET,
    EmailGateway,
    Mailbox,
    basic,
    email_gateway,
    free_port,
    html_of,
    inbound_reply,
    links_of,
    smtp_server,
    start_run,
    text_of,
)
from tests.support.api_calls import raise_prompt
from tests.support.log_capture import captured_logs
from tests.support.redis_server import RedisServer

TARGET = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [{"label": "staging"}, {"label": "production"}],
        }
    ],
}
TWO_QUESTIONS = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "Target?", "options": [{"label": "staging"}, {"label": "production"}]},
        {"question": "Sections?", "multiSelect": True, "options": [{"label": "KPI"}, {"label": "Table"}]},
    ],
}
FREE_TEXT = {"kind": "text", "questions": [{"question": "What should the release note say?"}]}


def email_channel(smtp_url: str) -> Any:
    return build(
        EmailSettings(  # type: ignore[call-arg]
            _env_file=None,
            threadgate_email_from="gate@example.org",
            threadgate_smtp_url=smtp_url,
            threadgate_email_link_secret="a-link-secret-of-enough-length",
        )
    )


@pytest.fixture
async def gateway() -> AsyncIterator[EmailGateway]:
    async with email_gateway() as running:
        yield running


async def raised(gateway: EmailGateway, **body: Any) -> dict[str, Any]:
    async with gateway.client(AGENT_AUTH) as agent:
        run = await start_run(agent)
        return await raise_prompt(agent, run["run_id"], **body)


async def prompt_now(gateway: EmailGateway, prompt_id: str) -> dict[str, Any]:
    async with gateway.client(AGENT_AUTH) as agent:
        found: dict[str, Any] = (await agent.get(f"/v1/prompts/{prompt_id}")).json()
        return found


async def test_a_prompt_is_mailed_as_text_and_html_with_a_link_per_choice(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, **TARGET)
    [mail] = await gateway.mailbox.next(1)
    assert mail["To"] == ALICE and "gate@example.org" in mail["From"]
    assert mail.get_content_type() == "multipart/alternative"
    assert "What's the deployment target?" in text_of(mail)
    links = links_of(mail)
    assert len(links) == 2 and len(set(links)) == 2
    assert all(link in html_of(mail) for link in links)
    assert "staging" in html_of(mail) and "production" in html_of(mail)
    assert str(mail["Reply-To"]).startswith("reply+") and str(mail["Reply-To"]).endswith(
        "@inbound.example.org"
    )
    assert prompt["prompt_id"].lower().removeprefix("prm_") in str(mail["Reply-To"])


async def test_opening_a_link_changes_nothing(gateway: EmailGateway) -> None:
    """Mail scanners fetch every link: a GET shows the confirm page and answers nothing."""
    prompt = await raised(gateway)
    [mail] = await gateway.mailbox.next(1)
    approve = links_of(mail)[0]
    async with gateway.client() as browser:
        first = await browser.get(approve)
        again = await browser.get(approve)
    assert first.status_code == again.status_code == 200
    assert '<form method="post"' in first.text and ">Approve</button>" in first.text
    assert first.headers["referrer-policy"] == "no-referrer"
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_the_confirm_button_answers_once_and_a_replayed_link_is_refused(gateway: EmailGateway) -> None:
    prompt = await raised(gateway)
    [mail] = await gateway.mailbox.next(1)
    approve, deny = links_of(mail)
    async with gateway.client() as browser:
        pressed = await browser.post(approve)
        replayed = await browser.post(approve)
        other = await browser.post(deny)
    settled = await prompt_now(gateway, prompt["prompt_id"])
    assert pressed.status_code == 200
    assert settled["prompt_state"] == "answered"
    assert settled["answers"][0]["answer"] == ["Approve"]
    assert settled["answered_by"] == f"email:{ALICE}"
    assert replayed.status_code == 409 and "Already settled" in replayed.text
    assert other.status_code == 409  # the prompt is settled: the other choice's link answers nothing


async def test_a_link_is_spent_once_even_while_its_prompt_waits(gateway: EmailGateway) -> None:
    """Two questions: the first one's link answers it (the prompt waits for the second); pressed again,
    it is refused as used, and the answer stands."""
    prompt = await raised(gateway, **TWO_QUESTIONS)
    [mail] = await gateway.mailbox.next(1)
    staging, _production, kpi, _table = links_of(mail)
    async with gateway.client() as browser:
        first = await browser.post(staging)
        replayed = await browser.post(staging)
        second = await browser.post(kpi)
    assert (
        first.status_code == 200
        and "Now question 2 of 2" in first.text
        and "its link in the mail" in first.text
    )
    assert replayed.status_code == 410 and "used already" in replayed.text
    assert second.status_code == 200
    settled = await prompt_now(gateway, prompt["prompt_id"])
    assert [answer["answer"] for answer in settled["answers"]] == [["staging"], ["KPI"]]


async def test_a_tampered_link_is_refused(gateway: EmailGateway) -> None:
    prompt = await raised(gateway)
    [mail] = await gateway.mailbox.next(1)
    approve = links_of(mail)[0]
    flipped = approve[:-3] + ("A" if approve[-3] != "A" else "B") + approve[-2:]
    async with gateway.client() as browser:
        opened = await browser.get(flipped)
        pressed = await browser.post(flipped)
    assert opened.status_code == pressed.status_code == 400
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_a_link_past_the_prompts_expiry_is_refused(gateway: EmailGateway) -> None:
    prompt = await raised(gateway)
    await gateway.mailbox.next(1)
    expired = gateway.channel.signer.link(prompt["prompt_id"], ALICE, 0, 0, int(time.time()) - 1)
    async with gateway.client() as browser:
        pressed = await browser.post(f"/email/links/{expired}")
    assert pressed.status_code == 410 and "expired" in pressed.text
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_links_expire_with_the_prompt(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, expires_in_seconds=600)
    [mail] = await gateway.mailbox.next(1)
    token = links_of(mail)[0].rsplit("/", 1)[1]
    link = gateway.channel.signer.read_link(token)
    from datetime import datetime

    assert link.expires_at == int(datetime.fromisoformat(prompt["expires_at"]).timestamp())


async def test_a_reply_by_mail_with_the_inbound_secret_answers(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, **TARGET)
    [mail] = await gateway.mailbox.next(1)
    async with gateway.client() as provider:
        posted = await provider.post(
            "/email/inbound", json=inbound_reply(mail, "production"), headers=basic(INBOUND_SECRET)
        )
    assert posted.status_code == 200 and posted.json() == {"outcome": "answered"}
    settled = await prompt_now(gateway, prompt["prompt_id"])
    assert settled["answers"][0]["answer"] == ["production"]
    assert settled["answered_by"] == f"email:{ALICE}"


async def test_quoted_text_is_cut_from_a_reply(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, **FREE_TEXT)
    [mail] = await gateway.mailbox.next(1)
    reply = (
        "Fixes the login timeout.\n\nOn Sat, Dec 5, 2026 at 10:00 AM Threadgate <gate@example.org> wrote:\n"
        "> What should the release note say?\n> Reply to this mail with your answer.\n"
    )
    async with gateway.client() as provider:
        posted = await provider.post(
            "/email/inbound", json=inbound_reply(mail, reply), headers=basic(INBOUND_SECRET)
        )
    assert posted.json() == {"outcome": "answered"}
    settled = await prompt_now(gateway, prompt["prompt_id"])
    assert settled["answers"][0]["answer"] == ["Fixes the login timeout."]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        basic("not-the-secret"),
        {"Authorization": f"Bearer {INBOUND_SECRET}"},
        {"Authorization": "Basic %%%"},
    ],
)
async def test_an_inbound_post_without_the_secret_is_401(
    gateway: EmailGateway, headers: dict[str, str]
) -> None:
    prompt = await raised(gateway, **TARGET)
    [mail] = await gateway.mailbox.next(1)
    async with gateway.client() as stranger:
        posted = await stranger.post(
            "/email/inbound", json=inbound_reply(mail, "production"), headers=headers
        )
        garbage = await stranger.post("/email/inbound", content=b"{not json", headers=headers)
    assert posted.status_code == garbage.status_code == 401
    assert posted.json()["error"]["code"] == "UNAUTHORIZED"
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_a_reply_from_another_address_is_refused(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, **TARGET)
    [mail] = await gateway.mailbox.next(1)
    with captured_logs() as records:
        async with gateway.client() as provider:
            posted = await provider.post(
                "/email/inbound",
                json=inbound_reply(mail, "production", sender="mallory@example.net"),
                headers=basic(INBOUND_SECRET),
            )
    assert posted.status_code == 403 and posted.json()["error"]["code"] == "FORBIDDEN"
    refused = [getattr(record, "fields", {}) for record in records if record.msg == "email.reply_refused"]
    assert refused == [{"prompt_id": prompt["prompt_id"], "reason": "wrong_sender"}]
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_an_unreadable_inbound_body_is_a_4xx(gateway: EmailGateway) -> None:
    async with gateway.client() as provider:
        garbage = await provider.post("/email/inbound", content=b"{not json", headers=basic(INBOUND_SECRET))
        no_reply = await provider.post(
            "/email/inbound",
            json={"From": ALICE, "To": "someone@example.org", "TextBody": "hi"},
            headers=basic(INBOUND_SECRET),
        )
    assert garbage.status_code == 400
    assert no_reply.status_code == 404 and no_reply.json()["error"]["code"] == "NOT_A_REPLY"


async def test_the_mails_of_a_thread_form_one_conversation(gateway: EmailGateway) -> None:
    """The prompt's mail has a known id; its outcome answers it; both name the thread's root."""
    prompt = await raised(gateway)
    [asked] = await gateway.mailbox.next(1)
    async with gateway.client() as browser:
        await browser.post(links_of(asked)[0])
    mails = await gateway.mailbox.next(2)
    outcome = mails[1]
    assert prompt["prompt_id"].lower() in str(asked["Message-ID"])
    assert outcome["In-Reply-To"] == asked["Message-ID"]
    root = str(asked["References"])
    assert str(outcome["References"]).split() == [root, str(asked["Message-ID"])]
    assert outcome["Subject"] == asked["Subject"]
    assert "Approve" in text_of(outcome)


DROP = {"tool_call": {"name": "Bash", "arguments": {"command": "rm -rf /srv/staging"}}}
SIGNED_IN = {
    "tg_session=alice": SignedIn("alice", "Alice", ALICE),
    "tg_session=bob": SignedIn("bob", "Bob", "bob@example.com"),
}


class StandInSignIn(SignedInPeople):
    """Sign-in without an identity provider: the session cookie's value names the person."""

    def __init__(self) -> None:  # no SignIn behind it
        pass

    async def person(self, headers: Mapping[str, str], *, write: bool = False) -> SignedIn | None:
        return SIGNED_IN.get(headers.get("cookie") or "")


async def test_a_destructive_approval_needs_the_addressee_signed_in() -> None:
    """A link alone may have been opened by a scanner that runs scripts: with sign-in configured, an
    approval of a call that changes something is answered only by the addressee, signed in."""
    async with email_gateway(sessions=StandInSignIn()) as gateway:
        prompt = await raised(gateway, **DROP)
        [mail] = await gateway.mailbox.next(1)
        approve = links_of(mail)[0]
        assert "rm -rf /srv/staging" in text_of(mail)
        async with gateway.client() as browser:
            opened = await browser.get(approve)
            anonymous = await browser.post(approve)
            someone_else = await browser.post(approve, headers={"Cookie": "tg_session=bob"})
            assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"
            addressee = await browser.post(approve, headers={"Cookie": "tg_session=alice"})
        settled = await prompt_now(gateway, prompt["prompt_id"])
    assert opened.status_code == anonymous.status_code == 401
    assert "/auth/login?next=" in opened.text
    assert someone_else.status_code == 403
    assert addressee.status_code == 200
    assert settled["answers"][0]["answer"] == ["Approve"] and settled["answered_by"] == f"email:{ALICE}"


async def test_a_call_that_only_reads_is_answered_by_the_link_alone() -> None:
    async with email_gateway(sessions=StandInSignIn()) as gateway:
        prompt = await raised(gateway, tool_call={"name": "Read", "arguments": {"path": "README.md"}})
        [mail] = await gateway.mailbox.next(1)
        async with gateway.client() as browser:
            pressed = await browser.post(links_of(mail)[0])
        settled = await prompt_now(gateway, prompt["prompt_id"])
    assert pressed.status_code == 200 and settled["prompt_state"] == "answered"


@pytest.mark.redis
async def test_two_processes_share_what_a_link_did(redis_server: RedisServer) -> None:
    """Two gateway processes on one Redis: a prefetch on either changes nothing, a link pressed on one is
    spent for the other, and the answer taken on one settles the prompt for both."""
    redis_server.flush()
    async with (
        smtp_server() as smtp,
        email_gateway(redis_url=redis_server.url, smtp=smtp) as first,
        email_gateway(redis_url=redis_server.url, smtp=smtp) as second,
    ):
        prompt = await raised(first, **TWO_QUESTIONS)
        [mail] = await first.mailbox.next(1)
        staging, _production, kpi, _table = links_of(mail)
        path = staging.removeprefix(first.base_url)
        async with first.client() as on_first, second.client() as on_second:
            prefetched = [await on_first.get(path), await on_second.get(path)]
            assert (await prompt_now(second, prompt["prompt_id"]))["prompt_state"] == "pending"
            pressed = await on_first.post(path)
            replayed = await on_second.post(path)
            second_answer = await on_second.post(kpi.removeprefix(first.base_url))
        settled = await prompt_now(second, prompt["prompt_id"])
    assert [page.status_code for page in prefetched] == [200, 200]
    assert pressed.status_code == 200 and replayed.status_code == 410
    assert second_answer.status_code == 200
    assert [answer["answer"] for answer in settled["answers"]] == [["staging"], ["KPI"]]


async def test_an_auto_reply_answers_nothing(gateway: EmailGateway) -> None:
    """An out-of-office answering the prompt's mail would deny an approval if it were read as a reply."""
    prompt = await raised(gateway)
    [mail] = await gateway.mailbox.next(1)
    away = inbound_reply(mail, "I am out of the office until Monday.")
    away["Headers"] = [{"Name": "Auto-Submitted", "Value": "auto-replied"}]
    async with gateway.client() as provider:
        posted = await provider.post("/email/inbound", json=away, headers=basic(INBOUND_SECRET))
    assert posted.status_code == 200 and posted.json() == {"outcome": "ignored"}
    assert (await prompt_now(gateway, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_an_html_only_reply_answers_and_an_empty_one_is_told_so(gateway: EmailGateway) -> None:
    prompt = await raised(gateway, **TARGET)
    [mail] = await gateway.mailbox.next(1)
    empty = inbound_reply(mail, "")
    html_only = inbound_reply(mail, "") | {
        "MessageID": "html-only-reply",
        "HtmlBody": '<div>production</div><div class="gmail_quote"><blockquote>1. staging</blockquote></div>',
    }
    async with gateway.client() as provider:
        ignored = await provider.post("/email/inbound", json=empty, headers=basic(INBOUND_SECRET))
        [_, told] = await gateway.mailbox.next(2)
        answered = await provider.post("/email/inbound", json=html_only, headers=basic(INBOUND_SECRET))
    assert ignored.json() == {"outcome": "ignored"} and "no text" in text_of(told)
    assert told["To"] == ALICE and told["References"] == mail["References"]
    assert answered.json() == {"outcome": "answered"}
    assert (await prompt_now(gateway, prompt["prompt_id"]))["answers"][0]["answer"] == ["production"]


async def test_the_same_reply_posted_again_answers_once(gateway: EmailGateway) -> None:
    """A provider retries a mail it thinks was not taken: the mail's id is the core's dedupe key."""
    prompt = await raised(gateway, **FREE_TEXT)
    [mail] = await gateway.mailbox.next(1)
    reply = inbound_reply(mail, "Ship it")
    async with gateway.client() as provider:
        first = await provider.post("/email/inbound", json=reply, headers=basic(INBOUND_SECRET))
        again = await provider.post("/email/inbound", json=reply, headers=basic(INBOUND_SECRET))
    assert first.json() == {"outcome": "answered"}
    assert again.status_code == 200 and again.json()["outcome"] != "answered"
    assert (await prompt_now(gateway, prompt["prompt_id"]))["answers"][0]["answer"] == ["Ship it"]


class Logins:
    """aiosmtpd's authenticator: takes one login, and remembers every one tried."""

    def __init__(self, user: str, password: str) -> None:
        self.expected = (user.encode(), password.encode())
        self.tried: list[tuple[bytes, bytes]] = []

    def __call__(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        assert isinstance(data, LoginPassword)
        self.tried.append((data.login, data.password))
        return AuthResult(success=(data.login, data.password) == self.expected, handled=False)


def login_server(mailbox: Mailbox, logins: Logins) -> tuple[Controller, int]:
    """A started aiosmtpd that takes mail only after a login ``logins`` accepts (plain text: loopback)."""
    port = free_port()
    server = Controller(
        mailbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=logins,
        auth_require_tls=False,
        auth_required=True,
    )
    server.start()
    return server, port


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # a loopback test server
async def test_mail_goes_out_with_the_urls_login_and_a_refused_login_is_a_channel_error() -> None:
    """``smtp://user:password@host`` logs in (percent-escapes read); a refused login fails the post so the
    outbox tries again, and neither the error nor any log line shows the password."""
    mailbox = Mailbox()
    logins = Logins("gate@example.org", "p@ss word")
    server, port = login_server(mailbox, logins)
    thread = ThreadRef(f"email:{ALICE}", "email", (ALICE,))
    item = ThreadItem(type="message", content=[{"type": "text", "text": "The deploy finished."}])
    try:
        with captured_logs() as records:
            good = email_channel(f"smtp://gate%40example.org:p%40ss%20word@127.0.0.1:{port}")
            await good.post(thread, item)
            bad = email_channel(f"smtp://gate%40example.org:hunter2@127.0.0.1:{port}")
            with pytest.raises(ChannelError) as refused:
                await bad.post(thread, item)
    finally:
        server.stop()
    [sent] = await mailbox.next(1)
    assert "The deploy finished." in text_of(sent)
    assert logins.tried[0] == (b"gate@example.org", b"p@ss word")
    assert set(logins.tried[1:]) == {(b"gate@example.org", b"hunter2")}  # each mechanism the server offers
    assert not refused.value.permanent and "hunter2" not in str(refused.value)
    assert all(
        "hunter2" not in record.getMessage() + str(getattr(record, "fields", "")) for record in records
    )


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # a loopback test server
async def test_doctor_logs_in_to_the_mail_server_without_sending() -> None:
    from channels.email.doctor import check

    mailbox = Mailbox()
    logins = Logins("gate", "right")
    server, port = login_server(mailbox, logins)

    def settings(password: str) -> EmailSettings:
        return EmailSettings(  # type: ignore[call-arg]
            _env_file=None,
            threadgate_email_from="gate@example.org",
            threadgate_smtp_url=f"smtp://gate:{password}@127.0.0.1:{port}",
        )

    try:
        [works] = await check(settings("right"))
        [refused] = await check(settings("wrong"))
    finally:
        server.stop()
    unreachable = await check(settings("right"))
    assert works.status == "ok" and "takes the login" in works.detail
    assert (
        refused.status == "fail" and "refused the login" in refused.detail and "wrong" not in refused.detail
    )
    assert [found.status for found in unreachable] == ["fail"] and "right" not in unreachable[0].detail
    assert mailbox.mails == []


async def test_an_escalation_to_a_person_mails_their_linked_address_and_its_link_answers(
    gateway: EmailGateway,
) -> None:
    """A step naming ``person:dana`` reaches her ``email:`` identity as a direct message does on a chat
    platform: a mail with the prompt's links, whose button answers the one prompt as her."""
    store = gateway.runtime.store
    await store.people.put(Person(person="dana", name="Dana", identities=["email:dana@example.com"]))
    await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=["person:dana"])))
    prompt = await raised(gateway, escalation=[{"after_seconds": 1, "to": ["person:dana"]}])
    await gateway.mailbox.next(1)  # the prompt itself, to Alice
    await asyncio.sleep(1.05)
    assert await gateway.runtime.gateway.escalate_due() == 1
    # Dana: the escalation's note, then the prompt with its links; Alice's thread: who it went to.
    mails = (await gateway.mailbox.next(4))[1:]
    danas = [mail for mail in mails if str(mail["To"]) == "dana@example.com"]
    [note] = [mail for mail in mails if str(mail["To"]) == ALICE]
    assert len(danas) == 2 and "Escalated to" in text_of(note)
    approve = next(links_of(mail) for mail in danas if links_of(mail))[0]
    async with gateway.client() as browser:
        assert (await browser.post(approve)).status_code == 200
    settled = await prompt_now(gateway, prompt["prompt_id"])
    assert (settled["prompt_state"], settled["answered_by"]) == ("answered", "email:dana@example.com")
