"""The thread items a prompt becomes, pending_prompt and its resolved audit, as seed 000 shows them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gateway.base.models import (
    Answer,
    Prompt,
    PromptRequest,
    PromptState,
    ReasonCode,
    TextContent,
    ThreadItem,
    ToolCall,
    Vote,
)
from gateway.rules.render import (
    FormView,
    PromptView,
    answers_summary,
    form_outcome,
    pending_prompt_item,
    prompt_text,
    resolved_item,
    tool_call_arguments,
    votes_item,
    votes_of,
)

CREATED = datetime(2024, 4, 5, 12, 0, tzinfo=UTC)
DEPLOY = "What's the deployment target?"
DEPLOY_OPTIONS = [
    {"label": "staging", "description": "push to staging.example.com"},
    {"label": "production", "description": "push to www.example.com"},
]


def make_prompt(kind: str, *questions: dict[str, Any], **fields: Any) -> Prompt:
    """A stored prompt raised from this request, settled as ``fields`` say."""
    tool_call = fields.pop("tool_call", None)
    request = PromptRequest.model_validate(
        {"kind": kind, "questions": list(questions), "tool_call": tool_call}
    )
    return Prompt(
        prompt_id="prm_01J0000000000000000000000",
        run_id="run_01J0000000000000000000000",
        thread_id="slack:C0456:1712345678.000100",
        agent="ops",
        kind=request.kind,
        questions=request.questions,
        tool_call=request.tool_call,
        created_at=CREATED,
        expires_at=CREATED + timedelta(days=7),
        **fields,
    )


def deploy_prompt(**fields: Any) -> Prompt:
    return make_prompt("ask_user_question", {"question": DEPLOY, "options": DEPLOY_OPTIONS}, **fields)


def answered(prompt: Prompt, *answers: list[str], **fields: Any) -> Prompt:
    given = [
        Answer(question=question.question, question_id=question.id or "", answer=answer)
        for question, answer in zip(prompt.questions, answers, strict=True)
    ]
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": given,
            "answered_by": "slack:U0123ABC",
            **fields,
        }
    )


def cancelled(prompt: Prompt, reason: str | None, **fields: Any) -> Prompt:
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.CANCELLED,
            "reason": reason,
            "reason_code": ReasonCode.RUN_ENDED,
            **fields,
        }
    )


# pending_prompt: the question and nothing else -----------------------------------------------------


def test_pending_prompt_content_is_the_seed_example_byte_for_byte() -> None:
    item = pending_prompt_item(deploy_prompt())
    assert item.type == "pending_prompt"
    assert [part.model_dump() for part in item.content] == [
        {
            "type": "text",
            "text": "What's the deployment target?\n"
            "  1. staging — push to staging.example.com\n"
            "  2. production — push to www.example.com",
        }
    ]


def test_pending_prompt_has_no_header_line_and_no_instructions() -> None:
    prompt = make_prompt(
        "ask_user_question", {"question": DEPLOY, "header": "Target", "options": DEPLOY_OPTIONS}
    )
    text = pending_prompt_item(prompt).text
    assert text.splitlines()[0] == DEPLOY
    assert "Target" not in text
    assert len(text.splitlines()) == 3


def test_option_without_description_is_just_its_label() -> None:
    prompt = make_prompt(
        "ask_user_question",
        {"question": "Colour?", "options": [{"label": "red"}, {"label": "blue", "description": ""}]},
    )
    assert pending_prompt_item(prompt).text == "Colour?\n  1. red\n  2. blue"


def test_several_questions_each_have_their_own_numbered_list() -> None:
    prompt = make_prompt(
        "ask_user_question",
        {
            "question": "Where should the data come from?",
            "options": [{"label": "CSV import"}, {"label": "API"}],
        },
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Table"}, {"label": "Chart"}],
        },
        {"question": "Any preference for visual style?"},
    )
    assert pending_prompt_item(prompt).text == (
        "Where should the data come from?\n"
        "  1. CSV import\n"
        "  2. API\n"
        "\n"
        "Which sections?\n"
        "  1. KPI cards\n"
        "  2. Table\n"
        "  3. Chart\n"
        "\n"
        "Any preference for visual style?"
    )


def test_free_text_question_is_the_question_alone() -> None:
    prompt = make_prompt("text", {"question": "Anything else before I ship?"})
    assert pending_prompt_item(prompt).text == "Anything else before I ship?"


def test_approval_numbers_approve_and_deny() -> None:
    prompt = make_prompt("approval", {"question": "Run db__drop on prod?"}, tool_call={"name": "db__drop"})
    assert pending_prompt_item(prompt).text == "Run db__drop on prod?\n  1. Approve\n  2. Deny"


def test_multi_line_question_is_kept_as_written() -> None:
    prompt = make_prompt(
        "ask_user_question", {"question": "Deploy?\nThis restarts the API.", "options": [{"label": "go"}]}
    )
    assert prompt_text(prompt.questions) == "Deploy?\nThis restarts the API.\n  1. go"


def test_pending_prompt_metadata_keeps_the_whole_prompt() -> None:
    item = pending_prompt_item(deploy_prompt())
    assert item.metadata == {
        "type": "pending_prompt",
        "prompt": {
            "prompt_id": "prm_01J0000000000000000000000",
            "kind": "ask_user_question",
            "prompt_state": "pending",
            "questions": [
                {
                    "id": "q1",
                    "question": DEPLOY,
                    "multiSelect": False,
                    "options": [
                        {"label": "staging", "description": "push to staging.example.com"},
                        {"label": "production", "description": "push to www.example.com"},
                    ],
                }
            ],
        },
    }


def test_pending_prompt_metadata_keeps_the_header_and_omits_absent_descriptions() -> None:
    prompt = make_prompt(
        "ask_user_question", {"question": "Colour?", "header": "Colour", "options": [{"label": "red"}]}
    )
    (question,) = pending_prompt_item(prompt).metadata["prompt"]["questions"]
    assert question == {
        "id": "q1",
        "question": "Colour?",
        "header": "Colour",
        "multiSelect": False,
        "options": [{"label": "red"}],
    }


def test_approval_metadata_carries_the_tool_call() -> None:
    call = {"name": "db__drop", "arguments": {"table": "users"}}
    prompt = make_prompt("approval", {"question": "Run db__drop?"}, tool_call=call)
    meta = pending_prompt_item(prompt).metadata["prompt"]
    assert meta["kind"] == "approval"
    assert meta["tool_call"] == call
    assert [option["label"] for option in meta["questions"][0]["options"]] == ["Approve", "Deny"]


def test_pending_prompt_metadata_says_pending_whatever_the_stored_state() -> None:
    prompt = answered(deploy_prompt(), ["staging"])
    assert pending_prompt_item(prompt).metadata["prompt"]["prompt_state"] == "pending"


# pending_prompt_resolved: answered carries answers, cancelled carries reason -------------------------


def test_answered_audit_reads_answered_and_the_label() -> None:
    item = resolved_item(answered(deploy_prompt(), ["staging"]))
    assert item.type == "pending_prompt_resolved"
    assert item.text == "✓ Answered: staging"


def test_answered_audit_metadata_carries_answers_and_who_and_never_reason() -> None:
    prompt = answered(deploy_prompt(), ["staging"], reason="stale", reason_code=ReasonCode.CANCELLED)
    assert resolved_item(prompt).metadata == {
        "type": "pending_prompt_resolved",
        "prompt": {
            "prompt_id": "prm_01J0000000000000000000000",
            "kind": "ask_user_question",
            "prompt_state": "answered",
            "answers": [{"question": DEPLOY, "answer": ["staging"]}],
            "answered_by": "slack:U0123ABC",
        },
    }


def test_several_labels_are_joined_by_commas() -> None:
    prompt = make_prompt(
        "ask_user_question",
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Table"}],
        },
    )
    assert resolved_item(answered(prompt, ["KPI cards", "Table"])).text == "✓ Answered: KPI cards, Table"


def test_several_questions_are_joined_by_middle_dots() -> None:
    prompt = make_prompt(
        "ask_user_question",
        {"question": "Where should the data come from?", "options": [{"label": "CSV import"}]},
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Table"}],
        },
        {"question": "Any preference for visual style?"},
    )
    item = resolved_item(answered(prompt, ["CSV import"], ["KPI cards", "Table"], ["dark theme"]))
    assert item.text == "✓ Answered: CSV import · KPI cards, Table · dark theme"
    assert item.metadata["prompt"]["answers"] == [
        {"question": "Where should the data come from?", "answer": ["CSV import"]},
        {"question": "Which sections?", "answer": ["KPI cards", "Table"]},
        {"question": "Any preference for visual style?", "answer": ["dark theme"]},
    ]


def test_empty_multi_select_answer_reads_no_selection() -> None:
    prompt = make_prompt(
        "ask_user_question",
        {"question": "Which sections?", "multiSelect": True, "options": [{"label": "KPI cards"}]},
        {"question": "Any preference for visual style?"},
    )
    item = resolved_item(answered(prompt, [], ["dark theme"]))
    assert item.text == "✓ Answered: (no selection) · dark theme"
    assert item.metadata["prompt"]["answers"][0] == {"question": "Which sections?", "answer": []}


def test_approval_audit_reads_the_decision() -> None:
    prompt = make_prompt("approval", {"question": "Run db__drop?"})
    assert resolved_item(answered(prompt, ["Deny"])).text == "✓ Answered: Deny"


def test_answers_summary_is_the_answers_alone() -> None:
    answers = [
        Answer(question="a", question_id="q1", answer=["x", "y"]),
        Answer(question="b", question_id="q2", answer=["z"]),
    ]
    assert answers_summary(answers) == "x, y · z"


def test_cancelled_audit_reads_cancelled_and_the_reason() -> None:
    assert resolved_item(cancelled(deploy_prompt(), "the run ended")).text == "✗ Cancelled: the run ended"


def test_cancelled_audit_metadata_carries_reason_and_never_answers() -> None:
    prompt = cancelled(
        answered(deploy_prompt(), ["staging"]),
        "superseded by a newer prompt",
        reason_code=ReasonCode.SUPERSEDED,
    )
    assert resolved_item(prompt).metadata == {
        "type": "pending_prompt_resolved",
        "prompt": {
            "prompt_id": "prm_01J0000000000000000000000",
            "kind": "ask_user_question",
            "prompt_state": "cancelled",
            "reason": "superseded by a newer prompt",
            "reason_code": "superseded",
        },
    }
    declined = cancelled(deploy_prompt(), "the person declined to answer", reason_code=ReasonCode.DECLINED)
    meta = resolved_item(declined, "web:alice").metadata["prompt"]
    assert (meta["reason_code"], meta["cancelled_by"]) == ("declined", "web:alice")


def test_cancelled_without_a_reason_still_gives_one() -> None:
    item = resolved_item(cancelled(deploy_prompt(), None))
    assert item.metadata["prompt"]["reason"] == "cancelled"
    assert item.text == "✗ Cancelled: cancelled"


@pytest.mark.parametrize(
    ("arguments", "limit", "shown"),
    [
        ({"database": "staging"}, 100, '{\n  "database": "staging"\n}'),
        ({"path": "café/naïve"}, 100, '{\n  "path": "café/naïve"\n}'),
        ({"b": 1, "a": 2}, 100, '{\n  "b": 1,\n  "a": 2\n}'),
        ({"sql": "x" * 20}, 10, '{\n  "sql":\n… truncated: 25 more characters not shown'),
    ],
    ids=["whole-when-short", "unicode-as-written", "keys-in-the-agents-order", "cut-with-a-count"],
)
def test_tool_call_arguments_are_indented_json_cut_visibly_past_the_limit(
    arguments: dict[str, Any], limit: int, shown: str
) -> None:
    assert tool_call_arguments(ToolCall(name="db__query", arguments=arguments), limit) == shown


def test_tool_call_arguments_of_exactly_the_limit_are_shown_whole() -> None:
    call = ToolCall(name="db__query", arguments={"sql": "select 1"})
    whole = tool_call_arguments(call, 10_000)
    assert tool_call_arguments(call, len(whole)) == whole
    assert tool_call_arguments(call, len(whole) - 1).endswith("… truncated: 1 more characters not shown")


# An answered form's outcome, a field a line ------------------------------------------------------------


def form_item(text: str, answers: object, *, kind: str = "form", state: str = "answered") -> ThreadItem:
    prompt = {"prompt_id": "prm_1", "kind": kind, "prompt_state": state, "answers": answers}
    metadata = {"type": "pending_prompt_resolved", "prompt": prompt}
    return ThreadItem(type="pending_prompt_resolved", content=[TextContent(text=text)], metadata=metadata)


FORM_ANSWERS = [{"question": "Environment", "answer": ["prod"]}, {"question": "Regions", "answer": []}]


@pytest.mark.parametrize(
    ("text", "header", "empty", "shown"),
    [
        (
            "✓ Answered: prod · (no selection)",
            "✓ Answered:",
            "(no selection)",
            "✓ Answered:\nEnvironment: prod\nRegions: (no selection)",
        ),
        ("✓ Answered: prod · (no selection)", "✓ Answered", "—", "✓ Answered\nEnvironment: prod\nRegions: —"),
        (
            "Deploy\n\n1. Environment\n\n✓ Answered: prod · (no selection)",
            "✓ Answered:",
            "—",
            "Deploy\n\n1. Environment\n\n✓ Answered:\nEnvironment: prod\nRegions: —",
        ),
    ],
)
def test_an_answered_forms_outcome_becomes_a_line_per_field_below_its_text(
    text: str, header: str, empty: str, shown: str
) -> None:
    assert form_outcome(form_item(text, FORM_ANSWERS), header=header, empty=empty) == shown


@pytest.mark.parametrize(
    "item",
    [
        form_item("✓ Answered: prod · (no selection)", FORM_ANSWERS, kind="text"),
        form_item("✗ Cancelled: declined", FORM_ANSWERS, state="cancelled"),
        form_item("✓ Answered: something else", FORM_ANSWERS),
        form_item("✓ Answered: prod", "not a list"),
        form_item("✓ Answered: prod", ["not an object"]),
    ],
)
def test_other_items_and_unknown_wording_have_no_form_outcome(item: ThreadItem) -> None:
    assert form_outcome(item) is None


# A form's or URL step's controls are drawn from its item's metadata -------------------------------------

SCHEMA = {"type": "object", "properties": {"env": {"type": "string", "enum": ["dev", "prod"]}}}


def step_metadata(**prompt: Any) -> dict[str, Any]:
    return {"type": "pending_prompt", "prompt": {"prompt_id": "prm_1", "message": "Deploy", **prompt}}


@pytest.mark.parametrize(
    ("metadata", "read"),
    [
        (step_metadata(kind="form", requested_schema=SCHEMA), ("form", "Deploy", ["env"], None)),
        (
            step_metadata(kind="url", url="https://example.com/setup"),
            ("url", "Deploy", [], "https://example.com/setup"),
        ),
        (step_metadata(kind="url", url="http://evil.example/"), None),  # only https, or http to this machine
        (step_metadata(kind="form", requested_schema={"type": "array"}), None),
        (step_metadata(kind="text", questions=[]), None),
        ({"type": "pending_prompt", "prompt": {"prompt_id": "prm_1", "kind": "form"}}, None),
        ({"type": "message", "prompt": step_metadata(kind="url", url="https://a.example")["prompt"]}, None),
    ],
)
def test_a_form_or_url_steps_metadata_reads_back_as_its_view(
    metadata: dict[str, Any], read: tuple[Any, ...] | None
) -> None:
    view = FormView.of_metadata(metadata)
    if read is None:
        assert view is None
    else:
        assert view is not None
        assert (view.kind.value, view.message, [field.name for field in view.fields], view.url) == read


# An approval's decision (contract §9) in its items' metadata, for cards drawn from it ----------------------

CALL = {"name": "Bash", "arguments": {"command": "rm -rf build"}}


def test_a_pending_approvals_metadata_says_whether_it_takes_edits_and_how_many_approve_it() -> None:
    plain = make_prompt("approval", {"question": "Run it?"}, tool_call=CALL)
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    editable = plain.model_copy(update={"editable": True, "input_schema": schema})
    quorum = plain.model_copy(update={"approvals": 2})
    decision = ("editable", "input_schema", "approvals", "note", "approved_call", "votes")

    def shown(prompt: Prompt) -> dict[str, Any]:
        meta = pending_prompt_item(prompt).metadata["prompt"]
        return {key: meta[key] for key in decision if key in meta}

    assert shown(plain) == {}
    assert shown(editable) == {"editable": True, "input_schema": schema}
    assert shown(quorum) == {"approvals": 2}


def test_a_settled_approvals_audit_carries_the_note_the_call_allowed_and_every_vote() -> None:
    edited = ToolCall(name="Bash", arguments={"command": "rm -rf build/tmp"})
    votes = [
        Vote(by="slack:U0ALICE", answer="Approve", at=CREATED),
        Vote(by="slack:U0BOB", answer="Approve", at=CREATED, note="fine"),
    ]
    prompt = answered(
        make_prompt("approval", {"question": "Run it?"}, tool_call=CALL),
        ["Approve"],
        note="fine",
        approved_call=edited,
        approvals=2,
        votes=votes,
        editable=False,
    )
    meta = resolved_item(prompt).metadata["prompt"]
    assert (meta["note"], meta["approved_call"], meta["approvals"]) == ("fine", edited.model_dump(), 2)
    assert [(vote["by"], vote.get("note")) for vote in meta["votes"]] == [
        ("slack:U0ALICE", None),
        ("slack:U0BOB", "fine"),
    ]
    assert "editable" not in meta and "input_schema" not in meta


def test_a_denied_approvals_audit_carries_the_note_and_no_call_allowed() -> None:
    prompt = answered(
        make_prompt("approval", {"question": "Run it?"}, tool_call=CALL), ["Deny"], note="use staging"
    )
    meta = resolved_item(prompt).metadata["prompt"]
    assert (meta["note"], "approved_call" in meta, "votes" in meta) == ("use staging", False, False)


def test_an_editable_approval_reads_back_as_editable_and_others_do_not() -> None:
    call = {"name": "deploy", "arguments": {"replicas": 2}}
    editable = make_prompt("approval", {"question": "Deploy?"}, tool_call=call, editable=True)
    plain = make_prompt("approval", {"question": "Deploy?"}, tool_call=call)

    views = [PromptView.of_metadata(pending_prompt_item(prompt).metadata) for prompt in (editable, plain)]

    assert [view.editable if view else None for view in views] == [True, False]
    assert PromptView.of_prompt(editable).editable is True


@pytest.mark.parametrize(
    ("kind", "fields", "grantable"),
    [
        ("approval", {"tool_call": {"name": "Bash", "arguments": {"command": "npm test"}}}, True),
        ("approval", {"tool_call": {"name": "Bash", "arguments": {}}, "approvals": 2}, False),  # one's word
        ("approval", {}, False),  # no call to let through again
        ("text", {}, False),
    ],
)
def test_approve_for_this_session_is_offered_on_a_call_one_approver_settles(
    kind: str, fields: dict[str, Any], grantable: bool
) -> None:
    prompt = make_prompt(kind, {"question": "Run it?"}, **fields)
    view = PromptView.of_metadata(pending_prompt_item(prompt).metadata)
    assert view is not None
    assert (view.grantable, PromptView.of_prompt(prompt).grantable) == (grantable, grantable)


def test_a_votes_item_reads_back_as_the_approvals_needed_and_who_approved_so_far() -> None:
    votes = [
        Vote(by="telegram:1", answer="Approve", at=CREATED),
        Vote(by="telegram:2", answer="Approve", at=CREATED, counted=False),
        Vote(by="telegram:3", answer="Approve", at=CREATED),
    ]
    prompt = make_prompt("approval", {"question": "Deploy?"}, approvals=3, votes=votes)

    assert votes_of(votes_item(prompt)) == (3, ["telegram:1", "telegram:3"])
    assert votes_of(resolved_item(prompt)) is None
    unreadable = votes_item(prompt).model_copy(
        update={"metadata": {"type": "votes", "approvals": 3, "votes": 1}}
    )
    assert votes_of(unreadable) is None
