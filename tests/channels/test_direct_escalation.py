"""An escalation step to a person reaches them by direct message on every linked platform that has them,
end to end through the real Slack and Telegram SDKs against their fakes: a copy with its controls in each
DM, an answer in one settles the prompt, and the prompt's thread and every other copy show how."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.api import create_app
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    Person,
    Prompt,
    PromptRequest,
    PromptState,
    RunRequest,
)
from gateway.base.models.groups import GroupBody, Rotation
from gateway.base.settings import Settings
from gateway.process.runtime import Runtime
from tests.channels import telegram_support
from tests.channels.conftest import serve_app
from tests.channels.slack_support import CHANNEL, EVE, SlackGateway
from tests.fakes.slack import FakeSlack, message_event
from tests.fakes.telegram import FakeTelegram
from tests.support.conditions import eventually as eventually_async
from tests.support.platforms import build_channel

DANA_SLACK, DANA_TELEGRAM = "U0DANA", 501
DANA_DM = "D0DANA"  # the fake's conversations.open answer for U0DANA
ANSWERED = "✓ Answered: Approve"


def drop(escalation: list[dict[str, Any]]) -> PromptRequest:
    return PromptRequest.model_validate(
        {
            "kind": "approval",
            "questions": [{"question": "Allow db__drop to run?"}],
            "tool_call": {"name": "db__drop", "arguments": {"database": "staging"}},
            "escalation": escalation,
        }
    )


TO_DANA = drop([{"after_seconds": 1, "to": ["person:dana"]}])


async def eventually(holds: Callable[[], bool], what: str, timeout: float) -> None:
    """Until ``holds()`` is true (what the fakes recorded), or fail naming ``what``."""

    async def check() -> bool:
        return holds()

    await eventually_async(check, what, timeout)


@dataclass
class Both:
    """One gateway process with a Slack and a Telegram channel, each against its fake."""

    slack: SlackGateway
    telegram: FakeTelegram

    @property
    def runtime(self) -> Runtime:
        return self.slack.runtime

    async def raise_in_slack(self, request: PromptRequest) -> tuple[str, Prompt]:
        """Alice opens a Slack thread; the agent's run there raises ``request``. (Its root ts, the prompt.)"""
        root = await self.slack.open_thread()
        prompt = await self.slack.ask(f"slack:{CHANNEL}:{root}", request)
        return root, prompt

    def slack_dm(self) -> list[dict[str, Any]]:
        return [posted for posted in self.slack.fake.posted() if posted["channel"] == DANA_DM]

    def telegram_dm(self) -> list[Any]:
        return [sent for sent in self.telegram.sent if sent.chat_id == DANA_TELEGRAM]


@asynccontextmanager
async def both(redis_url: str, *identities: str) -> AsyncIterator[Both]:
    """The gateway, dana in its directory with ``identities`` and the agent's only approver."""
    slack = FakeSlack()
    await slack.start()
    try:
        async with telegram_support.fake_bot_api() as telegram:
            settings = Settings(
                _env_file=None,
                redis_url=redis_url,
                slack_bot_token=slack.bot_token,
                slack_signing_secret=slack.signing_secret,
                slack_api_url=slack.api_url,
                telegram_bot_token=telegram_support.TOKEN,
                telegram_base_url=telegram.base_url,
                threadgate_lease_ttl_ms=2000,
            )
            slack_channel = build_channel("slack", settings)
            channels = [slack_channel, build_channel("telegram", settings)]
            runtime = Runtime.build(settings, channels=channels)
            runtime.gateway.sweep_interval = 0.1
            async with serve_app(create_app(runtime)) as base_url:
                await telegram.wait_for(lambda: bool(telegram.calls_of("getUpdates")))
                await runtime.store.people.put(Person(person="dana", identities=list(identities)))
                await runtime.store.put_agent(
                    AgentDefinition(name="ops", human_input=HumanInput(approvers=["person:dana"]))
                )
                yield Both(SlackGateway(slack, runtime, slack_channel, base_url), telegram)
    finally:
        await slack.stop()


