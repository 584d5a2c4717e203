"""What a chat reply to the open prompt is: an answer, a new message (seed 002), a decline, a form step.

Pure functions, no I/O: ``read_reply`` is the one place the reply policy (``on_unmatched_reply``) and
"fits" (spec §7) are decided, for every kind, and the chat path of forms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from gateway.base import forms
from gateway.base.models import APPROVE, DENY, Answer, Prompt, PromptKind, ReplyPolicy, ToolCall
from gateway.rules import notices
from gateway.rules.grants import needs_several
from gateway.rules.mapper import (
    AFFIRMATIVE,
    NEGATIVE,
    check_structured,
    fits_approval,
    fits_question,
    map_reply,
    per_question,
    structured_answers,
)
from gateway.rules.typed_edits import NotAnEdit, typed_edit
from gateway.rules.verdicts import EditRefused, check_edit

NEW_MESSAGE_REASON = "Not answered: the user sent a new message instead"
DONE = "done"
DECLINE_TOKENS = frozenset({"decline", "declined"}) | (NEGATIVE - {"2"})
SKIP = "skip"
# Typed as a whole reply to a form, these decline it; any other word (no, deny) may be a field's value.
FORM_DECLINE = frozenset({"decline", "declined"})
# Typed to approve an approval and let the same call through, exactly, for the rest of the run (a grant).
FOR_THE_RUN = frozenset(
    {
        "always allow",
        "always approve",
        "approve always",
        "allow always",
        "approve for session",
        "approve for this session",
        "allow for session",
        "allow for this session",
    }
)
URL_NOTICE = "Not taken as an answer: reply done once you have finished the step at the link, or decline."


class ReplyAction(StrEnum):
    ANSWER = "answer"  # settle the prompt with ``answers`` (and a form's ``content``)
    SUPERSEDE = "supersede"  # cancel it (new_message) and queue the reply as the next turn's message
    DECLINE = "decline"  # cancel it as declined
    STEP = "step"  # keep ``draft`` (a form's values so far) and tell the person ``notice``
    INVALID = "invalid"  # not taken: tell the person ``notice``; the prompt stays pending


@dataclass(frozen=True, slots=True)
class Reading:
    action: ReplyAction
    answers: list[Answer] = field(default_factory=list)
    content: dict[str, Any] | None = None
    draft: dict[str, str] = field(default_factory=dict)
    notice: str | None = None
    # Why a form's values were not taken, one per property, for channels that show them by the field.
    errors: tuple[forms.FieldError, ...] = ()
    # An approval's decision beyond its answers: the person's words, and the call as they edited it.
    note: str | None = None
    edited: ToolCall | None = None
    # An approve that also asks to let the same call through for the rest of the run (``FOR_THE_RUN``),
    # or why the grant it asked for is not made though the approve is taken (told once it settled).
    grant: bool = False
    no_grant: str = ""


def draft_name(prompt_id: str) -> str:
    """The Redis draft a form's chat answer collects its values in, one property at a time."""
    return f"form:{prompt_id}"


def form_answers(fields: list[forms.FormField], content: dict[str, Any]) -> list[Answer]:
    """One answer per property, as people see it (a choice's title, Yes/No), beside the typed content."""
    return [
        Answer(question=f.title, question_id=f.name, answer=forms.shown(f, content.get(f.name)))
        for f in fields
    ]


def form_reading(fields: list[forms.FormField], content: dict[str, Any]) -> Reading:
    """Answer with ``content`` once the one validator accepts it; else say what is wrong."""
    accepted, errors = forms.validate_content(fields, content)
    if errors:
        return Reading(ReplyAction.INVALID, notice=errors_notice(fields, errors), errors=tuple(errors))
    return Reading(ReplyAction.ANSWER, form_answers(fields, accepted), accepted)


def errors_notice(fields: list[forms.FormField], errors: list[forms.FieldError]) -> str:
    titles = {f.name: f.title for f in fields}
    parts = [f"{titles.get(error.property, error.property)} {error.problem}" for error in errors]
    return f"Not taken: {'; '.join(parts)}. The form is still open."


def _unmatched(prompt: Prompt, notice: str) -> Reading:
    """A reply that does not fit: a new message under seed 002's rule, else a notice."""
    if prompt.on_unmatched_reply is ReplyPolicy.NEW_MESSAGE:
        return Reading(ReplyAction.SUPERSEDE)
    return Reading(ReplyAction.INVALID, notice=notice)


