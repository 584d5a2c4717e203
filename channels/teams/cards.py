"""Thread items as Teams activities: text, or an Adaptive Card with a prompt's native controls. Pure.

A pending prompt is one card: its text, then its controls. An approval gets Approve and Deny, Deny with
reason… and, where its call may be edited, Edit and approve… (see ``approvals``), and a line saying how a
typed reply answers it. One question of at most five options gets a button per option; every other prompt
gets inputs (``Input.ChoiceSet``, multi-select where the question is, and an "Other" ``Input.Text`` under
each option list) and one Send button. A form gets a typed input per property, carrying the schema's
limits and required marks; a URL step a link, Done and Decline. Inputs help the person; what is a valid
answer is decided by the core alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from microsoft_teams.api.activities.message import MessageActivityInput
from microsoft_teams.cards import (
    AdaptiveCard,
    CardElement,
    Choice,
    ChoiceSetInput,
    DateInput,
    ExecuteAction,
    NumberInput,
    OpenUrlAction,
    TextBlock,
    TextInput,
    ToggleInput,
)

from channels.teams.approvals import approval_actions
from channels.teams.control_ids import REF_KEY, ControlRef, Verb, choice_id, field_id, other_id, verb
from gateway.sdk import (
    FormField,
    PromptKind,
    PromptView,
    Question,
    SchemaError,
    ThreadItem,
    ToolCall,
    check_schema,
    notices,
    shorten,
    tool_call_arguments,
    votes_of,
    votes_text,
)

TEXT_LIMIT = 20_000  # characters of an item's text in one activity (Teams takes about 28 KB in all)
TOOL_ARGS_LIMIT = 2_500
LABEL_LIMIT = 200  # characters of a button's title or a choice's title
MAX_BUTTONS = 5
MAX_ACTIONS = 6  # actions Teams shows on a card
INPUT_TEXT_LIMIT = 4_096  # the longest value a text box takes (the core's own cap on form values)
MULTILINE_PAST = 150
SEND, OTHER, DONE, DECLINE, OPEN_PAGE = "Send", "Other answer", "Done", "Decline", "Open the page"


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` within ``limit`` characters; what is left out is said, never silently dropped."""
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n… truncated: {len(text) - limit} more characters not shown (Teams message limits)"
    )


def _text(text: str, **style: Any) -> TextBlock:
    return TextBlock(text=text, wrap=True, **style)


def _execute(title: str, action: Verb, ref: ControlRef, style: str | None = None) -> ExecuteAction:
    button = ExecuteAction(title=shorten(title, LABEL_LIMIT), verb=verb(action), data={REF_KEY: ref.encode()})
    if style is not None:
        button.style = style  # type: ignore[assignment]
    return button


def _choices(labels: list[str]) -> list[Choice]:
    return [Choice(title=shorten(label, LABEL_LIMIT), value=str(index)) for index, label in enumerate(labels)]


def card_activity(card: AdaptiveCard, summary: str) -> MessageActivityInput:
    activity = MessageActivityInput(summary=shorten(summary, LABEL_LIMIT)).add_card(card)
    return activity


def votes_activity(item: ThreadItem, name: Callable[[str], str] = str) -> MessageActivityInput | None:
    """An approval's votes so far (the core's ``votes`` item) as one short line, each approver shown by
    ``name``; None when the item is not one."""
    votes = votes_of(item)
    if votes is None:
        return None
    return MessageActivityInput(text=cut(votes_text(*votes, name)), text_format="plain")


def render_item(item: ThreadItem, by: str | None = None) -> MessageActivityInput:
    """The activity an item is posted as: a pending prompt's card, an audit item naming who answered
    (``by``) as a card with that subtle line, or text (agents write markdown)."""
    prompt = item.metadata.get("prompt") if item.type == "pending_prompt" else None
    if isinstance(prompt, dict):
        card = prompt_card(prompt, item.text)
        if card is not None:
            return card_activity(card, item.text)
    if by and item.type == "pending_prompt_resolved":
        return card_activity(settled_card(item, by), item.text)
    text = cut(item.text) or "(empty message)"
    return MessageActivityInput(text=text, text_format="markdown" if item.type == "message" else "plain")


def prompt_card(prompt: dict[str, Any], text: str) -> AdaptiveCard | None:
    """A pending prompt's card from its item's metadata, ending with **Claim** where the core's view
    offers it and Teams shows one more action; None when the metadata is unreadable."""
    card = _answer_card(prompt, text)
    view = PromptView.of_fields(prompt)
    if card is not None and view is not None and view.claimable and len(card.actions or []) < MAX_ACTIONS:
        card.actions = [
            *(card.actions or []),
            _execute(notices.CLAIM, Verb.CLAIM, ControlRef(view.prompt_id)),
        ]
    return card


