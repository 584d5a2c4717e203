"""What a press on a card means, read against its stored prompt: the act it makes for the core's answer
step, or why it is not one. Pure.

The card's input values are checked, never trusted: a value that is not text, an option index out of
range or a control of a shape the prompt was not given is refused; what the act itself may do (a
multi-select's option, a decline of a question) the answer step checks, as for every platform.
"""

from __future__ import annotations

from typing import Any

from channels.teams.approvals import read_edit, read_reason
from channels.teams.control_ids import ControlRef, Verb, choice_id, field_id, other_id
from gateway.sdk import (
    MAX_TEXT_CHARS,
    MAX_VALUE_CHARS,
    NO,
    YES,
    FormField,
    Prompt,
    PromptKind,
    map_form,
    notices,
    steps,
)

_SAYS = notices.UNANSWERED


def _value(data: dict[str, Any], key: str) -> str | None:
    """An input's value: absent or empty is ``""``; anything but text is None (not a card of ours)."""
    value = data.get(key, "")
    return value if isinstance(value, str) else None


def _indexes(text: str, count: int) -> list[int] | None:
    """``"0,2"`` as option indexes below ``count``; None when any is not one."""
    if not text:
        return []
    if len(text) > 4 * count:
        return None
    parts = text.split(",")
    if not all(part.isascii() and part.isdigit() and int(part) < count for part in parts):
        return None
    return sorted({int(part) for part in parts})


def act_of(
    prompt: Prompt, verb: Verb, ref: ControlRef, data: dict[str, Any], where: dict[str, Any]
) -> steps.Press | str:
    """The act a press makes on its prompt (``where`` names the prompt, the presser and the press), or
    the notice that says why it is none."""
    whole = ref == ControlRef(prompt.prompt_id)  # a control of the whole prompt, not of an option
    if ref.prompt_id != prompt.prompt_id:
        return notices.MISMATCH
    if verb in (Verb.DONE, Verb.DECLINE):
        act = steps.Done if verb is Verb.DONE else steps.Decline
        return act(**where) if whole else notices.MISMATCH
    if verb is Verb.CLAIM:
        return steps.Claim(**where) if whole else notices.MISMATCH
    if verb is Verb.PICK:
        fits = prompt.kind is not PromptKind.FORM and len(prompt.questions) == 1 and ref.question == 0
        return steps.Pick(**where, option=ref.option) if fits and ref.option is not None else notices.MISMATCH
    if verb is Verb.SESSION:  # Approve for this session: an approval's Approve, about a call
        fits = prompt.kind is PromptKind.APPROVAL and prompt.tool_call is not None
        return (
            steps.Pick(**where, option=0, grant=True)
            if fits and ref == ControlRef(prompt.prompt_id, 0, 0)
            else notices.MISMATCH
        )
    if verb in (Verb.REASON, Verb.EDIT):
        return _approval(prompt, verb, data, where) if whole else notices.MISMATCH
    if not whole or prompt.kind is PromptKind.URL:
        return notices.MISMATCH
    if prompt.kind is PromptKind.FORM:
        fields = prompt.form_fields()
        lists = _fields(fields, data)
        if lists is None:
            return notices.MISMATCH
        return steps.Fields(
            **where, fields={field.name: given for field, given in zip(fields, lists, strict=True)}
        )
    return _questions(prompt, data, where)


def _approval(prompt: Prompt, verb: Verb, data: dict[str, Any], where: dict[str, Any]) -> steps.Press | str:
    """Deny with reason (its text the note) or Approve with edits (the values as typed; the core reads and
    checks them)."""
    if prompt.kind is not PromptKind.APPROVAL:
        return notices.MISMATCH
    if verb is Verb.REASON:
        reason = read_reason(data)
        return notices.MISMATCH if reason is None else steps.Text(**where, text=reason)
    edited = read_edit(prompt, data)
    return notices.MISMATCH if edited is None else steps.Edit(**where, fields=edited)


def _questions(prompt: Prompt, data: dict[str, Any], where: dict[str, Any]) -> steps.Press | str:
    """Every question's inputs: options picked and an "Other" text (not both, for a single choice)."""
    picked: list[list[int]] = []
    typed: list[str] = []
    for index, question in enumerate(prompt.questions):
        other = _value(data, other_id(index))
        chosen = _value(data, choice_id(index)) if question.options else ""
        indexes = _indexes(chosen, len(question.options)) if chosen is not None else None
        if other is None or indexes is None:
            return notices.MISMATCH
        picked.append(indexes)
        typed.append(other.strip()[:MAX_TEXT_CHARS])
    read = map_form(prompt.questions, picked, typed)
    if read.unanswered:
        return _SAYS[next(iter(read.unanswered.values()))]
    return notices.MISMATCH if read.answers is None else steps.Answers(**where, lists=read.answers)


def _fields(fields: list[FormField], data: dict[str, Any]) -> list[list[str]] | None:
    """One shown answer per property (a choice's title, Yes/No, the text typed); the core validates."""
    answers: list[list[str]] = []
    for field in fields:
        value = _value(data, field_id(field.name))
        if value is None:
            return None
        if field.type == "boolean":
            if value not in ("true", "false", ""):
                return None
            answers.append([YES if value == "true" else NO])
        elif field.choices:
            indexes = _indexes(value, len(field.choices))
            if indexes is None or (field.type != "array" and len(indexes) > 1):
                return None
            answers.append([field.choices[number].label for number in indexes])
        else:
            value = value.strip()[:MAX_VALUE_CHARS]
            answers.append([value] if value else [])
    return answers
