"""A pending prompt as Telegram messages with inline keyboards: one question's controls at a time.

The text stays the seed's numbered questions, so a typed ``2`` still answers; an approval adds the tool
call it is about and how a typed reply answers it (a reason, an edit), and a prompt of several questions
adds a line saying which question the buttons are for. Multi-select ticks live in the keyboard itself
(a ``✓`` on the button), so no server keeps them.

In a group the question asks for a reply with a selective ForceReply (with privacy mode on, only replies
reach the bot) and the buttons follow on a short message of their own: a message has one reply markup.
"""

from __future__ import annotations

from channels.telegram.control_ids import Action, BadControl, Control, decode
from channels.telegram.render import (
    MAX_MESSAGE_UNITS,
    Button,
    Keyboard,
    Outgoing,
    asking_for_reply,
    split_text,
)
from gateway.sdk import PromptKind, PromptView, ToolCall, notices, prompt_text, shorten, tool_call_arguments

TICK = "✓ "
OTHER = "Other…"
WRITE = "✎ Answer…"
SUBMIT = "Submit"
APPROVE_TEXT, DENY_TEXT = "✅ Approve", "❌ Deny"
DENY_WITH_REASON = "✎ Deny with reason…"
MAX_BUTTON_CHARS = 60
MAX_STEP_QUESTION_CHARS = 200
STEP_RESERVE = 320  # room kept in the last part for the step (or field) line
MAX_ARGUMENTS_CHARS = 1500
PICK_HINT = "Answer with the buttons, or reply with a number or text."
APPROVE_HINT = "Answer with the buttons."
WRITE_HINT = "Answer with the button, or reply with your answer."
STEPS_HINT = "Answer with the buttons, one question at a time."


def tool_call_text(tool_call: ToolCall) -> str:
    """The call an approval is about: its name and JSON arguments, cut visibly when long."""
    return f"Tool call: {tool_call.name}\n{tool_call_arguments(tool_call, MAX_ARGUMENTS_CHARS)}"


def step_line(view: PromptView, step: int) -> str:
    """Which question the buttons are for, when the prompt has several."""
    question = view.questions[step]
    text = shorten(question.question, MAX_STEP_QUESTION_CHARS)
    return f"▶ Question {step + 1} of {len(view.questions)}: {text}"


def prompt_body(view: PromptView) -> str:
    """The numbered questions, and for an approval the tool call it is about."""
    body = prompt_text(view.questions)
    if view.kind is PromptKind.APPROVAL and view.tool_call is not None:
        body = f"{body}\n\n{tool_call_text(view.tool_call)}"
    return body


def with_step_line(body: str, line: str | None) -> list[str]:
    """A text's messages; with a ``line`` (which question or field the buttons are for), the last ends
    with it."""
    if line is None:
        return split_text(body)
    parts = split_text(body, limit=MAX_MESSAGE_UNITS - STEP_RESERVE)
    parts[-1] = f"{parts[-1]}\n\n{line}"
    return parts


def approval_hint(view: PromptView) -> str:
    """How a typed reply answers an approval (any other reply denies with its words; ``edit`` lines
    change the call when it may be edited): Telegram has no forms, so edits are typed."""
    return notices.approval_hint(view.editable)


def prompt_parts(view: PromptView, step: int = 0) -> list[str]:
    """The prompt's messages; the buttons go on the last, which also names the question they are for
    (an approval's, how a typed reply answers it)."""
    if view.kind is PromptKind.APPROVAL:
        return with_step_line(prompt_body(view), approval_hint(view))
    return with_step_line(prompt_body(view), step_line(view, step) if len(view.questions) > 1 else None)


def controls_text(view: PromptView, step: int = 0) -> str:
    """The text of a group's buttons message: how to answer, and which question the buttons are for."""
    if len(view.questions) > 1:
        return f"{STEPS_HINT}\n\n{step_line(view, step)}"
    if view.kind is PromptKind.APPROVAL:
        return f"{APPROVE_HINT} {approval_hint(view)}"
    return PICK_HINT if view.questions[step].options else WRITE_HINT


