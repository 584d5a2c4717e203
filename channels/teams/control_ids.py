"""What an Adaptive Card's ``Action.Execute`` carries back, and how it is read. Pure.

A press arrives as an ``adaptiveCard/action`` invoke with ``value.action.verb`` (``tg.pick``,
``tg.submit``, ``tg.done``, ``tg.decline``) and ``value.action.data``: the action's own ``data`` (``tg``:
``<prompt_id>[.<question index>[.<option index>]]``) merged with the card's input values, keyed by
input id. Indexes, not labels: the labels an answer carries always come from the stored prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

PREFIX = "tg."
REF_KEY = "tg"
_REF = re.compile(r"(?P<pid>prm_[0-9A-Za-z]{1,40})(?:\.(?P<q>\d{1,2})(?:\.(?P<o>\d{1,3}))?)?", re.ASCII)


class Verb(StrEnum):
    PICK = "pick"  # a button that answers with its option
    SUBMIT = "submit"  # sends the card's inputs (choices, "Other" text, a form's fields)
    DONE = "done"  # completes a URL step
    DECLINE = "decline"  # declines a form or a URL step


@dataclass(frozen=True, slots=True)
class ControlRef:
    """What a control points at: a prompt, and maybe one of its questions and options."""

    prompt_id: str
    question: int | None = None
    option: int | None = None

    def encode(self) -> str:
        parts = [self.prompt_id]
        if self.question is not None:
            parts.append(str(self.question))
            if self.option is not None:
                parts.append(str(self.option))
        return ".".join(parts)


def verb(value: Verb) -> str:
    return f"{PREFIX}{value}"


def verb_of(value: object) -> Verb | None:
    if not isinstance(value, str) or not value.startswith(PREFIX):
        return None
    name = value.removeprefix(PREFIX)
    return Verb(name) if name in Verb._value2member_map_ else None


def decode(value: object) -> ControlRef | None:
    match = _REF.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    question, option = match["q"], match["o"]
    return ControlRef(
        match["pid"],
        int(question) if question is not None else None,
        int(option) if option is not None else None,
    )


def choice_id(index: int) -> str:
    """The input holding question ``index``'s chosen options (comma-separated option indexes)."""
    return f"q{index}"


def other_id(index: int) -> str:
    """The input holding question ``index``'s typed answer ("Other", or the whole answer)."""
    return f"o{index}"


def field_id(name: str) -> str:
    """The input holding a form property's value."""
    return f"f.{name}"
