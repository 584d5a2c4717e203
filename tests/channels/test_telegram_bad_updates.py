"""An update that cannot be read or handled is logged once with its id and confirmed (so it is not fetched
again forever), by long polling and by webhook; the next reply answers the prompt."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from gateway.base.models import PromptState
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    DEPLOY,
    open_prompt,
    settled,
    telegram_gateway,
    webhook_gateway,
)
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
DM = f"telegram:{ALICE}"

fake = telegram_support.fake

Mangled = Callable[[FakeTelegram], dict[str, Any]]


def private_message(fake: FakeTelegram, **fields: Any) -> dict[str, Any]:
    return {**fake.message(ALICE, ALICE, "2"), **fields}


def a_date_that_is_not_a_number(fake: FakeTelegram) -> dict[str, Any]:
    return {"message": private_message(fake, date="yesterday")}


def a_message_that_is_a_string(fake: FakeTelegram) -> dict[str, Any]:
    return {"message": "2"}


def an_entity_without_its_offset(fake: FakeTelegram) -> dict[str, Any]:
    return {"message": private_message(fake, entities=[{"type": "bold"}])}


def a_sender_without_a_name(fake: FakeTelegram) -> dict[str, Any]:
    return {"message": private_message(fake, **{"from": {"id": ALICE}})}


def a_message_without_its_chat(fake: FakeTelegram) -> dict[str, Any]:
    message = private_message(fake)
    del message["chat"]  # the library lets this through; reading the thread id then fails
    return {"message": message}


UNREADABLE = [
    a_date_that_is_not_a_number,
    a_message_that_is_a_string,
    an_entity_without_its_offset,
    a_sender_without_a_name,
    a_message_without_its_chat,
]


def unreadable_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        record.fields  # type: ignore[attr-defined]
        for record in caplog.records
        if record.getMessage() == "telegram.update.unreadable"
    ]


@pytest.fixture
async def polling(fake: FakeTelegram) -> AsyncIterator[Runtime]:
    """A gateway polling the fake, on the embedded store (the store is not what is under test)."""
    async with telegram_gateway(fake, None) as runtime:
        yield runtime


@pytest.mark.parametrize("mangled", UNREADABLE)
async def test_a_polled_update_that_cannot_be_read_is_logged_once_confirmed_and_skipped(
    fake: FakeTelegram, polling: Runtime, caplog: pytest.LogCaptureFixture, mangled: Mangled
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    prompt = await open_prompt(polling, DM, DEPLOY)

    bad = await fake.push({"update_id": next(fake._update_ids), **mangled(fake)})
    await fake.confirmed(bad["update_id"])  # the offset moved past it: it is not fetched again
    await fake.say(ALICE, ALICE, "2")

    resolved = await settled(polling, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["production"]]
    [line] = unreadable_lines(caplog)
    assert line["update_id"] == bad["update_id"]
    assert set(line) == {"update_id", "error"}  # its id and the error's type: none of its content


@pytest.mark.parametrize("mangled", UNREADABLE)
async def test_a_pushed_update_that_cannot_be_read_is_logged_once_and_acknowledged(
    fake: FakeTelegram, caplog: pytest.LogCaptureFixture, mangled: Mangled
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    async with webhook_gateway(fake, None) as (runtime, _base_url):
        prompt = await open_prompt(runtime, DM, DEPLOY)
        bad = {"update_id": next(fake._update_ids), **mangled(fake)}

        status = await fake.deliver(bad)  # 200: anything else and Telegram sends it again, and again
        good = await fake.deliver({"update_id": next(fake._update_ids), "message": private_message(fake)})

        resolved = await settled(runtime, prompt.prompt_id)
        assert (status, good) == (200, 200)
        assert resolved.prompt_state is PromptState.ANSWERED
        [line] = unreadable_lines(caplog)
        assert line["update_id"] == bad["update_id"]
        assert set(line) == {"update_id", "error"}


@pytest.mark.parametrize("data", [{"prompt": "prm_1"}, 42, "p:prm_1:x:y", "💥" * 40])
async def test_a_press_with_callback_data_no_button_of_ours_carries_is_refused_once(
    fake: FakeTelegram, polling: Runtime, caplog: pytest.LogCaptureFixture, data: object
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    prompt = await open_prompt(polling, DM, DEPLOY)
    [asked] = fake.sent
    update = fake.press_update(ALICE, asked.message_id, "placeholder")
    update["callback_query"]["data"] = data

    await fake.push(update)
    answer = await fake.answered(update)
    await fake.say(ALICE, ALICE, "2")

    resolved = await settled(polling, prompt.prompt_id)
    assert [a.answer for a in resolved.answers or []] == [["production"]]
    assert answer["text"] == notices.MISMATCH
    [line] = [vars(r) for r in caplog.records if r.getMessage().startswith("telegram.press.")]
    assert line["fields"]["query_id"] == update["callback_query"]["id"]
