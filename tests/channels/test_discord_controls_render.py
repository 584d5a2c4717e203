"""Discord prompt controls without a connection: their custom ids, their layout within Discord's limits,
and what a press or a form answers. Pure functions; the limits are the fake Discord's own checks."""

from __future__ import annotations

from typing import Any

import pytest

from channels.discord.choices import NOT_ON_A_FORM, Refused, form_answers, form_fields
from channels.discord.control_ids import MAX_CUSTOM_ID, Action, BadControl, ControlId, decode
from channels.discord.controls import PromptControls, answers_form, prompt_view, text_form, tool_call_embed
from channels.discord.render import MAX_MESSAGE_CHARS, fit_edit
from gateway.base.models import Prompt, PromptKind, PromptRequest, ToolCall, utcnow
from gateway.rules import notices
from gateway.rules.render import pending_prompt_item
from tests.fakes.discord import form_problem, message_problem

PROMPT_ID = "prm_01JABCDEFGHJKMNPQRSTVWXYZ0"


def prompt_of(kind: PromptKind, *questions: dict[str, Any], tool_call: ToolCall | None = None) -> Prompt:
    request = PromptRequest.model_validate(
        {"kind": kind, "questions": list(questions), "tool_call": tool_call}
    )
    now = utcnow()
    return Prompt(
        prompt_id=PROMPT_ID,
        run_id="run_1",
        thread_id="discord:111111111111111111",
        agent="ops",
        kind=request.kind,
        questions=request.questions,
        tool_call=request.tool_call,
        created_at=now,
        expires_at=now,
    )


def controls_of(prompt: Prompt) -> PromptControls:
    controls = PromptControls.of(pending_prompt_item(prompt).metadata)
    assert controls is not None
    return controls


def labels_by_row(prompt: Prompt) -> list[list[str]]:
    rows = prompt_view(controls_of(prompt)).to_components()
    return [
        [child.get("label") or f"select:{len(child['options'])}" for child in row["components"]]
        for row in rows
    ]


def options(count: int, *, label_chars: int = 10, description_chars: int = 0) -> list[dict[str, Any]]:
    return [
        {"label": f"{index:02d}".ljust(label_chars, "x"), "description": "d" * description_chars or None}
        for index in range(count)
    ]


APPROVAL = prompt_of(
    PromptKind.APPROVAL, {"question": "Allow db__drop?"}, tool_call=ToolCall(name="db__drop", arguments={})
)
SINGLE = prompt_of(PromptKind.ASK_USER_QUESTION, {"question": "Target?", "options": options(2)})
MULTI = prompt_of(
    PromptKind.ASK_USER_QUESTION, {"question": "Sections?", "multiSelect": True, "options": options(3)}
)
FREE = prompt_of(PromptKind.ASK_USER_QUESTION, {"question": "Anything else?"})
TEXT = prompt_of(PromptKind.TEXT, {"question": "Name it"})
SEVERAL = prompt_of(
    PromptKind.ASK_USER_QUESTION,
    {"question": "Source?", "options": options(2)},
    {"question": "Sections?", "multiSelect": True, "options": options(3)},
    {"question": "Style?"},
)


# Custom ids ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", list(Action))
def test_custom_ids_round_trip_and_fit_discords_100_characters(action: Action) -> None:
    whole_prompt = action in (
        Action.FORM,
        Action.ANSWERS,
        Action.DONE,
        Action.DECLINE,
        Action.REASON,
        Action.NOTE,
        Action.EDIT,
        Action.EDITED,
        Action.SESSION,
        Action.CLAIM,
    )
    control = ControlId(action, PROMPT_ID, 0 if whole_prompt else 3, 24 if action is Action.PICK else 0)

    custom_id = control.encode()

    assert len(custom_id) <= MAX_CUSTOM_ID
    assert decode(custom_id) == control


@pytest.mark.parametrize("custom_id", ["", "other-bot:button", "tgx:pick", None, 42])
def test_custom_ids_that_are_not_threadgates_are_left_alone(custom_id: object) -> None:
    assert decode(custom_id) is None


@pytest.mark.parametrize(
    "custom_id",
    [
        "tg:",
        "tg:vote:" + PROMPT_ID,
        "tg:pick:" + PROMPT_ID,
        "tg:pick:" + PROMPT_ID + ":0",
        "tg:pick:" + PROMPT_ID + ":0:1:2",
        "tg:pick:" + PROMPT_ID + ":0:-1",
        "tg:pick:" + PROMPT_ID + ":0:01",
        "tg:pick:" + PROMPT_ID + ":0:100",
        "tg:pick:" + PROMPT_ID + ":0:１",
        "tg:pick:prm_short:0:0",
        "tg:pick:" + PROMPT_ID.lower() + ":0:0",
        "tg:form:" + PROMPT_ID + ":0",
    ],
)
def test_malformed_threadgate_custom_ids_are_refused(custom_id: str) -> None:
    with pytest.raises(BadControl):
        decode(custom_id)


# Layout --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "rows"),
    [
        pytest.param(
            APPROVAL,
            [["Approve", "Deny", "Approve for this session", "Deny with reason…", "Claim"]],
            id="approval",
        ),
        pytest.param(SINGLE, [["00xxxxxxxx", "01xxxxxxxx", "Other…", "Claim"]], id="single-select"),
        pytest.param(MULTI, [["select:3"], ["None of these", "Other…", "Claim"]], id="multi-select"),
        pytest.param(FREE, [["Answer…", "Claim"]], id="free-text-question"),
        pytest.param(TEXT, [["Answer…", "Claim"]], id="text-prompt"),
        pytest.param(SEVERAL, [["Answer…", "Claim"]], id="several-questions"),
    ],
)
def test_each_kind_gets_its_controls(prompt: Prompt, rows: list[list[str]]) -> None:
    assert labels_by_row(prompt) == rows


