"""The ids Slack hands back when a person uses a control: what they name and how they are read. Pure.

Control data is compact and checked, never trusted. An ``action_id`` names what a control does
(``tg.pick.<n>``, ``tg.choose``, ``tg.toggle``, ``tg.submit``, ``tg.other``, ``tg.form``, ``tg.done``,
``tg.decline``, ``tg.link``, ``tg.reason``, ``tg.edit``, ``tg.session``, ``tg.claim``) and its value is
``<prompt_id>[.<question index>[.<option index>]]``: indexes, not labels, so a value stays short whatever
the labels, and the labels a press answers with always come from the stored prompt. A modal's
``callback_id`` says which modal it is and its ``private_metadata`` is the prompt id; its inputs'
``block_id`` and ``action_id`` name what they hold.
"""

from __future__ import annotations

from enum import StrEnum

from gateway.sdk import VERB_PREFIX
from gateway.sdk import ControlRef as ControlRef
from gateway.sdk import decode as decode
from gateway.sdk import verb_of as named_verb

PREFIX = VERB_PREFIX
ACTIONS_BLOCK = "tg.buttons"  # a message's row of buttons
TOGGLES_BLOCK = "tg.toggles"  # a message's checkboxes (a multi-select's boxes, ticked before Submit)
ANSWER_CALLBACK = "tg.form"  # the modal that answers a prompt's questions
FIELDS_CALLBACK = "tg.fields"  # the modal that fills in a form prompt's fields
CHOICE, TEXT = "choice", "text"  # the action ids of the inputs in the answer modal
FIELD = "value"  # the action id of each input in the fields modal; its block id is the property name
REASON_CALLBACK = "tg.reason"  # the modal that denies an approval with the person's reason
EDIT_CALLBACK = "tg.edit"  # the modal that approves an approval's call with its arguments as edited
NOTE = "note"  # the block and action id of the reason box; the edit modal's inputs are a<i>, FIELD


class Verb(StrEnum):
    """What a control does when pressed."""

    PICK = "pick"  # a button that answers with its option
    CHOOSE = "choose"  # a select menu that answers with the chosen option
    TOGGLE = "toggle"  # a checkbox changed: nothing to do until Submit
    SUBMIT = "submit"  # answers a multi-select with the checked boxes
    OTHER = "other"  # opens the answer modal with the "Other" answer box focused
    FORM = "form"  # opens the answer modal (free text, several questions) or a form's fields modal
    DONE = "done"  # completes a URL step
    DECLINE = "decline"  # declines a form or a URL step
    LINK = "link"  # a link button: the browser opens the page, there is nothing to answer
    REASON = "reason"  # opens the modal that denies an approval with a reason
    EDIT = "edit"  # opens the modal that edits an approval's call before approving it
    SESSION = "session"  # approves an approval's call and grants the same call for the rest of the run
    CLAIM = "claim"  # takes the prompt: until the claim ends only the presser answers it


def action_id(verb: Verb, index: int | None = None) -> str:
    """The ``action_id`` of a control doing ``verb`` (``tg.pick.2`` for the third option's button)."""
    return f"{PREFIX}{verb}" if index is None else f"{PREFIX}{verb}.{index}"


def verb_of(action: object) -> Verb | None:
    """The verb an ``action_id`` names (``tg.pick.2`` → PICK), or None when it is not one of ours."""
    return named_verb(action, Verb)
