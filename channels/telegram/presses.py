"""Presses of prompt buttons and replies to text requests: decoded for the core's answer step, and what
came of them shown (the notice as the press's answer, the next question or field as the buttons).

Stateless in this process: a button says what it does in its callback data, multi-select ticks live in
the message's own keyboard, and the steps of a prompt of several questions or fields (and which text
request a reply answers) are the core's drafts. A press on a message another process posted, or posted
before a restart, works the same.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from telegram import CallbackQuery, MaybeInaccessibleMessage, Message, User

from channels.telegram import forms
from channels.telegram.control_ids import Action, BadControl, decode
from channels.telegram.controls import keyboard, step_text, ticked_in
from channels.telegram.inbound import Incoming, address_of, identity_of, in_thread
from channels.telegram.render import Button, Keyboard, Mention, Outgoing, utf16_len
from channels.telegram.send import Sender
from gateway.sdk import (
    ChannelError,
    InboundSink,
    Prompt,
    PromptView,
    StepRequest,
    StepResult,
    event,
    notices,
    parse_thread_id,
    shorten,
    steps,
)

ACK_DEADLINE_S = 5.0  # the person's client shows a spinner until the press is answered
MAX_ASKED_QUESTION_CHARS = 300
WORKING = "Taking your answer…"


@dataclass(frozen=True, slots=True)
class Notice:
    """What the person is told about their press; ``ok`` False for a refusal (shown as an alert)."""

    text: str
    ok: bool = True

    @classmethod
    def of(cls, result: StepResult) -> Notice:
        return cls(result.notice, ok=not result.refused)


def shown_ticks(message: MaybeInaccessibleMessage, prompt_id: str, question: int) -> frozenset[int] | None:
    """The options ticked on the pressed message's keyboard; None once Telegram no longer shows it."""
    if not isinstance(message, Message) or message.reply_markup is None:
        return None
    rows: Keyboard = tuple(
        tuple(Button(button.text, str(button.callback_data or ""), button.url) for button in row)
        for row in message.reply_markup.inline_keyboard
    )
    return ticked_in(rows, prompt_id, question)


def drawn(
    prompt: Prompt, question: int, ticked: frozenset[int] = frozenset(), *, group: bool
) -> tuple[str, Keyboard]:
    """The text and buttons of the message with the buttons while question (or field) ``question`` shows."""
    if prompt.kind in forms.FORM_KINDS:
        step_view = forms.StepView.of_prompt(prompt)
        return forms.step_text(step_view, question, group=group), forms.keyboard(step_view, question, ticked)
    view = PromptView.of_prompt(prompt)
    return step_text(view, question, group=group), keyboard(view, question, ticked)