def test_an_approval_that_needs_two_approvers_offers_no_approve_for_this_session() -> None:
    two = APPROVAL.model_copy(update={"approvals": 2})  # a grant is one person's word: it is refused

    assert labels_by_row(two) == [["Approve", "Deny", "Deny with reason…", "Claim"]]
    assert (controls_of(APPROVAL).grantable, controls_of(two).grantable) == (True, False)


def test_up_to_24_options_are_buttons_five_to_a_row_with_other_last() -> None:
    prompt = prompt_of(PromptKind.ASK_USER_QUESTION, {"question": "Which?", "options": options(24)})

    rows = labels_by_row(prompt)

    assert [len(row) for row in rows] == [5, 5, 5, 5, 5]
    assert rows[-1][-1] == "Other…"  # every row full: no room for Claim (``claim`` is typed there)


def test_25_options_are_a_select_menu_and_an_other_button() -> None:
    prompt = prompt_of(PromptKind.ASK_USER_QUESTION, {"question": "Which?", "options": options(25)})

    assert labels_by_row(prompt) == [["select:25"], ["Other…", "Claim"]]


@pytest.mark.parametrize("count", [1, 5, 6, 24, 25])
@pytest.mark.parametrize("multi", [False, True])
def test_the_largest_option_lists_stay_within_discords_limits(count: int, multi: bool) -> None:
    question = {
        "question": "q" * 2000,
        "multiSelect": multi,
        "options": options(count, label_chars=100, description_chars=300),
    }
    prompt = prompt_of(PromptKind.ASK_USER_QUESTION, question)

    view = prompt_view(controls_of(prompt))

    assert message_problem({"components": view.to_components()}) is None
    assert form_problem(text_form(controls_of(prompt), 0).to_dict()) is None


@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_form_of_several_questions_stays_within_five_fields(count: int) -> None:
    questions = [
        {"question": f"{index} " + "q" * 1990, "header": "h" * 100, "options": options(25, label_chars=100)}
        for index in range(count)
    ]
    prompt = prompt_of(PromptKind.ASK_USER_QUESTION, *questions)

    form = answers_form(controls_of(prompt)).to_dict()

    assert form_problem(form) is None
    others = [field for field in form["components"] if field["component"]["custom_id"].startswith("other:")]
    assert len(others) == min(count, 5 - count)  # an Other… field per option list, while there is room


def test_an_approval_shows_its_tool_call_cut_visibly_when_long() -> None:
    arguments = {"sql": "DROP TABLE users; -- ```" + "x" * 5000}

    embed = tool_call_embed(ToolCall(name="db__query", arguments=arguments)).to_dict()

    assert embed["title"] == "db__query"
    description = embed["description"]
    assert len(description) <= 4096
    assert description.startswith("```json\n{\n") and description.endswith("\n```")
    assert description.count("```") == 2  # the arguments cannot close the code block early
    assert "more characters not shown" in description


# What a press answers ------------------------------------------------------------------------------


def control(action: Action, question: int = 0, option: int = 0) -> ControlId:
    return ControlId(action, PROMPT_ID, question, option)


def test_the_form_gives_one_answer_per_question_and_other_text_wins() -> None:
    fields = {
        "pick:0": ["1"],
        "other:0": "a sheet",
        "pick:1": ["2", "0"],
        "other:1": "a map",
        "text:2": "dark",
    }

    answers = form_answers(SEVERAL, fields)

    assert answers == [["a sheet"], ["00xxxxxxxx", "02xxxxxxxx", "a map"], ["dark"]]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"pick:1": [], "text:2": "dark"}, NOT_ON_A_FORM, id="single-select-unanswered"),
        pytest.param({"pick:0": ["0"], "text:2": " "}, notices.EMPTY_TEXT, id="free-text-blank"),
        pytest.param(
            {"pick:0": ["7"], "text:2": "dark"}, "That control does not match", id="value-out-of-range"
        ),
    ],
)
def test_an_incomplete_or_forged_form_is_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(Refused) as refused:
        form_answers(SEVERAL, fields)
    assert refused.value.message.startswith(message)


def test_submitted_form_fields_are_read_from_labels_and_action_rows() -> None:
    components = [
        {"type": 18, "component": {"type": 3, "custom_id": "pick:0", "values": ["1"]}},
        {"type": 1, "components": [{"type": 4, "custom_id": "text:2", "value": "dark"}]},
        {"type": 18, "component": {"type": 4, "custom_id": "other:0", "value": ""}},
        {"type": 10, "content": "a text display has no value"},
    ]

    assert form_fields(components) == {"pick:0": ["1"], "text:2": "dark", "other:0": ""}


# The edited prompt ---------------------------------------------------------------------------------


def test_a_settled_prompt_that_fits_is_shown_whole() -> None:
    assert fit_edit("Target?\n  1. a\n\n✓ Answered: a") == "Target?\n  1. a\n\n✓ Answered: a"


def test_a_settled_prompt_too_long_for_one_message_keeps_its_end_and_the_outcome() -> None:
    text = "\n".join(f"  {index}. option {index}" for index in range(400)) + "\n\n✓ Answered: option 7"

    edited = fit_edit(text)

    assert len(edited) <= MAX_MESSAGE_CHARS
    assert edited.endswith("\n\n✓ Answered: option 7")
    left_out = int(edited.split("(", 1)[1].split(" ", 1)[0])
    assert edited.startswith(f"… ({left_out} earlier characters not shown)\n  ")
    assert text.endswith(edited.split("\n", 1)[1]) and left_out == len(text) - len(edited.split("\n", 1)[1])
