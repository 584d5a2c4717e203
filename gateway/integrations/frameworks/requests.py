"""What a framework asks a person, in one shape: an approval of a tool call or a question."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.client import Approval, ApprovalDenied, Human


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """Approve ``tool`` with ``arguments``? (People see the call itself; ``question`` replaces the
    default "Allow <tool> to run?")."""

    tool: str
    arguments: dict[str, Any]
    question: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionRequest:
    """A question: pick one of ``options``, or answer in free text when there are none."""

    question: str
    options: list[str] | None = None


HumanRequest = ApprovalRequest | QuestionRequest


def arguments_of(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments as a dict, whether the framework keeps them as JSON text or parsed."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


Outcome = str | Approval | ApprovalDenied
"""A question's answer text, a granted approval, or a denial (as a value). Nobody answering raises
HumanUnavailable instead: there is no outcome to hand the framework."""


async def outcome_async(human: Human, request: HumanRequest) -> Outcome:
    """Ask ``request`` in chat and wait for its outcome."""
    if isinstance(request, QuestionRequest):
        return await human.ask_async(request.question, request.options)
    try:
        return await human.approve_async(request.tool, request.arguments, question=request.question)
    except ApprovalDenied as denied:
        return denied


def outcome_sync(human: Human, request: HumanRequest) -> Outcome:
    """``outcome_async`` for sync code."""
    if isinstance(request, QuestionRequest):
        return human.ask(request.question, request.options)
    try:
        return human.approve(request.tool, request.arguments, question=request.question)
    except ApprovalDenied as denied:
        return denied
