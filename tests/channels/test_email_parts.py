"""The email channel's pure parts: what a reply says once the quote is cut, the signed links and reply
addresses, the Basic auth header, the SMTP URL and the settings' own checks."""

from __future__ import annotations

import base64
import time

import pytest

from channels.email.inbound import InboundMail, basic_password, html_text, strip_quoted
from channels.email.settings import EmailSettings, check_settings, plain_address, smtp_server
from channels.email.tokens import LinkRefused, Signer

SECRET = "a-link-secret-of-enough-length"
PROMPT = "prm_01JF3K8D9X2M4N6P8Q0R2S4T6V"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("approve", "approve"),
        (
            "yes\n\nOn Sat, Dec 5, 2026 at 10:00 AM Threadgate <gate@example.org> wrote:\n> Allow Bash?\n",
            "yes",
        ),
        ("2\n\n> What's the target?\n> 1. staging\n> 2. production\n", "2"),
        (
            "deny, not on a Friday\r\n\r\n-----Original Message-----\r\nFrom: Threadgate\r\n",
            "deny, not on a Friday",
        ),
        ("staging\n\nFrom: Threadgate <gate@example.org>\nSent: Saturday\nSubject: Threadgate\n", "staging"),
        ("> What's the target?\n> 1. staging\nproduction\n", "production"),  # written below the quote
        ("", ""),
    ],
)
def test_the_quoted_mail_is_cut_from_a_reply(body: str, said: str) -> None:
    assert strip_quoted(body) == said


def test_a_long_reply_is_cut_at_its_quote_without_the_parser() -> None:
    """The parser's patterns work harder than linearly: it never sees more than a short head."""
    hostile = "On " * 20_000  # the parser would take minutes over this; unparsed, it stands as written
    assert strip_quoted(hostile) == hostile.strip()


def test_an_html_only_reply_is_read_without_its_quote() -> None:
    html = (
        "<html><head><style>p{color:red}</style></head><body><div>Approve</div><div><br></div>"
        '<div class="gmail_quote">On Sat, Threadgate wrote:<blockquote>Allow <b>Bash</b>?</blockquote></div>'
        "</body></html>"
    )
    assert html_text(html) == "Approve"


@pytest.mark.parametrize(
    ("headers", "automatic"),
    [
        ([], False),
        ([{"Name": "Auto-Submitted", "Value": "no"}], False),
        ([{"Name": "Auto-Submitted", "Value": "auto-replied"}], True),
        ([{"Name": "Precedence", "Value": "bulk"}], True),
        ([{"Name": "X-Autoreply", "Value": "yes"}], True),
    ],
)
def test_an_auto_reply_is_told_apart(headers: list[dict[str, str]], automatic: bool) -> None:
    mail = InboundMail.model_validate({"From": "alice@example.com", "Headers": headers})
    assert mail.automatic() is automatic


def test_every_recipient_field_is_read_for_the_reply_address() -> None:
    mail = InboundMail.model_validate(
        {
            "From": "Alice <Alice@Example.com>",
            "To": '"Gate" <one@example.org>, two@example.org',
            "Cc": "three@example.org",
            "ToFull": [{"Email": "Four@Example.org", "Name": ""}],
            "OriginalRecipient": "five@example.org",
        }
    )
    assert mail.from_address() == "alice@example.com"
    assert sorted(mail.recipients()) == sorted(
        ["one@example.org", "two@example.org", "three@example.org", "four@example.org", "five@example.org"]
    )


@pytest.mark.parametrize(
    ("header", "password"),
    [
        ("Basic " + base64.b64encode(b"postmark:s3cret:with:colons").decode(), "s3cret:with:colons"),
        ("basic " + base64.b64encode(b":only-password").decode(), "only-password"),
        ("Basic " + base64.b64encode(b"no-colon").decode(), None),
        ("Basic %%%", None),
        ("Bearer s3cret", None),
        (None, None),
    ],
)
def test_the_basic_auth_password_is_read_strictly(header: str | None, password: str | None) -> None:
    assert basic_password(header) == password


def test_a_reply_address_names_its_prompt_for_its_addressee_only() -> None:
    signer = Signer(SECRET)
    box = signer.reply_box(PROMPT, "alice@example.com")
    assert box.startswith("reply+") and len(box) <= 64 and box == box.lower()
    found = signer.reply_prompt(box.upper())  # some providers change a mailbox name's case
    assert found is not None
    prompt_id, mac = found
    assert prompt_id == PROMPT
    assert signer.reply_from(prompt_id, mac, "alice@example.com")
    assert not signer.reply_from(prompt_id, mac, "mallory@example.net")
    assert not Signer("another-secret-entirely").reply_from(prompt_id, mac, "alice@example.com")
    assert signer.reply_prompt("someone") is None and signer.reply_prompt("reply+nodot") is None


def test_a_link_reads_back_until_it_expires_and_not_once_changed() -> None:
    signer = Signer(SECRET)
    token = signer.link(PROMPT, "alice@example.com", 0, 1, int(time.time()) + 60)
    link = signer.read_link(token)
    assert (link.prompt_id, link.address, link.index, link.option) == (PROMPT, "alice@example.com", 0, 1)
    assert signer.link(PROMPT, "alice@example.com", 0, 1, link.expires_at) != token  # each has its nonce
    with pytest.raises(LinkRefused) as expired:
        signer.read_link(token, now=link.expires_at)
    assert expired.value.expired
    for changed in (token[:-1] + ("A" if token[-1] != "A" else "B"), "x" * 2_000, "", "a.b"):
        with pytest.raises(LinkRefused) as refused:
            signer.read_link(changed)
        assert not refused.value.expired
    with pytest.raises(LinkRefused):
        Signer("another-secret-entirely").read_link(token)


def test_the_smtp_url_is_read_and_its_password_never_shown() -> None:
    tls = smtp_server("smtps://user%40example.com:p%40ss@smtp.example.com")
    assert (tls.host, tls.port, tls.tls, tls.username, tls.password) == (
        "smtp.example.com",
        465,
        True,
        "user@example.com",
        "p@ss",
    )
    plain = smtp_server("smtp://relay.example.com")
    assert (plain.port, plain.tls, plain.username) == (587, False, None)
    assert "p@ss" not in repr(tls)
    for bad in ("https://user:hunter2@example.com", "smtp://user:hunter2@host:notaport"):
        with pytest.raises(ValueError) as refused:
            smtp_server(bad)
        assert "hunter2" not in str(refused.value)


def test_addresses_are_taken_in_lower_case() -> None:
    assert plain_address(" Alice@Example.COM ") == "alice@example.com"
    assert plain_address("not an address") is None and plain_address("a@localhost") is None


def test_settings_that_cannot_work_are_named() -> None:
    def findings(**given: str) -> list[str]:
        settings = EmailSettings(_env_file=None, **given)  # type: ignore[arg-type]
        return [f"{check.status}: {check.detail}" for check in check_settings(settings)]

    assert findings() == []
    half = findings(threadgate_email_from="gate@example.org")
    assert any("set both" in line for line in half) and any("signs the mails' links" in line for line in half)
    complete = findings(
        threadgate_email_from="Threadgate <gate@example.org>",
        threadgate_smtp_url="smtp://relay.example.org",
        threadgate_email_link_secret=SECRET,
        threadgate_email_inbound_secret="inbound-secret",
    )
    assert complete == []
    assert any(
        "THREADGATE_EMAIL_INBOUND_SECRET" in line
        for line in findings(
            threadgate_email_from="gate@example.org",
            threadgate_smtp_url="smtp://relay.example.org",
            threadgate_session_secret=SECRET,
        )
    )
