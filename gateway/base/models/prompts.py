"""A prompt and what it is made of: its kind and state, questions and options, the tool call it asks about,
answers and votes, and its escalation."""

from __future__ import annotations

import hashlib
import itertools
import json
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from gateway.base import forms
from gateway.base.ids import channel_examples, is_thread_or_channel, thread_forms
from gateway.base.models.base import (
    APPROVE,
    MAX_DESCRIPTION_CHARS,
    MAX_ESCALATION_STEPS,
    MAX_ESCALATION_TARGETS,
    MAX_EXPIRES_IN,
    MAX_LABEL_CHARS,
    MAX_OPTIONS,
    MAX_QUESTION_CHARS,
    Model,
    from_store,
    has_visible_character,
)
from gateway.base.models.people import check_approver, names_people
from gateway.base.printable import printable


class PromptKind(StrEnum):
    APPROVAL = "approval"
    ASK_USER_QUESTION = "ask_user_question"
    TEXT = "text"
    FORM = "form"
    URL = "url"


class ReplyPolicy(StrEnum):
    """What a chat reply that does not fit the open prompt does (``human_input.on_unmatched_reply``)."""

    ANSWER = "answer"  # seed 000: every reply is mapped to an answer (deny on uncertainty, Other verbatim)
    NEW_MESSAGE = "new_message"  # seed 002: it supersedes the prompt and runs as the next message


class PromptState(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    CANCELLED = "cancelled"


class ReasonCode(StrEnum):
    RUN_ENDED = "run_ended"
    SUPERSEDED = "superseded"
    DECLINED = "declined"
    EXPIRED = "expired"
    NEW_MESSAGE = "new_message"
    ABORTED = "aborted"
    CANCELLED = "cancelled"


# Where an escalation step posts a prompt's copy (a thread, or a channel where a thread is started), or
# whom it reaches (person:<id>, group:<name>).
Target = Annotated[
    str,
    Field(
        min_length=3,
        max_length=200,
        pattern=r"^[a-z][a-z0-9_-]{0,31}:\S+$",
        description="<platform>:<thread> to post into, <platform>:<channel> to start a thread in, or "
        "person:<id> / group:<name> to reach those people",
    ),
]


class EscalationStep(Model):
    """One step of a prompt's escalation: ``after_seconds`` from its raise, remind in its thread and/or
    post a copy of it to the ``to`` threads or channels (answerable there too)."""

    after_seconds: int = Field(ge=1, le=MAX_EXPIRES_IN, strict=True)
    remind: StrictBool = False
    to: list[Target] = Field(default_factory=list, max_length=MAX_ESCALATION_TARGETS)

    @field_validator("to")
    @classmethod
    def _distinct(cls, targets: list[str]) -> list[str]:
        if len(set(targets)) != len(targets):
            raise ValueError("each target is named once")
        return targets

    @model_validator(mode="after")
    def _does_something(self) -> Self:
        if not self.remind and not self.to:
            raise ValueError("a step reminds (remind: true), escalates (to: [...]), or both")
        return self


def check_escalation(steps: list[EscalationStep], info: ValidationInfo) -> list[EscalationStep]:
    """Steps later one after another; each target a channel of an installed platform (unless stored)."""
    for earlier, later in itertools.pairwise(steps):
        if later.after_seconds <= earlier.after_seconds:
            raise ValueError("steps come in order: each after_seconds larger than the one before")
    if not from_store(info):
        for step in steps:
            for target in step.to:
                if names_people(target):
                    check_approver(target)
                elif not is_thread_or_channel(target):
                    raise ValueError(
                        f"{target!r} must be a thread ({thread_forms()}) or a channel "
                        f"({channel_examples()}) of an installed platform, person:<id> or group:<name>"
                    )
    return steps


Escalation = Annotated[
    list[EscalationStep],
    Field(max_length=MAX_ESCALATION_STEPS),
    AfterValidator(check_escalation),
]


class EscalationTaken(Model):
    """A step of a prompt's escalation that ran: when, which (its index), what it did and where its
    copies went (``threads``: the thread each target became)."""

    at: datetime
    step: int
    remind: bool | None = None
    to: list[str] | None = None
    threads: list[str] | None = None

    @model_serializer(mode="wrap")
    def _without_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """What a step did not do is left out (``remind``, ``to``, ``threads``), not written as null."""
        return {key: value for key, value in handler(self).items() if value is not None}


class Option(Model):
    label: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)

    @field_validator("label")
    @classmethod
    def _label_not_blank(cls, value: str) -> str:
        if not has_visible_character(value):
            raise ValueError("must have a visible character (not only spaces or invisible marks)")
        return value.strip()


