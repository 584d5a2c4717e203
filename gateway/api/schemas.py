"""Request and response bodies of the HTTP API that are not core objects (those come from gateway.base.models
and, for a person's answer by id, gateway.decision.answering.bodies)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from gateway.base import call_schema
from gateway.base.models import (
    MAX_EXPIRES_IN,
    MAX_TEXT_CHARS,
    ApprovalPolicy,
    Channel,
    HumanInput,
    Model,
    Prompt,
    TextContent,
    ToolAnnotations,
    ToolCall,
)
from gateway.decision.answering.bodies import GrantNotMade
from gateway.rules.grants import Grant


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
