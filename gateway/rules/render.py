"""Renderers: the thread items a prompt becomes, as seed 000 shows them. Pure functions."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from gateway.base import forms
from gateway.base.models import (
    APPROVE,
    Answer,
    Prompt,
    PromptKind,
    PromptState,
    Question,
    TextContent,
    ThreadItem,
    ToolCall,
    check_step_url,
)

# Re-exported: the channels render from here; the plain text itself lives beneath the models.
from gateway.base.plaintext import form_or_url_text as form_or_url_text
from gateway.base.plaintext import prompt_text as prompt_text
from gateway.base.plaintext import question_text as question_text
from gateway.rules.grants import needs_several

NO_SELECTION = "(no selection)"
ANSWERED = "✓ Answered:"
# Kinds the channels draw native controls for; the others are posted as their text rendering.
NATIVE_KINDS = frozenset(
    {PromptKind.APPROVAL.value, PromptKind.ASK_USER_QUESTION.value, PromptKind.TEXT.value}
)


def prompt_body(prompt: Prompt) -> str:
    """The text a prompt is posted as: its questions, or its form or link."""
    if prompt.kind in (PromptKind.FORM, PromptKind.URL) and prompt.message is not None:
        return form_or_url_text(prompt.kind, prompt.message, prompt.requested_schema, prompt.url)
    return prompt_text(prompt.questions)


def tool_call_arguments(tool_call: ToolCall, limit: int) -> str:
    """A tool call's arguments as indented JSON, cut visibly after ``limit`` characters.

    The note says how many characters were left out, so a long call never passes for a whole one.
    """
    arguments = json.dumps(tool_call.arguments, indent=2, ensure_ascii=False, default=str)
    if len(arguments) <= limit:
        return arguments
    return f"{arguments[:limit]}\n… truncated: {len(arguments) - limit} more characters not shown"


# A prompt's questions never change once asked: their metadata and text are rendered once per process
# (checked against the very question list, so another prompt object under the same id renders afresh).
_ASKED: OrderedDict[str, tuple[list[Question], list[dict[str, Any]], str]] = OrderedDict()
ASKED_CACHE = 2048  # about 3 KB each; a prompt is rendered when raised and when it settles (as many as
# the store keeps parsed records of, so a burst of raises is still cached when it settles)


def _asked(prompt: Prompt) -> tuple[list[dict[str, Any]], str]:
    """The prompt's questions as item metadata, and the text it is posted as (``prompt_body``)."""
    cached = _ASKED.get(prompt.prompt_id)
    if cached is not None and cached[0] is prompt.questions:
        return list(cached[1]), cached[2]
    meta = [question.model_dump(mode="json", exclude_none=True) for question in prompt.questions]
    text = prompt_body(prompt)
    _ASKED[prompt.prompt_id] = (prompt.questions, meta, text)
    if len(_ASKED) > ASKED_CACHE:
        _ASKED.popitem(last=False)
    return list(meta), text


def _questions_metadata(prompt: Prompt) -> list[dict[str, Any]]:
    return _asked(prompt)[0]


def pending_prompt_item(prompt: Prompt) -> ThreadItem:
    """The ``pending_prompt`` item; metadata keeps the whole payload for native renderers."""
    meta: dict[str, Any] = {
        "prompt_id": prompt.prompt_id,
        "kind": prompt.kind.value,
        "prompt_state": PromptState.PENDING.value,
        "questions": _questions_metadata(prompt),
    }
    if prompt.tool_call is not None:
        meta["tool_call"] = prompt.tool_call.model_dump(mode="json")
    if prompt.editable:  # an approval whose call the person may edit: its card offers that
        meta["editable"] = True
    for key in ("message", "requested_schema", "url"):
        if getattr(prompt, key) is not None:
            meta[key] = getattr(prompt, key)
    meta.update(_decision_metadata(prompt, settled=False))
    return ThreadItem(
        type="pending_prompt",
        content=[TextContent(text=_asked(prompt)[1])],
        metadata={"type": "pending_prompt", "prompt": meta},
    )


def _decision_metadata(prompt: Prompt, *, settled: bool) -> dict[str, Any]:
    """An approval's decision fields (contract §9) that say something, for cards drawn from metadata: how
    many approvers it needs; while pending the schema its edits are checked against; once settled the
    person's note, the call allowed, every vote and the pattern its approve let through for the session."""
    if prompt.kind is not PromptKind.APPROVAL:
        return {}
    meta: dict[str, Any] = {"approvals": prompt.approvals} if prompt.approvals > 1 else {}
    if not settled:
        if prompt.input_schema is not None:
            meta["input_schema"] = prompt.input_schema
    else:
        if prompt.votes:
            meta["votes"] = [vote.model_dump(mode="json", exclude_none=True) for vote in prompt.votes]
        if prompt.note is not None:
            meta["note"] = prompt.note
        if prompt.approved_call is not None and prompt.prompt_state is PromptState.ANSWERED:
            meta["approved_call"] = prompt.approved_call.model_dump(mode="json")
        if prompt.granted is not None and prompt.prompt_state is PromptState.ANSWERED:
            meta["granted"] = prompt.granted.model_dump(mode="json")
    return meta


