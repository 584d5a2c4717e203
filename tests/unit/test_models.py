"""What a prompt may look like when raised (seed 000, contract §1), and how a stored one is served."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.base.models import (
    MAX_EXPIRES_IN,
    MAX_TEXT_CHARS,
    Answer,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    ReasonCode,
    Resolution,
)
from gateway.rules.render import pending_prompt_item

Loc = tuple[str | int, ...]


def raise_prompt(kind: str, *questions: dict[str, Any], **fields: Any) -> PromptRequest:
    return PromptRequest.model_validate({"kind": kind, "questions": list(questions), **fields})


def refusal(kind: str, *questions: dict[str, Any], **fields: Any) -> list[tuple[Loc, str]]:
    """The (loc, message) pairs a refused request is reported with."""
    with pytest.raises(ValidationError) as refused:
        raise_prompt(kind, *questions, **fields)
    return [(error["loc"], error["msg"]) for error in refused.value.errors()]


def assert_refused(refused: list[tuple[Loc, str]], loc: Loc, rule: str) -> None:
    assert any(where == loc and rule in message for where, message in refused), refused


def options(*labels: str) -> list[dict[str, str]]:
    return [{"label": label} for label in labels]


def choice(text: str, *labels: str, **fields: Any) -> dict[str, Any]:
    return {"question": text, "options": options(*labels), **fields}


# approval: exactly one question, options exactly Approve / Deny -------------------------------------


def test_approval_options_are_filled_in_when_omitted() -> None:
    request = raise_prompt("approval", {"question": "Run db__drop?"})
    assert request.questions[0].labels == ["Approve", "Deny"]


def test_approval_accepts_approve_deny_given_explicitly_with_descriptions() -> None:
    given = [{"label": "Approve", "description": "drop it"}, {"label": "Deny", "description": "keep it"}]
    request = raise_prompt("approval", {"question": "Run db__drop?", "options": given})
    assert [option.description for option in request.questions[0].options] == ["drop it", "keep it"]


@pytest.mark.parametrize(
    "labels",
    [("Yes", "No"), ("Deny", "Approve"), ("approve", "deny"), ("Approve",), ("Approve", "Deny", "Maybe")],
    ids=["other labels", "swapped", "lower case", "one option", "extra option"],
)
def test_approval_options_other_than_approve_deny_are_refused(labels: tuple[str, ...]) -> None:
    refused = refusal("approval", choice("Run db__drop?", *labels))
    assert_refused(refused, ("questions",), "exactly Approve, Deny")


def test_approval_with_two_questions_is_refused() -> None:
    refused = refusal("approval", {"question": "Drop users?"}, {"question": "Drop orders?"})
    assert_refused(refused, ("questions",), "exactly one question")


def test_approval_without_questions_is_refused() -> None:
    assert_refused(refusal("approval"), ("questions",), "at least 1 item")


def test_approval_multi_select_is_refused() -> None:
    refused = refusal("approval", choice("Run db__drop?", "Approve", "Deny", multiSelect=True))
    assert_refused(refused, ("questions",), "not multiSelect")


def test_tool_call_rides_on_an_approval() -> None:
    call = {"name": "db__drop", "arguments": {"table": "users"}}
    request = raise_prompt("approval", {"question": "Run db__drop?"}, tool_call=call)
    assert request.tool_call is not None
    assert request.tool_call.model_dump() == call


@pytest.mark.parametrize("kind", ["ask_user_question", "text"])
def test_tool_call_on_anything_but_an_approval_is_refused(kind: str) -> None:
    refused = refusal(kind, {"question": "Which?"}, tool_call={"name": "db__drop"})
    assert_refused(refused, ("tool_call",), "approvals only")


def test_tool_call_needs_a_name() -> None:
    refused = refusal("approval", {"question": "Run?"}, tool_call={"name": ""})
    assert_refused(refused, ("tool_call", "name"), "at least 1 character")


# ask_user_question: 1 to 4 questions, variants per question -----------------------------------------


def test_ask_user_question_mixes_single_multi_and_free_text_questions() -> None:
    request = raise_prompt(
        "ask_user_question",
        choice("Where from?", "CSV import", "API"),
        choice("Which sections?", "KPI cards", "Table", multiSelect=True),
        {"question": "Any style?"},
        {"question": "Anything else?", "options": []},
    )
    assert [(question.multi_select, question.labels) for question in request.questions] == [
        (False, ["CSV import", "API"]),
        (True, ["KPI cards", "Table"]),
        (False, []),
        (False, []),
    ]


def test_ask_user_question_takes_at_most_four_questions() -> None:
    refused = refusal("ask_user_question", *({"question": f"Question {n}?"} for n in range(5)))
    assert_refused(refused, ("questions",), "at most 4 items")


def test_ask_user_question_needs_a_question() -> None:
    assert_refused(refusal("ask_user_question"), ("questions",), "at least 1 item")


def test_multi_select_without_options_is_refused() -> None:
    refused = refusal("ask_user_question", {"question": "Which?", "multiSelect": True})
    assert_refused(refused, ("questions", 0), "multiSelect needs options")


def test_multi_select_is_read_by_its_wire_name_and_its_python_name() -> None:
    wire = raise_prompt("ask_user_question", choice("Which?", "a", "b", multiSelect=True))
    python = raise_prompt("ask_user_question", choice("Which?", "a", "b", multi_select=True))
    assert wire.questions[0].multi_select and python.questions[0].multi_select
    assert wire.questions[0].model_dump()["multiSelect"] is True


# text: one question, no options ---------------------------------------------------------------------


def test_text_prompt_is_one_question_without_options() -> None:
    request = raise_prompt("text", {"question": "Anything else?"})
    assert request.questions[0].options == []


def test_text_prompt_with_options_is_refused() -> None:
    assert_refused(refusal("text", choice("Anything else?", "no")), ("questions",), "no options")


def test_text_prompt_with_two_questions_is_refused() -> None:
    refused = refusal("text", {"question": "One?"}, {"question": "Two?"})
    assert_refused(refused, ("questions",), "exactly one question")


def test_unknown_kind_is_refused() -> None:
    assert_refused(refusal("survey", {"question": "Which?"}), ("kind",), "'approval'")


# labels, ids and texts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "labels", [("staging", "staging"), ("Staging", "STAGING"), ("Café", "CAFÉ"), ("staging", " staging ")]
)
def test_option_labels_must_be_unique_case_insensitively(labels: tuple[str, ...]) -> None:
    refused = refusal("ask_user_question", choice("Which?", *labels))
    assert_refused(refused, ("questions", 0, "options"), "must be unique")


@pytest.mark.parametrize("label", ["", "   ", "\t\n"])
def test_blank_labels_are_refused(label: str) -> None:
    refused = refusal("ask_user_question", choice("Which?", "ok", label))
    assert any(where == ("questions", 0, "options", 1, "label") for where, _ in refused), refused


def test_labels_are_stripped_of_surrounding_white_space() -> None:
    request = raise_prompt("ask_user_question", choice("Which?", "  staging ", "production"))
    assert request.questions[0].labels == ["staging", "production"]


@pytest.mark.parametrize("text", ["", "   "])
def test_blank_question_text_is_refused(text: str) -> None:
    refused = refusal("ask_user_question", {"question": text})
    assert any(where == ("questions", 0, "question") for where, _ in refused), refused


def test_question_ids_are_assigned_q1_q2_in_order() -> None:
    request = raise_prompt("ask_user_question", {"question": "A?"}, {"question": "B?"}, {"question": "C?"})
    assert [question.id for question in request.questions] == ["q1", "q2", "q3"]


def test_given_question_ids_are_kept_and_absent_ones_assigned_by_position() -> None:
    request = raise_prompt("ask_user_question", {"question": "A?", "id": "source"}, {"question": "B?"})
    assert [question.id for question in request.questions] == ["source", "q2"]


def test_approval_and_text_questions_get_id_q1() -> None:
    assert raise_prompt("approval", {"question": "Run?"}).questions[0].id == "q1"
    assert raise_prompt("text", {"question": "Why?"}).questions[0].id == "q1"


def test_question_ids_must_be_unique() -> None:
    refused = refusal("ask_user_question", {"question": "A?", "id": "x"}, {"question": "B?", "id": "x"})
    assert_refused(refused, ("questions",), "ids must be unique; 'x' repeats")


def test_a_given_id_may_not_take_an_assigned_one() -> None:
    refused = refusal("ask_user_question", {"question": "A?", "id": "q2"}, {"question": "B?"})
    assert_refused(refused, ("questions",), "'q2' repeats")


def test_question_texts_must_be_unique() -> None:
    refused = refusal("ask_user_question", {"question": "Which?"}, {"question": "Which?"})
    assert_refused(refused, ("questions",), "texts must be unique")


@pytest.mark.parametrize("question_id", ["has space", "a/b", "é", "x" * 65, ""])
def test_question_id_is_a_short_plain_token(question_id: str) -> None:
    refused = refusal("ask_user_question", {"question": "Which?", "id": question_id})
    assert any(where == ("questions", 0, "id") for where, _ in refused), refused


# length limits --------------------------------------------------------------------------------------

LIMITS = [
    ("question text", {"question": "x" * 2000}, {"question": "x" * 2001}, ("questions", 0, "question")),
    (
        "label",
        choice("Which?", "x" * 100),
        choice("Which?", "x" * 101),
        ("questions", 0, "options", 0, "label"),
    ),
    (
        "description",
        {"question": "Which?", "options": [{"label": "a", "description": "d" * 300}]},
        {"question": "Which?", "options": [{"label": "a", "description": "d" * 301}]},
        ("questions", 0, "options", 0, "description"),
    ),
    (
        "header",
        {"question": "Which?", "header": "h" * 100},
        {"question": "Which?", "header": "h" * 101},
        ("questions", 0, "header"),
    ),
    (
        "options",
        choice("Which?", *(f"option {n}" for n in range(25))),
        choice("Which?", *(f"option {n}" for n in range(26))),
        ("questions", 0, "options"),
    ),
]


@pytest.mark.parametrize(
    ("longest", "too_long", "loc"), [limit[1:] for limit in LIMITS], ids=[limit[0] for limit in LIMITS]
)
def test_length_limits_accept_the_longest_and_refuse_one_more(
    longest: dict[str, Any], too_long: dict[str, Any], loc: Loc
) -> None:
    raise_prompt("ask_user_question", longest)
    refused = refusal("ask_user_question", too_long)
    assert any(where == loc and "at most" in message for where, message in refused), refused


def widest_prompt(extra: int) -> list[dict[str, Any]]:
    """Four questions at the longest text, 25 options each: MAX_TEXT_CHARS + ``extra`` once numbered."""
    specs: list[dict[str, Any]] = [
        {
            "question": f"{n}" * 2000,
            "options": [{"label": f"{o:02d}" + "l" * 98, "description": "d" * 210} for o in range(25)],
        }
        for n in range(4)
    ]
    specs[0]["options"][0]["description"] += "d" * (extra + 30)
    return specs


def test_a_prompt_too_long_to_post_as_one_message_is_refused() -> None:
    refused = refusal("ask_user_question", *widest_prompt(1))
    assert_refused(refused, ("questions",), f"come to {MAX_TEXT_CHARS + 1} characters once numbered")
    assert_refused(refused, ("questions",), f"at most {MAX_TEXT_CHARS} fit in one chat message")


def test_a_prompt_that_just_fits_one_message_renders() -> None:
    request = raise_prompt("ask_user_question", *widest_prompt(0))
    prompt = Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="web:room",
        agent="ops",
        kind=request.kind,
        questions=request.questions,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
        expires_at=datetime(2024, 1, 8, tzinfo=UTC),
    )
    assert len(pending_prompt_item(prompt).text) == MAX_TEXT_CHARS


# unknown fields, expiry -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_body", "loc"),
    [
        ({"kind": "text", "questions": [{"question": "Why?"}], "priority": 1}, ("priority",)),
        ({"kind": "text", "questions": [{"question": "Why?", "hint": "x"}]}, ("questions", 0, "hint")),
        (
            {
                "kind": "ask_user_question",
                "questions": [{"question": "Which?", "options": [{"label": "a", "value": 1}]}],
            },
            ("questions", 0, "options", 0, "value"),
        ),
        (
            {"kind": "approval", "questions": [{"question": "Run?"}], "tool_call": {"name": "x", "args": {}}},
            ("tool_call", "args"),
        ),
    ],
    ids=["request", "question", "option", "tool_call"],
)
def test_unknown_fields_are_refused(request_body: dict[str, Any], loc: Loc) -> None:
    with pytest.raises(ValidationError) as refused:
        PromptRequest.model_validate(request_body)
    assert [(error["loc"], error["type"]) for error in refused.value.errors()] == [(loc, "extra_forbidden")]


@pytest.mark.parametrize("seconds", [1, 3600, MAX_EXPIRES_IN])
def test_expiry_within_one_second_to_thirty_days_is_accepted(seconds: int) -> None:
    assert (
        raise_prompt("text", {"question": "Why?"}, expires_in_seconds=seconds).expires_in_seconds == seconds
    )


def test_expiry_may_be_left_to_the_default() -> None:
    assert raise_prompt("text", {"question": "Why?"}).expires_in_seconds is None


@pytest.mark.parametrize(
    ("seconds", "rule"),
    [
        (0, "greater than or equal to 1"),
        (-5, "greater than or equal to 1"),
        (MAX_EXPIRES_IN + 1, "less than or equal to 2592000"),
    ],
)
def test_expiry_outside_one_second_to_thirty_days_is_refused(seconds: int, rule: str) -> None:
    assert_refused(
        refusal("text", {"question": "Why?"}, expires_in_seconds=seconds), ("expires_in_seconds",), rule
    )


def test_thirty_days_is_the_maximum_expiry() -> None:
    assert MAX_EXPIRES_IN == 2592000


# Prompt.public(): answered has answers, cancelled has reason, pending neither ------------------------

CREATED = datetime(2024, 4, 5, 12, 0, tzinfo=UTC)


def stored(**fields: Any) -> Prompt:
    request = raise_prompt(
        "ask_user_question", choice("What's the deployment target?", "staging", "production")
    )
    return Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="slack:C0456:1712345678.000100",
        agent="ops",
        kind=PromptKind.ASK_USER_QUESTION,
        questions=request.questions,
        created_at=CREATED,
        expires_at=CREATED + timedelta(days=7),
        started_by="slack:U0123ABC",
        **fields,
    )


ANSWERS = [Answer(question="What's the deployment target?", question_id="q1", answer=["staging"])]


def test_pending_prompt_shows_neither_answers_nor_reason() -> None:
    data = stored().public()
    assert data["prompt_state"] == "pending"
    assert not {"answers", "answered_by", "resolution", "reason", "reason_code", "settled_at"} & data.keys()


def test_answered_prompt_shows_answers_and_never_reason() -> None:
    data = stored(
        prompt_state=PromptState.ANSWERED,
        answers=ANSWERS,
        answered_by="slack:U0123ABC",
        resolution=Resolution.HOT,
        settled_at=CREATED,
        reason="left over",
        reason_code=ReasonCode.CANCELLED,
    ).public()
    assert data["answers"] == [
        {"question": "What's the deployment target?", "question_id": "q1", "answer": ["staging"]}
    ]
    assert data["answered_by"] == "slack:U0123ABC"
    assert data["resolution"] == "resolved_hot"
    assert "reason" not in data and "reason_code" not in data


def test_cancelled_prompt_shows_reason_and_never_answers() -> None:
    data = stored(
        prompt_state=PromptState.CANCELLED,
        reason="the run ended",
        reason_code=ReasonCode.RUN_ENDED,
        settled_at=CREATED,
        answers=ANSWERS,
        answered_by="slack:U0123ABC",
        resolution=Resolution.PARKED,
        turn_id="turn_1",
    ).public()
    assert (data["reason"], data["reason_code"]) == ("the run ended", "run_ended")
    assert not {"answers", "answered_by", "resolution", "turn_id"} & data.keys()


def test_public_prompt_uses_wire_names_and_hides_who_started_the_run() -> None:
    data = stored().public()
    assert data["questions"][0]["multiSelect"] is False
    assert "started_by" not in data
    assert data["expires_at"] == "2024-04-12T12:00:00Z"
