"""What a framework asks a person, in one shape: an approval of a tool call or a question."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.client import Approval, ApprovalDenied, Human


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """Approve ``tool`` with ``arguments``? (People see the call itself; ``question`` replaces the
    default "Allow <tool> to run?"; ``editable`` lets them edit the arguments, to fit ``input_schema``.)"""

    tool: str
    arguments: dict[str, Any]
    question: str | None = None
    editable: bool = False
    input_schema: dict[str, Any] | None = None

    def options(self) -> dict[str, Any]:
        """``Human.approve``'s keyword arguments for this request."""
        return {"question": self.question, "editable": self.editable, "input_schema": self.input_schema}


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
"""A question's answer text, a granted approval (``arguments``: the call as approved, edited or not;
``note``), or a denial (as a value: ``why``, ``note``). Nobody answering raises HumanUnavailable instead:
there is no outcome to hand the framework."""


def denied_message(denied: ApprovalDenied) -> str:
    """What the model reads of a denial: who denied it, and the person's reason when they gave one."""
    return f"Not approved: {denied.why}" if denied.note else f"Not approved: {denied.why}."


def only_as_edited(tool: str, approval: Approval) -> str:
    """What the model reads when a person approved the call only as they edited it and the framework
    cannot run an edited call: the call as asked is refused, and this names the one to make instead."""
    edited = json.dumps(approval.arguments, ensure_ascii=False, sort_keys=True)
    text = f"Not run as asked: approved in chat by {approval.by or 'a person'} only as edited. "
    text += f"Call {tool} again with exactly these arguments: {edited}"
    return text if approval.note is None else f"{text} (their note: {approval.note})"


async def outcome_async(human: Human, request: HumanRequest) -> Outcome:
    """Ask ``request`` in chat and wait for its outcome."""
    if isinstance(request, QuestionRequest):
        return await human.ask_async(request.question, request.options)
    try:
        return await human.approve_async(request.tool, request.arguments, **request.options())
    except ApprovalDenied as denied:
        return denied


def outcome_sync(human: Human, request: HumanRequest) -> Outcome:
    """``outcome_async`` for sync code."""
    if isinstance(request, QuestionRequest):
        return human.ask(request.question, request.options)
    try:
        return human.approve(request.tool, request.arguments, **request.options())
    except ApprovalDenied as denied:
        return denied
