"""Request and response bodies of the HTTP API that are not core objects (those come from gateway.models)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from gateway import call_schema
from gateway.grants import Grant, GrantRequest
from gateway.models import (
    MAX_EXPIRES_IN,
    MAX_NOTE_CHARS,
    MAX_TEXT_CHARS,
    ApprovalPolicy,
    Channel,
    HumanInput,
    Identity,
    Model,
    Prompt,
    Resolution,
    TextContent,
    ToolAnnotations,
    ToolCall,
    check_identity,
)

MAX_ANSWER_VALUES = 50


class Open(BaseModel):
    """A response object that may carry more fields than the ones listed."""

    model_config = ConfigDict(extra="allow")


# Agent side --------------------------------------------------------------------------------------


class CancelBody(Model):
    reason: str = Field(default="cancelled by the agent", min_length=1, max_length=500)


class PostItemBody(Model):
    """An agent message for the chat: text parts, posted as one message."""

    content: list[TextContent] = Field(min_length=1, max_length=20)

    @model_validator(mode="after")
    def _fits_one_message(self) -> Self:
        if not any(part.text.strip() for part in self.content):
            raise ValueError("the message has no text")
        if sum(len(part.text) for part in self.content) > MAX_TEXT_CHARS:
            raise ValueError(f"the message is longer than {MAX_TEXT_CHARS} characters")
        return self

    @property
    def text(self) -> str:
        return "\n".join(part.text for part in self.content)


class PostedItem(Open):
    item_id: str
    thread_id: str
    type: str
    content: list[TextContent]
    metadata: dict[str, Any] = Field(default_factory=dict)


class PromptList(BaseModel):
    items: list[Prompt]
    cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class QueuedMessage(Open):
    """A person's message queued for the agent, or a parked answer re-driven (``tag: parked_answer``)."""

    message_id: str
    thread_id: str
    sender: str | None = None
    text: str = ""
    content: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    received_at: str | None = None
    tag: str | None = None


class MessageList(BaseModel):
    items: list[QueuedMessage]
    cursor: str | None = Field(
        description="The feed position after the last entry read: pass it as `after` next time. "
        "Null only when nothing was read and no `after` was given."
    )


class LoggedItem(Open):
    """One entry of a thread's item log: what the gateway or the agent posted, or a person's message."""

    id: str = Field(description="The entry's position in the log; pass as `after` to read past it.")
    role: str = Field(description="gateway, agent or person")
    type: str = Field(description="message, pending_prompt or pending_prompt_resolved")


class ItemList(BaseModel):
    items: list[LoggedItem]
    cursor: str | None = Field(description="The id of the last item returned; null when none was.")


# Human side --------------------------------------------------------------------------------------


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


class AgentBody(Model):
    """``PUT /v1/agents/{agent}``: the agent's human-input settings and approver allow-list."""

    human_input: HumanInput = Field(default_factory=HumanInput)
    channels: list[Channel] | None = Field(
        default=None,
        max_length=100,
        description="Channels whose people's messages go to this agent's tokens (<platform>:<channel>); "
        "omitted keeps the current claims, [] drops them.",
    )
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)


class ApprovalRequest(Model):
    """``POST /v1/runs/{run_id}/approvals``: a tool call the agent is about to make."""

    tool_call: ToolCall
    destructive: StrictBool | None = Field(
        default=None,
        description="The caller's word on whether the call changes or deletes something: a JSON boolean.",
    )
    annotations: ToolAnnotations | None = Field(
        default=None,
        description="The MCP tool's annotations; readOnlyHint true or destructiveHint false mark it as safe.",
    )
    question: str | None = Field(default=None, min_length=1, max_length=2000)
    expires_in_seconds: int | None = Field(default=None, ge=1, le=MAX_EXPIRES_IN, strict=True)
    editable: StrictBool = Field(
        default=False,
        description="Let the person edit the call's arguments before approving (the tool's rule may too).",
    )
    input_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema of the call's arguments, which an edit must fit."
    )

    @field_validator("input_schema")
    @classmethod
    def _tool_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if schema is None else call_schema.check(schema)


class PolicyDecision(BaseModel):
    """Nobody is asked: the call may run as it stands, by the agent's approval policy or by a grant a person
    made for the run (``grant:<grant_id>``)."""

    decision: Literal["allow"] = "allow"
    by: str = Field(default="policy", pattern=r"^(policy|grant:\S+)$")


class AnsweredInput(Prompt):
    """The prompt as an answer left it, with the grant the answer made when it carried one, or why none
    was made when it carried one and settled the prompt without it."""

    grant: Grant | None = None
    grant_not_made: GrantNotMade | None = None


class GrantList(BaseModel):
    items: list[Grant]
    cursor: str | None = Field(default=None, description="Always null: a run's grants come in one page.")
