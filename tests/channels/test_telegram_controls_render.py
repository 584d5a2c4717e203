"""Telegram prompt controls as pure data: callback data within 64 bytes, keyboards per question, the
approval's tool call, the step line of several questions, and ticks read back from a keyboard."""

from __future__ import annotations

import pytest

from channels.telegram.control_ids import MAX_BYTES, Action, BadControl, Control, decode
from channels.telegram.controls import (
    APPROVE_HINT,
    MAX_ARGUMENTS_CHARS,
    PICK_HINT,
    STEPS_HINT,
    WRITE_HINT,
    keyboard,
    prompt_messages,
    prompt_parts,
    step_text,
    ticked_in,
    tool_call_text,
)
from channels.telegram.render import MAX_MESSAGE_UNITS, Outgoing, fit_tail, utf16_len, votes_message
from gateway.base.models import PromptKind, Question, ToolCall
from gateway.rules import notices
from gateway.rules.render import PromptView, message_item, prompt_text

PROMPT_ID = "prm_01J0000000000000000000000Z"


def question(text: str, labels: list[str], *, multi: bool = False) -> Question:
    options = [{"label": label} for label in labels]
    return Question.model_validate({"question": text, "multiSelect": multi, "options": options})


def view(*questions: Question, kind: PromptKind = PromptKind.ASK_USER_QUESTION) -> PromptView:
    return PromptView(PROMPT_ID, kind, list(questions))


def test_every_button_of_the_largest_prompt_fits_telegrams_64_bytes() -> None:
    long_labels = [f"{index:02d} " + "é" * 97 for index in range(25)]  # 25 options of 100 characters
    largest = view(
        question("single", long_labels),
        question("multi", long_labels, multi=True),
        question("free text", []),
        question("last", long_labels),
    )
    sizes = [
        len(button.data.encode())
        for step in range(4)
        for row in keyboard(largest, step, frozenset(range(25)))
        for button in row
    ]
    assert len(sizes) == 26 + 27 + 1 + 26 + 4  # options, Other…, Submit; one Answer… button; a Claim each
    assert max(sizes) <= MAX_BYTES


def test_callback_data_carries_indexes_and_reads_back_as_it_was_written() -> None:
    control = Control(Action.TOGGLE, PROMPT_ID, 3, 24)

    assert control.encode() == f"t|{PROMPT_ID}|3|24"
    assert decode(control.encode()) == control


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "approve",
        f"z|{PROMPT_ID}|0|0",  # an action no button has
        f"p|{PROMPT_ID}|0",  # a field missing
        f"p|{PROMPT_ID}|0|0|0",  # a field too many
        f"p|{PROMPT_ID}|-1|0",
        f"p|{PROMPT_ID}|0|100",  # more options than a question can have
        "p|prm_short|0|0",
        f"p|{PROMPT_ID.lower()}|0|0",
        "p|" + "x" * 70,
    ],
)
def test_data_no_button_carries_is_refused(data: str | None) -> None:
    with pytest.raises(BadControl):
        decode(data)


def test_an_approval_has_approve_and_deny_and_shows_the_tool_call() -> None:
    approval = PromptView(
        PROMPT_ID,
        PromptKind.APPROVAL,
        [question("Allow db__drop to run?", ["Approve", "Deny"])],
        ToolCall(name="db__drop", arguments={"table": "users"}),
    )

    [only] = prompt_messages(approval)

    assert only.text == (
        'Allow db__drop to run?\n  1. Approve\n  2. Deny\n\nTool call: db__drop\n{\n  "table": "users"\n}'
        f"\n\n{notices.approval_hint(editable=False)}"
    )
    assert only.keyboard is not None
    assert [(b.text, decode(b.data).action, decode(b.data).option) for row in only.keyboard for b in row] == [
        ("✅ Approve", Action.PICK, 0),
        ("❌ Deny", Action.PICK, 1),
        (notices.APPROVE_FOR_SESSION, Action.GRANT, 0),
        ("✎ Deny with reason…", Action.WRITE, 0),
        (notices.CLAIM, Action.CLAIM, 0),
    ]