class Question(Model):
    id: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    header: str | None = Field(default=None, max_length=100)
    multi_select: StrictBool = Field(default=False, alias="multiSelect")
    options: list[Option] = Field(default_factory=list, max_length=MAX_OPTIONS)

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("options")
    @classmethod
    def _labels_unique(cls, options: list[Option]) -> list[Option]:
        seen: set[str] = set()
        for option in options:
            key = option.label.casefold()
            if key in seen:
                raise ValueError(
                    f"option labels must be unique (case-insensitively); {option.label!r} repeats"
                )
            seen.add(key)
        return options

    @model_validator(mode="after")
    def _multi_select_has_options(self) -> Self:
        if self.multi_select and not self.options:
            raise ValueError("multiSelect needs options")
        return self

    @property
    def labels(self) -> list[str]:
        return [option.label for option in self.options]


class ToolCall(Model):
    name: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict)

    def digest(self) -> str:
        """sha256 of the call as canonical JSON (sorted keys, no spaces): what a decision is bound to."""
        return call_digest(self.name, self.arguments)


def call_digest(name: str, arguments: Any) -> str:
    """The digest of a tool call; equal digests mean the same tool with the same input, byte for byte."""
    canonical = json.dumps(
        {"name": name, "arguments": arguments}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    # surrogatepass: a lone surrogate escaped in the JSON the call came in is still a digestible call.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ToolAnnotations(Model):
    """An MCP tool's annotations (hints about what it does), as its server declares them.

    Only JSON booleans count; hints this version does not know are ignored (they never make a call safe).
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True, serialize_by_alias=True)

    read_only_hint: StrictBool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: StrictBool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: StrictBool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: StrictBool | None = Field(default=None, alias="openWorldHint")


class Answer(Model):
    """One question's answer as the agent receives it: always a list."""

    question: str
    question_id: str
    answer: list[str]

    @field_validator("answer")
    @classmethod
    def _printable(cls, value: list[str]) -> list[str]:
        # A free-text answer reaches an agent's terminal: no control characters or bidi overrides.
        return [printable(item) for item in value]


class Vote(Model):
    """One person's decision on an approval that needs several (``approvals`` > 1)."""

    by: str
    answer: Literal["Approve", "Deny"]
    at: datetime
    note: str | None = None
    # False for the run's starter on a prompt whose rule does not count the starter's approval.
    counted: bool = True
    # The directory person ``by`` belongs to (null: none); two identities of one person are one vote.
    person: str | None = None
    # The operator token's name when an operator answered with ``from`` (asserted, not signed in).
    asserted_by: str | None = None


class Resolution(StrEnum):
    HOT = "resolved_hot"
    PARKED = "resolved_parked"


_LEFT_OUT_WHEN_NONE = (
    "granted",
    "message",
    "requested_schema",
    "url",
    "content",
    "thread_url",
    "input_schema",
    "escalation",
    "escalations",
    "person",
    "asserted_by",
)


class Prompt(Model):
    """A prompt as stored and served: the request plus where it lives and how it settled."""

    prompt_id: str
    run_id: str
    thread_id: str
    agent: str
    kind: PromptKind
    prompt_state: PromptState = PromptState.PENDING
    message: str | None = None
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    questions: list[Question]
    tool_call: ToolCall | None = None
    created_at: datetime
    expires_at: datetime
    started_by: str | None = None
    # The agent's reply policy when the prompt was asked; internal, like started_by.
    on_unmatched_reply: ReplyPolicy = ReplyPolicy.ANSWER
    answers: list[Answer] | None = None
    content: dict[str, Any] | None = None
    answered_by: str | None = None
    # Who ``answered_by`` is in the directory, and the operator token that asserted it (``from``).
    person: str | None = None
    asserted_by: str | None = None
    # Who holds the prompt (``person:<id>`` or an identity) and until when: while the claim lasts only
    # they answer. Null when nobody does or the claim lapsed (contract §11).
    claimed_by: str | None = None
    claimed_until: datetime | None = None
    resolution: Resolution | None = None
    turn_id: str | None = None
    reason: str | None = None
    reason_code: ReasonCode | None = None
    settled_at: datetime | None = None
    # An approval's decision (contract §9): the person's words, what was allowed (``tool_call`` unless
    # edited), and, for one needing several approvers, every vote so far.
    note: str | None = None
    editable: bool = False
    input_schema: dict[str, Any] | None = None
    approvals: int = 1
    starter_counts: bool = True
    approved_call: ToolCall | None = None
    votes: list[Vote] = Field(default_factory=list)
    # The pattern an approve's "Approve for this session" let through for the rest of the run (a grant's
    # ``match``), recorded with the answer that made the grant.
    granted: ToolCall | None = None
    # Reminders and copies planned when it was raised, and the steps taken so far (kept beside the record).
    escalation: list[EscalationStep] | None = None
    escalations: list[EscalationTaken] | None = None
    # Where a person opens the thread (a chat page's URL, a platform permalink), when its channel
    # can say: served with the prompt, never stored.
    thread_url: str | None = None

    @property
    def pending(self) -> bool:
        return self.prompt_state is PromptState.PENDING

    @property
    def copy_threads(self) -> list[str]:
        """The threads its escalation posted copies of it in: it is answered there too."""
        return [thread for taken in self.escalations or [] for thread in taken.threads or []]

    def form_fields(self) -> list[forms.FormField]:
        """A form's fields (empty for other kinds)."""
        if self.kind is not PromptKind.FORM or self.requested_schema is None:
            return []
        return forms.check_schema(self.requested_schema)

    @property
    def approvals_so_far(self) -> list[Vote]:
        """The approving votes that count toward ``approvals``."""
        return [vote for vote in self.votes if vote.answer == APPROVE and vote.counted]

    def _left_out(self) -> set[str]:
        """Fields the contract's JSON leaves out: internal ones, empty optional ones, an approval's
        decision fields on other kinds, and how it settled while pending (answers xor reason)."""
        left_out = {"started_by", "on_unmatched_reply"}
        left_out |= {key for key in _LEFT_OUT_WHEN_NONE if getattr(self, key) is None}
        if self.kind is not PromptKind.APPROVAL:
            left_out |= {"note", "editable", "approvals", "starter_counts", "approved_call", "votes"}
        if self.prompt_state is PromptState.ANSWERED:
            left_out |= {"reason", "reason_code"}
        else:
            left_out |= {"answers", "content", "answered_by", "resolution", "turn_id", "approved_call"}
            if self.prompt_state is PromptState.PENDING:
                left_out |= {"reason", "reason_code", "settled_at"}
        return left_out

    def public(self) -> dict[str, Any]:
        """The contract's JSON: answered carries answers and never reason; cancelled the reverse."""
        return self.model_dump(mode="json", exclude=self._left_out())

    def public_json(self) -> str:
        """``public()`` as JSON text, serialised in one step (the feeds carry it as text)."""
        return self.model_dump_json(exclude=self._left_out())
