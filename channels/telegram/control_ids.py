"""Callback data of prompt controls: an action, the prompt id and indexes, within Telegram's 64 bytes.

Labels never travel in the data, only indexes, so every button of every prompt fits: the longest is
``p|prm_<26>|N|NN``, 37 bytes. Telegram lets a client send any data with a press, so decoding is
strict and every decoded control is still checked against the prompt it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

MAX_BYTES = 64
_PATTERN = re.compile(r"([ptswkdxgc])\|(prm_[0-9A-Z]{26})\|(\d{1,2})\|(\d{1,2})", re.ASCII)


class Action(StrEnum):
    PICK = "p"  # choose one option (single-select, approval)
    TOGGLE = "t"  # tick or untick an option (multi-select)
    SUBMIT = "s"  # send the ticked options (multi-select)
    WRITE = "w"  # ask for free text (a free-text question or form field, or Other… on an option list)
    SKIP = "k"  # leave an optional form field empty
    DONE = "d"  # a URL step is done
    DECLINE = "x"  # decline a form or a URL step
    GRANT = "g"  # Approve for this session: approve an approval's call and grant it for the rest of the run
    CLAIM = "c"  # Claim: take the prompt; until the claim ends only the presser answers it


class BadControl(ValueError):
    """Callback data that no Threadgate button carries."""


@dataclass(frozen=True, slots=True)
class Control:
    """What one button does: ``action`` on question ``question`` (a form's field) and option ``option``
    of a prompt."""

    action: Action
    prompt_id: str
    question: int
    option: int = 0

    def encode(self) -> str:
        data = f"{self.action.value}|{self.prompt_id}|{self.question}|{self.option}"
        if len(data.encode()) > MAX_BYTES or _PATTERN.fullmatch(data) is None:
            raise ValueError(f"callback data {data!r} does not fit Telegram's {MAX_BYTES} bytes")
        return data


def decode(data: object) -> Control:
    """The control in a press's callback data; BadControl for anything our buttons never carry."""
    if not isinstance(data, str) or len(data.encode()) > MAX_BYTES:
        raise BadControl("no callback data, or more than Telegram allows")
    match = _PATTERN.fullmatch(data)
    if match is None:
        raise BadControl(f"unreadable callback data {data[:MAX_BYTES]!r}")
    action, prompt_id, question, option = match.groups()
    return Control(Action(action), prompt_id, int(question), int(option))
