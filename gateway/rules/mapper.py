"""The text-answer mapper of seed 000: a person's reply (text or structured answers) to answers.

Pure functions, no I/O. ``map_reply`` is the one entry point every answer path uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gateway.base.models import APPROVE, DENY, Answer, PromptKind, Question

AFFIRMATIVE = frozenset({"approve", "approved", "yes", "y", "ok", "allow", "1"})
# Seed 002: in new_message mode only these deny; anything neither affirmative nor negative is a new message.
NEGATIVE = frozenset({"deny", "denied", "no", "n", "reject", "2"})
_SEPARATORS = re.compile(r"[,\s]+")


def map_approval(text: str) -> list[str]:
    """Affirmative tokens approve; everything else denies (deny on uncertainty, deliberately)."""
    return [APPROVE] if text.strip().casefold() in AFFIRMATIVE else [DENY]


def _option_number(token: str, count: int) -> int | None:
    """The 1-based option a bare decimal number names, or None when it names none."""
    if not (token.isascii() and token.isdigit()):
        return None
    digits = token.lstrip("0")
    if len(digits) > len(str(count)):  # out of range, and int() refuses digit strings past 4300
        return None
    number = int(digits or "0")
    return number if 1 <= number <= count else None


def _label_match(text: str, labels: Sequence[str]) -> str | None:
    wanted = text.strip().casefold()
    return next((label for label in labels if label.casefold() == wanted), None)


def _numbered(token: str, labels: Sequence[str]) -> int | None:
    """The 1-based option a bare number names: a label reading exactly so, else the Nth option."""
    exact = next((index for index, label in enumerate(labels, start=1) if label == token), None)
    return exact if exact is not None else _option_number(token, len(labels))


def _picked(tokens: list[str], labels: Sequence[str]) -> list[str] | None:
    """The labels separated numbers select, in option order; None unless every token is such a number."""
    if not tokens or not all(token.isascii() and token.isdigit() for token in tokens):
        return None
    numbers = {_numbered(token, labels) for token in tokens}
    if None in numbers:
        return None
    return [label for index, label in enumerate(labels, start=1) if index in numbers]


def map_question(question: Question, text: str) -> list[str]:
    """Map text against one ask_user_question question (single-select, multi-select or free text).

    An exact label match wins over a position: options ``["2", "1"]`` read ``1`` as the label ``1``.
    """
    labels = question.labels
    if not labels:
        return [text]
    stripped = text.strip()
    label = _label_match(stripped, labels)
    if label is not None:
        return [label]
    if question.multi_select:
        if not stripped:
            return []
        picked = _picked(_tokens(stripped), labels)
        if picked is not None:
            return picked
    else:
        number = _option_number(stripped, len(labels))
        if number is not None:
            return [labels[number - 1]]
    return [text]


def fits_approval(text: str) -> bool:
    """Whether text is an approve or deny token (seed 002's "approve or deny")."""
    token = text.strip().casefold()
    return token in AFFIRMATIVE or token in NEGATIVE


def fits_question(question: Question, text: str) -> bool:
    """Whether text names options of ``question`` (by number or label); free-text questions take anything."""
    labels = question.labels
    if not labels:
        return True
    stripped = text.strip()
    if _label_match(stripped, labels) is not None:
        return True
    if question.multi_select:
        return _picked(_tokens(stripped), labels) is not None
    return _option_number(stripped, len(labels)) is not None


def _tokens(text: str) -> list[str]:
    return [token for token in _SEPARATORS.split(text) if token]


# ``1. staging``, ``2) none``: a space after the mark, so ``1.5`` stays a value.
_NUMBERED = re.compile(r"\s*(\d{1,2})[.)](?:\s+(.*))?")


def per_question(questions: Sequence[Question], text: str) -> list[str]:
    """The text each of several questions is answered with: a reply of one line per question (or of
    lines numbered ``1.``/``2)`` once each) gives each its own line; any other reply, one line among
    them, is the same text for every question (contract §2)."""
    count = len(questions)
    lines = [line for line in text.splitlines() if line.strip()]
    if count < 2 or len(lines) != count:
        return [text] * count
    numbered = [_NUMBERED.fullmatch(line) for line in lines]
    if all(numbered):
        by_number = {int(match.group(1)): (match.group(2) or "").strip() for match in numbered if match}
        if sorted(by_number) == list(range(1, count + 1)):
            return [by_number[number] for number in range(1, count + 1)]
    return [line.strip() for line in lines]


def map_text(kind: PromptKind, questions: Sequence[Question], text: str) -> list[list[str]]:
    """Seed 000's "Text answers" table: one list of answers per question, never raising."""
    if kind is PromptKind.APPROVAL:
        return [map_approval(text) for _ in questions]
    if kind is PromptKind.TEXT:
        return [[text] for _ in questions]
    texts = per_question(questions, text)
    return [map_question(question, own) for question, own in zip(questions, texts, strict=True)]


def check_structured(questions: Sequence[Question], entries: Any) -> list[list[str]] | None:
    """Structured ``metadata.answers``, checked not trusted: one entry per question, each a list.

    Entries name their question by ``question_id`` or ``question`` text. Returns the answers in
    question order, or None for a partial or malformed set (the caller then maps the text).
    """
    if not isinstance(entries, list) or len(entries) != len(questions):
        return None
    by_id = {question_id(question, index): index for index, question in enumerate(questions)}
    by_text = {question.question: index for index, question in enumerate(questions)}
    found: dict[int, list[str]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        given_id, text = entry.get("question_id"), entry.get("question")
        index = by_id.get(given_id) if isinstance(given_id, str) else None
        if index is None and isinstance(text, str):
            index = by_text.get(text)
        answer = entry.get("answer")
        if index is None or index in found or not isinstance(answer, list):
            return None
        if not all(isinstance(value, str) for value in answer):
            return None
        found[index] = list(answer)
    return [found[index] for index in range(len(questions))]


class Unanswered(StrEnum):
    """Why a question of a form of every question has no answer."""

    EMPTY = "empty"  # a free-text question left blank
    NONE = "none"  # an option list of one choice: no option picked and nothing typed
    BOTH = "both"  # an option list of one choice: an option picked and an answer typed


@dataclass(frozen=True, slots=True)
class FormAnswers:
    """A form of every question, read: one answer list per question, or why some have none. ``answers``
    is None also when the form does not fit the questions (an option out of range or picked twice, or
    several for one choice): that is refused, not shown as a problem."""

    answers: list[list[str]] | None
    unanswered: dict[int, Unanswered] = field(default_factory=dict)


def map_form(
    questions: Sequence[Question], picked: Sequence[Sequence[int]], typed: Sequence[str]
) -> FormAnswers:
    """Each question's options ``picked`` (by index) and the answer ``typed`` for it (on an option list,
    an answer of the person's own), as answer lists. A multi-select answers its options and the typed
    answer; one choice answers its option or the typed answer, not both; free text must not be blank."""
    answers: list[list[str]] = []
    unanswered: dict[int, Unanswered] = {}
    for index, (question, chosen, text) in enumerate(zip(questions, picked, typed, strict=True)):
        if len(set(chosen)) != len(chosen) or not all(
            0 <= number < len(question.options) for number in chosen
        ):
            return FormAnswers(None)
        if len(chosen) > 1 and not question.multi_select:
            return FormAnswers(None)
        labels = [label for number, label in enumerate(question.labels) if number in chosen]
        given = [text] if text.strip() else []
        if not question.options and not given:
            unanswered[index] = Unanswered.EMPTY
        elif question.multi_select:
            answers.append(labels + given)
        elif labels and given:
            unanswered[index] = Unanswered.BOTH
        elif not (labels or given):
            unanswered[index] = Unanswered.NONE
        else:
            answers.append(labels or given)
    return FormAnswers(None if unanswered else answers, unanswered)


def map_reply(
    kind: PromptKind, questions: Sequence[Question], text: str, structured: Any = None
) -> list[Answer]:
    """The answers a reply gives: structured answers when they check out, else the text mapped."""
    lists = check_structured(questions, structured) if structured is not None else None
    if lists is None:
        lists = map_text(kind, questions, text)
    return structured_answers(questions, lists)


def structured_answers(questions: Sequence[Question], lists: Sequence[list[str]]) -> list[Answer]:
    """One Answer per question, in order, from one answer list each: the full set the core takes."""
    return [
        Answer(question=question.question, question_id=question_id(question, index), answer=list(answer))
        for index, (question, answer) in enumerate(zip(questions, lists, strict=True))
    ]


def question_id(question: Question, index: int) -> str:
    """The question's id, or the ``q1``, ``q2``… it would have been assigned (0-based ``index``)."""
    return question.id or f"q{index + 1}"
