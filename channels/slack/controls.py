"""A pending prompt's native controls in a Slack message, and which of them open a modal. Pure functions.

The ids the controls carry are built and read in ``control_ids``.
"""

from __future__ import annotations

from typing import Any

from channels.slack.control_ids import ACTIONS_BLOCK, TOGGLES_BLOCK, ControlRef, Verb, action_id
from gateway.sdk import Prompt, PromptKind, PromptView, Question, ToolCall, notices, tool_call_arguments

MAX_BUTTONS = 5  # option buttons in a message; past that a select menu
MAX_CHECKBOXES = 10  # Slack's limit for checkboxes and radio buttons
DENY_WITH_REASON, EDIT_AND_APPROVE = "Deny with reason…", "Edit and approve…"
OPTION_TEXT_LIMIT = 75  # characters in a button's or an option's text (and an option's description)
TOOL_ARGS_LIMIT = 2_500  # characters of a tool call's arguments shown before the rest is cut, visibly
_STEP_KINDS = (PromptKind.FORM, PromptKind.URL)  # kinds with their own controls (see ``forms``)


LABEL_LIMIT = 2_000  # characters in an input block's label or hint


def shorten(text: str, limit: int = OPTION_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters with a visible ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": False}


def input_block(
    block_id: str, label: str, element: dict[str, Any], *, optional: bool = False, hint: str | None = None
) -> dict[str, Any]:
    """A modal's input block, its label (and hint, when there is one) cut to what Slack shows."""
    block: dict[str, Any] = {
        "type": "input",
        "block_id": block_id,
        "label": plain(shorten(label, LABEL_LIMIT)),
        "element": element,
        "optional": optional,
    }
    if hint:
        block["hint"] = plain(shorten(hint, LABEL_LIMIT))
    return block


def button(text: str, action: str, value: str, style: str | None = None) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "button", "text": plain(shorten(text)), "action_id": action}
    element["value"] = value
    if style is not None:
        element["style"] = style
    return element


def option(text: str, value: str, description: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"text": plain(shorten(text)), "value": value}
    if description:
        entry["description"] = plain(shorten(description))
    return entry


def option_indexes(state: dict[str, Any], count: int) -> list[int] | None:
    """The option indexes a select or checkboxes state holds (options are valued by index); None when
    one is not an option of its input."""
    chosen = state.get("selected_options")
    if chosen is None:
        single = state.get("selected_option")
        chosen = [single] if single else []
    if not isinstance(chosen, list):
        return None
    indexes: list[int] = []
    for entry in chosen:
        value = entry.get("value") if isinstance(entry, dict) else None
        if not (isinstance(value, str) and value.isascii() and value.isdigit() and int(value) < count):
            return None
        indexes.append(int(value))
    return indexes


def tool_call_block(tool_call: ToolCall) -> dict[str, Any]:
    """The real call an approval is for: its name, then its arguments as JSON, cut visibly when long."""
    arguments = tool_call_arguments(tool_call, TOOL_ARGS_LIMIT)
    heading = [
        {"type": "text", "text": "Tool call: ", "style": {"bold": True}},
        {"type": "text", "text": tool_call.name, "style": {"code": True}},
    ]
    return {
        "type": "rich_text",
        "elements": [
            {"type": "rich_text_section", "elements": heading},
            {"type": "rich_text_preformatted", "elements": [{"type": "text", "text": arguments}]},
        ],
    }