def read_reply(
    prompt: Prompt,
    text: str,
    structured: Any = None,
    draft: dict[str, str] | None = None,
    *,
    decline: bool = False,
    note: str | None = None,
    arguments: dict[str, Any] | None = None,
    grant: bool = False,
) -> Reading:
    """What ``text`` (or structured answers) from someone allowed to answer does to the pending ``prompt``.

    ``draft`` is a form's values so far (a property at a time), as ``read_draft`` returns them.
    ``decline`` is a Decline control's press, which declines a form or a URL step. ``note`` and
    ``arguments`` are an approval control's words and edited arguments (a deny-with-reason or edit form);
    ``grant`` an "Approve for this session" control's approve (the exact call, for the rest of the run).
    """
    if decline and prompt.kind in (PromptKind.FORM, PromptKind.URL):
        return Reading(ReplyAction.DECLINE)
    if prompt.kind is PromptKind.FORM:
        return _read_form(prompt, text, structured, draft or {})
    if prompt.kind is PromptKind.URL:
        return _read_url(prompt, text, structured)
    if prompt.kind is PromptKind.APPROVAL:
        return _read_approval(prompt, text, structured, note, arguments, grant)
    if structured is not None and check_structured(prompt.questions, structured) is not None:
        return Reading(ReplyAction.ANSWER, map_reply(prompt.kind, prompt.questions, text, structured))
    if prompt.on_unmatched_reply is ReplyPolicy.NEW_MESSAGE and not _fits(prompt, text):
        return Reading(ReplyAction.SUPERSEDE)
    return Reading(ReplyAction.ANSWER, map_reply(prompt.kind, prompt.questions, text))


def _read_approval(
    prompt: Prompt,
    text: str,
    structured: Any,
    note: str | None,
    arguments: dict[str, Any] | None,
    grant: bool = False,
) -> Reading:
    """An approval's reply: a control's answer (with its note or edited arguments; ``grant``: an "Approve
    for this session" control), a typed edit, or typed words: approve tokens approve, anything else denies
    and its words become the note (seed 000)."""
    if arguments is not None:
        edited = _edited(prompt, arguments, note)
        if grant and edited.action is ReplyAction.ANSWER:
            return replace(edited, no_grant=notices.GRANT_WITH_EDITS)
        return edited
    if structured is not None and check_structured(prompt.questions, structured) is not None:
        answers = map_reply(prompt.kind, prompt.questions, text, structured)
        granted = grant and prompt.tool_call is not None and answers[0].answer == [APPROVE]
        return _with_grant(prompt, Reading(ReplyAction.ANSWER, answers, note=note, grant=granted))
    try:
        typed = typed_edit(prompt, text)
    except NotAnEdit as exc:
        return Reading(ReplyAction.INVALID, notice=notices.edit_not_taken(str(exc)))
    if typed is not None:
        return _edited(prompt, typed, note)
    if for_the_run(text):
        approve = map_reply(prompt.kind, prompt.questions, APPROVE)
        return _with_grant(prompt, Reading(ReplyAction.ANSWER, approve, grant=prompt.tool_call is not None))
    if prompt.on_unmatched_reply is ReplyPolicy.NEW_MESSAGE and not fits_approval(text):
        return Reading(ReplyAction.SUPERSEDE)
    answers = map_reply(prompt.kind, prompt.questions, text)
    if answers[0].answer == [DENY]:
        note = note if note is not None else text
    return Reading(ReplyAction.ANSWER, answers, note=note)


def _with_grant(prompt: Prompt, reading: Reading) -> Reading:
    """An approve asking for a grant on a prompt that needs several approvers is not taken (as over REST:
    a grant is one person's word): the person is told why, and the prompt stays open."""
    several = needs_several(prompt) if reading.grant else None
    if several is None:
        return reading
    return Reading(ReplyAction.INVALID, notice=notices.grant_refused(several))


def _edited(prompt: Prompt, arguments: dict[str, Any], note: str | None) -> Reading:
    """Approve with the edited call, once the tool's schema takes it; else say why, the prompt still open."""
    try:
        call = check_edit(prompt, arguments)
    except EditRefused as exc:
        # Each problem names the argument it is about, for a channel that shows it by that argument's input.
        errors = tuple(forms.FieldError(error.field, error.problem) for error in exc.errors)
        return Reading(ReplyAction.INVALID, notice=notices.edit_not_taken(exc.message), errors=errors)
    approve = structured_answers(prompt.questions, [[APPROVE]])
    return Reading(ReplyAction.ANSWER, approve, note=note, edited=call)


def for_the_run(text: str) -> bool:
    """Whether a reply to an approval approves it for the rest of the run ("always", "approve for this
    session"; a bare "always" denies, as any word the seed does not list): any case, any spacing."""
    return " ".join(text.split()).casefold() in FOR_THE_RUN


def _fits(prompt: Prompt, text: str) -> bool:
    if prompt.kind is PromptKind.APPROVAL:
        return fits_approval(text)
    if prompt.kind is PromptKind.ASK_USER_QUESTION:
        texts = per_question(prompt.questions, text)
        return all(
            fits_question(question, own) for question, own in zip(prompt.questions, texts, strict=True)
        )
    return True


def _read_url(prompt: Prompt, text: str, structured: Any) -> Reading:
    done = structured_answers(prompt.questions, [[DONE]])
    lists = check_structured(prompt.questions, structured) if structured is not None else None
    if lists is not None:
        given = [value.strip().casefold() for value in lists[0]]
        if given == [DONE]:
            return Reading(ReplyAction.ANSWER, done)
        return (
            Reading(ReplyAction.DECLINE)
            if len(given) == 1 and given[0] in DECLINE_TOKENS
            else Reading(ReplyAction.INVALID, notice=URL_NOTICE)
        )
    token = text.strip().casefold()
    if token == DONE:
        return Reading(ReplyAction.ANSWER, done)
    if token in DECLINE_TOKENS:
        return Reading(ReplyAction.DECLINE)
    return _unmatched(prompt, URL_NOTICE)


