"""Escalation's pure parts: the wording, the schedule's entries, what the store's fields read back as, and
each platform's mention markup (which never lets a crafted identity through)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from channels.discord.render import mention_id
from channels.slack.render import mention as slack_mention
from channels.telegram.render import user_id
from gateway.base.models import Prompt, PromptKind, Question
from gateway.rules import notices
from gateway.store import keys
from gateway.store.escalations import Copy, DueStep, copies, schedule, taken, unscheduled

CREATED = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)


def prompt(escalation: list[dict[str, object]] | None) -> Prompt:
    return Prompt.model_validate(
        {
            "prompt_id": "prm_1",
            "run_id": "run_1",
            "thread_id": "web:ops",
            "agent": "ops",
            "kind": PromptKind.TEXT,
            "questions": [Question(id="q1", question="Why?")],
            "created_at": CREATED,
            "expires_at": CREATED,
            "escalation": escalation,
        }
    )


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (1, "1 second"),
        (45, "45 seconds"),
        (60, "1 minute"),
        (90, "90 seconds"),
        (900, "15 minutes"),
        (3600, "1 hour"),
        (5400, "90 minutes"),
        (7300, "2 hours"),
        (86_400, "1 day"),
        (2_592_000, "30 days"),
    ],
)
def test_a_wait_is_said_in_its_largest_whole_unit(seconds: int, said: str) -> None:
    assert notices.duration(seconds) == said


def test_a_reminder_names_people_only_when_the_platform_cannot_mention_them() -> None:
    assert notices.reminder([]) == "🔔 Reminder: this prompt is still waiting for an answer."
    assert notices.reminder(["alice", "bob"]).endswith(" Waiting on alice, bob.")


def test_each_step_is_scheduled_at_its_delay_from_the_raise_and_dropped_when_it_settles() -> None:
    asked = prompt([{"after_seconds": 60, "remind": True}, {"after_seconds": 3600, "to": ["web:oncall"]}])
    created_ms = int(CREATED.timestamp() * 1000)
    schedule_key = keys.escalation_schedule(keys.partition(asked.thread_id))  # the thread's partition
    assert schedule(asked) == [
        ("ZADD", schedule_key, created_ms + 60_000, "prm_1:0", created_ms + 3_600_000, "prm_1:1")
    ]
    assert unscheduled([asked, prompt(None)]) == [("ZREM", schedule_key, "prm_1:0", "prm_1:1")]
    assert schedule(prompt(None)) == [] and unscheduled([prompt(None)]) == []


@pytest.mark.parametrize("member", ["prm_1", "prm_1:", ":0", "prm_1:x", "prm_1:-1"])
def test_a_schedule_entry_that_is_not_a_step_is_ignored(member: str) -> None:
    assert DueStep.parse(member) is None


def test_the_steps_taken_read_back_with_what_they_did_and_where_their_copies_went() -> None:
    asked = prompt(
        [{"after_seconds": 60, "remind": True}, {"after_seconds": 3600, "to": ["web:oncall", "web:x"]}]
    )
    fields = [
        "s:1",
        "1800003600000",
        "c:1:web:oncall",
        "web:oncall m7",
        "s:0",
        "1800000060000",
        "s:9",
        "1",
    ]
    raw = json.dumps(fields)

    assert copies(raw) == [Copy(1, "web:oncall", "web:oncall", "m7")]
    steps = [one.model_dump(mode="json", exclude_none=True) for one in taken(asked, raw)]
    assert steps == [
        {"at": "2027-01-15T08:01:00Z", "step": 0, "remind": True},
        {"at": "2027-01-15T09:00:00Z", "step": 1, "to": ["web:oncall", "web:x"], "threads": ["web:oncall"]},
    ]


@pytest.mark.parametrize(
    ("identity", "markup"),
    [
        ("slack:U0123ABC", "<@U0123ABC>"),
        ("slack:W0123ABC", "<@W0123ABC>"),
        ("slack:U0123> <!channel", None),
        ("slack:u0123abc", None),
        ("discord:80351110224678912", None),
        ("web:alice", None),
    ],
)
def test_slack_mentions_only_its_own_user_ids(identity: str, markup: str | None) -> None:
    assert slack_mention(identity) == markup


def test_discord_and_telegram_mention_only_their_own_numeric_ids() -> None:
    assert mention_id("discord:80351110224678912") == 80351110224678912
    assert mention_id("discord:1> @everyone") is None and mention_id("telegram:123") is None
    assert user_id("telegram:123456789") == 123456789
    assert user_id("telegram:-100123") is None and user_id("discord:123") is None