def test_an_approval_that_needs_two_approvers_has_no_approve_for_this_session_button() -> None:
    approval = PromptView(
        PROMPT_ID,
        PromptKind.APPROVAL,
        [question("Allow db__drop to run?", ["Approve", "Deny"])],
        ToolCall(name="db__drop", arguments={"table": "users"}),
        approvals=2,
    )

    [only] = prompt_messages(approval)

    assert only.keyboard is not None
    assert [b.text for row in only.keyboard for b in row] == [
        "✅ Approve",
        "❌ Deny",
        "✎ Deny with reason…",
        "Claim",
    ]


def test_an_editable_approval_says_its_call_is_edited_by_typing() -> None:
    approval = PromptView(
        PROMPT_ID,
        PromptKind.APPROVAL,
        [question("Allow deploy to run?", ["Approve", "Deny"])],
        ToolCall(name="deploy", arguments={"replicas": 2}),
        editable=True,
    )

    [only] = prompt_messages(approval)
    [_asked, controls] = prompt_messages(approval, group=True)

    assert only.text.endswith(f"\n\n{notices.approval_hint(editable=True)}")
    assert controls.text == f"{APPROVE_HINT} {notices.approval_hint(editable=True)}"
    assert "reply edit and name: value lines" in controls.text


def test_a_votes_item_is_one_line_with_approvers_by_name_and_other_items_are_not_one() -> None:
    votes = [
        {"by": "telegram:111", "answer": "Approve", "at": "2026-01-01T00:00:00Z"},
        {"by": "telegram:333", "answer": "Approve", "at": "2026-01-01T00:00:01Z", "counted": False},
    ]
    item = message_item("Approved 1 of 3: telegram:111", {"type": "votes", "approvals": 3, "votes": votes})
    names = {"telegram:111": "Alice"}

    assert votes_message(item, lambda identity: names.get(identity, identity)) == Outgoing(
        "Approved 1 of 3: Alice"
    )
    assert votes_message(message_item("Approved 1 of 3: telegram:111")) is None
    assert votes_message(message_item("x", {"type": "votes", "approvals": "3", "votes": votes})) is None


def test_long_tool_call_arguments_are_cut_visibly() -> None:
    text = tool_call_text(ToolCall(name="fs__write", arguments={"content": "x" * 5000}))

    shown, _sep, note = text.rpartition("\n")
    assert len(shown) < MAX_ARGUMENTS_CHARS + 100
    assert note.startswith("… truncated: ") and note.endswith(" more characters not shown")


def test_a_single_select_has_a_button_per_option_and_other() -> None:
    rows = keyboard(view(question("Target?", ["staging", "production"])))

    assert [[(b.text, decode(b.data).action) for b in row] for row in rows] == [
        [("1. staging", Action.PICK)],
        [("2. production", Action.PICK)],
        [("Other…", Action.WRITE)],
        [("Claim", Action.CLAIM)],
    ]


def test_a_multi_select_marks_its_ticked_options_and_ends_with_other_and_submit() -> None:
    rows = keyboard(view(question("Sections?", ["KPI cards", "Chart"], multi=True)), 0, frozenset({1}))

    assert [[b.text for b in row] for row in rows] == [
        ["1. KPI cards"],
        ["✓ 2. Chart"],
        ["Other…", "Submit"],
        ["Claim"],
    ]


def test_ticks_are_read_back_only_for_the_question_and_prompt_pressed() -> None:
    sections = view(question("A?", ["a", "b", "c"], multi=True), question("B?", ["d", "e"], multi=True))
    first = keyboard(sections, 0, frozenset({0, 2}))
    second = keyboard(sections, 1, frozenset({1}))

    assert ticked_in(first + second, PROMPT_ID, 0) == {0, 2}
    assert ticked_in(first + second, PROMPT_ID, 1) == {1}
    assert ticked_in(first, "prm_01J0000000000000000000000Y", 0) == frozenset()


def test_several_questions_keep_the_seed_text_and_add_a_line_naming_the_current_one() -> None:
    questions = [question("Where from?", ["CSV import", "API"]), question("Which style?", [])]

    [step_two] = prompt_parts(view(*questions), step=1)

    assert step_two == f"{prompt_text(questions)}\n\n▶ Question 2 of 2: Which style?"


