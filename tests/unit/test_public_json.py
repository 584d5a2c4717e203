"""A prompt's feed JSON (``public_json``) is its contract JSON (``public``), in every state and kind."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from gateway.base.models import Answer, Prompt, PromptKind, PromptRequest, PromptState, ReasonCode, Resolution
from gateway.delivery.waiters import settled_message
from gateway.store.codec import RecordCodec, prompt_record, with_settlement

ASKED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
FORM = {
    "kind": "form",
    "message": "Who should get access?",
    "requested_schema": {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}},
}
QUESTION = {"kind": "ask_user_question", "questions": [{"question": "Which?", "options": [{"label": "a"}]}]}


def asked(request: dict[str, object]) -> Prompt:
    parsed = PromptRequest.model_validate(request)
    return Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="web:room",
        agent="ops",
        kind=parsed.kind,
        questions=parsed.questions,
        message=parsed.message,
        requested_schema=parsed.requested_schema,
        url=parsed.url,
        created_at=ASKED,
        expires_at=ASKED + timedelta(days=1),
        started_by="web:alice",
    )


def settled(prompt: Prompt, state: PromptState) -> Prompt:
    if state is PromptState.ANSWERED:
        answers = [
            Answer(question=q.question, question_id=q.id or "q1", answer=["a"]) for q in prompt.questions
        ]
        content = {"name": "Ada"} if prompt.kind is PromptKind.FORM else None
        return prompt.model_copy(
            update={
                "prompt_state": state,
                "answers": answers,
                "content": content,
                "answered_by": "web:alice",
                "resolution": Resolution.HOT,
                "settled_at": ASKED,
            }
        )
    if state is PromptState.CANCELLED:
        update = {
            "prompt_state": state,
            "reason": "gone",
            "reason_code": ReasonCode.EXPIRED,
            "settled_at": ASKED,
        }
        return prompt.model_copy(update=update)
    return prompt


@pytest.mark.parametrize("request_body", [QUESTION, FORM], ids=["question", "form"])
@pytest.mark.parametrize("state", list(PromptState))
def test_public_json_is_the_public_dict_serialised(
    request_body: dict[str, object], state: PromptState
) -> None:
    prompt = settled(asked(request_body), state)
    assert json.loads(prompt.public_json()) == prompt.public()


def test_a_settlement_message_carries_what_reading_the_prompt_back_gives() -> None:
    prompt = asked(QUESTION)
    fields = {
        "state": "answered",
        "answers": json.dumps([{"question": "Which?", "question_id": "q1", "answer": ["a"]}]),
        "answered_by": "web:alice",
        "resolution": "resolved_hot",
        "settled_at": "1735787045000",
    }
    flat = [item for pair in fields.items() for item in pair]
    prompt_id, heard = settled_message(f"prm_1 {json.dumps(flat)}")
    assert (prompt_id, heard) == ("prm_1", fields)
    read_back = RecordCodec().decode({"rec": prompt_record(prompt), **fields})
    assert with_settlement(prompt, fields) == read_back
    assert settled_message("prm_1") == ("prm_1", None)  # a bare id: the waiter reads the prompt
