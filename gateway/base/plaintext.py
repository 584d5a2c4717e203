"""How a prompt reads as plain text (its questions, or its form or link): pure functions beneath the
models, which size-check it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from gateway.base import forms


class _Option(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def description(self) -> str | None: ...


class _Question(Protocol):
    @property
    def question(self) -> str: ...

    @property
    def options(self) -> Sequence[_Option]: ...


def question_text(question: _Question) -> str:
    """The question, then its options numbered ``  N. label — description``."""
    lines = [question.question]
    for number, option in enumerate(question.options, start=1):
        suffix = f" — {option.description}" if option.description else ""
        lines.append(f"  {number}. {option.label}{suffix}")
    return "\n".join(lines)


def prompt_text(questions: Iterable[_Question]) -> str:
    """The content of a pending_prompt: the questions and nothing else (no header, no instructions)."""
    return "\n\n".join(question_text(question) for question in questions)


def form_or_url_text(kind: str, message: str, schema: dict[str, Any] | None, url: str | None) -> str:
    """A form (the message, then each field numbered with its type, constraints and options) or a URL
    step (the message, then the link) as text. ``kind`` is the prompt's kind (``form`` or ``url``)."""
    if kind == "url":
        return f"{message}\n{url}"
    return forms.form_text(message, forms.check_schema(schema))