class Presses:
    """Turns presses and text-request replies into the core's answer steps, and shows what came of them."""

    def __init__(self, sender: Sender, *, ack_deadline: float = ACK_DEADLINE_S) -> None:
        self.sender = sender
        self.sink: InboundSink | None = None
        self.ack_deadline = ack_deadline

    # Button presses --------------------------------------------------------------------------------

    async def on_press(self, query: CallbackQuery) -> None:
        """Handle a press and answer it (answerCallbackQuery) within ``ack_deadline`` seconds."""
        work = asyncio.ensure_future(self._press(query))
        done, _ = await asyncio.wait({work}, timeout=self.ack_deadline)
        if work in done:
            await self._answer(query.id, work.result())
            return
        await self._answer(query.id, Notice(WORKING))
        notice = await work
        event("telegram.press.late", logging.WARNING, notice=notice.text)

    async def _answer(self, query_id: str, notice: Notice) -> None:
        try:
            await self.sender.answer_press(query_id, notice.text, alert=not notice.ok)
        except ChannelError as exc:  # e.g. a press delivered again after Telegram forgot the query
            event("telegram.press.unanswered", logging.INFO, error=str(exc))

    async def _press(self, query: CallbackQuery) -> Notice:
        message = query.message
        try:
            control = decode(query.data)
        except BadControl as exc:
            event("telegram.press.refused", logging.INFO, query_id=query.id, error=str(exc))
            return Notice(notices.MISMATCH, ok=False)
        if message is None or self.sink is None:
            return Notice(notices.MISMATCH, ok=False)
        where = {
            "prompt_id": control.prompt_id,
            "sender": identity_of(query.from_user),
            "event_id": f"callback:{query.id}",
            "in_thread": lambda thread_id: in_thread(message, thread_id),
        }
        request = _request(control.action, control.question, control.option, message, where)
        result = await self.sink.step(request)
        if isinstance(request, steps.Ask) and not result.refused and result.prompt is not None:
            result = await self._ask_text(request, result.prompt, query.from_user, message.message_id)
        await self._show(result, message.message_id, control.question)
        return Notice.of(result)

    async def _ask_text(self, request: steps.Ask, prompt: Prompt, user: User, anchor: int) -> StepResult:
        """Ask the presser for free text with a ForceReply message; its reply is the answer (on an
        approval, the reason it is denied with)."""
        assert self.sink is not None
        name = shorten(user.first_name, 64)
        question = shorten(prompt.questions[request.index].question, MAX_ASKED_QUESTION_CHARS)
        ask = Outgoing(
            notices.ask_text(name, question, prompt),
            force_reply=True,
            reply_to=anchor,
            mention=Mention(user.id, user.first_name, utf16_len("✎ "), utf16_len(name)),
        )
        asked = await self.sender.send(address_of(parse_thread_id(prompt.thread_id)), ask)
        remember = steps.Asked(
            prompt_id=prompt.prompt_id,
            sender=request.sender,
            index=request.index,
            request=str(asked),
            anchor=str(anchor),
        )
        return await self.sink.step(remember)

    async def _show(self, result: StepResult, message_id: int, question: int) -> None:
        """The new ticks, or the next question or field, on the message with the buttons."""
        prompt = result.prompt
        if prompt is None or (result.next is None and result.ticked is None):
            return
        address = address_of(parse_thread_id(prompt.thread_id))
        if result.ticked is not None:
            _, ticks = drawn(prompt, question, result.ticked, group=address.is_group)
            await self.sender.edit_keyboard(address, message_id, ticks)
        elif result.next is not None:
            await self.sender.edit(
                address, message_id, *drawn(prompt, result.next.index, group=address.is_group)
            )

    # Replies to text requests ----------------------------------------------------------------------

    async def on_reply(self, incoming: Incoming) -> StepResult | None:
        """A reply to one of our messages, handed to the core once: the answer to the question its text
        request asked, or (``Status.TYPED``) a message as typed. ``None`` for a message replying to none
        of ours (the channel hands it over as typed)."""
        if incoming.reply_to_bot is None or self.sink is None:
            return None
        reply = steps.Reply(message=incoming.message, request=str(incoming.reply_to_bot))
        result = await self.sink.step(reply)
        if result.status is not steps.Status.TYPED and result.anchor.isdigit():
            await self._show(result, int(result.anchor), 0)  # the next question or field, with the buttons
        return result


def _request(
    action: Action, question: int, option: int, message: MaybeInaccessibleMessage, where: dict[str, Any]
) -> StepRequest:
    """The act a button press makes: ``where`` names the prompt, the presser, the press and its thread."""
    if action in (Action.PICK, Action.GRANT):  # GRANT: Approve, with the call granted for the run
        return steps.Pick(**where, index=question, option=option, grant=action is Action.GRANT)
    if action is Action.CLAIM:
        return steps.Claim(**where)
    ticked = shown_ticks(message, where["prompt_id"], question)
    if action is Action.TOGGLE:
        return steps.Toggle(**where, index=question, option=option, ticked=ticked)
    if action is Action.SUBMIT:
        return steps.Submit(**where, index=question, ticked=ticked)
    if action is Action.SKIP:
        return steps.Skip(**where, index=question)
    if action is Action.DONE:
        return steps.Done(**where)
    if action is Action.DECLINE:
        return steps.Decline(**where)
    return steps.Ask(**where, index=question)


__all__ = ["Notice", "Presses"]
