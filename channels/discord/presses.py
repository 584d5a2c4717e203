"""Presses of prompt controls (buttons, selects, forms): checked, handed to the core, answered privately."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import discord

from channels.discord import choices
from channels.discord.choices import FieldValue, Refused
from channels.discord.control_ids import Action, BadControl, ControlId, decode
from channels.discord.controls import PromptControls, answers_form, text_form
from channels.discord.inbound import identity_for, thread_id_for
from gateway.channel import InboundSink
from gateway.errors import GatewayError
from gateway.logs import event
from gateway.models import InboundMessage, Prompt, PromptState
from gateway.render import answers_summary
from gateway.service import Outcome, Received

DEFAULT_ACK_DEADLINE = 2.0  # Discord gives 3 s for the first response; keep room for the round trip
FORM_DEADLINE = 2.5  # a form cannot be deferred: it must be the first response, or nothing
MESSAGE_CONTROLS = frozenset({Action.PICK, Action.MENU, Action.NONE})
FORM_OPENERS = frozenset({Action.WRITE, Action.FORM})

NOT_ALLOWED = (
    "Your answer was not taken: only the person who started this run and the agent's approvers can "
    "answer its prompts."
)
NO_LONGER_OPEN = "This prompt is no longer open, so nothing was changed."
UNKNOWN_PROMPT = "This control belongs to a prompt Threadgate no longer knows, so nothing was changed."
ALREADY_RECEIVED = "This answer was already received."
TRY_AGAIN = "Threadgate could not take your answer just now; nothing was changed. Please try again."

Answering = Callable[[Prompt], list[list[str]]]  # a press's answer lists, or Refused


def form_fields(components: object) -> dict[str, FieldValue]:
    """A submitted form's fields by custom id: a select's values, a text field's value."""
    fields: dict[str, FieldValue] = {}
    stack = list(components) if isinstance(components, list) else []
    while stack:
        component = stack.pop(0)
        if not isinstance(component, dict):
            continue
        if isinstance(component.get("components"), list):  # an action row
            stack.extend(component["components"])
        if isinstance(component.get("component"), dict):  # a label
            stack.append(component["component"])
        custom_id = component.get("custom_id")
        if not isinstance(custom_id, str):
            continue
        if isinstance(component.get("values"), list):
            fields[custom_id] = [str(value) for value in component["values"]]
        elif isinstance(component.get("value"), str):
            fields[custom_id] = component["value"]
    return fields


def settled_notice(prompt: Prompt) -> str:
    """What a late press is told: how the prompt settled, without repeating the prompt."""
    if prompt.prompt_state is PromptState.ANSWERED:
        given = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({given}); nothing was changed."
    if prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}); nothing was changed."
    return NO_LONGER_OPEN


def outcome_notice(received: Received, answer_summary: str, asked: Prompt) -> str:
    """The private answer to a press, from what the core made of it (``asked``: the prompt as read
    before the press reached the core, for a stale press the core returns no prompt for)."""
    if received.outcome is Outcome.ANSWERED:
        return f"✓ Your answer was taken: {answer_summary}"
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.DUPLICATE:
        return ALREADY_RECEIVED
    prompt = received.prompt or asked
    return NO_LONGER_OPEN if prompt.pending else settled_notice(prompt)


