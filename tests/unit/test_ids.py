"""Thread ids and identities: exactly the forms contract §1 spells, nothing that merely looks like them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from ulid import ULID

from gateway.base.errors import GatewayError
from gateway.base.ids import is_identity, new_id, new_ulid, parse_thread_id

ACCEPTED = [
    ("slack:C0456:1712345678.000100", "slack", ("C0456", "1712345678.000100")),
    ("slack:G01ABCDEF:1712345678.1", "slack", ("G01ABCDEF", "1712345678.1")),
    ("telegram:123456789", "telegram", ("123456789",)),
    ("telegram:-1001234567890", "telegram", ("-1001234567890",)),
    ("telegram:-1001234567890:42", "telegram", ("-1001234567890", "42")),
    ("discord:80351110224678912", "discord", ("80351110224678912",)),
    ("web:room", "web", ("room",)),
    ("web:Team_room-2", "web", ("Team_room-2",)),
]


@pytest.mark.parametrize(("thread_id", "platform", "parts"), ACCEPTED, ids=[case[0] for case in ACCEPTED])
def test_contract_thread_id_forms_parse_to_platform_and_coordinates(
    thread_id: str, platform: str, parts: tuple[str, ...]
) -> None:
    thread = parse_thread_id(thread_id)
    assert (thread.thread_id, thread.platform, thread.parts) == (thread_id, platform, parts)


REJECTED = {
    "empty": "",
    "no platform": "C0456:1712345678.000100",
    "unknown platform": "teams:19abc",
    "platform in capitals": "Slack:C0456:1712345678.000100",
    "slack without thread_ts": "slack:C0456",
    "slack thread_ts not a timestamp": "slack:C0456:yesterday",
    "slack channel in lower case": "slack:c0456:1712345678.000100",
    "slack extra part": "slack:C0456:1712345678.000100:x",
    "telegram chat not a number": "telegram:@channel",
    "telegram empty topic": "telegram:123:",
    "telegram negative topic": "telegram:123:-4",
    "telegram extra part": "telegram:123:4:5",
    "discord channel not a number": "discord:general",
    "discord channel too short": "discord:1234",
    "discord extra part": "discord:80351110224678912:1",
    "web empty room": "web:",
    "web room with a space": "web:my room",
    "web room with a slash": "web:a/b",
    "web room too long": "web:" + "r" * 65,
    "trailing newline": "web:room\n",
    "slack trailing newline": "slack:C0456:1712345678.000100\n",
    "leading space": " web:room",
    "trailing space": "telegram:123 ",
    "Arabic-Indic digits": "discord:١٢٣٤٥٦",
    "fullwidth digits": "telegram:１２３",
    "non-ASCII room": "web:café",
}


@pytest.mark.parametrize("thread_id", REJECTED.values(), ids=REJECTED.keys())
def test_anything_else_is_an_invalid_thread_id(thread_id: str) -> None:
    with pytest.raises(GatewayError) as refused:
        parse_thread_id(thread_id)
    assert (refused.value.code, refused.value.status) == ("INVALID_THREAD_ID", 400)
    assert refused.value.details == {"thread_id": thread_id}


def test_invalid_thread_id_message_shows_the_forms_that_work() -> None:
    with pytest.raises(GatewayError) as refused:
        parse_thread_id("teams:19abc")
    message = refused.value.message
    for form in (
        "slack:<channel_id>:<thread_ts>",
        "telegram:<chat_id>[:<topic_id>]",
        "discord:<channel_id>",
        "web:<room>",
    ):
        assert form in message
    assert refused.value.envelope()["error"]["code"] == "INVALID_THREAD_ID"


@pytest.mark.parametrize(
    "identity",
    [
        "slack:U0123ABC",
        "telegram:123456789",
        "discord:80351110224678912",
        "web:alice",
        "web:alice@example.com",
    ],
)
def test_platform_colon_id_is_an_identity(identity: str) -> None:
    assert is_identity(identity)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "U0123ABC",
        "slack:",
        ":U0123ABC",
        "Slack:U0123ABC",
        "slack:U0123 ABC",
        "slack:U0123ABC\n",
        " slack:U0123ABC",
        "1slack:U0123ABC",
        "slack:" + "U" * 129,
    ],
)
def test_anything_else_is_not_an_identity(value: str) -> None:
    assert not is_identity(value)


def test_new_ids_carry_their_prefix_and_sort_by_creation() -> None:
    first, second = new_id("prm"), new_id("prm")
    assert first.startswith("prm_") and len(first) == len("prm_") + 26
    assert first != second
    assert first[:14] <= second[:14]  # the ULID's leading 10 characters are its millisecond timestamp


def test_new_ids_are_ulids_of_now_in_the_order_made_even_within_a_millisecond() -> None:
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    made = [new_ulid() for _ in range(5000)]  # many share a millisecond
    after = datetime.now(UTC) + timedelta(milliseconds=1)
    assert made == sorted(made) and len(set(made)) == len(made)
    for text in made[:: len(made) // 20]:
        parsed = ULID.from_str(text)
        assert str(parsed) == text  # valid Crockford base32, as python-ulid writes it
        assert before <= parsed.datetime <= after
