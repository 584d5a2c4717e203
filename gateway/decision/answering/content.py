"""A person's answer checked against the prompt it answers, by kind: the text or structured answers an
accept carries, the seed's shapes, a form's typed content, seed 003's answers per question. Pure: a
problem is a 400 VALIDATION_FAILED naming what to fix."""

from __future__ import annotations

from typing import Any

from gateway.base import forms
from gateway.base.errors import validation_failed
from gateway.base.models import APPROVE, DENY, Answer, Prompt, PromptKind, Question
from gateway.decision.answering.bodies import InputAction, RespondAnswer, StructuredAnswer
from gateway.rules.mapper import check_structured
from gateway.rules.replies import DONE, form_answers


def form_content(
    fields: list[forms.FormField], content: Any, key: str = "property", *, by_position: bool = False
) -> tuple[list[Answer], dict[str, Any]]:
    """A form's accepted content (typed values by property, or shown answers by question), checked by
    the one form validator: answers and typed content, or 400 VALIDATION_FAILED, one error per property.

    ``by_position``: the answers were typed against the numbered form's text, so a bare number may pick
    a choice by its position (after titles and values).
    """
    errors: list[forms.FieldError] = []
    if isinstance(content, list):
        by_name = {field.name: field for field in fields}
        typed: dict[str, Any] = {}
        for entry in content:
            name = entry.get("question_id") or next(
                (f.name for f in fields if f.title == entry.get("question")), None
            )
            field = by_name.get(name or "")
            if field is None:
                errors.append(
                    forms.FieldError(str(name or entry.get("question")), "is not a field of this form")
                )
                continue
            answer = list(entry.get("answer") or [])
            value, problem = forms.value_from_answer(field, answer, by_position=by_position)
            if problem is not None:
                errors.append(forms.FieldError(field.name, problem))
            elif value is not None:
                typed[field.name] = value
        content = typed
    accepted, more = forms.validate_content(fields, content)
    named = {error.property for error in errors}
    errors += [error for error in more if error.property not in named]  # one error per property
    if errors:
        problems = "; ".join(f"{error.property} {error.problem}" for error in errors)
        raise validation_failed(
            f"The form's content is invalid: {problems}.",
            [{key: error.property, "problem": error.problem} for error in errors],
        )
    return form_answers(fields, accepted), accepted


def content_answers(prompt: Prompt, action: InputAction) -> tuple[str, list[dict[str, Any]] | None]:
    """The text or structured answers an accept (or an approval's decline) carries, checked by kind."""
    content = action.content
    if prompt.kind is PromptKind.URL:
        if content not in (None, True) and not (
            isinstance(content, str) and content.strip().casefold() == DONE
        ):
            raise validation_failed('A URL step is accepted with content omitted, true or "done".')
        return "", [{"question_id": "q1", "answer": [DONE]}]
    if prompt.kind is PromptKind.APPROVAL:
        if action.action == "decline":
            approve = False
        elif content is None or isinstance(content, bool):
            approve = content is not False
        else:
            raise validation_failed("An approval's content is true (approve) or false (deny), or omitted.")
        question = prompt.questions[0]
        return "", [{"question_id": question.id, "answer": [APPROVE if approve else DENY]}]
    if prompt.kind is PromptKind.TEXT:
        if not isinstance(content, str):
            raise validation_failed("A text prompt's content is the answer as a string.")
        return content, None
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        entries = [entry.model_dump(exclude_none=True) for entry in content]
        if check_structured(prompt.questions, entries) is None:
            raise validation_failed(
                "The answers must have one entry per question, each naming its question by question_id "
                "or question text, with answer a list of strings.",
                [{"questions": [question.id for question in prompt.questions]}],
            )
        return "", entries
    raise validation_failed("This prompt's content is a list of structured answers, or a string.")