def read_draft(values: dict[str, str]) -> dict[str, Any]:
    """A form's draft as typed values (``None`` for an optional property skipped)."""
    decoded: dict[str, Any] = {}
    for name, raw in values.items():
        try:
            decoded[name] = json.loads(raw)
        except ValueError:
            continue
    return decoded


def _read_form(prompt: Prompt, text: str, structured: Any, draft: dict[str, str]) -> Reading:
    fields = prompt.form_fields()
    lists = check_structured(prompt.questions, structured) if structured is not None else None
    if lists is not None:
        return _structured_form(fields, lists)
    if text.strip().casefold() in FORM_DECLINE:  # as on a URL step; `name: decline` gives the value
        return Reading(ReplyAction.DECLINE)
    if len(fields) == 1:
        value, problem = forms.parse_text(fields[0], text)
        if problem is not None:
            return _unmatched(prompt, errors_notice(fields, [forms.FieldError(fields[0].name, problem)]))
        return form_reading(fields, {fields[0].name: value})
    so_far = read_draft(draft)
    given = _form_lines(fields, text) or _next_value(fields, so_far, text)
    if isinstance(given, list):
        return _unmatched(prompt, errors_notice(fields, given))
    merged = {**so_far, **given}
    asked = next_field(fields, merged)
    if asked is None:
        return form_reading(fields, {name: value for name, value in merged.items() if value is not None})
    draft_values = {name: json.dumps(value, ensure_ascii=False) for name, value in given.items()}
    return Reading(ReplyAction.STEP, draft=draft_values, notice=step_notice(fields, asked, merged))


def next_field(fields: list[forms.FormField], given: dict[str, Any]) -> int | None:
    """The field a form asks for next, in order: the first without a value, while any required field
    lacks one. None once every required field has a value: the form is complete, the optional fields
    not given left empty (one message per optional field to skip them would be a chore)."""
    if all(f.name in given for f in fields if f.required):
        return None
    return next(index for index, f in enumerate(fields) if f.name not in given)


def step_notice(fields: list[forms.FormField], index: int, given: dict[str, Any]) -> str:
    """What the chat asks next, a property at a time; asking for the last required field, which sends
    the form, it says how to fill the optional fields still empty too."""
    field = fields[index]
    skip = f" (or {SKIP})" if not field.required else ""
    notice = f"Next, reply with {forms.field_line(index + 1, field)}{skip}"
    after = {**given, field.name: None}
    if next_field(fields, after) is not None:
        return notice
    empty = [f for f in fields if f.name not in after]
    if not empty:
        return notice
    lines = "\n".join(f"{f.name}: …" for f in [field, *empty])
    names = notices.optional_names(empty)
    return f"{notice}\nThat sends the form. To fill {names} too, reply with a line each:\n{lines}"


def _form_lines(fields: list[forms.FormField], text: str) -> dict[str, Any] | list[forms.FieldError] | None:
    """``name: value`` lines parsed to values; a list of errors when any is invalid; None when not lines."""
    lines = forms.parse_lines(fields, text)
    if lines is None:
        return None
    by_name = {f.name: f for f in fields}
    values: dict[str, Any] = {}
    errors: list[forms.FieldError] = []
    for name, raw in lines.items():
        value, problem = forms.parse_text(by_name[name], raw)
        if problem is not None:
            errors.append(forms.FieldError(name, problem))
        values[name] = value
    return errors or values


def _next_value(
    fields: list[forms.FormField], so_far: dict[str, Any], text: str
) -> dict[str, Any] | list[forms.FieldError]:
    """The reply as the value of the field asked for next; ``skip`` passes an optional one."""
    at = next_field(fields, so_far)
    asked = fields[at] if at is not None else next((f for f in fields if f.name not in so_far), fields[0])
    if not asked.required and text.strip().casefold() == SKIP:
        return {asked.name: None}
    value, problem = forms.parse_text(asked, text)
    if problem is not None:
        return [forms.FieldError(asked.name, problem)]
    return {asked.name: value}


def _structured_form(fields: list[forms.FormField], lists: list[list[str]]) -> Reading:
    """A full set of shown answers (a control press, a submitted form): each turned back into its value."""
    content: dict[str, Any] = {}
    errors: list[forms.FieldError] = []
    for f, answer in zip(fields, lists, strict=True):
        value, problem = forms.value_from_answer(f, answer)
        if problem is not None:
            errors.append(forms.FieldError(f.name, problem))
        elif value is not None:
            content[f.name] = value
    if errors:
        return Reading(ReplyAction.INVALID, notice=errors_notice(fields, errors), errors=tuple(errors))
    return form_reading(fields, content)


__all__ = ["AFFIRMATIVE", "FOR_THE_RUN", "NEW_MESSAGE_REASON", "Reading", "ReplyAction", "read_reply"]
