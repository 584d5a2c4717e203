"""What an agent sends to raise a prompt or start a run, checked as the contract says."""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator

from gateway.base import call_schema, forms
from gateway.base.models.base import (
    APPROVE,
    DENY,
    MAX_APPROVALS,
    MAX_EXPIRES_IN,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    MAX_TEXT_CHARS,
    MAX_URL_CHARS,
    Identity,
    Model,
    check_identity,
)
from gateway.base.models.prompts import Escalation, Option, PromptKind, Question, ToolCall
from gateway.base.plaintext import form_or_url_text, prompt_text
from gateway.base.weburl import UrlError, parse_web_url


class PromptRequest(Model):
    """What an agent sends to raise a prompt. Validation follows seed 000 and the contract."""

    kind: PromptKind
    questions: list[Question] | None = Field(default=None, min_length=1, max_length=MAX_QUESTIONS)
    tool_call: ToolCall | None = None
    expires_in_seconds: int | None = Field(default=None, ge=1, le=MAX_EXPIRES_IN, strict=True)
    message: str | None = Field(default=None, min_length=1, max_length=MAX_QUESTION_CHARS)
    requested_schema: dict[str, Any] | None = None
    url: str | None = Field(default=None, min_length=1, max_length=MAX_URL_CHARS)
    # An approval's decision (contract §9): may the person edit the call, against which schema, and how
    # many distinct people approve it (the run's starter counting or not).
    editable: StrictBool = False
    input_schema: dict[str, Any] | None = None
    approvals: int = Field(default=1, ge=1, le=MAX_APPROVALS, strict=True)
    starter_counts: StrictBool = True
    # None: the agent definition's (human_input.escalation); []: none for this prompt.
    escalation: Escalation | None = None

    # Field validators rather than one model validator, so each error's loc names the field at fault.
    @field_validator("questions")
    @classmethod
    def _questions_fit_kind(
        cls, questions: list[Question] | None, info: ValidationInfo
    ) -> list[Question] | None:
        """The kind's shape (seed 000), unique ids and texts, ids ``q1``, ``q2``… filled in by position."""
        kind = info.data.get("kind")
        if questions is None:
            return None
        if kind in (PromptKind.FORM, PromptKind.URL):
            raise ValueError(f"a {kind.value} prompt's questions are derived; leave questions out")
        if kind is PromptKind.APPROVAL:
            if len(questions) != 1:
                raise ValueError("an approval has exactly one question")
            question = questions[0]
            if not question.options:
                question.options = [Option(label=APPROVE), Option(label=DENY)]
            elif question.labels != [APPROVE, DENY]:
                raise ValueError("an approval's options are exactly Approve, Deny")
            if question.multi_select:
                raise ValueError("an approval is not multiSelect")
        elif kind is PromptKind.TEXT:
            if len(questions) != 1:
                raise ValueError("a text prompt has exactly one question")
            if questions[0].options:
                raise ValueError("a text prompt has no options")
        ids: set[str] = set()
        texts: set[str] = set()
        for index, question in enumerate(questions, start=1):
            if question.id is None:
                question.id = f"q{index}"
            if question.id in ids:
                raise ValueError(f"question ids must be unique; {question.id!r} repeats")
            if question.question in texts:
                raise ValueError("question texts must be unique, since answers may name them")
            ids.add(question.id)
            texts.add(question.question)
        # Refused now, a prompt too long to post never reaches the store only to fail in the chat.
        size = len(prompt_text(questions))
        if size > MAX_TEXT_CHARS:
            raise ValueError(
                f"the questions and their options come to {size} characters once numbered; "
                f"at most {MAX_TEXT_CHARS} fit in one chat message"
            )
        return questions

    @field_validator("tool_call")
    @classmethod
    def _tool_call_on_approvals(cls, tool_call: ToolCall | None, info: ValidationInfo) -> ToolCall | None:
        kind = info.data.get("kind")
        if tool_call is not None and kind is not None and kind is not PromptKind.APPROVAL:
            raise ValueError("tool_call belongs to approvals only")
        return tool_call

    @field_validator("requested_schema")
    @classmethod
    def _flat_form(cls, schema: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        if schema is not None and info.data.get("kind") is not PromptKind.FORM:
            raise ValueError("requested_schema belongs to forms only")
        if schema is not None:
            forms.check_schema(schema)
        return schema

    @field_validator("url")
    @classmethod
    def _url_step(cls, url: str | None, info: ValidationInfo) -> str | None:
        if url is not None and info.data.get("kind") is not PromptKind.URL:
            raise ValueError("url belongs to url prompts only")
        if url is not None:
            check_step_url(url)
        return url

    @field_validator("input_schema")
    @classmethod
    def _tool_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            call_schema.check(schema)
        return schema

    @model_validator(mode="after")
    def _decision_on_approvals(self) -> Self:
        """editable, input_schema and approvals belong to approvals; edits need a call to edit."""
        if self.kind is not PromptKind.APPROVAL:
            for name in ("editable", "input_schema", "approvals", "starter_counts"):
                if name in self.model_fields_set:
                    raise ValueError(f"{name} belongs to approvals only")
        elif (self.editable or self.input_schema is not None) and self.tool_call is None:
            raise ValueError("editable and input_schema need the tool_call a person would edit")
        elif self.editable and self.approvals > 1:
            raise ValueError(
                "an approval needing several approvers is not editable: each would approve a call"
            )
        return self

    @model_validator(mode="after")
    def _kind_complete(self) -> Self:
        """Forms and URL steps name their message and derive their questions; other kinds ask questions."""
        if self.kind in (PromptKind.FORM, PromptKind.URL):
            if self.message is None:
                raise ValueError(f"a {self.kind.value} prompt needs a message")
            if self.kind is PromptKind.FORM:
                if self.requested_schema is None:
                    raise ValueError("a form needs requested_schema")
                self.questions = form_questions(forms.check_schema(self.requested_schema))
            else:
                if self.url is None:
                    raise ValueError("a url prompt needs a url")
                self.questions = [Question(id="q1", question=self.message)]
            size = len(form_or_url_text(self.kind, self.message, self.requested_schema, self.url))
            if size > MAX_TEXT_CHARS:
                raise ValueError(f"the prompt comes to {size} characters; at most {MAX_TEXT_CHARS} fit")
        elif self.questions is None:
            raise ValueError("questions is required")
        elif self.message is not None:
            raise ValueError("message belongs to forms and url prompts; put the text in questions")
        return self


def check_step_url(url: str) -> str:
    """A URL step's link: https, or http to this machine (a local setup page); nothing else.

    The host is the one a browser opens (``weburl``), so ``http://evil.example\\@127.0.0.1/`` is refused.
    """
    rule = "url must be https, or http to a loopback host (localhost, 127.0.0.1, ::1)"
    try:
        parsed = parse_web_url(url)
    except UrlError as exc:
        raise ValueError(f"{rule}: {exc}") from None
    if parsed.scheme == "http" and not parsed.loopback:
        raise ValueError(f"{rule}: {parsed.host} is not this machine")
    return url


def form_questions(fields: list[forms.FormField]) -> list[Question]:
    """One question per property: id the property name, text its title, options for choices and yes/no."""
    return [
        Question(
            id=field.name,
            question=field.title,
            multi_select=field.type == "array",
            options=[Option(label=label) for label in field.labels],
        )
        for field in fields
    ]


class RunRequest(Model):
    thread_id: str = Field(min_length=1, max_length=200)
    agent: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    started_by: Identity | None = None

    @field_validator("started_by")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return None if value is None else check_identity(value)