def seed_answers(prompt: Prompt, answers: list[str] | list[StructuredAnswer]) -> Any:
    """``answers`` in the seed's shape as the ``content`` of the prompt's kind: an approval's
    ``["Approve"]``/``["Deny"]`` its boolean, a one-question prompt's values its structured answer."""
    if not answers or not isinstance(answers[0], str):
        return answers
    values = [value for value in answers if isinstance(value, str)]
    if prompt.kind is PromptKind.APPROVAL:
        picked = [value.strip().casefold() for value in values]
        if picked not in (["approve"], ["deny"]):
            raise validation_failed('An approval\'s answers are ["Approve"] or ["Deny"].')
        return picked == ["approve"]
    if len(prompt.questions) != 1:
        raise validation_failed(
            "This prompt asks several questions: send answers as the structured list, one per question."
        )
    return [StructuredAnswer(question_id=prompt.questions[0].id, answer=values)]


def approves(action: InputAction) -> bool:
    if action.action != "accept":
        return False
    if action.answers is not None:
        picked = [value.strip().casefold() for value in action.answers if isinstance(value, str)]
        return picked == ["approve"]
    return action.content is None or action.content is True


def _one_answer(question: Question, kind: PromptKind, entry: RespondAnswer) -> tuple[list[str], list[str]]:
    """The answer list for one question, and the problems found with it."""
    problems: list[str] = []
    by_fold = {label.casefold(): label for label in question.labels}
    chosen: list[str] = []
    for value in entry.selected:
        label = by_fold.get(value.casefold())
        if label is None:
            problems.append(f"{value!r} is not one of the options {question.labels}")
        elif label in chosen:
            problems.append(f"{label!r} is selected twice")
        else:
            chosen.append(label)
    other = entry.otherText
    if not question.options:
        if entry.selected:
            problems.append("this question has no options to select; answer with otherText")
        if other is None:
            problems.append("answer this free-text question with otherText")
        return ([other] if other is not None else []), problems
    if other is not None and kind is PromptKind.APPROVAL:
        problems.append("an approval is answered by selecting Approve or Deny, not with otherText")
    answer = chosen + ([other] if other is not None and other != "" else [])
    if not question.multi_select and len(answer) != 1:
        problems.append("select exactly one option, or give otherText")
    return answer, problems


def respond_answers(prompt: Prompt, entries: list[RespondAnswer]) -> list[Answer]:
    """Seed 003's answers checked against the pending questions: each question exactly once."""
    errors: list[dict[str, Any]] = []
    by_id = {question.id: question for question in prompt.questions}
    given: dict[str, RespondAnswer] = {}
    for entry in entries:
        if entry.questionId not in by_id:
            errors.append({"questionId": entry.questionId, "problem": "no such question in this prompt"})
        elif entry.questionId in given:
            errors.append({"questionId": entry.questionId, "problem": "answered twice"})
        else:
            given[entry.questionId] = entry
    for question_id in by_id:
        if question_id not in given:
            errors.append({"questionId": question_id, "problem": "not answered"})
    answers: list[Answer] = []
    for question in prompt.questions:
        found = given.get(question.id or "")
        if found is None:
            continue
        answer, problems = _one_answer(question, prompt.kind, found)
        errors.extend({"questionId": question.id, "problem": problem} for problem in problems)
        answers.append(Answer(question=question.question, question_id=question.id or "", answer=answer))
    if errors:
        raise validation_failed("The answers do not match the pending questions.", errors)
    return answers


def respond_content(
    prompt: Prompt, entries: list[RespondAnswer]
) -> tuple[list[Answer], dict[str, Any] | None]:
    """Seed 003's answers by kind: a form's by property (``questionId``), checked by the form validator."""
    if prompt.kind is PromptKind.FORM:
        fields = prompt.form_fields()
        names = {field.name for field in fields}
        unknown = [
            {"questionId": e.questionId, "problem": "no such field in this form"}
            for e in entries
            if e.questionId not in names
        ]
        if unknown:
            raise validation_failed("The answers do not match the form's fields.", unknown)
        shown = [
            {"question_id": e.questionId, "answer": e.selected + ([e.otherText] if e.otherText else [])}
            for e in entries
        ]
        return form_content(fields, shown, key="questionId")
    answers = respond_answers(prompt, entries)
    if prompt.kind is PromptKind.URL:
        if [value.strip().casefold() for value in answers[0].answer] != [DONE]:
            raise validation_failed(
                'A URL step is answered with otherText "done" once the step is finished, or skipped.',
                [{"questionId": "q1", "problem": 'answer with otherText "done"'}],
            )
        answers = [answers[0].model_copy(update={"answer": [DONE]})]
    return answers, None