def _choice_blocks(prompt_id: str, question: Question) -> list[dict[str, Any]]:
    """Single-select: a button per option (a select menu past five), then "Other…"."""
    other = button("Other…", action_id(Verb.OTHER), ControlRef(prompt_id, 0).encode())
    if len(question.options) <= MAX_BUTTONS:
        elements = [
            button(label, action_id(Verb.PICK, index), ControlRef(prompt_id, 0, index).encode())
            for index, label in enumerate(question.labels)
        ]
    else:
        menu = {
            "type": "static_select",
            "action_id": action_id(Verb.CHOOSE),
            "placeholder": plain("Choose…"),
            "options": [
                option(label, ControlRef(prompt_id, 0, index).encode())
                for index, label in enumerate(question.labels)
            ],
        }
        elements = [menu]
    return [{"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [*elements, other]}]


def _toggle_blocks(prompt_id: str, question: Question) -> list[dict[str, Any]]:
    """Multi-select: checkboxes (a multi-select menu past ten), then Submit and "Other…"."""
    options = [
        option(item.label, ControlRef(prompt_id, 0, index).encode(), item.description)
        for index, item in enumerate(question.options)
    ]
    toggles: dict[str, Any] = {"action_id": action_id(Verb.TOGGLE), "options": options}
    if len(options) <= MAX_CHECKBOXES:
        toggles["type"] = "checkboxes"
    else:
        toggles.update(type="multi_static_select", placeholder=plain("Choose any…"))
        for entry in options:
            entry.pop("description", None)
    reference = ControlRef(prompt_id, 0).encode()
    buttons = [
        button("Submit", action_id(Verb.SUBMIT), reference, style="primary"),
        button("Other…", action_id(Verb.OTHER), reference),
    ]
    return [
        {"type": "actions", "block_id": TOGGLES_BLOCK, "elements": [toggles]},
        {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons},
    ]


def _approval_blocks(prompt_id: str, *, editable: bool, session: bool) -> list[dict[str, Any]]:
    """Approve and Deny, Approve for this session (where there is a call to grant), Deny with reason… (a
    modal for the reason) and, where the call may be edited, Edit and approve… (a modal with its
    arguments); then how a typed reply answers it."""
    approve = button("Approve", action_id(Verb.PICK, 0), ControlRef(prompt_id, 0, 0).encode(), "primary")
    deny = button("Deny", action_id(Verb.PICK, 1), ControlRef(prompt_id, 0, 1).encode(), "danger")
    elements = [approve, deny]
    if session:
        elements.append(
            button(notices.APPROVE_FOR_SESSION, action_id(Verb.SESSION), ControlRef(prompt_id, 0, 0).encode())
        )
    elements.append(button(DENY_WITH_REASON, action_id(Verb.REASON), ControlRef(prompt_id).encode()))
    if editable:
        elements.append(button(EDIT_AND_APPROVE, action_id(Verb.EDIT), ControlRef(prompt_id).encode()))
    hint = {"type": "context", "elements": [plain(notices.approval_hint(editable))]}
    return [{"type": "actions", "block_id": ACTIONS_BLOCK, "elements": elements}, hint]


def control_blocks(prompt_meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The controls for a ``pending_prompt`` item's ``metadata.prompt``: blocks that follow its text, the
    row of buttons ending with **Claim** where the core's view offers it."""
    blocks = _answer_blocks(prompt_meta)
    view = PromptView.of_fields(prompt_meta)
    if view is not None and view.claimable:
        claim = button(notices.CLAIM, action_id(Verb.CLAIM), ControlRef(view.prompt_id).encode())
        for block in blocks:
            if block.get("block_id") == ACTIONS_BLOCK:
                block["elements"] = [*block["elements"], claim]
                break
    return blocks


def _answer_blocks(prompt_meta: dict[str, Any]) -> list[dict[str, Any]]:
    prompt_id = str(prompt_meta["prompt_id"])
    kind = PromptKind(prompt_meta["kind"])
    questions = [Question.model_validate(question) for question in prompt_meta["questions"]]
    blocks: list[dict[str, Any]] = []
    if kind is PromptKind.APPROVAL:
        if prompt_meta.get("tool_call"):
            blocks.append(tool_call_block(ToolCall.model_validate(prompt_meta["tool_call"])))
        view = PromptView.of_fields(prompt_meta)
        editable, session = prompt_meta.get("editable") is True, view is not None and view.grantable
        return blocks + _approval_blocks(prompt_id, editable=editable, session=session)
    if len(questions) == 1 and questions[0].options:
        question = questions[0]
        if question.multi_select:
            return _toggle_blocks(prompt_id, question)
        return _choice_blocks(prompt_id, question)
    answer = button("Answer…", action_id(Verb.FORM), ControlRef(prompt_id).encode(), style="primary")
    return [{"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [answer]}]


def single_options_question(prompt: Prompt) -> Question | None:
    """The one question a message's option controls answer, when the prompt has such controls."""
    if len(prompt.questions) != 1 or not prompt.questions[0].options:
        return None
    return prompt.questions[0]


def opens_form(prompt: Prompt, verb: Verb, ref: ControlRef) -> bool:
    """Whether a press that opens a modal fits the prompt (OTHER: its one option question; FORM: the
    prompt, whose answer modal, or for a form prompt its fields modal, it opens; REASON: an approval;
    EDIT: an approval whose call may be edited)."""
    if ref.prompt_id != prompt.prompt_id or ref.option is not None:
        return False
    if verb in (Verb.REASON, Verb.EDIT):
        approval = prompt.kind is PromptKind.APPROVAL and ref.question is None
        return approval and (verb is Verb.REASON or (prompt.editable and prompt.tool_call is not None))
    if verb is Verb.OTHER:
        return (
            ref.question == 0
            and prompt.kind not in _STEP_KINDS
            and single_options_question(prompt) is not None
        )
    return (
        verb is Verb.FORM
        and ref.question is None
        and prompt.kind not in (PromptKind.APPROVAL, PromptKind.URL)
    )
