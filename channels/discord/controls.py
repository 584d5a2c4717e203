"""Native controls of a pending prompt: buttons, select menus, the approval's tool call, and forms."""

from __future__ import annotations

import contextlib
from typing import Any

import discord

from channels.discord.control_ids import TEXT_FIELD, Action, ControlId, field_id
from gateway.sdk import PromptKind, PromptView, Question, ToolCall, notices, shorten, tool_call_arguments

ROWS = 5
PER_ROW = 5
MAX_BUTTON_LABEL = 80
MAX_OPTION_TEXT = 100
MAX_TITLE = 45
MAX_LABEL_DESCRIPTION = 100
MAX_FORM_FIELDS = 5
MAX_TEXT_INPUT = 4000
MAX_ARGUMENTS_CHARS = 1500
OTHER = "Other…"
DENY_WITH_REASON, EDIT_AND_APPROVE = "Deny with reason…", "Edit and approve…"
SECONDARY = discord.ButtonStyle.secondary
ANSWER = "Answer…"


class PromptControls(PromptView):
    """A pending prompt with the custom_ids of its controls."""

    __slots__ = ()

    @classmethod
    def of(cls, metadata: dict[str, Any]) -> PromptControls | None:
        """From ``item.metadata``; ``None`` when it holds no readable pending prompt."""
        view = PromptView.of_metadata(metadata)
        if view is None:
            return None
        return cls(view.prompt_id, view.kind, view.questions, view.tool_call, view.editable, view.approvals)

    def control(self, action: Action, question: int = 0, option: int = 0) -> str:
        return ControlId(action, self.prompt_id, question, option).encode()


