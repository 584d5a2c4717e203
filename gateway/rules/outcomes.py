"""What became of a person's message or a step of an answer: what the core hands back to channels."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gateway.base.forms import FieldError
from gateway.base.models import Prompt


class Outcome(StrEnum):
    """What became of an inbound message."""

    ANSWERED = "answered"
    QUEUED = "queued"
    DUPLICATE = "duplicate"
    NOT_ALLOWED = "not_allowed"
    STALE = "stale"
    SUPERSEDED = "superseded"  # it did not fit the open prompt: that was cancelled and this queued
    DECLINED = "declined"  # it declined the open prompt (a URL step)
    KEPT = "kept"  # a step of a form's answer, or a reply not taken: the prompt stays pending
    VOTED = "voted"  # an approval recorded; more approvers are needed, so the prompt stays pending
    ALREADY_VOTED = "already_voted"  # this person's vote was recorded before; nothing changed
    CLAIMED = "claimed"  # another person holds the prompt's claim; nothing changed


@dataclass(frozen=True, slots=True)
class Received:
    outcome: Outcome
    prompt: Prompt | None = None
    # What the person is told (a form's next field, why a value was not taken), for channels that
    # show notices themselves.
    notice: str | None = None
    # A form's values not taken, one per property (for a channel that shows them by the field).
    errors: tuple[FieldError, ...] = ()
    # The pattern an "Approve for this session" (or a typed "always") granted, as JSON ({name, arguments}),
    # for a card that says what it lets through.
    granted: dict[str, Any] | None = None


class DraftStatus(StrEnum):
    """What became of a step of an answer in progress."""

    SAVED = "saved"
    NOT_ALLOWED = "not_allowed"  # the person may not answer this prompt
    STALE = "stale"  # the prompt is no longer pending


@dataclass(frozen=True, slots=True)
class Draft:
    status: DraftStatus
    values: dict[str, str]
