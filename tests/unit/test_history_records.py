"""An audit record is bounded whatever the prompt held, says what it cut, and files each settlement under
one outcome."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.base.models import Answer, Prompt, PromptState, ReasonCode, ToolCall
from gateway.decision.history import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_RECORD_BYTES,
    MAX_TEXT,
    HistoryOutcome,
    bounded,
    bounded_json,
    history_record,
    outcome_of,
)

NOW = datetime(2026, 1, 31, 9, 0, tzinfo=UTC)


def prompt(kind: str = "approval", **settled: Any) -> Prompt:
    questions = [{"id": "q1", "question": "Allow db__drop to run?"}]
    if kind == "approval":
        questions[0]["options"] = [{"label": "Approve"}, {"label": "Deny"}]  # type: ignore[assignment]
    return Prompt.model_validate(
        {
            "prompt_id": "prm_1",
            "run_id": "run_1",
            "thread_id": "web:room",
            "agent": "ops",
            "kind": kind,
            "questions": questions,
            "created_at": NOW,
            "expires_at": NOW,
            "settled_at": NOW,
            **settled,
        }
    )


def answered(kind: str, *choice: str) -> Prompt:
    answer = Answer(question="Allow db__drop to run?", question_id="q1", answer=list(choice))
    return prompt(kind, prompt_state=PromptState.ANSWERED, answers=[answer], answered_by="web:alice")


def cancelled(code: ReasonCode) -> Prompt:
    return prompt("text", prompt_state=PromptState.CANCELLED, reason="why", reason_code=code)


@pytest.mark.parametrize(
    ("settled", "outcome"),
    [
        (answered("approval", "Approve"), HistoryOutcome.APPROVED),
        (answered("approval", "Deny"), HistoryOutcome.DENIED),
        (answered("text", "main"), HistoryOutcome.ANSWERED),
        (answered("ask_user_question", "Approve"), HistoryOutcome.ANSWERED),  # a label, not a decision
        (cancelled(ReasonCode.EXPIRED), HistoryOutcome.EXPIRED),
        (cancelled(ReasonCode.DECLINED), HistoryOutcome.CANCELLED),
        (cancelled(ReasonCode.SUPERSEDED), HistoryOutcome.CANCELLED),
        (cancelled(ReasonCode.RUN_ENDED), HistoryOutcome.CANCELLED),
    ],
)
def test_each_settlement_has_one_outcome(settled: Prompt, outcome: HistoryOutcome) -> None:
    assert outcome_of(settled) is outcome


def test_a_record_names_who_cancelled_from_the_stored_fields() -> None:
    record = history_record(cancelled(ReasonCode.CANCELLED), {"cancelled_by": "web:bob"})
    assert (record["by"], record["cancelled_by"], record["outcome"]) == ("web:bob", "web:bob", "cancelled")
    quiet = history_record(cancelled(ReasonCode.SUPERSEDED), {})
    assert quiet["by"] is None and "cancelled_by" not in quiet


def test_a_record_shows_what_an_approve_for_the_session_let_through_and_only_then() -> None:
    granted = {"name": "Bash", "arguments": {"command": "npm test"}}
    allowed = answered("approval", "Approve").model_copy(update={"granted": ToolCall.model_validate(granted)})
    record = history_record(allowed, {})
    plain = history_record(answered("approval", "Approve"), {})
    assert record["granted"] == granted and record["by"] == "web:alice"
    assert "granted" not in plain


def size(record: dict[str, Any]) -> int:
    return len(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_small_record_is_kept_whole() -> None:
    record = history_record(answered("approval", "Approve"), {})
    assert bounded(dict(record)) == record and record["truncated"] is False


def test_deep_wide_and_long_arguments_are_cut_and_marked() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(40):
        node["next"] = {}
        node = node["next"]
    arguments = {"deep": deep, "wide": {f"k{i}": i for i in range(500)}, "long": "z" * 10_000}
    record = bounded({"tool_call": {"name": "Bash", "arguments": arguments}, "votes": []})
    cut = record["tool_call"]["arguments"]
    assert record["truncated"] is True
    assert cut["long"].endswith("…[cut: 6000 more characters]")
    assert len(cut["wide"]) == 201 and cut["wide"]["…"] == "[cut: 300 more entries]"
    assert "nested deeper than 12 levels" in json.dumps(cut["deep"], ensure_ascii=False)


def test_a_record_too_large_after_cutting_texts_gives_up_its_bulky_parts_then_its_details() -> None:
    options = [{"label": f"option {n}", "description": "d" * 300} for n in range(25)]
    questions = [{"id": f"q{n}", "question": "q" * 2000, "options": options} for n in range(4)]
    arguments = {f"arg{n}": "a" * 3_000 for n in range(100)}
    record = bounded({"questions": questions, "tool_call": {"name": "Bash", "arguments": arguments}})
    assert size(record) <= MAX_RECORD_BYTES and record["truncated"] is True
    assert record["tool_call"]["name"] == "Bash"
    assert record["tool_call"]["arguments"].startswith("…[cut: ")
    assert record["questions"][0]["options"][0] == {"label": "option 0"}


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


@pytest.mark.parametrize(
    "value",
    [
        {"note": "x" * MAX_TEXT},
        {"note": "x" * (MAX_TEXT + 1)},
        {"args": list(range(MAX_ITEMS))},
        {"args": list(range(MAX_ITEMS + 1))},
        {"args": {str(n): n for n in range(MAX_ITEMS + 1)}},
        {"deep": _nested(MAX_DEPTH // 2 - 1)},
        {"deep": _nested(MAX_DEPTH)},
        {"big": ["é" * 3000] * 12},  # within every text and list bound, over the byte bound
        {"plain": [1, 2.5, None, True, {"k": "v"}]},
    ],
)
def test_the_one_encoding_path_gives_what_the_bounded_record_gives(value: dict[str, Any]) -> None:
    """A record with nothing to cut is encoded as it is; any other goes through ``bounded``: either way
    the text is exactly ``bounded``'s record, encoded."""
    expected = json.dumps(bounded(dict(value)), ensure_ascii=False, separators=(",", ":"))
    assert bounded_json(dict(value)) == expected
