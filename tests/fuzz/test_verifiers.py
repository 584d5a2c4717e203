"""Every signature check answers False for anything it cannot read: it never raises, whatever the header."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from channels.slack.verify import is_signed, signature_of
from channels.telegram.webhook import secret_matches
from gateway.base.signed import unix_seconds
from gateway.delivery.webhook_signatures import standard_headers, standard_key, verify_standard
from gateway.delivery.webhooks import sign, verify

SECRET = "s3cret-for-verifiers"
KEY = standard_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
BODY = b'{"id": "evt_1"}'
NOW = 1_700_000_000
# Digits a naive isdigit()/int() takes: superscripts, other scripts' digits, very long runs.
TIMESTAMPS = st.one_of(
    st.text(),
    st.sampled_from(
        ["²", "٣", "1²", "𝟙𝟘", " 1700000000", "1700000000 ", "+1700000000", "-1", "1_700_000_000"]
    ),
    st.integers(min_value=13, max_value=6000).map(lambda n: "9" * n),
    st.text(alphabet="0123456789²³¹٠١٢٣", min_size=1, max_size=40),
)
HEADER_TEXT = st.one_of(st.text(), st.text(alphabet=",=v1t 0123456789abcdef²\ud800é", max_size=60))


@settings(max_examples=300, deadline=None)
@given(stamp=TIMESTAMPS, signature=HEADER_TEXT)
def test_threadgate_signature_check_never_raises(stamp: str, signature: str) -> None:
    assert verify(SECRET, f"t={stamp},v1={signature}", BODY, now=NOW) is False


@settings(max_examples=300, deadline=None)
@given(header=HEADER_TEXT)
def test_threadgate_signature_check_never_raises_on_any_header(header: str) -> None:
    assert verify(SECRET, header, BODY, now=NOW) is False


@settings(max_examples=300, deadline=None)
@given(stamp=TIMESTAMPS, signature=HEADER_TEXT)
def test_slack_signature_check_never_raises(stamp: str, signature: str) -> None:
    headers = {"x-slack-request-timestamp": stamp, "x-slack-signature": signature}
    assert is_signed(SECRET, headers, BODY, now=NOW) is False


@settings(max_examples=300, deadline=None)
@given(supplied=st.one_of(st.none(), HEADER_TEXT))
def test_telegram_secret_check_never_raises(supplied: str | None) -> None:
    assert secret_matches(supplied, "Telegram_secret-1") is (supplied == "Telegram_secret-1")


@settings(max_examples=300, deadline=None)
@given(message_id=HEADER_TEXT, stamp=TIMESTAMPS, signature=HEADER_TEXT, body=st.binary(max_size=64))
def test_standard_webhooks_check_never_raises(
    message_id: str, stamp: str, signature: str, body: bytes
) -> None:
    headers = {"webhook-id": message_id, "webhook-timestamp": stamp, "webhook-signature": signature}
    assert verify_standard(KEY, headers, body, now=NOW) is False


def test_a_timestamp_is_plain_ascii_digits_of_bounded_length() -> None:
    assert unix_seconds("1700000000") == 1_700_000_000
    for unreadable in ["", "²", "٣", "1e9", " 1", "-1", "9" * 13, "9" * 5000, None]:
        assert unix_seconds(unreadable) is None


def test_each_check_still_accepts_what_was_signed() -> None:
    stamp = int(time.time())
    assert verify(SECRET, sign(SECRET, BODY, stamp), BODY)
    headers = {
        "x-slack-request-timestamp": str(stamp),
        "x-slack-signature": signature_of(SECRET, str(stamp), BODY),
    }
    assert is_signed(SECRET, headers, BODY)
    assert verify_standard(KEY, standard_headers(KEY, "msg_1", BODY, stamp), BODY)
    assert not verify_standard(KEY, standard_headers(KEY, "msg_1", BODY, stamp), BODY + b" ")
