"""Custom ids of prompt controls: what a press means, in indexes, within Discord's 100 characters."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

PREFIX = "tg"
MAX_CUSTOM_ID = 100
TEXT_FIELD = "text"
NOTE_FIELD = "note"  # the reason's text field in the deny-with-reason form
_PROMPT_ID = re.compile(r"prm_[0-9A-HJKMNP-TV-Z]{26}", re.ASCII)
_INDEX = re.compile(r"0|[1-9][0-9]?", re.ASCII)


class Action(StrEnum):
    """What a control does: buttons and selects on the prompt's message (or on a private reply to a
    press), and the forms (modals) they open, submitted."""

    PICK = "pick"  # a button: one option of a single-select question (or Approve / Deny)
    MENU = "menu"  # a string select of a question's options; its values are option indexes
    NONE = "none"  # a button: none of a multi-select question's options
    WRITE = "write"  # a button that opens a text form (free text, or Other… on an option list)
    FORM = "form"  # a button that opens one form for every question of the prompt
    TEXT = "text"  # the text form, submitted
    ANSWERS = "answers"  # the form of every question, submitted
    FILL = "fill"  # a button that opens one page (up to five fields) of a flat form
    PAGE = "page"  # a page of a flat form, submitted
    DONE = "done"  # a button: a URL step is done
    DECLINE = "decline"  # a button: decline a flat form or a URL step
    REASON = "reason"  # a button that opens the form denying an approval with a reason
    NOTE = "note"  # that form, submitted
    EDIT = "edit"  # a button that opens the form of an approval's call, to approve it as edited
    EDITED = "edited"  # that form, submitted
    SESSION = "session"  # a button: Approve, and grant the approval's call for the rest of the run
    CLAIM = "claim"  # a button: take the prompt; until the claim ends only the presser answers it


_FIELDS = {
    Action.PICK: 2,
    Action.MENU: 1,
    Action.NONE: 1,
    Action.WRITE: 1,
    Action.FORM: 0,
    Action.TEXT: 1,
    Action.ANSWERS: 0,
    Action.FILL: 1,
    Action.PAGE: 1,
    Action.DONE: 0,
    Action.DECLINE: 0,
    Action.REASON: 0,
    Action.NOTE: 0,
    Action.EDIT: 0,
    Action.EDITED: 0,
    Action.SESSION: 0,
    Action.CLAIM: 0,
}


class BadControl(ValueError):
    """A custom id that claims to be a Threadgate control but does not parse: forged or tampered."""


@dataclass(frozen=True, slots=True)
class ControlId:
    """A control of one prompt: ``tg:<action>:<prompt_id>[:<question index>[:<option index>]]`` (a form's
    page number stands in the question's place)."""

    action: Action
    prompt_id: str
    question: int = 0
    option: int = 0

    def encode(self) -> str:
        fields = [str(self.question), str(self.option)][: _FIELDS[self.action]]
        custom_id = ":".join([PREFIX, self.action.value, self.prompt_id, *fields])
        if len(custom_id) > MAX_CUSTOM_ID:  # prompt ids have a fixed length, so this is a bug, not input
            raise ValueError(f"custom_id {custom_id!r} is longer than {MAX_CUSTOM_ID} characters")
        return custom_id


def decode(custom_id: object) -> ControlId | None:
    """The control a custom id names; ``None`` when it is not Threadgate's; BadControl when malformed."""
    if not isinstance(custom_id, str) or not custom_id.startswith(f"{PREFIX}:"):
        return None
    parts = custom_id.split(":")
    try:
        action = Action(parts[1])
    except (IndexError, ValueError):
        raise BadControl(f"unknown control {custom_id[:MAX_CUSTOM_ID]!r}") from None
    fields = parts[3:]
    if (
        len(parts) < 3
        or not _PROMPT_ID.fullmatch(parts[2])
        or len(fields) != _FIELDS[action]
        or not all(_INDEX.fullmatch(field) for field in fields)
    ):
        raise BadControl(f"malformed control {custom_id[:MAX_CUSTOM_ID]!r}")
    numbers = [int(field) for field in fields] + [0, 0]
    return ControlId(action, parts[2], numbers[0], numbers[1])


def field_id(kind: str, question: int) -> str:
    """The custom id of one field of a form: ``pick:1`` (a select), ``text:0``, ``other:2``, ``field:7``."""
    return f"{kind}:{question}"
