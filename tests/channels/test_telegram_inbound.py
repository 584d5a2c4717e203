"""Telegram updates as InboundMessages: threads as the contract spells them, people only, stable event ids."""

from __future__ import annotations

from typing import Any

import pytest
from telegram import Update
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter

from channels.telegram.channel import file_url_for
from channels.telegram.inbound import BotIdentity, ChatAddress, address_of, normalize, strip_mention
from channels.telegram.send import channel_error, safe_text
from channels.telegram.webhook import check_secret, secret_matches
from gateway.base.ids import parse_thread_id

BOT = BotIdentity(user_id=424242, username="threadgate_bot")
TOKEN = "424242:fake-token-for-tests"


def update(
    text: str | None = "hello", *, chat_id: int = -100500, user: dict[str, Any] | None = None, **extra: Any
) -> Update:
    message: dict[str, Any] = {
        "message_id": 77,
        "date": 1_712_345_678,
        "chat": {"id": chat_id, "type": "supergroup" if chat_id < 0 else "private"},
        "from": user or {"id": 111, "is_bot": False, "first_name": "Alice"},
        **extra,
    }
    if text is not None:
        message["text"] = text
    return Update.de_json({"update_id": 9001, "message": message}, None)


def test_a_group_message_is_the_chats_thread_with_the_sender_as_identity() -> None:
    incoming = normalize(update("deploy"), BOT)

    assert incoming is not None
    message = incoming.message
    assert (message.thread_id, message.sender, message.text, message.event_id) == (
        "telegram:-100500",
        "telegram:111",
        "deploy",
        "message:77",
    )
    assert incoming.message_id == 77


def test_a_forum_topic_message_is_the_topics_thread() -> None:
    incoming = normalize(update(message_thread_id=12, is_topic_message=True), BOT)

    assert incoming is not None and incoming.message.thread_id == "telegram:-100500:12"


def test_a_reply_outside_forum_topics_stays_in_the_chats_thread() -> None:
    """In a plain supergroup a reply carries message_thread_id too; it is not a topic."""
    incoming = normalize(update(message_thread_id=55), BOT)

    assert incoming is not None and incoming.message.thread_id == "telegram:-100500"


def test_a_private_chat_is_the_persons_own_thread() -> None:
    incoming = normalize(update(chat_id=111), BOT)

    assert incoming is not None and incoming.message.thread_id == "telegram:111"


@pytest.mark.parametrize(
    ("extra", "user"),
    [
        pytest.param({}, {"id": 424242, "is_bot": True, "first_name": "Threadgate"}, id="the-bot-itself"),
        pytest.param({}, {"id": 999, "is_bot": True, "first_name": "OtherBot"}, id="another-bot"),
        pytest.param(
            {"sender_chat": {"id": -100500, "type": "supergroup"}},
            {"id": 1087968824, "is_bot": True, "first_name": "Group"},
            id="anonymous-admin",
        ),
        pytest.param(
            {"is_automatic_forward": True},
            {"id": 777000, "is_bot": False, "first_name": "Telegram"},
            id="channel-forward",
        ),
    ],
)
def test_messages_not_written_by_a_person_are_not_handled(
    extra: dict[str, Any], user: dict[str, Any]
) -> None:
    assert normalize(update(user=user, **extra), BOT) is None


def test_other_bots_are_heard_when_asked_for_but_never_the_bot_itself() -> None:
    other = {"id": 999, "is_bot": True, "first_name": "OtherBot"}
    itself = {"id": 424242, "is_bot": True, "first_name": "Threadgate"}

    assert normalize(update(user=other), BOT, accept_bots=True) is not None
    assert normalize(update(user=itself), BOT, accept_bots=True) is None


def test_a_message_without_text_is_not_handled_but_a_caption_is_its_text() -> None:
    assert normalize(update(None), BOT) is None
    incoming = normalize(update(None, caption="approve"), BOT)
    assert incoming is not None and incoming.message.text == "approve"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@threadgate_bot 2", "2"),
        ("@Threadgate_Bot, approve", "approve"),
        ("@threadgate_bot: staging", "staging"),
        ("@threadgate_botty 2", "@threadgate_botty 2"),
        ("2 @threadgate_bot", "2 @threadgate_bot"),
    ],
)
def test_a_leading_mention_of_the_bot_is_not_part_of_the_reply(text: str, expected: str) -> None:
    assert strip_mention(text, "threadgate_bot") == expected


def test_thread_ids_become_chat_addresses() -> None:
    assert address_of(parse_thread_id("telegram:-100500:12")) == ChatAddress(-100500, 12)
    assert address_of(parse_thread_id("telegram:111")) == ChatAddress(111, None)


def test_the_webhook_secret_must_match_exactly() -> None:
    assert secret_matches("s3cret", "s3cret")
    assert not secret_matches("s3cre", "s3cret")
    assert not secret_matches(None, "s3cret")
    assert not secret_matches("", "s3cret")


@pytest.mark.parametrize("secret", ["", "has space", "x" * 257, "ünïcode"])
def test_a_webhook_secret_telegram_would_refuse_is_refused(secret: str) -> None:
    with pytest.raises(ValueError, match="TELEGRAM_WEBHOOK_SECRET"):
        check_secret(secret)


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
def test_platform_errors_become_channel_errors_that_say_what_to_do() -> None:
    flood = channel_error(RetryAfter(12), TOKEN)
    kicked = channel_error(Forbidden("Forbidden: bot was kicked from the group chat"), TOKEN)
    migrated = channel_error(ChatMigrated(-1009876), TOKEN)
    refused = channel_error(BadRequest("Bad Request: chat not found"), TOKEN)
    down = channel_error(NetworkError("httpx.ConnectError: All connection attempts failed"), TOKEN)

    assert (flood.retry_after, flood.permanent) == (12.0, False)
    assert kicked.permanent and "may not post" in str(kicked)
    assert migrated.permanent and "telegram:-1009876" in str(migrated)
    assert refused.permanent and "Chat not found" in str(refused)
    assert not down.permanent and down.retry_after is None


def test_the_bot_token_never_appears_in_an_error_text() -> None:
    error = NetworkError(f"httpx.ReadError: http://127.0.0.1/bot{TOKEN}/sendMessage")

    assert TOKEN not in safe_text(error, TOKEN)
    assert TOKEN not in str(channel_error(error, TOKEN))


def test_the_file_url_sits_beside_the_api_url() -> None:
    assert file_url_for("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_url_for("http://127.0.0.1:8081/bot") == "http://127.0.0.1:8081/file/bot"