def step_text(view: PromptView, step: int, *, group: bool) -> str:
    """The text of the message with the buttons while question ``step`` is shown."""
    return controls_text(view, step) if group else prompt_parts(view, step)[-1]


def button_text(number: int, label: str) -> str:
    return shorten(f"{number}. {label}", MAX_BUTTON_CHARS)


def keyboard(view: PromptView, step: int = 0, ticked: frozenset[int] = frozenset()) -> Keyboard:
    """The buttons of question ``step``: an approval's Approve and Deny, Approve for this session (when it
    is about a tool call) and Deny with reason… (a text request for the reason), an option each (ticked
    ones marked ``✓`` on a multi-select, with Submit), Other… on every option list, or one button to write
    an answer; then Claim."""
    rows = _answer_rows(view, step, ticked)
    if view.claimable:  # the core's view offers Claim: a row of its own, last
        rows = (*rows, (Button(notices.CLAIM, Control(Action.CLAIM, view.prompt_id, step).encode()),))
    return rows


def _answer_rows(view: PromptView, step: int, ticked: frozenset[int]) -> Keyboard:
    question = view.questions[step]

    def button(text: str, action: Action, option: int = 0) -> Button:
        return Button(text, Control(action, view.prompt_id, step, option).encode())

    if view.kind is PromptKind.APPROVAL:
        session = ((button(notices.APPROVE_FOR_SESSION, Action.GRANT, 0),),) if view.grantable else ()
        return (
            (button(APPROVE_TEXT, Action.PICK, 0), button(DENY_TEXT, Action.PICK, 1)),
            *session,
            (button(DENY_WITH_REASON, Action.WRITE),),
        )
    if not question.options:
        return ((button(WRITE, Action.WRITE),),)
    if question.multi_select:
        rows: list[tuple[Button, ...]] = [
            (button(TICK * (index in ticked) + button_text(index + 1, label), Action.TOGGLE, index),)
            for index, label in enumerate(question.labels)
        ]
        rows.append((button(OTHER, Action.WRITE), button(SUBMIT, Action.SUBMIT)))
        return tuple(rows)
    rows = [
        (button(button_text(index + 1, label), Action.PICK, index),)
        for index, label in enumerate(question.labels)
    ]
    rows.append((button(OTHER, Action.WRITE),))
    return tuple(rows)


def with_buttons(
    body: str, parts: list[str], hint: str, buttons: Keyboard, *, reply_to: int | None, group: bool
) -> list[Outgoing]:
    """The messages a pending prompt, form or URL step becomes: the first answers ``reply_to``, the last
    has the buttons. In a ``group`` the text asks for a reply (so a typed answer reaches the bot) and the
    buttons come on a message of their own, after ``hint``."""
    if group:
        return [*asking_for_reply(split_text(body), reply_to=reply_to), Outgoing(hint, keyboard=buttons)]
    last = len(parts) - 1
    return [
        Outgoing(part, reply_to=reply_to if index == 0 else None, keyboard=buttons if index == last else None)
        for index, part in enumerate(parts)
    ]


def prompt_messages(view: PromptView, *, reply_to: int | None = None, group: bool = False) -> list[Outgoing]:
    """The messages a pending prompt becomes (see ``with_buttons``)."""
    body, hint = prompt_body(view), controls_text(view)
    return with_buttons(body, prompt_parts(view), hint, keyboard(view), reply_to=reply_to, group=group)


def ticked_in(rows: Keyboard, prompt_id: str, step: int) -> frozenset[int]:
    """The options ticked on a keyboard as the message shows it (read from a press's own message)."""
    ticked: set[int] = set()
    for row in rows:
        for button in row:
            try:
                control = decode(button.data)
            except BadControl:
                continue
            if (control.action, control.prompt_id, control.question) != (Action.TOGGLE, prompt_id, step):
                continue
            if button.text.startswith(TICK):
                ticked.add(control.option)
    return frozenset(ticked)
