"""What a press on a card answers, read against its stored prompt. Pure.

The card's input values are checked, never trusted: an option index out of range, a control of a shape
the prompt was not given, or a press that names another prompt is refused before it reaches the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from channels.teams.control_ids import ControlRef, Verb, choice_id, field_id, other_id
from gateway.sdk import (
    DONE,
    MAX_TEXT_CHARS,
    MAX_VALUE_CHARS,
    NO,
    YES,
    Answer,
    FormField,
    Prompt,
    PromptKind,
    map_form,
    notices,
)

_STEP_KINDS = (PromptKind.FORM, PromptKind.URL)
_SAYS = notices.UNANSWERED


@dataclass(frozen=True, slots=True)
class Reading:
    """A press read: the answer lists (one per question), a decline, or why it was not taken."""

    answers: list[list[str]] | None = None
    decline: bool = False
    notice: str | None = None


MISMATCH = Reading(notice=notices.MISMATCH)


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


def read_press(prompt: Prompt, verb: Verb, ref: ControlRef, data: dict[str, Any]) -> Reading:
    """The answers a press gives its prompt, or why it is not taken."""
    if ref.prompt_id != prompt.prompt_id:
        return MISMATCH
    if verb is Verb.DONE:
        return (
            Reading([[DONE]])
            if prompt.kind is PromptKind.URL and ref == ControlRef(prompt.prompt_id)
            else MISMATCH
        )
    if verb is Verb.DECLINE:
        fits = prompt.kind in _STEP_KINDS and ref == ControlRef(prompt.prompt_id)
        return Reading(decline=True) if fits else MISMATCH
    if verb is Verb.PICK:
        return _pick(prompt, ref)
    if verb is Verb.SESSION:  # Approve for this session: an approval's Approve, about a call
        fits = prompt.kind is PromptKind.APPROVAL and prompt.tool_call is not None
        return _pick(prompt, ref) if fits and ref == ControlRef(prompt.prompt_id, 0, 0) else MISMATCH
    if ref != ControlRef(prompt.prompt_id) or prompt.kind is PromptKind.URL:
        return MISMATCH
    if prompt.kind is PromptKind.FORM:
        return _fields(prompt.form_fields(), data)
    return _questions(prompt, data)


def _pick(prompt: Prompt, ref: ControlRef) -> Reading:
    if prompt.kind in _STEP_KINDS or len(prompt.questions) != 1 or ref.question != 0 or ref.option is None:
        return MISMATCH
    question = prompt.questions[0]
    if question.multi_select or ref.option >= len(question.options):
        return MISMATCH
    return Reading([[question.labels[ref.option]]])


def _questions(prompt: Prompt, data: dict[str, Any]) -> Reading:
    """Every question's inputs: options picked and an "Other" text (not both, for a single choice)."""
    picked: list[list[int]] = []
    typed: list[str] = []
    for index, question in enumerate(prompt.questions):
        other = _value(data, other_id(index))
        chosen = _value(data, choice_id(index)) if question.options else ""
        indexes = _indexes(chosen, len(question.options)) if chosen is not None else None
        if other is None or indexes is None:
            return MISMATCH
        picked.append(indexes)
        typed.append(other.strip()[:MAX_TEXT_CHARS])
    read = map_form(prompt.questions, picked, typed)
    if read.unanswered:
        return Reading(notice=_SAYS[next(iter(read.unanswered.values()))])
    return MISMATCH if read.answers is None else Reading(read.answers)


def _fields(fields: list[FormField], data: dict[str, Any]) -> Reading:
    """One shown answer per property (a choice's title, Yes/No, the text typed); the core validates."""
    answers: list[list[str]] = []
    for field in fields:
        value = _value(data, field_id(field.name))
        if value is None:
            return MISMATCH
        if field.type == "boolean":
            if value not in ("true", "false", ""):
                return MISMATCH
            answers.append([YES if value == "true" else NO])
        elif field.choices:
            indexes = _indexes(value, len(field.choices))
            if indexes is None or (field.type != "array" and len(indexes) > 1):
                return MISMATCH
            answers.append([field.choices[number].label for number in indexes])
        else:
            value = value.strip()[:MAX_VALUE_CHARS]
            answers.append([value] if value else [])
    return Reading(answers)


def structured(prompt: Prompt, answers: list[list[str]]) -> list[Answer]:
    """One Answer per question, in order: the full set the core expects in ``answers``."""
    return [
        Answer(question=question.question, question_id=question.id or f"q{index + 1}", answer=answer)
        for index, (question, answer) in enumerate(zip(prompt.questions, answers, strict=True))
    ]
