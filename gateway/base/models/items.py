"""What goes into a chat thread (thread items) and what comes out of one (a person's inbound message)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, StrictBool, field_validator

from gateway.base.models.base import MAX_TEXT_CHARS, Identity, Model, check_identity, utcnow
from gateway.base.models.people import PERSON_PREFIX, person_id


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
    # The message came from a one-to-one conversation between the sender and the bot (the channel says so
    # from the platform's own facts): nobody else read it. A link code is taken only from such a message
    # on a platform that has them (``ChannelSpec.direct_messages``).
    direct: StrictBool = False

    @field_validator("sender")
    @classmethod
    def _identity(cls, value: str) -> str:
        """A platform identity; or ``person:<id>``, a signed-in person, which the core takes only from its
        own sign-in service (``SignedInPeople``), never from a channel's sink."""
        if value.startswith(PERSON_PREFIX):
            return PERSON_PREFIX + person_id(value)
        return check_identity(value)
