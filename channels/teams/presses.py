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

from channels.teams.cards import settled_card
from channels.teams.control_ids import REF_KEY, decode, verb_of
from channels.teams.inbound import Origin
from channels.teams.reading import act_of
from gateway.sdk import (
    InboundSink,
    Outcome,
    Prompt,
    event,
    notices,
    settled_prompt_item,
    steps,
)


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
    """Decode the press, hand it to the core's answer step (which reads it against its prompt), and render
    what came of it as the invoke response."""
    action = activity.value.action
    verb, ref = verb_of(action.verb), decode(action.data.get(REF_KEY))
    if verb is None or ref is None:
        return message_response(notices.MISMATCH)
    pressed: dict[str, Any] = {
        "prompt_id": ref.prompt_id,
        "sender": where.sender,
        "event_id": f"teams:{activity.id}",
    }
    result = await sink.step(
        steps.Read(
            **pressed,
            thread_id=where.thread_id,  # its own card, or a copy's
            read=lambda prompt: act_of(prompt, verb, ref, action.data, pressed),
        )
    )
    event("teams.press", thread_id=where.thread_id, prompt_id=ref.prompt_id, outcome=str(result.outcome))
    if result.outcome in (Outcome.ANSWERED, Outcome.DECLINED) and result.prompt is not None:
        return card_response(result.prompt, where.name or where.sender, result.remark)
    return message_response(result.notice)


async def safely(sink: InboundSink, activity: AdaptiveCardInvokeActivity, where: Origin) -> dict[str, Any]:
    """``answer_press``, with a failure that may pass (the store) told to the presser, who presses again."""
    try:
        return await answer_press(sink, activity, where)
    except Exception as exc:
        event("teams.press_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
        return message_response(notices.TRY_AGAIN)
