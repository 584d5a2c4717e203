"""What a native control points at, spelled compactly and read back strictly. Pure.

A control's reference is ``<prompt_id>[.<question index>[.<option index>]]``: indexes, not labels, so
it stays short whatever the labels, and the labels a press answers with always come from the stored
prompt. A verb (what the control does) is ``tg.<verb>``, maybe followed by ``.<index>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

VERB_PREFIX = "tg."
_REF = re.compile(r"(?P<pid>prm_[0-9A-Za-z]{1,40})(?:\.(?P<q>\d{1,2})(?:\.(?P<o>\d{1,3}))?)?", re.ASCII)
V = TypeVar("V", bound=StrEnum)


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


def decode(value: object) -> ControlRef | None:
    """The ControlRef a control's value spells, or None when it is malformed."""
    match = _REF.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    question, option = match["q"], match["o"]
    return ControlRef(
        match["pid"],
        int(question) if question is not None else None,
        int(option) if option is not None else None,
    )


def verb_of(value: object, verbs: type[V]) -> V | None:
    """The verb of ``verbs`` a control names (``tg.pick.2`` → pick), or None when it is not one of ours."""
    if not isinstance(value, str) or not value.startswith(VERB_PREFIX):
        return None
    name = value.removeprefix(VERB_PREFIX).split(".", 1)[0]
    return verbs(name) if name in verbs._value2member_map_ else None
