"""A Telegram prompt of several questions is answered step by step, one question's buttons at a time; the
partial answers are drafts in Redis, so the steps may reach different gateway processes, and the agent
gets one structured answer set."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from gateway.base.models import PromptRequest, PromptState, RunRequest
from gateway.decision.service import DraftStatus, Gateway
from gateway.process.runtime import Runtime
from gateway.rules import notices
from gateway.store import keys
from tests.channels import telegram_support
from tests.channels.telegram_support import (
    ALICE,
    BOB,
    GROUP,
    open_prompt,
    settled,
    webhook_gateway,
)
from tests.fakes.telegram import FakeTelegram
from tests.support.memory_channel import MemoryChannel

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]
GROUP_THREAD = f"telegram:{GROUP}"
DASHBOARD = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Where should the data come from?",
            "options": [{"label": "CSV import"}, {"label": "API"}],
        },
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Chart"}, {"label": "Table"}],
        },
        {"question": "Any preference for visual style?"},
    ],
}


fake = telegram_support.fake


@pytest.fixture
async def gateways(fake: FakeTelegram, real_redis: str) -> AsyncIterator[list[tuple[Runtime, str]]]:
    """Two gateway processes on one Redis, each taking Telegram's pushes at its own webhook URL."""
    async with AsyncExitStack() as stack:
        served = []
        for _ in range(2):
            runtime, base_url = await stack.enter_async_context(webhook_gateway(fake, real_redis))
            served.append((runtime, f"{base_url}/telegram/webhook"))
        yield served


async def press(fake: FakeTelegram, url: str, user_id: int, message_id: int, button: str) -> dict[str, Any]:
    """Push a press of the button labelled ``button`` to the process at ``url``; the bot's answer."""
    update = fake.press_update(user_id, message_id, fake.button(message_id, button).data)
    assert await fake.deliver(update, url=url) == 200
    return await fake.answered(update)


async def reply(fake: FakeTelegram, url: str, user_id: int, text: str, to: int) -> dict[str, Any]:
    update = fake.update(fake.message(GROUP, user_id, text, reply_to=to))
    assert await fake.deliver(update, url=url) == 200
    return update


async def test_several_questions_are_answered_step_by_step_across_processes_as_one_answer_set(
    fake: FakeTelegram, gateways: list[tuple[Runtime, str]]
) -> None:
    (first, first_url), (second, second_url) = gateways
    prompt = await open_prompt(first, GROUP_THREAD, DASHBOARD)
    [question, posted] = fake.sent
    message = posted.message_id
    assert question.text.startswith("Where should the data come from?\n  1. CSV import")
    assert posted.text.endswith("\n\n▶ Question 1 of 3: Where should the data come from?")
    assert [b.text for b in fake.buttons(message)] == ["1. CSV import", "2. API", "Other…", "Claim"]

    step = await press(fake, first_url, ALICE, message, "1. CSV import")

    assert step["text"] == "Saved. Now question 2 of 3."
    assert fake.messages[message]["text"].endswith("\n\n▶ Question 2 of 3: Which sections?")
    assert fake.messages[question.message_id]["text"] == question.text  # the question stays as it was
    await press(fake, second_url, ALICE, message, "KPI cards")
    await press(fake, first_url, ALICE, message, "Table")
    await press(fake, second_url, ALICE, message, "Submit")
    assert fake.messages[message]["text"].endswith("▶ Question 3 of 3: Any preference for visual style?")
    await press(fake, first_url, ALICE, message, "✎ Answer…")
    assert (await second.gateway.get_prompt(prompt.prompt_id)).pending  # nothing is answered until the end
    await reply(fake, second_url, ALICE, "dark theme", to=fake.sent[-1].message_id)

    resolved = await settled(first, prompt.prompt_id)
    assert resolved.prompt_state is PromptState.ANSWERED
    assert [(a.question_id, a.answer) for a in resolved.answers or []] == [
        ("q1", ["CSV import"]),
        ("q2", ["KPI cards", "Table"]),
        ("q3", ["dark theme"]),
    ]
    await fake.wait_for(lambda: fake.buttons(message) == [])
    settled_text = fake.messages[message]["text"]
    assert settled_text.startswith("Where should the data come from?\n  1. CSV import")
    assert settled_text.endswith(
        f"✓ Answered: CSV import · KPI cards, Table · dark theme\nAnswered by user{ALICE}"
    )


