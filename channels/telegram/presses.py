"""Presses of prompt buttons and replies to text requests: checked, handed to the core, answered privately.

Stateless in this process: a button says what it does in its callback data, multi-select ticks live in
the message's own keyboard, and the steps of a prompt of several questions or fields (and which text
request a reply answers) are drafts kept by the core. A press on a message another process posted, or
posted before a restart, works the same. Forms and URL steps are handed to ``forms.FormPresses``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from telegram import CallbackQuery, MaybeInaccessibleMessage, Message, User

from channels.telegram.control_ids import Action, BadControl, Control, decode
from channels.telegram.controls import fits_prompt, keyboard, step_text, ticked_in
from channels.telegram.inbound import Incoming, address_of, identity_of, in_thread
from channels.telegram.render import Button, Keyboard, Mention, Outgoing, utf16_len
from channels.telegram.send import Sender
from gateway.channel import ChannelError, InboundSink
from gateway.errors import GatewayError
from gateway.ids import parse_thread_id
from gateway.logs import event
from gateway.models import InboundMessage, Prompt, PromptKind, PromptState
from gateway.render import NO_SELECTION, PromptView, shorten
from gateway.service import Draft, DraftStatus, Outcome, Received


class FormPresses(Protocol):
    """What presses hand forms and URL steps to: ``channels.telegram.forms.FormPresses``, which builds on
    this module and is handed over at run time (a Protocol, so the two do not import each other)."""

    async def on_press(
        self, press: Press, control: Control, message: MaybeInaccessibleMessage, user: User
    ) -> Notice: ...

    async def on_reply(self, press: Press, text: str) -> Notice: ...


ACK_DEADLINE_S = 5.0  # the person's client shows a spinner until the press is answered
MAX_ASKED_QUESTION_CHARS = 300

NOT_ALLOWED = (
    "Your answer was not taken: only the person who started this run and the agent's approvers can "
    "answer its prompts."
)
NOT_THIS_PROMPT = "This button does not belong to an open prompt in this chat, so nothing was changed."
UNKNOWN_PROMPT = "This button belongs to a prompt Threadgate no longer knows, so nothing was changed."
NO_LONGER_OPEN = "This prompt is no longer open, so nothing was changed."
ALREADY_RECEIVED = "This answer was already received."
TRY_AGAIN = "Threadgate could not take your answer just now; nothing was changed. Please try again."
TOO_OLD = (
    "Telegram no longer shows this message's ticks to the bot; reply to the prompt with the numbers "
    "of your choices instead (for example 1, 3)."
)
EMPTY_REPLY = "An empty reply is not an answer; reply again with your answer."
WORKING = "Taking your answer…"
REPLY_BELOW = "Reply to the message below with your answer."
ASK_TEXT = "✎ {name}, reply to this message with your answer to: {question}"


@dataclass(frozen=True, slots=True)
class Notice:
    """What the person is told about their press; ``ok`` False for a refusal (shown as an alert)."""

    text: str
    ok: bool = True


class Refused(Exception):
    """A press that is refused before it reaches the core; ``message`` says why, to the presser."""

    def __init__(self, message: str = NOT_THIS_PROMPT) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Press:
    """One answer step: question ``step`` of ``prompt``, by ``sender``, on the prompt's message."""

    prompt: Prompt
    step: int
    sender: str
    event_id: str
    message_id: int


def reply_draft(message_id: int) -> str:
    """The draft that says which question a text request (a ForceReply message) asks."""
    return f"telegram-reply:{message_id}"


def summary(answers: list[list[str]]) -> str:
    """A short text of the answers, for people reading the thread (``staging · KPI cards, Table``)."""
    return " · ".join(", ".join(answer) if answer else NO_SELECTION for answer in answers)


def settled_notice(prompt: Prompt) -> str:
    """What a late press is told: how the prompt settled."""
    if prompt.prompt_state is PromptState.ANSWERED:
        given = summary([answer.answer for answer in prompt.answers or []])
        return f"This prompt was already answered ({given}); nothing was changed."
    if prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}); nothing was changed."
    return NO_LONGER_OPEN


def keyboard_of(message: MaybeInaccessibleMessage) -> Keyboard:
    """The buttons as the pressed message shows them now (where multi-select ticks are kept)."""
    if not isinstance(message, Message) or message.reply_markup is None:
        raise Refused(TOO_OLD)
    return tuple(
        tuple(Button(button.text, str(button.callback_data or ""), button.url) for button in row)
        for row in message.reply_markup.inline_keyboard
    )


