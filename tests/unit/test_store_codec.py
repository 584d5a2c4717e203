"""A prompt's stored record reads back as the prompt; each codec keeps its own parsed records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.base.models import Prompt, PromptKind, Question
from gateway.store import codec
from gateway.store.codec import RecordCodec, prompt_record
from gateway.store.escalations import StepStatus
from gateway.store.results import DecisionStatus, OpenStatus, OutboxMode, SettlementStatus

ASKED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def prompt(prompt_id: str = "prm_1") -> Prompt:
    return Prompt(
        prompt_id=prompt_id,
        run_id="run_1",
        thread_id="web:room",
        agent="ops",
        kind=PromptKind.TEXT,
        questions=[Question(question="Which branch?")],
        created_at=ASKED,
        expires_at=ASKED + timedelta(days=1),
    )


def test_an_encoded_record_reads_back_without_parsing() -> None:
    mine = RecordCodec()
    asked = prompt()
    record = mine.encode(asked)
    assert record == prompt_record(asked)
    assert mine.pending(record) is asked


def test_each_codec_keeps_its_own_records() -> None:
    mine, theirs = RecordCodec(), RecordCodec()
    record = mine.encode(prompt())
    read = theirs.pending(record)
    assert read == prompt() and read is not mine.pending(record)
    assert theirs.pending(record) is read  # parsed once, then kept


def test_a_codec_keeps_at_most_its_size() -> None:
    small = RecordCodec(size=2)
    first = prompt("prm_1")
    record = small.encode(first)
    small.encode(prompt("prm_2"))
    small.encode(prompt("prm_3"))
    again = small.pending(record)  # the oldest was dropped, so it is parsed anew
    assert again is not first and again == first


def test_the_codec_module_holds_no_cache() -> None:
    shared = [
        name for name, value in vars(codec).items() if isinstance(value, dict) and not name.startswith("__")
    ]
    assert shared == []


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        (OpenStatus, {"ok", "no_run", "run_ended"}),
        (SettlementStatus, {"ok", "settled", "missing", "not_due", "voted", "already_voted", "claimed"}),
        (OutboxMode, {"acquire", "continue", "release", "renew"}),
        (
            DecisionStatus,
            {
                "duplicate",
                "stale",
                "active",
                "answered",
                "cancelled",
                "kept",
                "queued",
                "refused",
                "settled",
                "missing",
                "voted",
                "already_voted",
                "mirror",
                "claimed",
            },
        ),
        (StepStatus, {"ok", "taken", "settled", "missing"}),
    ],
)
def test_store_statuses_are_the_scripts_replies(kind: type, values: set[str]) -> None:
    assert {member.value for member in kind} == values