async def test_a_step_pressed_by_someone_not_allowed_does_not_move_the_form_on(
    fake: FakeTelegram, gateways: list[tuple[Runtime, str]]
) -> None:
    (first, first_url), _second = gateways
    prompt = await open_prompt(first, GROUP_THREAD, DASHBOARD, started_by=ALICE)
    [_question, posted] = fake.sent

    answered = await press(fake, first_url, BOB, posted.message_id, "2. API")

    assert answered == {"text": notices.NOT_ALLOWED, "show_alert": True}
    assert fake.edits == []
    assert await first.gateway.get_draft(GROUP_THREAD, prompt.prompt_id) == {}


async def test_pressing_an_earlier_step_again_changes_that_answer_and_shows_the_next_unanswered_one(
    fake: FakeTelegram, gateways: list[tuple[Runtime, str]]
) -> None:
    (first, first_url), _second = gateways
    await open_prompt(first, GROUP_THREAD, DASHBOARD)
    [_question, posted] = fake.sent
    step_one = fake.button(posted.message_id, "2. API").data  # a client still showing the first step
    await press(fake, first_url, ALICE, posted.message_id, "1. CSV import")

    update = fake.press_update(ALICE, posted.message_id, step_one)
    assert await fake.deliver(update, url=first_url) == 200

    assert (await fake.answered(update))["text"] == "Saved. Now question 2 of 3."
    [prompt_id] = [p for p in step_one.split("|") if p.startswith("prm_")]
    draft = await first.gateway.get_draft(GROUP_THREAD, prompt_id)
    assert draft == {"q1": '["API"]'}


# The drafts the steps are kept in: the core's rule, on every store ---------------------------------


@pytest.fixture
async def core(redis_url: str | None) -> AsyncIterator[Gateway]:
    from gateway.delivery.channel import Channels
    from gateway.store import Store, connect

    connection = connect(redis_url)
    service = Gateway(Store(connection.client), Channels([MemoryChannel("telegram")]))
    await service.start()
    yield service
    await service.stop()
    await connection.client.aclose()


async def test_a_draft_is_kept_only_for_someone_who_may_answer_and_only_while_the_prompt_is_pending(
    core: Gateway,
) -> None:
    run = await core.create_run(
        RunRequest(thread_id=GROUP_THREAD, agent="ops", started_by=f"telegram:{ALICE}")
    )
    prompt = await core.raise_prompt(run.run_id, PromptRequest.model_validate(DASHBOARD))

    first = await core.save_draft(prompt.prompt_id, f"telegram:{ALICE}", prompt.prompt_id, {"q1": "a"})
    second = await core.save_draft(prompt.prompt_id, f"telegram:{ALICE}", prompt.prompt_id, {"q2": "b"})
    refused = await core.save_draft(prompt.prompt_id, f"telegram:{BOB}", prompt.prompt_id, {"q1": "x"})
    ttl_ms = await core.store.redis.pttl(keys.draft(GROUP_THREAD, prompt.prompt_id))
    kept = await core.get_draft(GROUP_THREAD, prompt.prompt_id)
    await core.cancel_prompt(prompt.prompt_id)
    late = await core.save_draft(prompt.prompt_id, f"telegram:{ALICE}", prompt.prompt_id, {"q3": "c"})

    assert (first.status, first.values) == (DraftStatus.SAVED, {"q1": "a"})
    assert (second.status, second.values) == (DraftStatus.SAVED, {"q1": "a", "q2": "b"})
    assert (refused.status, late.status) == (DraftStatus.NOT_ALLOWED, DraftStatus.STALE)
    assert kept == {"q1": "a", "q2": "b"}
    assert 0 < ttl_ms <= (prompt.expires_at - prompt.created_at).total_seconds() * 1000
    assert await core.get_draft(GROUP_THREAD, prompt.prompt_id) == {}  # settling the prompt deleted it
