"""Runs, and agents' definitions: who approves, how replies are taken, which tool calls ask first."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, StrictBool, ValidationInfo, field_validator, model_validator

from gateway.base.ids import channel_examples, is_channel_claim
from gateway.base.models.base import (
    DEFAULT_EXPIRES_IN,
    MAX_APPROVALS,
    MAX_EXPIRES_IN,
    Identity,
    Model,
    from_store,
)
from gateway.base.models.people import check_approver
from gateway.base.models.prompts import Escalation, ReplyPolicy


def check_channel_claim(value: str, info: ValidationInfo) -> str:
    if from_store(info):
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


class RunState(StrEnum):
    RUNNING = "running"
    ENDED = "ended"


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
    # Answers only from a signed-in person or a platform identity: no operator ``from``, no name a room
    # token chose.
    require_sign_in: StrictBool = False

    @field_validator("approvers")
    @classmethod
    def _identities(cls, values: list[str], info: ValidationInfo) -> list[str]:
        if from_store(info):
            return list(dict.fromkeys(values))
        return list(dict.fromkeys(check_approver(value) for value in values))


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
