"""Presses of prompt controls (buttons, selects, forms): decoded for the core's answer step, answered
privately."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from channels.discord import approvals, choices, forms
from channels.discord.choices import Refused, Reply, form_fields, option_index
from channels.discord.control_ids import TEXT_FIELD, Action, BadControl, ControlId, decode
from channels.discord.controls import PromptControls, answers_form, text_form
from channels.discord.forms import FormPrompt
from channels.discord.inbound import identity_for
from channels.discord.threads import thread_id_for
from gateway.sdk import InboundSink, Prompt, StepResult, event, notices, steps

DEFAULT_ACK_DEADLINE = 2.0  # Discord gives 3 s for the first response; keep room for the round trip
FORM_DEADLINE = 2.5  # a form cannot be deferred: it must be the first response, or nothing
PRESSES = frozenset(
    {Action.PICK, Action.MENU, Action.NONE, Action.DONE, Action.DECLINE, Action.SESSION, Action.CLAIM}
)
SUBMITS = frozenset({Action.TEXT, Action.ANSWERS, Action.PAGE, Action.NOTE, Action.EDITED})
FORM_OPENERS = frozenset({Action.WRITE, Action.FORM, Action.FILL, Action.REASON, Action.EDIT})


class PressHandler:
    """Turns an interaction on a prompt's controls into the core's InboundMessage.

    Stateless: everything a press means is in its custom id (a long form's earlier pages wait in the
    core's drafts), so presses on messages another process posted, or posted before a restart, work the
    same. Each press is answered within Discord's 3 s, ephemerally; when the core is slow the press is
    deferred first and the answer edited in.
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
            await self._reply(interaction, Reply(notices.MISMATCH))
            return
        if control is None or self.sink is None:
            return
        component = interaction.type is discord.InteractionType.component
        submitted = interaction.type is discord.InteractionType.modal_submit
        fields = form_fields(data.get("components")) if submitted else {}
        action = control.action
        if component and action in FORM_OPENERS:
            await self._open_form(interaction, control)
        elif (component and action in PRESSES) or (submitted and action in SUBMITS):
            await self._within_deadline(
                interaction, control, lambda: self._step(interaction, control, data, fields)
            )
        else:
            event("discord.press.refused", logging.WARNING, prompt_id=control.prompt_id, error="wrong kind")
            await self._reply(interaction, Reply(notices.MISMATCH))

    # Forms -----------------------------------------------------------------------------------------

    async def _open_form(self, interaction: discord.Interaction[Any], control: ControlId) -> None:
        """Open the text form, the form of every question, or a page of a flat form, if still open."""
        try:
            opened = await asyncio.wait_for(self._form_for(interaction, control), FORM_DEADLINE)
        except Refused as refused:
            await self._reply(interaction, Reply(refused.message))
            return
        except Exception as exc:  # slow or unreachable store: a form must be the first response, or none
            event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
            await self._reply(interaction, Reply(notices.TRY_AGAIN))
            return
        if isinstance(opened, StepResult):
            await self._reply(interaction, Reply(opened.notice))
            return
        try:
            await interaction.response.send_modal(opened)
        except discord.HTTPException as exc:
            event("discord.press.unanswered", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
        finally:
            # Its submission is decoded from its custom id like any press, by whichever process gets it,
            # so discord.py need not keep the form waiting for it.
            opened.stop()

    async def _form_for(
        self, interaction: discord.Interaction[Any], control: ControlId
    ) -> StepResult | discord.ui.Modal:
        """The form a button opens, or why not (its prompt settled); a page shows what was given."""
        assert self.sink is not None
        result = await self.sink.step(steps.Open(**self._where(interaction, control), index=control.question))
        if result.refused or result.prompt is None or result.next is None:
            return result
        prompt = result.prompt
        if control.action is Action.FILL:
            forms.check_control(prompt, control)
            return forms.page_form(FormPrompt.of_prompt(prompt), control.question, result.next.given)
        if control.action in (Action.REASON, Action.EDIT):
            approvals.check_opens(prompt, control)
            return (
                approvals.reason_form(prompt)
                if control.action is Action.REASON
                else approvals.edit_form(prompt)
            )
        choices.check_opens_form(prompt, control)
        controls = PromptControls(
            prompt.prompt_id, prompt.kind, prompt.questions, prompt.tool_call, prompt.editable
        )
        if control.action is Action.WRITE:
            return text_form(controls, control.question)
        return answers_form(controls)

    # Answers ---------------------------------------------------------------------------------------

    async def _step(
        self,
        interaction: discord.Interaction[Any],
        control: ControlId,
        data: dict[str, Any],
        fields: dict[str, choices.FieldValue],
    ) -> Reply:
        """Decode the press or form for the core's answer step; the reply for the presser."""
        assert self.sink is not None
        action = control.action
        values = data.get("values") if isinstance(data.get("values"), list) else []
        indexes = [option_index(value) for value in values or []]
        where, index = self._where(interaction, control), control.question
        request: steps.Press
        if action in (Action.ANSWERS, Action.PAGE, Action.NOTE, Action.EDITED):
            request = steps.Read(**where, read=lambda prompt: _read_form(prompt, control, fields, where))
        elif action is Action.TEXT:
            text = fields.get(TEXT_FIELD)
            if text is not None and not isinstance(text, str):
                raise Refused()
            request = steps.Text(**where, index=index, text=text or "")
        elif action is Action.MENU:
            request = steps.Choose(**where, index=index, options=tuple(indexes))
        elif action is Action.NONE:
            request = steps.Submit(**where, index=index, ticked=frozenset())
        elif action in (Action.PICK, Action.SESSION):  # SESSION: Approve, with the call granted for the run
            session = action is Action.SESSION
            request = steps.Pick(**where, index=index, option=0 if session else control.option, grant=session)
        elif action is Action.DONE:
            request = steps.Done(**where)
        elif action is Action.CLAIM:
            request = steps.Claim(**where)
        else:
            request = steps.Decline(**where)
        result = await self.sink.step(request)
        event("discord.press", prompt_id=control.prompt_id, action=action.value, outcome=str(result.outcome))
        if result.next is not None and result.prompt is not None and action is Action.PAGE:
            page = result.next.index // forms.PAGE_SIZE if result.outcome is None else 0
            return Reply(result.notice, forms.next_page_view(FormPrompt.of_prompt(result.prompt), page))
        return Reply(result.notice)

    def _where(self, interaction: discord.Interaction[Any], control: ControlId) -> dict[str, Any]:
        """The prompt, the presser, the interaction and its thread, as every act names them."""
        return {
            "prompt_id": control.prompt_id,
            "sender": identity_for(interaction.user.id),
            "event_id": f"interaction:{interaction.id}",
            "thread_id": self._thread_of(interaction),
        }

    async def _within_deadline(
        self, interaction: discord.Interaction[Any], control: ControlId, work: Callable[[], Awaitable[Reply]]
    ) -> None:
        """Answer with what ``work`` says: at once when it is quick, else deferred and edited in."""
        task = asyncio.ensure_future(_guarded(control, work))
        done, _ = await asyncio.wait({task}, timeout=self._ack_deadline)
        if task in done:
            await self._reply(interaction, task.result())
            return
        with contextlib.suppress(discord.HTTPException):
            await interaction.response.defer(ephemeral=True, thinking=True)
        reply = await task
        try:
            if reply.view is not None:
                reply.view.stop()
                await interaction.edit_original_response(content=reply.text, view=reply.view)
            else:
                await interaction.edit_original_response(content=reply.text)
        except discord.HTTPException as exc:
            event("discord.press.unanswered", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))

    @staticmethod
    def _thread_of(interaction: discord.Interaction[Any]) -> str:
        channel_id = interaction.channel_id
        if channel_id is None and interaction.message is not None:
            channel_id = interaction.message.channel.id
        return thread_id_for(channel_id) if channel_id is not None else ""

    async def _reply(self, interaction: discord.Interaction[Any], reply: Reply) -> None:
        """Answer the press privately (an ephemeral response); a response Discord refuses is logged."""
        try:
            if reply.view is not None:
                reply.view.stop()  # its presses are decoded from custom ids, like the prompt's own
                await interaction.response.send_message(reply.text, ephemeral=True, view=reply.view)
            else:
                await interaction.response.send_message(reply.text, ephemeral=True)
        except discord.HTTPException as exc:  # e.g. a replayed interaction another session answered
            event("discord.press.unanswered", logging.DEBUG, interaction_id=interaction.id, error=str(exc))


__all__ = ["PressHandler"]


async def _guarded(control: ControlId, work: Callable[[], Awaitable[Reply]]) -> Reply:
    """What ``work`` replies, or a refused press or an unreachable store said to the presser."""
    try:
        return await work()
    except Refused as refused:
        event("discord.press.refused", logging.INFO, prompt_id=control.prompt_id, error=refused.message)
        return Reply(refused.message)
    except Exception as exc:  # the store is unreachable: say so, and let the person press again
        event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
        return Reply(notices.TRY_AGAIN)


def _read_form(
    prompt: Prompt, control: ControlId, fields: dict[str, choices.FieldValue], where: dict[str, Any]
) -> steps.Press | str:
    """A submitted form read against its prompt: the act it makes, or what the person is told instead."""
    action = control.action
    try:
        if action is Action.ANSWERS:
            return steps.Answers(**where, lists=choices.form_answers(prompt, fields))
        if action is Action.PAGE:
            forms.check_control(prompt, control)
            form = FormPrompt.of_prompt(prompt)
            given = forms.page_answers(form, control.question, fields)
            return steps.Fields(**where, fields=given, final=control.question == form.pages - 1)
        approvals.check_opens(prompt, control)
        if action is Action.NOTE:  # the reason's text denies the approval, with it as the note
            return steps.Text(**where, index=control.question, text=approvals.read_reason(fields))
        # The call's arguments as typed: the core reads and checks them.
        return steps.Edit(**where, fields=approvals.read_edit(prompt, fields))
    except Refused as refused:
        return refused.message