def answers_summary(answers: list[Answer]) -> str:
    """``staging`` for one answer; ``CSV import · KPI cards, Table`` for several questions."""
    return " · ".join(", ".join(answer.answer) if answer.answer else NO_SELECTION for answer in answers)


def resolved_text(prompt: Prompt) -> str:
    if prompt.prompt_state is PromptState.ANSWERED:
        return f"{ANSWERED} {answers_summary(prompt.answers or [])}"
    return f"✗ Cancelled: {prompt.reason or 'cancelled'}"


def resolved_item(prompt: Prompt, cancelled_by: str | None = None) -> ThreadItem:
    """The ``pending_prompt_resolved`` audit item: answers when answered, reason when cancelled (and its
    code, and ``cancelled_by`` the person who declined or cancelled it, for a card that says who)."""
    meta: dict[str, Any] = {
        "prompt_id": prompt.prompt_id,
        "kind": prompt.kind.value,
        "prompt_state": prompt.prompt_state.value,
    }
    if prompt.prompt_state is PromptState.ANSWERED:
        meta["answers"] = [
            {"question": answer.question, "answer": answer.answer} for answer in prompt.answers or []
        ]
        if prompt.content is not None:
            meta["content"] = prompt.content
        if prompt.answered_by is not None:
            meta["answered_by"] = prompt.answered_by
        if prompt.person is not None:
            meta["person"] = prompt.person
        if prompt.asserted_by is not None:
            meta["asserted_by"] = prompt.asserted_by
    else:
        meta["reason"] = prompt.reason or "cancelled"
        if prompt.reason_code is not None:
            meta["reason_code"] = str(prompt.reason_code)
        if cancelled_by:
            meta["cancelled_by"] = cancelled_by
    meta.update(_decision_metadata(prompt, settled=True))
    return ThreadItem(
        type="pending_prompt_resolved",
        content=[TextContent(text=resolved_text(prompt))],
        metadata={"type": "pending_prompt_resolved", "prompt": meta},
    )


def settled_prompt_item(
    prompt: Prompt, cancelled_by: str | None = None, *, audit: ThreadItem | None = None
) -> ThreadItem:
    """The prompt's own message once settled: its questions, then the outcome, and no controls.

    Channels that can edit a posted message replace the prompt with this, so nobody presses a dead
    button; its metadata is the audit item's (``audit``, when already made for the same prompt and
    ``cancelled_by``), with the questions added for the renderer.
    """
    audit = audit or resolved_item(prompt, cancelled_by)
    meta = dict(audit.metadata["prompt"], questions=_questions_metadata(prompt))
    text = f"{_asked(prompt)[1]}\n\n{resolved_text(prompt)}"
    return ThreadItem(
        type="pending_prompt_resolved",
        content=[TextContent(text=text)],
        metadata={"type": "pending_prompt_resolved", "prompt": meta, "replaces_prompt": True},
    )


def form_outcome(item: ThreadItem, *, header: str = ANSWERED, empty: str = NO_SELECTION) -> str | None:
    """An answered form's item with its one-line outcome (``✓ Answered: prod · 3``) written as ``header``
    and a ``Title: value`` line per field (``empty`` for a field left empty); the text above it stays.
    None for any other item, or one whose text does not end with the core's outcome line."""
    prompt = item.metadata.get("prompt")
    if item.type != "pending_prompt_resolved" or not isinstance(prompt, dict):
        return None
    if (prompt.get("kind"), prompt.get("prompt_state")) != (PromptKind.FORM, PromptState.ANSWERED):
        return None
    answers = prompt.get("answers")
    if not isinstance(answers, list) or not all(isinstance(answer, dict) for answer in answers):
        return None
    shown = [", ".join(str(value) for value in answer.get("answer") or []) for answer in answers]
    line = f"{ANSWERED} {' · '.join(value or NO_SELECTION for value in shown)}"
    if not item.text.endswith(line):
        return None
    fields = [
        f"{answer.get('question')}: {value or empty}" for answer, value in zip(answers, shown, strict=True)
    ]
    head = item.text.removesuffix(line).rstrip()
    return "\n\n".join(part for part in (head, "\n".join([header, *fields])) if part)


def votes_item(prompt: Prompt) -> ThreadItem:
    """An approval's votes so far (``Approved 1 of 2: alice``), posted as each short-of-enough vote lands;
    its metadata names the prompt and every vote, for channels that show them on the prompt's card."""
    return message_item(
        votes_text(prompt.approvals, [vote.by for vote in prompt.approvals_so_far]),
        {
            "type": "votes",
            "prompt_id": prompt.prompt_id,
            "approvals": prompt.approvals,
            "votes": [vote.model_dump(mode="json", exclude_none=True) for vote in prompt.votes],
        },
    )


