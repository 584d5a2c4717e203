"""What a person sends to answer a prompt by its id (seeds 002 and 003), and what the respond route answers.

The API serves these as its request and response bodies; the rules that act on them are the core's.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.base.models import MAX_NOTE_CHARS, MAX_TEXT_CHARS, Identity, Model, Resolution, check_identity
from gateway.rules.grants import Grant, GrantRequest

MAX_ANSWER_VALUES = 50


class StructuredAnswer(Model):
    """One question's answer in the §2 shape, naming the question by id or by its text."""

    question_id: str | None = Field(default=None, max_length=64)
    question: str | None = Field(default=None, max_length=2000)
    answer: list[str] = Field(max_length=MAX_ANSWER_VALUES)

    @model_validator(mode="after")
    def _names_a_question(self) -> Self:
        if self.question_id is None and self.question is None:
            raise ValueError("each answer names its question by question_id or question")
        return self


class InputAction(Model):
    """Seed 002: accept (with ``content`` by kind), decline or cancel, on behalf of ``from``."""

    action: Literal["accept", "decline", "cancel"]
    content: bool | str | list[StructuredAnswer] | dict[str, Any] | None = Field(
        default=None,
        description="approval: true/false (omitted = true); text: a string; ask_user_question: the "
        "structured answers list, or a string mapped as a text answer; form: the values by property "
        '(`{"name": "Ada", "age": 36}`); url: omitted, true or "done".',
    )
    from_: Identity | None = Field(default=None, alias="from", description="Who is answering.")
    answers: list[str] | list[StructuredAnswer] | None = Field(
        default=None,
        max_length=MAX_ANSWER_VALUES,
        description="The answer in the seed's shape, instead of content: an approval's [\"Approve\"] or "
        '["Deny"], a one-question prompt\'s list of values, or the structured answers list.',
    )
    note: str | None = Field(
        default=None,
        description=f"An approval's reason, given to the agent (cut to {MAX_NOTE_CHARS:,} characters).",
    )
    arguments: dict[str, Any] | None = Field(
        default=None,
        description="The call's arguments as edited (approves an editable approval with exactly these).",
    )

    @model_validator(mode="after")
    def _content_or_answers(self) -> Self:
        if self.content is not None and self.answers is not None:
            raise ValueError("send content or answers, not both")
        return self

    grant: GrantRequest | None = Field(
        default=None,
        description='With an approve: `{"scope": "run", "match": {"name", "arguments"}}` lets later calls '
        "of the run that match through without asking (docs/api.md#grants-approve-for-this-session).",
    )

    @field_validator("content")
    @classmethod
    def _short_enough(cls, value: object) -> object:
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            raise ValueError(f"at most {MAX_TEXT_CHARS} characters")
        return value

    @field_validator("from_")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return None if value is None else check_identity(value)


class RespondAnswer(BaseModel):
    """Seed 003's AgentUserInputAnswer."""

    model_config = ConfigDict(extra="forbid")

    questionId: str = Field(min_length=1, max_length=64)
    selected: list[str] = Field(default_factory=list, max_length=MAX_ANSWER_VALUES)
    otherText: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)


class RespondBody(BaseModel):
    """Exactly one of ``answers`` or ``skip: true``."""

    model_config = ConfigDict(extra="forbid")

    answers: list[RespondAnswer] | None = Field(default=None, max_length=10)
    skip: Literal[True] | None = None
    note: str | None = None  # cut to MAX_NOTE_CHARS where it is kept (verdicts.clean_note)
    arguments: dict[str, Any] | None = None
    grant: GrantRequest | None = Field(
        default=None,
        description="With Approve selected: as on POST /v1/agents/{agent}/inputs/{prompt_id} "
        "(docs/api.md#grants-approve-for-this-session).",
    )

    @field_validator("skip", mode="before")
    @classmethod
    def _skip_is_a_boolean(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, bool):
            raise ValueError("skip must be true (a JSON boolean)")
        return value

    @model_validator(mode="after")
    def _answers_xor_skip(self) -> Self:
        if (self.answers is None) == (self.skip is None):
            raise ValueError("send exactly one of answers or skip: true")
        return self


class GrantNotMade(BaseModel):
    """Why an approve that asked for a grant settled its prompt without one (``full``, ``run_ended``)."""

    reason: str
    message: str


class RespondResult(BaseModel):
    requestId: str
    # "voted": an approval recorded where more approvers are needed; the request is still pending.
    status: Resolution | Literal["voted"]
    turnId: str | None = None
    # Only with ``grant`` on the request: the grant made, or why none was.
    grant: Grant | None = None
    grant_not_made: GrantNotMade | None = None

    def public(self) -> dict[str, Any]:
        """The JSON answered: ``grant`` and ``grant_not_made`` only when the request carried a grant."""
        unasked = {name for name in ("grant", "grant_not_made") if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=unasked)


class ClaimBody(Model):
    """Claim or release a prompt (contract §11): an operator token names who with ``from``; a session
    claims as its own person."""

    from_: Identity | None = Field(default=None, alias="from", description="Who claims (operator tokens).")

    @field_validator("from_")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return None if value is None else check_identity(value)
