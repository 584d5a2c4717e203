"""Seed 002: accept, decline or cancel an agent's input on a person's behalf."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from gateway.base import forms
from gateway.base.errors import GatewayError
from gateway.base.models import Prompt, PromptKind, PromptState, ReasonCode
from gateway.decision.answering.bodies import InputAction
from gateway.decision.answering.content import approves, content_answers, form_content, seed_answers
from gateway.decision.answering.refusals import Sees, already_resolved, already_voted, check_may_answer
from gateway.decision.answering.settle import cancel_for, checked_grant, made_grant
from gateway.decision.service import AnswerStatus, Gateway
from gateway.rules.grants import Grant

DECLINED_REASON = "the person declined to answer"
CANCELLED_REASON = "cancelled by a person"


async def accept_form(
    gateway: Gateway, prompt: Prompt, identity: str, action: InputAction, asserted_by: str | None = None
) -> Prompt:
    content: Any = action.content
    fields = prompt.form_fields()
    if isinstance(content, list):
        content = [entry.model_dump(exclude_none=True) for entry in content]
    elif isinstance(content, str):  # typed as in chat: a one-property form's value, or `name: value` lines
        lines = forms.parse_lines(fields, content) or ({fields[0].name: content} if len(fields) == 1 else {})
        content = [{"question_id": name, "answer": [value]} for name, value in lines.items()]
    shown, typed = form_content(fields, content, by_position=isinstance(action.content, str))
    result = await gateway.settle_answers(prompt, shown, identity, typed, asserted_by=asserted_by)
    if result.status is AnswerStatus.CONFLICT:
        raise await already_resolved(gateway, "ALREADY_RESOLVED", result.prompt)
    return result.prompt


@dataclass(frozen=True, slots=True)
class Acted:
    """What an answer route did: the prompt as it now stands, the grant this answer made, if any, and why
    none was made when the answer asked for one and settled the prompt without it."""

    prompt: Prompt
    grant: Grant | None = None
    grant_not_made: dict[str, str] | None = None

    def public(self) -> dict[str, Any]:
        """The prompt's JSON, with ``grant`` when the answer made one (else ``grant_not_made``, if asked)."""
        data = self.prompt.public()
        if self.grant is not None:
            data["grant"] = self.grant.model_dump(mode="json")
            data.setdefault("granted", self.grant.match.model_dump(mode="json"))  # as its record says
        if self.grant_not_made is not None:
            data["grant_not_made"] = self.grant_not_made
        return data


async def act_on_input(
    gateway: Gateway,
    agent: str,
    prompt_id: str,
    action: InputAction,
    *,
    sees: Sees,
    asserted_by: str | None = None,
    groups: Collection[str] = (),
) -> Acted:
    """Accept, decline or cancel an input for ``from``. The same outcome twice is fine; another is 409.

    Refusals in the contract's order: a prompt the caller does not ``sees`` is 404 (it does not exist
    for it),
    then ``from`` not allowed 403, then a path naming another agent 404, then content 400 and state 409.
    A ``grant`` is checked with the content and recorded only when this approve settled the prompt.
    ``groups`` are a signed-in person's (see ``may_answer``); a token's ``from`` has none.
    """
    prompt = await gateway.store.get_prompt(prompt_id)
    if prompt is None or not sees(prompt.agent):
        raise GatewayError("PROMPT_NOT_FOUND", f"Agent {agent} has no input {prompt_id!r}.", 404)
    identity = await check_may_answer(gateway, prompt, action.from_, asserted_by, groups)
    if prompt.agent != agent:
        raise GatewayError("PROMPT_NOT_FOUND", f"Agent {agent} has no input {prompt_id!r}.", 404)
    checked_grant(prompt, action.grant, approves(action), action.arguments)
    if action.action == "accept" and prompt.kind is PromptKind.FORM:
        return Acted(await accept_form(gateway, prompt, identity, action, asserted_by))
    if action.answers is not None:
        action = action.model_copy(update={"content": seed_answers(prompt, action.answers), "answers": None})
    if action.action == "accept" or (action.action == "decline" and prompt.kind is PromptKind.APPROVAL):
        text, answers = content_answers(prompt, action)
        asked = action.grant.match if action.grant is not None else None
        result = await gateway.answer(
            prompt_id,
            identity,
            text=text,
            answers=answers,
            note=action.note,
            arguments=action.arguments,
            grant=asked,
            asserted_by=asserted_by,
            groups=groups,
        )
        if result.status is AnswerStatus.CONFLICT:
            raise await already_resolved(gateway, "ALREADY_RESOLVED", result.prompt)
        if result.status is AnswerStatus.ALREADY_VOTED:
            raise already_voted(result.prompt, identity)
        if action.grant is None or result.status is not AnswerStatus.ANSWERED:
            return Acted(result.prompt)
        return Acted(result.prompt, *await made_grant(gateway, result.prompt, identity, action.grant))
    declined = action.action == "decline"
    code = ReasonCode.DECLINED if declined else ReasonCode.CANCELLED
    reason = DECLINED_REASON if declined else CANCELLED_REASON
    changed, current = await cancel_for(gateway, prompt, identity, reason, code)
    if changed or (current.prompt_state is PromptState.CANCELLED and current.reason_code is code):
        return Acted(current)
    raise await already_resolved(gateway, "ALREADY_RESOLVED", current)