async def test_a_step_to_a_person_sends_a_copy_with_controls_to_each_of_their_direct_messages(
    real_redis: str,
) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}", f"telegram:{DANA_TELEGRAM}") as gw:
        root, prompt = await gw.raise_in_slack(TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2 and len(gw.telegram_dm()) >= 2, "both DMs", 10)
        slack_header, slack_card = gw.slack_dm()
        telegram_header, telegram_card = gw.telegram_dm()

        async def both_recorded() -> bool:  # each copy is noted on the prompt just after it is posted
            taken = (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).escalations or []
            return bool(taken) and len(taken[0].threads or []) == 2

        await eventually_async(both_recorded, "both copies noted on the prompt", 10)
        escalated = await gw.runtime.gateway.get_prompt(prompt.prompt_id)

    assert [call.params["users"] for call in gw.slack.fake.calls_to("conversations.open")] == [DANA_SLACK]
    assert "thread_ts" not in slack_header and "Escalated to you" in slack_header["text"]
    assert slack_card["thread_ts"] == slack_header["ts"]
    assert any(block["type"] == "actions" for block in gw.slack.fake.message(slack_card)["blocks"])
    assert "Escalated to you" in telegram_header.text
    assert {"✅ Approve", "❌ Deny"} <= {
        button.text for button in gw.telegram.buttons(telegram_card.message_id)
    }
    assert escalated.escalations is not None
    assert sorted(escalated.escalations[0].threads or []) == sorted(
        [f"slack:{DANA_DM}:{slack_header['ts']}", f"telegram:{DANA_TELEGRAM}"]
    )
    # She is still told in the prompt's own thread too.
    assert any(p.get("thread_ts") == root and "Escalated to" in p["text"] for p in gw.slack.fake.posted(root))


async def test_an_answer_in_one_direct_message_settles_the_prompt_and_every_copy_shows_it(
    real_redis: str,
) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}", f"telegram:{DANA_TELEGRAM}") as gw:
        root, prompt = await gw.raise_in_slack(TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2 and len(gw.telegram_dm()) >= 2, "both DMs", 10)
        slack_header, slack_card = gw.slack_dm()
        card = gw.telegram_dm()[1].message_id
        pressed = await gw.telegram.press(DANA_TELEGRAM, card, gw.telegram.button(card, "Approve").data)
        await gw.telegram.answered(pressed)
        settled = await gw.runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
        await gw.runtime.gateway.outbox.idle()  # the settlement's posts, after the step's own pass

        def outcome_in(channel: str, ts: str) -> bool:
            return any(
                p["channel"] == channel and p.get("thread_ts") == ts and p["text"] == ANSWERED
                for p in gw.slack.fake.posted()
            )

        await eventually(lambda: outcome_in(CHANNEL, root), "the outcome in the prompt's thread", 5)
        await eventually(lambda: outcome_in(DANA_DM, slack_header["ts"]), "the outcome in the Slack DM", 5)
        await eventually(lambda: "edited" in gw.slack.fake.message(slack_card), "the Slack copy retired", 5)
        await eventually(
            lambda: any(edit.message_id == card for edit in gw.telegram.edits), "the Telegram copy retired", 5
        )
        updated = gw.slack.fake.message(slack_card)

    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"telegram:{DANA_TELEGRAM}")
    assert settled.person == "dana"
    assert not [block for block in updated["blocks"] if block["type"] == "actions"]


async def test_someone_not_listed_cannot_answer_from_a_direct_message_copy(real_redis: str) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}") as gw:
        _, prompt = await gw.raise_in_slack(TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2, "the Slack DM", 10)
        _, card = gw.slack_dm()
        assert await gw.slack.fake.press(gw.slack.events_url, card, "Approve", user=EVE) == 200
        await gw.slack.channel.presses.idle()
        after_eve = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
        assert await gw.slack.fake.press(gw.slack.events_url, card, "Approve", user=DANA_SLACK) == 200
        settled = await gw.runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)

    assert after_eve.pending, "Eve is no approver: a copy in someone's DM does not change who answers"
    assert settled.answered_by == f"slack:{DANA_SLACK}"


async def test_a_reply_typed_in_the_slack_direct_message_thread_answers_the_prompt(real_redis: str) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}") as gw:
        _, prompt = await gw.raise_in_slack(TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2, "the Slack DM", 10)
        header, _ = gw.slack_dm()
        reply = message_event(
            DANA_DM,
            DANA_SLACK,
            "approve",
            ts=gw.slack.fake.next_ts(),
            thread_ts=header["ts"],
            channel_type="im",
        )
        assert await gw.slack.deliver(reply) == 200
        settled = await gw.runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)

    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, f"slack:{DANA_SLACK}")