def test_a_long_prompt_is_split_and_its_buttons_and_step_line_go_on_the_last_part() -> None:
    labels = [f"{index:02d} " + "y" * 96 for index in range(25)]
    questions = [question(f"Question {number}?", labels) for number in range(1, 3)]
    big = view(
        *[
            q.model_copy(
                update={"options": [o.model_copy(update={"description": "d" * 300}) for o in q.options]}
            )
            for q in questions
        ]
    )

    messages = prompt_messages(big)

    assert len(messages) > 1
    assert all(utf16_len(message.text) <= MAX_MESSAGE_UNITS for message in messages)
    assert [message.keyboard is not None for message in messages] == [False] * (len(messages) - 1) + [True]
    assert messages[-1].text.endswith("▶ Question 1 of 2: Question 1?")


def test_a_settled_prompt_too_long_for_one_message_keeps_its_end_where_the_outcome_is() -> None:
    text = "\n".join(f"line {number}" for number in range(1000)) + "\n\n✓ Answered: staging"

    fitted = fit_tail(text)

    assert utf16_len(fitted) <= MAX_MESSAGE_UNITS
    assert fitted.endswith("✓ Answered: staging")
    assert fitted.startswith("… [") and "earlier characters not shown]" in fitted.split("\n", 1)[0]


# In a group: the question asks for a reply, the buttons follow on a message of their own --------------


def test_in_a_group_the_question_asks_for_a_reply_to_the_turn_and_the_buttons_come_after_it() -> None:
    target = view(question("Target?", ["staging", "production"]))

    asked, controls = prompt_messages(target, reply_to=42, group=True)

    assert (asked.text, asked.force_reply, asked.reply_to, asked.keyboard) == (
        "Target?\n  1. staging\n  2. production",
        True,
        42,
        None,
    )
    assert (controls.text, controls.force_reply, controls.reply_to) == (PICK_HINT, False, None)
    assert controls.keyboard == keyboard(target)


@pytest.mark.parametrize(
    ("prompt", "hint"),
    [
        pytest.param(
            PromptView(PROMPT_ID, PromptKind.APPROVAL, [question("Allow it?", ["Approve", "Deny"])]),
            f"{APPROVE_HINT} {notices.approval_hint(editable=False)}",
            id="approval",
        ),
        pytest.param(view(question("Which branch?", [])), WRITE_HINT, id="free-text"),
        pytest.param(view(question("Sections?", ["a", "b"], multi=True)), PICK_HINT, id="multi-select"),
    ],
)
def test_the_group_buttons_message_says_briefly_how_to_answer(prompt: PromptView, hint: str) -> None:
    [_asked, controls] = prompt_messages(prompt, group=True)

    assert controls.text == hint


def test_in_a_group_the_step_line_of_several_questions_goes_on_the_buttons_message_only() -> None:
    questions = [question("Where from?", ["CSV import", "API"]), question("Which style?", [])]
    form = view(*questions)

    asked, controls = prompt_messages(form, group=True)

    assert asked.text == prompt_text(questions)
    assert controls.text == f"{STEPS_HINT}\n\n▶ Question 1 of 2: Where from?"
    assert step_text(form, 1, group=True) == f"{STEPS_HINT}\n\n▶ Question 2 of 2: Which style?"
    assert step_text(form, 1, group=False) == prompt_parts(form, 1)[-1]


def test_a_long_group_prompt_asks_for_a_reply_on_its_last_part_and_answers_the_turn_on_its_first() -> None:
    options = [{"label": f"option {n}", "description": "d" * 300} for n in range(1, 26)]
    long = view(Question.model_validate({"question": "Pick one?", "options": options}))

    messages = prompt_messages(long, reply_to=42, group=True)

    *parts, controls = messages  # about 8,000 characters: three parts
    assert [(m.force_reply, m.reply_to, m.keyboard) for m in parts] == [
        (False, 42, None),
        (False, None, None),
        (True, None, None),
    ]
    assert controls.keyboard is not None and controls.text == PICK_HINT
