"""Slack's native prompt controls as pure functions: the blocks a prompt gets, what their data says, what a
press or a submitted form answers, and the settled message that replaces a prompt."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from channels.slack.answer_modal import NOT_BOTH, PICK_ONE, TYPE_SOMETHING, form_view, read_form
from channels.slack.control_ids import ControlRef, Verb, decode, verb_of
from channels.slack.controls import OPTION_TEXT_LIMIT, control_blocks, opens_form
from channels.slack.render import render_item, render_settled
from gateway.base.models import (
    Answer,
    Option,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    ToolCall,
    utcnow,
)
from gateway.rules.render import pending_prompt_item, settled_prompt_item

PID = "prm_01JABCDEFGHJKMNPQRSTVWXYZ0"


def prompt_of(*questions: Question, kind: PromptKind = PromptKind.ASK_USER_QUESTION) -> Prompt:
    request = PromptRequest(kind=kind, questions=list(questions))
    now = utcnow()
    return Prompt(
        prompt_id=PID,
        run_id="run_01JABCDEFGHJKMNPQRSTVWXYZ0",
        thread_id="slack:C0TEAM:1712345678.000100",
        agent="ops",
        kind=kind,
        questions=request.questions,
        created_at=now,
        expires_at=now + timedelta(days=1),
    )


TARGET = prompt_of(
    Question(question="Target?", options=[Option(label="staging"), Option(label="production")])
)
SECTIONS = prompt_of(
    Question(
        question="Which sections?",
        multi_select=True,
        options=[Option(label="KPI cards"), Option(label="Chart"), Option(label="Table")],
    )
)
APPROVAL = prompt_of(Question(question="Allow db__drop to run?"), kind=PromptKind.APPROVAL)
SURVEY = prompt_of(
    Question(question="Source?", options=[Option(label="CSV import"), Option(label="API")]),
    Question(question="Sections?", multi_select=True, options=[Option(label="KPI"), Option(label="Table")]),
    Question(question="Style?"),
)


def elements(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [element for block in blocks if block["type"] == "actions" for element in block["elements"]]


def values(blocks: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for element in elements(blocks):
        found.extend(option["value"] for option in element.get("options", []))
        if "value" in element:
            found.append(element["value"])
    return found


def meta(prompt: Prompt) -> dict[str, Any]:
    prompt_meta: dict[str, Any] = pending_prompt_item(prompt).metadata["prompt"]
    return prompt_meta


# Control data ---------------------------------------------------------------------------------------------


def test_control_data_is_indexes_and_a_prompt_id_never_labels() -> None:
    blocks = control_blocks(meta(TARGET))
    assert values(blocks) == [f"{PID}.0.0", f"{PID}.0.1", f"{PID}.0", PID]
    assert [element["action_id"] for element in elements(blocks)] == [
        "tg.pick.0",
        "tg.pick.1",
        "tg.other",
        "tg.claim",
    ]


def test_control_data_stays_within_slack_limits_for_the_largest_prompt() -> None:
    long_labels = [Option(label=f"{n:03d}" + "x" * 96, description="d" * 300) for n in range(25)]
    for multi in (False, True):
        prompt = prompt_of(Question(question="q" * 2000, multi_select=multi, options=long_labels))
        blocks = control_blocks(meta(prompt))
        assert all(len(value) <= 150 for value in values(blocks))  # an option's value; a button's is 2000
        assert all(len(element["action_id"]) <= 255 for element in elements(blocks))
        assert all(len(block.get("block_id", "")) <= 255 for block in blocks)
        texts = [
            option["text"]["text"] for element in elements(blocks) for option in element.get("options", [])
        ]
        assert texts and all(len(text) <= OPTION_TEXT_LIMIT for text in texts)


def test_a_label_longer_than_a_button_is_cut_with_a_visible_ellipsis() -> None:
    prompt = prompt_of(Question(question="Which?", options=[Option(label="a" * 100), Option(label="b")]))
    first = elements(control_blocks(meta(prompt)))[0]["text"]["text"]
    assert len(first) == OPTION_TEXT_LIMIT and first.endswith("…")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f"{PID}.0.1", ControlRef(PID, 0, 1)),
        (f"{PID}.0", ControlRef(PID, 0)),
        (PID, ControlRef(PID)),
        ("staging", None),
        (f"{PID}.x", None),
        (f"{PID}.0.1.2", None),
        (f"{PID}.-1", None),
        (f"{PID}.0.1\n", None),
        (f"{PID}.٣", None),  # a digit of another script
        (None, None),
        (7, None),
    ],
)
def test_decode_reads_only_well_formed_control_data(value: object, expected: ControlRef | None) -> None:
    assert decode(value) == expected


@pytest.mark.parametrize(
    ("action_id", "verb"),
    [("tg.pick.3", Verb.PICK), ("tg.submit", Verb.SUBMIT), ("tg.nope", None), ("pick.1", None), (None, None)],
)
def test_action_ids_name_what_the_control_does(action_id: object, verb: Verb | None) -> None:
    assert verb_of(action_id) is verb


# Which controls open a modal --------------------------------------------------------------------------------


def test_form_openers_fit_only_prompts_that_have_them() -> None:
    assert opens_form(TARGET, Verb.OTHER, ControlRef(PID, 0))
    assert opens_form(SURVEY, Verb.FORM, ControlRef(PID))
    assert not opens_form(SURVEY, Verb.OTHER, ControlRef(PID, 0))
    assert not opens_form(APPROVAL, Verb.FORM, ControlRef(PID))
    assert not opens_form(TARGET, Verb.OTHER, ControlRef(PID, 0, 1))


# The answer form --------------------------------------------------------------------------------------------


def chosen(*indexes: int) -> dict[str, Any]:
    return {"selected_options": [{"value": str(index)} for index in indexes]}


def picked(index: int | None) -> dict[str, Any]:
    return {"selected_option": {"value": str(index)} if index is not None else None}


def typed(text: str | None) -> dict[str, Any]:
    return {"text": {"type": "plain_text_input", "value": text}}


def survey_state(
    source: dict[str, Any], other: str | None, sections: dict[str, Any], style: str | None
) -> Any:
    return {
        "q0": {"choice": source},
        "o0": typed(other),
        "q1": {"choice": sections},
        "o1": typed(None),
        "t2": typed(style),
    }


def test_form_has_one_input_per_question_and_an_other_box_per_option_list() -> None:
    view = form_view(SURVEY)
    assert [block["block_id"] for block in view["blocks"]] == ["q0", "o0", "q1", "o1", "t2"]
    assert [block["element"]["type"] for block in view["blocks"]] == [
        "radio_buttons",
        "plain_text_input",
        "checkboxes",
        "plain_text_input",
        "plain_text_input",
    ]
    assert view["private_metadata"] == PID


@pytest.mark.parametrize(
    ("state", "answers", "errors"),
    [
        pytest.param(
            survey_state(picked(1), None, chosen(0, 1), "dark"), [["API"], ["KPI", "Table"], ["dark"]], {}
        ),
        pytest.param(
            survey_state(picked(None), "Sheets", chosen(), "x"), [["Sheets"], [], ["x"]], {}, id="other"
        ),
        pytest.param(survey_state(picked(None), None, chosen(), "x"), None, {"q0": PICK_ONE}, id="nothing"),
        pytest.param(survey_state(picked(0), "Sheets", chosen(), "x"), None, {"o0": NOT_BOTH}, id="both"),
        pytest.param(survey_state(picked(0), None, chosen(), "  "), None, {"t2": TYPE_SOMETHING}, id="blank"),
        pytest.param(survey_state(picked(5), None, chosen(), "x"), None, {}, id="option-out-of-range"),
        pytest.param(survey_state(picked(0), None, chosen(-1), "x"), None, {}, id="negative-option"),
        pytest.param({"q0": {"choice": picked(0)}}, None, {}, id="blocks-missing"),
    ],
)
def test_a_submitted_form_reads_as_one_answer_per_question(
    state: dict[str, Any], answers: list[list[str]] | None, errors: dict[str, str]
) -> None:
    reading = read_form(SURVEY, state)
    assert (reading.answers, reading.errors) == (answers, errors)


def test_other_on_a_multi_select_opens_the_form_with_the_ticked_boxes() -> None:
    view = form_view(SECTIONS, focus_other=True, checked=[2])
    choice, other = view["blocks"]
    assert [option["value"] for option in choice["element"]["initial_options"]] == ["2"]
    assert other["element"]["focus_on_load"] is True


# The messages ---------------------------------------------------------------------------------------------


def test_typed_text_path_is_unchanged_the_controls_follow_the_text() -> None:
    [message] = render_item(pending_prompt_item(TARGET))
    assert message.blocks[0]["text"]["text"] == "Target?\n  1. staging\n  2. production"
    assert [block["type"] for block in message.blocks] == ["section", "actions"]


def test_only_pending_prompts_carry_controls() -> None:
    answered = TARGET.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": [Answer(question="Target?", question_id="q1", answer=["staging"])],
        }
    )
    [message] = render_item(settled_prompt_item(answered))
    assert [block["type"] for block in message.blocks] == ["section"]


def test_settled_message_is_the_question_then_the_outcome_with_no_controls() -> None:
    answered = TARGET.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": [Answer(question="Target?", question_id="q1", answer=["staging"])],
        }
    )
    settled = render_settled(settled_prompt_item(answered))
    texts = [block["text"]["text"] for block in settled.blocks]
    assert texts == ["Target?\n  1. staging\n  2. production", "✓ Answered: staging"]
    assert all(block["type"] == "section" for block in settled.blocks)


ECHO = ToolCall(name="Bash", arguments={"command": "echo <!here> & done"})


def test_approve_for_this_session_is_offered_only_where_one_approver_settles_the_call() -> None:
    one = APPROVAL.model_copy(update={"tool_call": ECHO})
    two = one.model_copy(update={"approvals": 2})  # a grant is one person's word: it is refused

    def verbs(prompt: Prompt) -> list[Verb | None]:
        return [verb_of(element["action_id"]) for element in elements(control_blocks(meta(prompt)))]

    assert Verb.SESSION in verbs(one)
    assert Verb.SESSION not in verbs(two) and Verb.PICK in verbs(two)


def test_a_settled_approval_says_what_its_approve_let_through_for_the_session_escaped() -> None:
    approved = APPROVAL.model_copy(
        update={
            "tool_call": ECHO,
            "prompt_state": PromptState.ANSWERED,
            "answers": [Answer(question="Allow db__drop to run?", question_id="q1", answer=["Approve"])],
            "answered_by": "slack:U0ALICE",
            "granted": ECHO,
        }
    )
    settled = render_settled(settled_prompt_item(approved))
    [line] = [
        element["text"]
        for block in settled.blocks
        if block["type"] == "context"
        for element in block["elements"]
    ]
    assert line == "Approved by <@U0ALICE>, and for this session: `echo &lt;!here&gt; &amp; done`"


def test_a_prompt_over_one_message_keeps_controls_on_its_last_part_which_the_outcome_replaces() -> None:
    questions = [
        Question(
            question=f"{number}" + "&" * 1998 + "?",
            options=[Option(label=f"o{index}", description="&" * 290) for index in range(3)],
        )
        for number in range(4)
    ]
    long = prompt_of(*questions)
    posted = render_item(pending_prompt_item(long))
    assert len(posted) == 2
    assert elements(posted[0].blocks) == [] and elements(posted[1].blocks) != []

    cancelled = long.model_copy(update={"prompt_state": PromptState.CANCELLED, "reason": "the run ended"})
    settled = render_settled(settled_prompt_item(cancelled))
    sections = [block["text"]["text"] for block in settled.blocks if block["type"] == "section"]
    last_part = [block["text"]["text"] for block in posted[1].blocks if block["type"] == "section"]
    assert sections == [*last_part, "✗ Cancelled: the run ended"]
    assert elements(settled.blocks) == []