def _answer_card(prompt: dict[str, Any], text: str) -> AdaptiveCard | None:
    try:
        ref = ControlRef(str(prompt["prompt_id"]))
        kind = PromptKind(prompt["kind"])
        questions = [Question.model_validate(question) for question in prompt.get("questions") or []]
        tool_call = ToolCall.model_validate(prompt["tool_call"]) if prompt.get("tool_call") else None
        fields = check_schema(prompt["requested_schema"]) if kind is PromptKind.FORM else []
    except (KeyError, TypeError, ValueError, SchemaError):
        return None
    message = prompt.get("message")
    shown = message if isinstance(message, str) and kind in (PromptKind.FORM, PromptKind.URL) else text
    body: list[CardElement] = [_text(cut(shown))]
    if tool_call is not None:
        body.append(_text(f"Tool call: {tool_call.name}", weight="Bolder"))
        body.append(_text(tool_call_arguments(tool_call, TOOL_ARGS_LIMIT), font_type="Monospace"))
    if kind is PromptKind.URL:
        url = prompt.get("url")
        if not isinstance(url, str):
            return None
        actions: list[Any] = [
            OpenUrlAction(title=OPEN_PAGE, url=url),
            _execute(DONE, Verb.DONE, ref, "positive"),
            _execute(DECLINE, Verb.DECLINE, ref),
        ]
        return AdaptiveCard(body=body, actions=actions)
    if kind is PromptKind.APPROVAL:
        can_edit = prompt.get("editable") is True
        body.append(_text(notices.approval_hint(can_edit), is_subtle=True, size="Small"))
        view = PromptView.of_fields(prompt)
        grantable = view is not None and view.grantable
        actions = approval_actions(ref, tool_call, can_edit=can_edit, grantable=grantable)
        return AdaptiveCard(body=body, actions=actions)
    if kind is PromptKind.FORM:
        body.extend(field_input(field) for field in fields)
        return AdaptiveCard(
            body=body,
            actions=[_execute(SEND, Verb.SUBMIT, ref, "positive"), _execute(DECLINE, Verb.DECLINE, ref)],
        )
    if len(questions) == 1 and questions[0].options and not questions[0].multi_select:
        question = questions[0]
        if len(question.options) <= MAX_BUTTONS:
            buttons = [
                _execute(label, Verb.PICK, ControlRef(ref.prompt_id, 0, index))
                for index, label in enumerate(question.labels)
            ]
            body.append(TextInput(id=other_id(0), label=OTHER, max_length=INPUT_TEXT_LIMIT))
            return AdaptiveCard(body=body, actions=[*buttons, _execute(SEND, Verb.SUBMIT, ref)])
    for index, question in enumerate(questions):
        body.extend(_question_inputs(index, question, several=len(questions) > 1))
    return AdaptiveCard(body=body, actions=[_execute(SEND, Verb.SUBMIT, ref, "positive")])


def _question_inputs(index: int, question: Question, *, several: bool) -> list[CardElement]:
    """A question's inputs: its options (multi-select where it is) and an "Other" box, or a text box."""
    label = shorten(question.question, LABEL_LIMIT) if several else None
    if not question.options:
        return [
            TextInput(
                id=other_id(index),
                label=label,
                is_multiline=True,
                is_required=True,
                max_length=INPUT_TEXT_LIMIT,
            )
        ]
    choices = ChoiceSetInput(
        id=choice_id(index),
        label=label,
        choices=_choices(question.labels),
        is_multi_select=question.multi_select,
        style="expanded" if len(question.options) <= 10 else "compact",
        wrap=True,
    )
    return [choices, TextInput(id=other_id(index), label=OTHER, max_length=INPUT_TEXT_LIMIT)]


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def field_input(field: FormField) -> CardElement:
    """The typed input for one form property, its limits and required mark from the schema."""
    common: dict[str, Any] = {
        "id": field_id(field.name),
        "label": shorten(field.title, LABEL_LIMIT),
        "is_required": field.required or None,
    }
    if field.required:
        common["error_message"] = f"{shorten(field.title, LABEL_LIMIT)} is required."
    default = field.default
    if field.type == "boolean":
        return ToggleInput(
            **common,
            title=shorten(field.description or field.title, LABEL_LIMIT),
            value_on="true",
            value_off="false",
            value="true" if default else "false",
        )
    if field.type in ("number", "integer"):
        return NumberInput(
            **common,
            min=_number(field.minimum),
            max=_number(field.maximum),
            value=_number(default) if isinstance(default, int | float) else None,
            placeholder=field.description,
        )
    if field.choices:
        picked = default if isinstance(default, list) else [default] if isinstance(default, str) else []
        values = ",".join(str(index) for index, choice in enumerate(field.choices) if choice.value in picked)
        return ChoiceSetInput(
            **common,
            choices=_choices(field.labels),
            is_multi_select=field.type == "array",
            style="expanded" if field.type == "array" and len(field.choices) <= 10 else "compact",
            value=values or None,
            wrap=True,
        )
    text_default = default if isinstance(default, str) else None
    if field.format == "date":
        return DateInput(**common, value=text_default, placeholder=field.description)
    longest = min(field.max_length or INPUT_TEXT_LIMIT, INPUT_TEXT_LIMIT)
    style = {"email": "Email", "uri": "Url"}.get(field.format or "")
    return TextInput(
        **common,
        value=text_default,
        max_length=longest,
        is_multiline=longest > MULTILINE_PAST or None,
        style=style,
        placeholder=field.description or ("YYYY-MM-DDThh:mm:ssZ" if field.format == "date-time" else None),
    )


def settled_card(item: ThreadItem, by: str | None) -> AdaptiveCard:
    """What a settled prompt's card becomes: its text and how it settled (and by whom), no controls."""
    body: list[CardElement] = [_text(cut(item.text))]
    if by:
        body.append(_text(by, is_subtle=True))
    return AdaptiveCard(body=body)
