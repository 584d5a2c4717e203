"""The models' common ground: the contract's limits, the base model, identities, and time in milliseconds."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo

from gateway.base.ids import is_identity, person_examples

MAX_QUESTIONS = 4
MAX_OPTIONS = 25
MAX_QUESTION_CHARS = 2000
MAX_LABEL_CHARS = 100
MAX_DESCRIPTION_CHARS = 300
MAX_TEXT_CHARS = 40_000
MAX_URL_CHARS = 2000
MAX_APPROVALS = 10
MAX_NOTE_CHARS = 2000
DEFAULT_EXPIRES_IN = 7 * 24 * 3600
MAX_EXPIRES_IN = 30 * 24 * 3600
MAX_ESCALATION_STEPS = 5
MAX_ESCALATION_TARGETS = 10
APPROVE, DENY = "Approve", "Deny"


def utcnow() -> datetime:
    return datetime.now(UTC)


# Characters that draw nothing on their own although Unicode files them as letters or symbols.
_BLANK_LOOKALIKES = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me", "Mc"})


def has_visible_character(value: str) -> bool:
    """True when ``value`` draws something: not only spaces, controls, format marks or blank look-alikes."""
    return any(
        char not in _BLANK_LOOKALIKES and unicodedata.category(char) not in _INVISIBLE_CATEGORIES
        for char in value
    )


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(ms: int | str) -> datetime:
    return datetime.fromtimestamp(int(ms) / 1000, UTC)


class Model(BaseModel):
    """Base: unknown fields refused, wire names (``multiSelect``) used both ways."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)


Identity = Annotated[str, Field(min_length=3, max_length=160)]


# Validation context for what the store itself wrote: an approver or a claim of a platform that is no
# longer installed was valid when written and is kept as it is (it matches nobody), never a 5xx on read.
STORED = {"stored": True}


def from_store(info: ValidationInfo | None) -> bool:
    """Whether this validation reads what the store itself wrote (the ``STORED`` context)."""
    return info is not None and isinstance(info.context, dict) and bool(info.context.get("stored"))


def check_identity(value: str) -> str:
    if not is_identity(value):
        raise ValueError(f"must be an identity of the form <platform>:<id>, such as {person_examples()}")
    return value
