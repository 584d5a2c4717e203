"""An approval's decision beyond its answers (contract §9): the person's note, the call they allowed (as
asked, or as they edited it), and their vote where several approvers are needed.

Every answer path (a chat reply, a control, REST) builds it here and hands it to the one answer script,
which records it and decides whether a vote settles the prompt (see ``decide`` in the store's scripts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gateway.base import call_schema, storable
from gateway.base.call_schema import ArgumentError
from gateway.base.models import (
    APPROVE,
    DENY,
    MAX_NOTE_CHARS,
    Answer,
    Prompt,
    PromptKind,
    ToolCall,
    Vote,
    from_ms,
)
from gateway.base.printable import printable
from gateway.rules.grants import Grant, GrantMatch, grant_id_of, normalized


class EditRefused(Exception):
    """Edited arguments that cannot be taken: ``code`` NOT_EDITABLE or VALIDATION_FAILED, with why."""

    def __init__(self, code: str, message: str, errors: list[ArgumentError] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.errors = errors or []


def clean_note(note: str | None) -> str | None:
    """A person's note as kept: printable (``gateway.base.printable``), trimmed, cut to ``MAX_NOTE_CHARS``,
    None
    when it says nothing."""
    if note is None:
        return None
    text = printable(note).strip()
    if not text:
        return None
    return text if len(text) <= MAX_NOTE_CHARS else text[: MAX_NOTE_CHARS - 1] + "…"


def check_edit(prompt: Prompt, arguments: dict[str, Any]) -> ToolCall:
    """The call ``arguments`` make of the prompt's tool call, if the prompt takes edits, the store can keep
    them (``gateway.base.storable``) and the tool's ``input_schema`` accepts them (without one: each argument
    keeps the JSON type the call gave it); else ``EditRefused``."""
    if prompt.kind is not PromptKind.APPROVAL or not prompt.editable or prompt.tool_call is None:
        raise EditRefused(
            "NOT_EDITABLE",
            f"Prompt {prompt.prompt_id} was not raised as editable; approve or deny it as asked.",
        )
    refusal = storable.problem(arguments)
    if refusal is not None:
        where = ".".join(filter(None, ("arguments", refusal.path)))
        raise EditRefused(
            "VALIDATION_FAILED",
            f"The edited arguments cannot be kept: {where} holds {refusal.problem}",
            [ArgumentError(refusal.path or "arguments", f"holds {refusal.problem}")],
        )
    if prompt.input_schema is None:
        errors = call_schema.type_errors(prompt.tool_call.arguments, arguments)
    else:
        errors = call_schema.argument_errors(prompt.input_schema, arguments)
    if errors:
        listed = "; ".join(f"{error.field}: {error.problem}" for error in errors)
        raise EditRefused("VALIDATION_FAILED", f"The edited arguments do not fit the tool: {listed}", errors)
    return ToolCall(name=prompt.tool_call.name, arguments=arguments)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the answer script records beside the answers, and the vote it decides on."""

    note: str | None = None
    approved_call: ToolCall | None = None
    vote: Vote | None = None
    need: int = 1
    # An approve "for this session": the grant kept with the answer, while its run keeps fewer than
    # ``most_grants`` (see ``gateway.decision.granting``, which confirms it once the answer settled the
    # prompt).
    grant: Grant | None = None
    most_grants: int = 0
    # Who answered, as a person (quorum counts people), and the operator token that asserted it.
    person: str | None = None
    asserted_by: str | None = None

    def opts(self) -> str:
        """The script's ``opts`` argument ('' when there is nothing beyond the answers)."""
        data: dict[str, Any] = {}
        if self.person is not None:
            data["person"] = self.person
        if self.asserted_by is not None:
            data["asserted_by"] = self.asserted_by
        if self.note is not None:
            data["note"] = self.note
        if self.approved_call is not None:
            data["approved_call"] = self.approved_call.model_dump_json()
        if self.vote is not None:
            vote = self.vote.model_dump(mode="json", exclude_none=True)
            if vote.get("counted", True):
                vote.pop("counted", None)
            data["vote"] = vote
            data["need"] = self.need
        if self.grant is not None:
            data["grant"] = self.grant.model_dump_json(exclude={"uses"})
            data["most_grants"] = self.most_grants
        return json.dumps(data, ensure_ascii=False) if data else ""


def verdict(
    prompt: Prompt,
    answers: list[Answer],
    identity: str | None,
    now_ms: int,
    *,
    note: str | None = None,
    edited: ToolCall | None = None,
    grant: GrantMatch | None = None,
    most_grants: int = 0,
    person: str | None = None,
    starter_person: str | None = None,
    asserted_by: str | None = None,
) -> Verdict:
    """The decision ``answers`` from ``identity`` make on ``prompt`` (nothing beyond them for other kinds).

    ``edited`` is the call as the person edited it (checked with ``check_edit``); an approval allows the
    call as asked otherwise. The run's starter's approval does not count where the prompt says so.
    ``grant``: the pattern an approve lets through for the rest of the run (checked by the caller), kept
    with the answer while the run keeps fewer than ``most_grants``; one approver's approve makes it.
    ``person`` is the directory person ``identity`` belongs to and ``starter_person`` the starter's: the
    starter's approval is not counted from any of their identities, and one person votes once.
    """
    if prompt.kind is not PromptKind.APPROVAL or not answers:
        return Verdict(person=person, asserted_by=asserted_by)
    approve = answers[0].answer == [APPROVE]
    allowed = (edited or prompt.tool_call) if approve else None
    kept_note = clean_note(note)
    vote = None
    if prompt.approvals > 1 and identity:
        starter = identity == prompt.started_by or (person is not None and person == starter_person)
        counted = not (approve and not prompt.starter_counts and starter)
        vote = Vote(
            by=identity,
            person=person,
            asserted_by=asserted_by,
            answer=APPROVE if approve else DENY,
            at=from_ms(now_ms),
            note=kept_note,
            counted=counted,
        )
    made = None
    if grant is not None and allowed is not None and vote is None and identity:
        made = Grant(
            grant_id=grant_id_of(prompt.prompt_id),
            run_id=prompt.run_id,
            match=normalized(grant),
            created_by=identity,
            created_at=from_ms(now_ms),
            prompt_id=prompt.prompt_id,
        )
    return Verdict(
        note=kept_note,
        approved_call=allowed,
        vote=vote,
        need=prompt.approvals,
        grant=made,
        most_grants=most_grants,
        person=person,
        asserted_by=asserted_by,
    )