def prompt_view(controls: PromptControls) -> discord.ui.View:
    """The controls under the prompt's text. Its numbered options stay in the text for typed replies. An
    approval's: Approve, Deny, Approve for this session (when it is about a call), Deny with reason… and,
    where its call may be edited, Edit and approve… (five at most: one row)."""
    view = discord.ui.View(timeout=None)
    if len(controls.questions) > 1:
        view.add_item(_button(ANSWER, controls.control(Action.FORM), discord.ButtonStyle.primary, 0))
        return _with_claim(view, controls)
    question = controls.questions[0]
    if controls.kind is PromptKind.APPROVAL:
        view.add_item(_button("Approve", controls.control(Action.PICK, 0, 0), discord.ButtonStyle.success, 0))
        view.add_item(_button("Deny", controls.control(Action.PICK, 0, 1), discord.ButtonStyle.danger, 0))
        if controls.grantable:
            session = controls.control(Action.SESSION)
            view.add_item(_button(notices.APPROVE_FOR_SESSION, session, discord.ButtonStyle.success, 0))
        view.add_item(_button(DENY_WITH_REASON, controls.control(Action.REASON), SECONDARY, 0))
        if controls.editable and controls.tool_call is not None:
            view.add_item(_button(EDIT_AND_APPROVE, controls.control(Action.EDIT), SECONDARY, 0))
    elif not question.options:
        view.add_item(_button(ANSWER, controls.control(Action.WRITE), discord.ButtonStyle.primary, 0))
    elif question.multi_select:
        view.add_item(_option_select(question, controls.control(Action.MENU), multi=True, row=0))
        view.add_item(_button("None of these", controls.control(Action.NONE), SECONDARY, 1))
        view.add_item(_button(OTHER, controls.control(Action.WRITE), SECONDARY, 1))
    elif len(question.options) < ROWS * PER_ROW:  # one button each, and one more for Other…
        for index, option in enumerate(question.options):
            custom_id = controls.control(Action.PICK, 0, index)
            view.add_item(_button(option.label, custom_id, discord.ButtonStyle.primary, index // PER_ROW))
        other_row = len(question.options) // PER_ROW
        view.add_item(_button(OTHER, controls.control(Action.WRITE), SECONDARY, other_row))
    else:
        view.add_item(_option_select(question, controls.control(Action.MENU), multi=False, row=0))
        view.add_item(_button(OTHER, controls.control(Action.WRITE), SECONDARY, 1))
    return _with_claim(view, controls)


def _with_claim(view: discord.ui.View, controls: PromptControls) -> discord.ui.View:
    """**Claim** where the core's view offers it and a row has room (a card of 24 option buttons and
    Other… has none: there ``claim`` is typed)."""
    if controls.claimable and len(view.children) < ROWS * PER_ROW:
        claim: discord.ui.Button[Any] = discord.ui.Button(
            label=notices.CLAIM, custom_id=controls.control(Action.CLAIM), style=SECONDARY
        )
        with contextlib.suppress(ValueError):  # every row is full
            view.add_item(claim)
    return view


def tool_call_embed(tool_call: ToolCall) -> discord.Embed:
    """The call an approval lets through: its name and JSON arguments, cut visibly when long."""
    arguments = tool_call_arguments(tool_call, MAX_ARGUMENTS_CHARS)
    arguments = arguments.replace("```", "`\u200b``")  # keep the code block closed
    return discord.Embed(title=shorten(tool_call.name, 256), description=f"```json\n{arguments}\n```")


def text_form(controls: PromptControls, question_index: int) -> discord.ui.Modal:
    """The form of a free-text question, or of Other… on an option list: one text field."""
    question = controls.questions[question_index]
    title = OTHER.rstrip("…") + " answer" if question.options else "Your answer"
    modal = discord.ui.Modal(title=title, custom_id=controls.control(Action.TEXT, question_index))
    modal.add_item(_labelled(question, _text_input(TEXT_FIELD, required=True)))
    return modal


def answers_form(controls: PromptControls) -> discord.ui.Modal:
    """One form for every question: a select per option list, a text field per free-text question,
    and, while the form has room (five fields), an optional Other… field for option lists."""
    modal = discord.ui.Modal(title="Answer", custom_id=controls.control(Action.ANSWERS))
    room = MAX_FORM_FIELDS - len(controls.questions)
    with_other: set[int] = set()
    for index, question in enumerate(controls.questions):
        if question.options and len(with_other) < room:
            with_other.add(index)
    for index, question in enumerate(controls.questions):
        if not question.options:
            modal.add_item(_labelled(question, _text_input(field_id("text", index), required=True)))
            continue
        select = _option_select(
            question,
            field_id("pick", index),
            multi=question.multi_select,
            required=not question.multi_select and index not in with_other,
        )
        modal.add_item(_labelled(question, select))
    for index in sorted(with_other):
        question = controls.questions[index]
        field = _text_input(field_id("other", index), required=False)
        title = shorten(f"Other: {_title(question)}", MAX_TITLE)
        modal.add_item(discord.ui.Label(text=title, component=field))
    return modal


def _title(question: Question) -> str:
    return question.header or question.question


def _labelled(question: Question, component: discord.ui.Item[Any]) -> discord.ui.Label[Any]:
    title = shorten(_title(question), MAX_TITLE)
    description = None
    if title != " ".join(question.question.split()):
        description = shorten(question.question, MAX_LABEL_DESCRIPTION)
    return discord.ui.Label(text=title, description=description, component=component)


def _button(label: str, custom_id: str, style: discord.ButtonStyle, row: int) -> discord.ui.Button[Any]:
    label = shorten(label, MAX_BUTTON_LABEL)
    return discord.ui.Button(label=label, custom_id=custom_id, style=style, row=row)


def _option_select(
    question: Question, custom_id: str, *, multi: bool, required: bool = True, row: int | None = None
) -> discord.ui.Select[Any]:
    options = [
        discord.SelectOption(
            label=shorten(option.label, MAX_OPTION_TEXT),
            value=str(index),
            description=shorten(option.description, MAX_OPTION_TEXT) if option.description else None,
        )
        for index, option in enumerate(question.options)
    ]
    return discord.ui.Select(
        custom_id=custom_id,
        placeholder="Choose any number of options" if multi else "Choose an option",
        min_values=1 if required and not multi else 0,
        max_values=len(options) if multi else 1,
        options=options,
        required=required,
        row=row,
    )


def _text_input(custom_id: str, *, required: bool) -> discord.ui.TextInput[Any]:
    return discord.ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.paragraph,
        required=required,
        max_length=MAX_TEXT_INPUT,
    )