class PressHandler:
    """Turns an interaction on a prompt's controls into the core's InboundMessage.

    Stateless: everything a press means is in its custom id, so presses on messages another process
    posted, or posted before a restart, work the same. Each press is answered within Discord's 3 s,
    ephemerally; when the core is slow the press is deferred first and the answer edited in.
    """

    def __init__(self, *, ack_deadline: float = DEFAULT_ACK_DEADLINE) -> None:
        self.sink: InboundSink | None = None
        self._ack_deadline = ack_deadline

    async def handle(self, interaction: discord.Interaction[Any]) -> None:
        """Handle one interaction; anything that is not one of Threadgate's controls is left alone."""
        data: dict[str, Any] = dict(interaction.data or {})
        try:
            control = decode(data.get("custom_id"))
        except BadControl as exc:
            event("discord.press.refused", logging.WARNING, error=str(exc))
            await self._reply(interaction, choices.NOT_THIS_PROMPT)
            return
        if control is None or self.sink is None:
            return
        component = interaction.type is discord.InteractionType.component
        submitted = interaction.type is discord.InteractionType.modal_submit
        if component and control.action in FORM_OPENERS:
            await self._open_form(interaction, control)
        elif component and control.action in MESSAGE_CONTROLS:
            values = data.get("values")
            pressed = values if isinstance(values, list) else []
            await self._answer(interaction, control, lambda p: choices.press_answers(p, control, pressed))
        elif submitted and control.action is Action.TEXT:
            fields = form_fields(data.get("components"))
            await self._answer(interaction, control, lambda p: choices.text_answers(p, control, fields))
        elif submitted and control.action is Action.ANSWERS:
            fields = form_fields(data.get("components"))
            await self._answer(interaction, control, lambda p: choices.form_answers(p, fields))
        else:
            event("discord.press.refused", logging.WARNING, prompt_id=control.prompt_id, error="wrong kind")
            await self._reply(interaction, choices.NOT_THIS_PROMPT)

    # Forms -----------------------------------------------------------------------------------------

    async def _open_form(self, interaction: discord.Interaction[Any], control: ControlId) -> None:
        """Open the text form or the form of every question, if the prompt is still open."""
        try:
            prompt = await asyncio.wait_for(self._prompt_for(interaction, control), FORM_DEADLINE)
            choices.check_opens_form(prompt, control)
        except Refused as refused:
            await self._reply(interaction, refused.message)
            return
        except Exception as exc:  # slow or unreachable store: a form must be the first response, or none
            event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
            await self._reply(interaction, TRY_AGAIN)
            return
        if not prompt.pending:
            await self._reply(interaction, settled_notice(prompt))
            return
        controls = PromptControls(prompt.prompt_id, prompt.kind, prompt.questions, prompt.tool_call)
        if control.action is Action.WRITE:
            form = text_form(controls, control.question)
        else:
            form = answers_form(controls)
        try:
            await interaction.response.send_modal(form)
        except discord.HTTPException as exc:
            event("discord.press.unanswered", logging.WARNING, prompt_id=prompt.prompt_id, error=str(exc))
        finally:
            # Its submission is decoded from its custom id like any press, by whichever process gets it,
            # so discord.py need not keep the form waiting for it.
            form.stop()

    # Answers ---------------------------------------------------------------------------------------

    async def _answer(
        self, interaction: discord.Interaction[Any], control: ControlId, compute: Answering
    ) -> None:
        """Check the press, hand it to the core, and answer privately within Discord's deadline."""
        work = asyncio.ensure_future(self._settle(interaction, control, compute))
        done, _ = await asyncio.wait({work}, timeout=self._ack_deadline)
        if work in done:
            await self._reply(interaction, work.result())
            return
        with contextlib.suppress(discord.HTTPException):
            await interaction.response.defer(ephemeral=True, thinking=True)
        notice = await work
        try:
            await interaction.edit_original_response(content=notice)
        except discord.HTTPException as exc:
            event("discord.press.unanswered", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))

    async def _settle(
        self, interaction: discord.Interaction[Any], control: ControlId, compute: Answering
    ) -> str:
        """The notice for the presser; the core applies dedupe, staleness, who may answer, first wins."""
        assert self.sink is not None
        try:
            prompt = await self._prompt_for(interaction, control)
            answers = compute(prompt)
            text = choices.summary(answers)
            message = InboundMessage(
                thread_id=prompt.thread_id,
                sender=identity_for(interaction.user.id),
                text=text,
                answers=choices.structured(prompt, answers),
                prompt_id=prompt.prompt_id,
                event_id=f"interaction:{interaction.id}",
                notify=False,
            )
            received = await self.sink.receive(message)
        except Refused as refused:
            event("discord.press.refused", logging.INFO, prompt_id=control.prompt_id, error=refused.message)
            return refused.message
        except Exception as exc:  # the store is unreachable: say so, and let the person press again
            event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
            return TRY_AGAIN
        if received.outcome is Outcome.STALE and received.prompt is None and prompt.pending:
            # It settled between our read and the press reaching the core: read how, to say so.
            with contextlib.suppress(Exception):
                prompt = await self.sink.get_prompt(prompt.prompt_id)
        event(
            "discord.press",
            prompt_id=prompt.prompt_id,
            thread_id=prompt.thread_id,
            action=control.action.value,
            outcome=received.outcome.value,
        )
        return outcome_notice(received, text, prompt)

    async def _prompt_for(self, interaction: discord.Interaction[Any], control: ControlId) -> Prompt:
        """The prompt a control names, which must live in the channel the press came from."""
        assert self.sink is not None
        try:
            prompt = await self.sink.get_prompt(control.prompt_id)
        except GatewayError as exc:
            if exc.status == 404:
                raise Refused(UNKNOWN_PROMPT) from exc
            raise
        channel_id = interaction.channel_id
        if channel_id is None and interaction.message is not None:
            channel_id = interaction.message.channel.id
        if channel_id is None or thread_id_for(channel_id) != prompt.thread_id:
            raise Refused()
        return prompt

    async def _reply(self, interaction: discord.Interaction[Any], text: str) -> None:
        """Answer the press privately (an ephemeral response); a response Discord refuses is logged."""
        try:
            await interaction.response.send_message(text, ephemeral=True)
        except discord.HTTPException as exc:  # e.g. a replayed interaction another session answered
            event("discord.press.unanswered", logging.DEBUG, interaction_id=interaction.id, error=str(exc))


__all__ = ["PressHandler", "form_fields", "outcome_notice"]