def votes_text(approvals: int, approving: list[str], name: Callable[[str], str] = str) -> str:
    """``Approved 1 of 2: alice``: the approvals that count so far, each approver shown by ``name`` (a
    channel that knows people's names shows those instead of their identities)."""
    names = ", ".join(name(by) for by in approving) or "nobody yet"
    return f"Approved {len(approving)} of {approvals}: {names}"


def votes_of(item: ThreadItem) -> tuple[int, list[str]] | None:
    """A ``votes`` item read back (see ``votes_item``): the approvals needed and who approved so far, in
    order, counting only votes that count; None when the item is not one or does not read."""
    meta = item.metadata
    approvals, votes = meta.get("approvals"), meta.get("votes")
    if item.type != "message" or meta.get("type") != "votes" or type(approvals) is not int:
        return None
    if not isinstance(votes, list) or not all(isinstance(vote, dict) for vote in votes):
        return None
    approving = [
        str(vote.get("by"))
        for vote in votes
        if vote.get("answer") == APPROVE and vote.get("counted", True) is not False
    ]
    return approvals, approving


def message_item(text: str, metadata: dict[str, Any] | None = None) -> ThreadItem:
    return ThreadItem(type="message", content=[TextContent(text=text)], metadata=metadata or {})


def shorten(text: str, limit: int) -> str:
    """``text`` on one line within ``limit`` characters, cut visibly with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class PromptView:
    """What native controls are rendered from: a pending prompt, read back from its item's metadata
    (the inverse of ``pending_prompt_item``) or taken from the core's record."""

    prompt_id: str
    kind: PromptKind
    questions: list[Question]
    tool_call: ToolCall | None = None
    editable: bool = False  # an approval whose call the person may edit before approving
    approvals: int = 1  # how many approvers an approval needs

    @property
    def claimable(self) -> bool:
        """Whether its card offers **Claim** (``notices.CLAIM``, pressed as ``steps.Claim``): every pending
        prompt drawn with native controls can be taken by one person (contract §11)."""
        return self.kind.value in NATIVE_KINDS

    @property
    def grantable(self) -> bool:
        """Whether its card offers "Approve for this session": an approval of a tool call that one approver
        settles (a grant is one person's word: ``gateway.rules.grants.needs_several``)."""
        return self.kind is PromptKind.APPROVAL and self.tool_call is not None and needs_several(self) is None

    @classmethod
    def of_metadata(cls, metadata: dict[str, Any]) -> PromptView | None:
        """From a pending_prompt item's metadata; ``None`` when it holds no readable prompt, or one of a
        kind without native controls yet (forms and URL steps are posted as their text)."""
        prompt = metadata.get("prompt")
        if metadata.get("type") != "pending_prompt" or not isinstance(prompt, dict):
            return None
        return cls.of_fields(prompt)

    @classmethod
    def of_fields(cls, prompt: dict[str, Any]) -> PromptView | None:
        """From a pending_prompt item's ``metadata.prompt``; ``None`` as ``of_metadata``."""
        if prompt.get("kind") not in NATIVE_KINDS:
            return None
        try:
            tool_call = prompt.get("tool_call")
            approvals = prompt.get("approvals", 1)
            return cls(
                prompt_id=str(prompt["prompt_id"]),
                kind=PromptKind(prompt["kind"]),
                questions=[Question.model_validate(question) for question in prompt["questions"]],
                tool_call=ToolCall.model_validate(tool_call) if tool_call else None,
                editable=prompt.get("editable") is True,
                approvals=approvals if type(approvals) is int else 1,
            )
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def of_prompt(cls, prompt: Prompt) -> PromptView:
        tool_call, editable, approvals = prompt.tool_call, prompt.editable, prompt.approvals
        return cls(prompt.prompt_id, prompt.kind, prompt.questions, tool_call, editable, approvals)


@dataclass(frozen=True, slots=True)
class FormView:
    """What a form's or URL step's native controls are drawn from: a pending step, read back from its
    item's metadata (the inverse of ``pending_prompt_item``) or taken from the core's record."""

    prompt_id: str
    kind: PromptKind
    message: str
    fields: tuple[forms.FormField, ...] = ()
    url: str | None = None

    @classmethod
    def of_metadata(cls, metadata: dict[str, Any]) -> Self | None:
        """From a pending_prompt item's metadata; ``None`` unless it holds a readable form or URL step."""
        prompt = metadata.get("prompt")
        if metadata.get("type") != "pending_prompt" or not isinstance(prompt, dict):
            return None
        try:
            kind = PromptKind(str(prompt.get("kind")))
            message, prompt_id = str(prompt["message"]), str(prompt["prompt_id"])
            if kind is PromptKind.FORM:
                return cls(prompt_id, kind, message, tuple(forms.check_schema(prompt["requested_schema"])))
            if kind is PromptKind.URL:
                return cls(prompt_id, kind, message, url=check_step_url(str(prompt["url"])))
        except (KeyError, TypeError, ValueError):
            return None
        return None

    @classmethod
    def of_prompt(cls, prompt: Prompt) -> Self:
        fields = tuple(prompt.form_fields())
        return cls(prompt.prompt_id, prompt.kind, prompt.message or "", fields, prompt.url)
