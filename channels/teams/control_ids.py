"""What an Adaptive Card's ``Action.Execute`` carries back, and how it is read. Pure.

A press arrives as an ``adaptiveCard/action`` invoke with ``value.action.verb`` (``tg.pick``,
``tg.submit``, ``tg.done``, ``tg.decline``, ``tg.reason``, ``tg.edit``, ``tg.session``, ``tg.claim``) and
``value.action.data``: the action's own ``data`` (``tg``: ``<prompt_id>[.<question index>[.<option
index>]]``) merged with the card's input values, keyed by input id. Indexes, not labels: the labels an
answer carries always come from the stored prompt.
"""

from __future__ import annotations

from enum import StrEnum

from gateway.sdk import VERB_PREFIX
from gateway.sdk import ControlRef as ControlRef
from gateway.sdk import decode as decode
from gateway.sdk import verb_of as named_verb

PREFIX = VERB_PREFIX
REF_KEY = "tg"


class Verb(StrEnum):
    PICK = "pick"  # a button that answers with its option
    SUBMIT = "submit"  # sends the card's inputs (choices, "Other" text, a form's fields)
    DONE = "done"  # completes a URL step
    DECLINE = "decline"  # declines a form or a URL step
    REASON = "reason"  # denies an approval with the reason typed in its note input
    EDIT = "edit"  # approves an approval's call with its arguments as typed in the edit inputs
    SESSION = "session"  # approves an approval's call and grants the same call for the rest of the run
    CLAIM = "claim"  # takes the prompt: until the claim ends only the presser answers it


def verb(value: Verb) -> str:
    return f"{PREFIX}{value}"


def verb_of(value: object) -> Verb | None:
    return named_verb(value, Verb)


def choice_id(index: int) -> str:
    """The input holding question ``index``'s chosen options (comma-separated option indexes)."""
    return f"q{index}"


def other_id(index: int) -> str:
    """The input holding question ``index``'s typed answer ("Other", or the whole answer)."""
    return f"o{index}"


def argument_id(index: int) -> str:
    """The input holding argument ``index`` (in the call's order) of an approval's call, as edited."""
    return f"a{index}"


NOTE_ID = "note"  # the input holding an approval's reason for denying it


def field_id(name: str) -> str:
    """The input holding a form property's value."""
    return f"f.{name}"
