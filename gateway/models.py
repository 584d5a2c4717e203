"""The objects of the contract: prompts and their questions, answers, thread items, runs, agents."""

from __future__ import annotations

import hashlib
import itertools
import json
import unicodedata
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from gateway import call_schema, forms
from gateway.ids import (
    channel_examples,
    is_channel_claim,
    is_identity,
    is_thread_or_channel,
    person_examples,
    thread_forms,
)
from gateway.plaintext import form_or_url_text, prompt_text
from gateway.printable import printable
from gateway.weburl import UrlError, parse_web_url

MAX_QUESTIONS = 4
MAX_OPTIONS = 25
MAX_QUESTION_CHARS = 2000
MAX_LABEL_CHARS = 100
MAX_DESCRIPTION_CHARS = 300
MAX_TEXT_CHARS = 40_000
MAX_URL_CHARS = 2000
MAX_APPROVALS = 10
MAX_NOTE_CHARS = 2000
DEFAULT_EXPIRES_IN = 7 * 24 * 3600
MAX_EXPIRES_IN = 30 * 24 * 3600
MAX_ESCALATION_STEPS = 5
MAX_ESCALATION_TARGETS = 10
APPROVE, DENY = "Approve", "Deny"


def utcnow() -> datetime:
    return datetime.now(UTC)


# Characters that draw nothing on their own although Unicode files them as letters or symbols.
_BLANK_LOOKALIKES = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me", "Mc"})


def has_visible_character(value: str) -> bool:
    """True when ``value`` draws something: not only spaces, controls, format marks or blank look-alikes."""
    return any(
        char not in _BLANK_LOOKALIKES and unicodedata.category(char) not in _INVISIBLE_CATEGORIES
        for char in value
    )


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(ms: int | str) -> datetime:
    return datetime.fromtimestamp(int(ms) / 1000, UTC)


class Model(BaseModel):
    """Base: unknown fields refused, wire names (``multiSelect``) used both ways."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)


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


Identity = Annotated[str, Field(min_length=3, max_length=160)]


# Validation context for what the store itself wrote: an approver or a claim of a platform that is no
# longer installed was valid when written and is kept as it is (it matches nobody), never a 5xx on read.
STORED = {"stored": True}


def _stored(info: ValidationInfo | None) -> bool:
    return info is not None and isinstance(info.context, dict) and bool(info.context.get("stored"))


def check_channel_claim(value: str, info: ValidationInfo) -> str:
    if _stored(info):
        return value
    if not is_channel_claim(value):
        raise ValueError(f"must be a channel of an installed platform, such as {channel_examples()}")
    return value


Channel = Annotated[
    str,
    Field(
        min_length=3,
        max_length=200,
        pattern=r"^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_.:-]+$",
        description="<platform>:<channel>, as the installed platform spells it",
    ),
    AfterValidator(check_channel_claim),
]


# Where an escalation step posts a prompt's copy: a thread, or a channel where a thread is started.
Target = Annotated[
    str,
    Field(
        min_length=3,
        max_length=200,
        pattern=r"^[a-z][a-z0-9_-]{0,31}:\S+$",
        description="<platform>:<thread> to post into, or <platform>:<channel> to start a thread in",
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
    if not _stored(info):
        for step in steps:
            for target in step.to:
                if not is_thread_or_channel(target):
                    raise ValueError(
                        f"{target!r} must be a thread ({thread_forms()}) or a channel "
                        f"({channel_examples()}) of an installed platform"
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


def check_identity(value: str) -> str:
    if not is_identity(value):
        raise ValueError(f"must be an identity of the form <platform>:<id>, such as {person_examples()}")
    return value


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


class Vote(Model):
    """One person's decision on an approval that needs several (``approvals`` > 1)."""

    by: str
    answer: Literal["Approve", "Deny"]
    at: datetime
    note: str | None = None
    # False for the run's starter on a prompt whose rule does not count the starter's approval.
    counted: bool = True


class Resolution(StrEnum):
    HOT = "resolved_hot"
    PARKED = "resolved_parked"


