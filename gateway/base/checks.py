"""A finding of ``threadgate doctor``: shared by the core's checks and the platforms' checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "warn", "fail"]
MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, how it went, and a sentence that says what to do."""

    name: str
    status: Status
    detail: str

    @classmethod
    def ok(cls, name: str, detail: str) -> Check:
        return cls(name, "ok", detail)

    @classmethod
    def warn(cls, name: str, detail: str) -> Check:
        return cls(name, "warn", detail)

    @classmethod
    def fail(cls, name: str, detail: str) -> Check:
        return cls(name, "fail", detail)