class Presses:
    """Turns presses and text-request replies into the core's InboundMessage, one step at a time."""

    def __init__(self, sender: Sender, *, ack_deadline: float = ACK_DEADLINE_S) -> None:
        self.sender = sender
        self.sink: InboundSink | None = None
        self.ack_deadline = ack_deadline
        self.forms: FormPresses | None = None  # the presses of forms and URL steps

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
        try:
            control = decode(query.data)
            prompt = await self._prompt(control.prompt_id)
            message = query.message
            if message is None or not in_thread(message, prompt.thread_id):
                raise Refused()
            press = Press(
                prompt,
                control.question,
                identity_of(query.from_user),
                f"callback:{query.id}",
                message.message_id,
            )
            if prompt.kind in (PromptKind.FORM, PromptKind.URL) and self.forms is not None:
                return await self.forms.on_press(press, control, message, query.from_user)
            if not fits_prompt(prompt, control):
                raise Refused()
            question = prompt.questions[control.question]
            if control.action is Action.PICK:
                return await self._complete(press, [question.labels[control.option]])
            if control.action is Action.TOGGLE:
                return await self._toggle(press, message, control.option)
            if control.action is Action.SUBMIT:
                ticked = await self._ticked(press, message)
                return await self._complete(
                    press, [label for index, label in enumerate(question.labels) if index in ticked]
                )
            return await self.ask_text(press, query.from_user)
        except (BadControl, Refused) as refused:
            text = refused.message if isinstance(refused, Refused) else NOT_THIS_PROMPT
            event("telegram.press.refused", logging.INFO, query_id=query.id, error=str(refused))
            return Notice(text, ok=False)
        except Exception as exc:  # the store is unreachable: say so, and let the person press again
            event("telegram.press.failed", logging.WARNING, query_id=query.id, error=str(exc))
            return Notice(TRY_AGAIN, ok=False)

    async def _toggle(self, press: Press, message: MaybeInaccessibleMessage, option: int) -> Notice:
        """Tick or untick an option: the new state is the message's keyboard, nothing else."""
        ticked = await self._ticked(press, message) ^ {option}
        await self.check(await self.draft(press, {}), press)
        view = PromptView.of_prompt(press.prompt)
        address = address_of(parse_thread_id(press.prompt.thread_id))
        await self.sender.edit_keyboard(address, press.message_id, keyboard(view, press.step, ticked))
        label = press.prompt.questions[press.step].labels[option]
        return Notice(f"{'✓' if option in ticked else '✗'} {label}")

    async def _ticked(self, press: Press, message: MaybeInaccessibleMessage) -> frozenset[int]:
        """The options ticked on the pressed message. When it cannot be read, a press that would be
        refused anyway (not allowed, prompt settled) is refused for that reason first."""
        try:
            return ticked_in(keyboard_of(message), press.prompt.prompt_id, press.step)
        except Refused:
            await self.check(await self.draft(press, {}), press)
            raise

    async def ask_text(self, press: Press, user: User) -> Notice:
        """Ask the presser for free text with a ForceReply message; its reply is the answer."""
        await self.check(await self.draft(press, {}), press)
        name = shorten(user.first_name, 64)
        question = shorten(press.prompt.questions[press.step].question, MAX_ASKED_QUESTION_CHARS)
        ask = Outgoing(
            ASK_TEXT.format(name=name, question=question),
            force_reply=True,
            reply_to=press.message_id,
            mention=Mention(user.id, user.first_name, utf16_len("✎ "), utf16_len(name)),
        )
        address = address_of(parse_thread_id(press.prompt.thread_id))
        asked = await self.sender.send(address, ask)
        target = {
            "prompt": press.prompt.prompt_id,
            "question": str(press.step),
            "message": str(press.message_id),
        }
        await self.check(await self.draft(press, target, name=reply_draft(asked)), press)
        return Notice(REPLY_BELOW)

    # Replies to text requests ----------------------------------------------------------------------

    async def on_reply(self, incoming: Incoming) -> Notice | None:
        """A reply to one of our text requests is that question's answer; ``None`` for any other
        message (it takes the typed path)."""
        if incoming.reply_to_bot is None or self.sink is None:
            return None
        message = incoming.message
        target = await self.sink.get_draft(message.thread_id, reply_draft(incoming.reply_to_bot))
        if not target:
            return None
        try:
            prompt = await self._prompt(target["prompt"])
            step = int(target["question"])
            if prompt.thread_id != message.thread_id or step >= len(prompt.questions):
                raise Refused()
            if not message.text.strip():
                raise Refused(EMPTY_REPLY)
            press = Press(prompt, step, message.sender, message.event_id or "", int(target["message"]))
            if prompt.kind in (PromptKind.FORM, PromptKind.URL) and self.forms is not None:
                return await self.forms.on_reply(press, message.text)
            return await self._complete(press, [message.text])
        except Refused as refused:
            return Notice(refused.message, ok=False)
        except (KeyError, ValueError) as exc:
            event("telegram.reply.unreadable", logging.WARNING, error=str(exc))
            return Notice(NOT_THIS_PROMPT, ok=False)
        except Exception as exc:
            event("telegram.reply.failed", logging.WARNING, error=str(exc))
            return Notice(TRY_AGAIN, ok=False)

    # One answer step -------------------------------------------------------------------------------

    async def _complete(self, press: Press, answer: list[str]) -> Notice:
        """Answer one question. With several, the answer is kept as a draft and the next unanswered
        question is shown; once every question has one, the whole set goes to the core."""
        prompt = press.prompt
        question_ids = [question.id or f"q{index}" for index, question in enumerate(prompt.questions, 1)]
        this = question_ids[press.step]
        answers = {this: answer}
        if len(question_ids) > 1:
            draft = await self.draft(press, {this: json.dumps(answer, ensure_ascii=False)})
            await self.check(draft, press)
            answers = {key: json.loads(value) for key, value in draft.values.items() if key in question_ids}
            missing = [index for index, key in enumerate(question_ids) if key not in answers]
            if missing:
                await self._show_step(prompt, missing[0], press.message_id)
                return Notice(f"Saved. Now question {missing[0] + 1} of {len(question_ids)}.")
        ordered = [list(answers[key]) for key in question_ids]
        text = summary(ordered)
        structured = [
            {"question_id": key, "answer": value} for key, value in zip(question_ids, ordered, strict=True)
        ]
        received = await self.hand_over(press, text, structured)
        return await self.outcome(received, text, prompt)

    async def hand_over(
        self, press: Press, text: str, answers: list[dict[str, Any]] | None = None, *, decline: bool = False
    ) -> Received:
        """Give the core this step's text (structured answers, or a Decline press); it decides, the channel
        tells."""
        assert self.sink is not None
        received = await self.sink.receive(
            InboundMessage(
                thread_id=press.prompt.thread_id,
                sender=press.sender,
                text=text,
                answers=answers,
                prompt_id=press.prompt.prompt_id,
                event_id=press.event_id,
                notify=False,
                decline=decline,
            )
        )
        event("telegram.press", prompt_id=press.prompt.prompt_id, outcome=received.outcome.value)
        return received

    async def _show_step(self, prompt: Prompt, step: int, message_id: int) -> None:
        view = PromptView.of_prompt(prompt)
        address = address_of(parse_thread_id(prompt.thread_id))
        text = step_text(view, step, group=address.is_group)
        await self.sender.edit(address, message_id, text, keyboard(view, step))

    async def outcome(self, received: Received, text: str, asked: Prompt) -> Notice:
        if received.outcome is Outcome.ANSWERED:
            return Notice(f"✓ Your answer was taken: {text}")
        if received.outcome is Outcome.NOT_ALLOWED:
            return Notice(NOT_ALLOWED, ok=False)
        if received.outcome is Outcome.DUPLICATE:
            return Notice(ALREADY_RECEIVED)
        return Notice(await self._settled_notice(received.prompt or asked), ok=False)

    # The core --------------------------------------------------------------------------------------

    async def _prompt(self, prompt_id: str) -> Prompt:
        assert self.sink is not None
        try:
            return await self.sink.get_prompt(prompt_id)
        except GatewayError as exc:
            if exc.status == 404:
                raise Refused(UNKNOWN_PROMPT) from exc
            raise

    async def draft(self, press: Press, values: dict[str, str], *, name: str | None = None) -> Draft:
        assert self.sink is not None
        prompt_id = press.prompt.prompt_id
        return await self.sink.save_draft(prompt_id, press.sender, name or prompt_id, values)

    async def check(self, draft: Draft, press: Press) -> None:
        """A draft refused by the core is a refused press: the same rules as an answer."""
        if draft.status is DraftStatus.NOT_ALLOWED:
            raise Refused(NOT_ALLOWED)
        if draft.status is DraftStatus.STALE:
            raise Refused(await self._settled_notice(press.prompt))

    async def _settled_notice(self, prompt: Prompt) -> str:
        if prompt.pending:  # as read before the press: read again to say how it settled
            try:
                prompt = await self._prompt(prompt.prompt_id)
            except (Refused, GatewayError):
                return NO_LONGER_OPEN
        return settled_notice(prompt)


__all__ = ["Notice", "Presses", "settled_notice"]