_LEFT_OUT_WHEN_NONE = (
    "message",
    "requested_schema",
    "url",
    "content",
    "thread_url",
    "input_schema",
    "escalation",
    "escalations",
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


class TextContent(Model):
    type: Literal["text"] = "text"
    text: str = Field(max_length=MAX_TEXT_CHARS)


class ThreadItem(Model):
    """What is posted into a chat thread, and kept in the thread's item log."""

    type: Literal["message", "pending_prompt", "pending_prompt_resolved"]
    content: list[TextContent]
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(part.text for part in self.content)


class InboundMessage(Model):
    """A person's message or control press, normalised by a channel adapter."""

    thread_id: str
    sender: Identity
    text: str = Field(default="", max_length=MAX_TEXT_CHARS)
    answers: list[dict[str, Any]] | None = None
    event_id: str | None = Field(default=None, max_length=200)
    prompt_id: str | None = None
    received_at: datetime = Field(default_factory=utcnow)
    # False when the channel answers the person itself (an interaction's own ephemeral response).
    notify: bool = True
    # A Decline control pressed on a form or a URL step: the prompt is declined, if the sender may answer.
    decline: bool = False
    # An approval control's words (a deny-with-reason form) and the call's arguments as edited (an edit form).
    note: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    arguments: dict[str, Any] | None = None
    # An "Approve for this session" control: with an approve, the exact call is granted for the run.
    grant: StrictBool = False

    @field_validator("sender")
    @classmethod
    def _identity(cls, value: str) -> str:
        return check_identity(value)


class RunState(StrEnum):
    RUNNING = "running"
    ENDED = "ended"


class RunRequest(Model):
    thread_id: str = Field(min_length=1, max_length=200)
    agent: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    started_by: Identity | None = None

    @field_validator("started_by")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return None if value is None else check_identity(value)


class Run(Model):
    run_id: str
    thread_id: str
    agent: str
    started_by: str | None
    state: RunState = RunState.RUNNING
    created_at: datetime


class HumanInput(Model):
    expires_in_seconds: int = Field(default=DEFAULT_EXPIRES_IN, ge=1, le=MAX_EXPIRES_IN, strict=True)
    approvers: list[Identity] = Field(default_factory=list, max_length=1000)
    on_unmatched_reply: ReplyPolicy = ReplyPolicy.ANSWER
    # Every prompt of the agent's, unless its raise names its own (``PromptRequest.escalation``).
    escalation: Escalation = Field(default_factory=list)

    @field_validator("approvers")
    @classmethod
    def _identities(cls, values: list[str], info: ValidationInfo) -> list[str]:
        if _stored(info):
            return list(dict.fromkeys(values))
        return list(dict.fromkeys(check_identity(value) for value in values))


class ApprovalRule(StrEnum):
    ALWAYS = "always"
    NEVER = "never"
    DESTRUCTIVE = "destructive"  # only calls that change or delete something


class ToolRule(Model):
    """A tool's rule in full: whether to ask, and how the approval is decided when asked."""

    ask: Literal["always", "never"] = "always"
    edit: StrictBool = False  # the person may edit the call's arguments before approving
    approvals: int = Field(default=1, ge=1, le=MAX_APPROVALS, strict=True)
    starter_counts: StrictBool = True  # whether the run's starter's approval counts toward approvals

    @model_validator(mode="after")
    def _edit_alone(self) -> Self:
        if self.edit and self.approvals > 1:
            raise ValueError("a rule needing several approvers cannot allow edits: each would approve a call")
        return self


class ApprovalPolicy(Model):
    """Which tool calls a person approves first: ``default`` for all, ``tools`` per name or glob (a rule's
    word, ``always`` or ``never``, or the rule in full)."""

    default: ApprovalRule = ApprovalRule.ALWAYS
    tools: dict[
        Annotated[str, Field(min_length=1, max_length=200)], Literal["always", "never"] | ToolRule
    ] = Field(default_factory=dict, max_length=1000)


class AgentDefinition(Model):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    human_input: HumanInput = Field(default_factory=HumanInput)
    # Channels whose people's messages are this agent's; None on a write keeps the claims.
    channels: list[Channel] | None = Field(default=None, max_length=100)
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