async def test_a_prompt_raised_in_the_persons_own_direct_message_is_not_copied_there(real_redis: str) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}", f"telegram:{DANA_TELEGRAM}") as gw:
        run = await gw.runtime.gateway.create_run(
            RunRequest(
                thread_id=f"telegram:{DANA_TELEGRAM}", agent="ops", started_by=f"telegram:{DANA_TELEGRAM}"
            )
        )
        await gw.runtime.gateway.raise_prompt(run.run_id, TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2, "the Slack DM", 10)
        await eventually(
            lambda: any("Escalated to" in sent.text for sent in gw.telegram_dm()), "the chat's own note", 5
        )
        await gw.runtime.gateway.outbox.idle()

    copies = [sent for sent in gw.telegram_dm() if sent.text.startswith("⏫ Escalated to you: a prompt in")]
    assert copies == [], "only the note mentioning her, in the chat where the prompt already is"


async def test_a_person_who_never_started_the_telegram_bot_is_skipped_without_holding_the_step(
    real_redis: str,
) -> None:
    async with both(real_redis, f"telegram:{DANA_TELEGRAM}", f"slack:{DANA_SLACK}") as gw:
        gw.telegram.never_started(DANA_TELEGRAM)
        root, prompt = await gw.raise_in_slack(TO_DANA)
        await eventually(lambda: len(gw.slack_dm()) >= 2, "the Slack DM", 10)
        await eventually(
            lambda: any("Escalated to" in p["text"] for p in gw.slack.fake.posted(root)),
            "the thread's note",
            5,
        )
        await gw.runtime.gateway.outbox.idle()
        escalated = await gw.runtime.gateway.get_prompt(prompt.prompt_id)

    tries = [call for call in gw.telegram.calls_of("sendMessage") if call.params["chat_id"] == DANA_TELEGRAM]
    assert len(tries) == 1, "a refusal no retry can fix is not tried again"
    assert gw.telegram_dm() == []
    assert escalated.pending and escalated.escalations is not None
    assert escalated.escalations[0].threads == [f"slack:{DANA_DM}:{gw.slack_dm()[0]['ts']}"]


async def test_a_retried_step_does_not_post_a_direct_message_copy_twice(real_redis: str) -> None:
    # Slack's copy goes first; Telegram fails once, so the step is delivered again.
    async with both(real_redis, f"slack:{DANA_SLACK}", f"telegram:{DANA_TELEGRAM}") as gw:
        gw.telegram.fail("sendMessage", 500)
        _, prompt = await gw.raise_in_slack(TO_DANA)

        async def both_noted() -> bool:
            found = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
            return bool(found.escalations and len(found.escalations[0].threads or []) == 2)

        await eventually_async(both_noted, "both copies noted, on the second try", 15)
        await gw.runtime.gateway.outbox.idle()

    tries = [call for call in gw.telegram.calls_of("sendMessage") if call.params["chat_id"] == DANA_TELEGRAM]
    assert len(tries) == 3, "Telegram's header failed once, then its header and card went"
    assert len(gw.telegram_dm()) == 2
    assert len(gw.slack.fake.calls_to("conversations.open")) == 1
    assert len(gw.slack_dm()) == 2, "one header and one card in Slack, though the step ran twice"


@pytest.mark.parametrize("group", ["group:sre", "group:sre:on-duty"])
async def test_a_step_to_a_group_reaches_its_members_by_direct_message(group: str, real_redis: str) -> None:
    async with both(real_redis, f"slack:{DANA_SLACK}") as gw:
        await gw.runtime.store.people.put(Person(person="erin", identities=["slack:U0ERIN"]))
        # Dana's shift now (the rotation began an hour ago), erin's next: only dana is on duty.
        starts = datetime.fromtimestamp(datetime.now(UTC).timestamp() - 3600, UTC)
        rotation = Rotation(starts_at=starts, shift_seconds=86_400, order=["dana", "erin"])
        await gw.runtime.store.people.put_group("sre", GroupBody(members=["dana", "erin"], rotation=rotation))
        await gw.raise_in_slack(drop([{"after_seconds": 1, "to": [group]}]))
        await eventually(lambda: len(gw.slack_dm()) >= 2, "the Slack DM", 10)
        await gw.runtime.gateway.outbox.idle()
    opened = [call.params["users"] for call in gw.slack.fake.calls_to("conversations.open")]
    assert opened == (["U0DANA"] if group.endswith(":on-duty") else ["U0DANA", "U0ERIN"])
    assert "Escalated to you" in gw.slack_dm()[0]["text"]
