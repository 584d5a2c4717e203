"""Presses on a prompt's card: decoded, handed to the core, answered with the invoke response.

Stateless: everything a press means is in its ``Action.Execute`` data and the stored prompt, so a card
posted by another process, or before a restart, answers the same. The core decides who may answer,
dedupes by the invoke's activity id, and lets the first answer win; the invoke response (seen by the
presser alone) is the settled card once the press settled the prompt, else a private notice.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_teams.api.activities.invoke.adaptive_card import AdaptiveCardInvokeActivity
from microsoft_teams.api.models.adaptive_card import (
    AdaptiveCardActionCardResponse,
    AdaptiveCardActionMessageResponse,
)

from channels.teams.approvals import read_edit, read_reason
from channels.teams.cards import settled_card
from channels.teams.control_ids import REF_KEY, ControlRef, Verb, decode, verb_of
from channels.teams.inbound import Origin
from channels.teams.reading import read_press, structured
from gateway.sdk import (
    MAX_TEXT_CHARS,
    Act,
    GatewayError,
    InboundMessage,
    InboundSink,
    Outcome,
    Prompt,
    PromptKind,
    StepRequest,
    answers_summary,
    event,
    notices,
    settled_prompt_item,
    step,
)

DECLINE_TEXT = "decline"  # what a Decline press is logged with; the press itself says decline


def message_response(text: str) -> dict[str, Any]:
    """An invoke response showing ``text`` to the presser alone."""
    return AdaptiveCardActionMessageResponse(value=text).model_dump(by_alias=True, exclude_none=True)


def card_response(prompt: Prompt, who: str, notice: str | None = None) -> dict[str, Any]:
    """An invoke response replacing the card with how its prompt settled, and by whom (the core's line:
    a declined prompt has no answers), then the core's ``notice`` of it (what an approve granted)."""
    answers = None if prompt.answers is None else [answer.answer for answer in prompt.answers]
    line = notices.settled_by(prompt.kind, answers, who, prompt.granted)
    card = settled_card(settled_prompt_item(prompt), f"{line}. {notice}" if notice else line)
    return AdaptiveCardActionCardResponse(value=card).model_dump(by_alias=True, exclude_none=True)


async def answer_press(
    sink: InboundSink, activity: AdaptiveCardInvokeActivity, where: Origin
) -> dict[str, Any]:
    """Decode the press, hand it to the core, and render what came of it as the invoke response."""
    action = activity.value.action
    verb, ref = verb_of(action.verb), decode(action.data.get(REF_KEY))
    if verb is None or ref is None:
        return message_response(notices.MISMATCH)
    try:
        prompt = await sink.get_prompt(ref.prompt_id)
    except GatewayError as exc:
        if exc.status == 404:
            return message_response(notices.MISMATCH)
        raise
    if where.thread_id not in (prompt.thread_id, *prompt.copy_threads):  # its own card, or a copy's
        return message_response(notices.MISMATCH)
    if verb in (Verb.REASON, Verb.EDIT):
        return await _approval_step(sink, activity, where, prompt, verb, ref)
    reading = read_press(prompt, verb, ref, action.data)
    if reading.notice is not None:
        return message_response(reading.notice if prompt.pending else notices.settled(prompt))
    answers = structured(prompt, reading.answers) if reading.answers is not None else []
    summary = DECLINE_TEXT if reading.decline else answers_summary(answers)
    received = await sink.receive(
        InboundMessage(
            thread_id=prompt.thread_id,
            sender=where.sender,
            text=summary[:MAX_TEXT_CHARS],
            answers=None if reading.decline else [answer.model_dump(mode="json") for answer in answers],
            prompt_id=prompt.prompt_id,
            event_id=f"teams:{activity.id}"[:200],
            notify=False,
            decline=reading.decline,
            grant=verb is Verb.SESSION,
        )
    )
    event(
        "teams.press", thread_id=prompt.thread_id, prompt_id=prompt.prompt_id, outcome=received.outcome.value
    )
    if received.outcome in (Outcome.ANSWERED, Outcome.DECLINED) and received.prompt is not None:
        return card_response(received.prompt, where.name or where.sender, received.notice)
    return message_response(notices.outcome(received, prompt, summary))


async def _approval_step(
    sink: InboundSink,
    activity: AdaptiveCardInvokeActivity,
    where: Origin,
    prompt: Prompt,
    verb: Verb,
    ref: ControlRef,
) -> dict[str, Any]:
    """Deny with reason or Approve with edits, through the core's answer step: the reason denies with it
    as the note; the edited values are read and checked by the core (its refusal is told to the presser)."""
    data = activity.value.action.data
    if prompt.kind is not PromptKind.APPROVAL or ref != ControlRef(prompt.prompt_id):
        return message_response(notices.MISMATCH)
    common: dict[str, Any] = {"thread_id": prompt.thread_id}
    if verb is Verb.REASON:
        reason = read_reason(data)
        if reason is None:
            return message_response(notices.MISMATCH)
        act, common["text"] = Act.TEXT, reason
    else:
        edited = read_edit(prompt, data)
        if edited is None:
            return message_response(notices.MISMATCH)
        act, common["fields"] = Act.EDIT, edited
    request = StepRequest(act, prompt.prompt_id, where.sender, f"teams:{activity.id}"[:200], 0, **common)
    result = await step(sink, request)
    event("teams.press", thread_id=prompt.thread_id, prompt_id=prompt.prompt_id, outcome=str(result.outcome))
    if result.outcome is Outcome.ANSWERED and result.prompt is not None:
        return card_response(result.prompt, where.name or where.sender)
    return message_response(result.notice)


async def safely(sink: InboundSink, activity: AdaptiveCardInvokeActivity, where: Origin) -> dict[str, Any]:
    """``answer_press``, with a failure that may pass (the store) told to the presser, who presses again."""
    try:
        return await answer_press(sink, activity, where)
    except Exception as exc:
        event("teams.press_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
        return message_response(notices.TRY_AGAIN)
