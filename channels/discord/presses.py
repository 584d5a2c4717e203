"""Presses of prompt controls (buttons, selects, forms): checked, handed to the core, answered privately."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from channels.discord import choices, forms
from channels.discord.choices import (
    NOT_ALLOWED,
    NOT_THIS_PROMPT,
    PAGE_KEPT,
    TRY_AGAIN,
    UNKNOWN_PROMPT,
    Refused,
    Reply,
    form_fields,
    outcome_notice,
    settled_notice,
)
from channels.discord.control_ids import Action, BadControl, ControlId, decode
from channels.discord.controls import PromptControls, answers_form, text_form
from channels.discord.forms import FormPrompt
from channels.discord.inbound import identity_for
from channels.discord.threads import thread_id_for
from gateway.channel import InboundSink
from gateway.errors import GatewayError
from gateway.logs import event
from gateway.models import InboundMessage, Prompt
from gateway.service import DraftStatus, Outcome

DEFAULT_ACK_DEADLINE = 2.0  # Discord gives 3 s for the first response; keep room for the round trip
FORM_DEADLINE = 2.5  # a form cannot be deferred: it must be the first response, or nothing
MESSAGE_CONTROLS = frozenset({Action.PICK, Action.MENU, Action.NONE})
FORM_OPENERS = frozenset({Action.WRITE, Action.FORM, Action.FILL})

Answering = Callable[[Prompt], list[list[str]]]  # a press's answer lists, or Refused


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
            await self._reply(interaction, Reply(NOT_THIS_PROMPT))
            return
        if control is None or self.sink is None:
            return
        component = interaction.type is discord.InteractionType.component
        submitted = interaction.type is discord.InteractionType.modal_submit
        fields = form_fields(data.get("components")) if submitted else {}
        action = control.action
        if component and action in FORM_OPENERS:
            await self._open_form(interaction, control)
        elif component and action in MESSAGE_CONTROLS:
            values = data.get("values")
            pressed = values if isinstance(values, list) else []
            await self._answer(interaction, control, lambda p: choices.press_answers(p, control, pressed))
        elif component and action is Action.DONE:
            await self._answer(interaction, control, lambda p: [[forms.DONE.casefold()]])
        elif component and action is Action.DECLINE:
            await self._answer(interaction, control, lambda p: [[forms.DECLINE.casefold()]], decline=True)
        elif submitted and action is Action.TEXT:
            await self._answer(interaction, control, lambda p: choices.text_answers(p, control, fields))
        elif submitted and action is Action.ANSWERS:
            await self._answer(interaction, control, lambda p: choices.form_answers(p, fields))
        elif submitted and action is Action.PAGE:
            await self._page(interaction, control, fields)
        else:
            event("discord.press.refused", logging.WARNING, prompt_id=control.prompt_id, error="wrong kind")
            await self._reply(interaction, Reply(NOT_THIS_PROMPT))

    # Forms -----------------------------------------------------------------------------------------

    async def _open_form(self, interaction: discord.Interaction[Any], control: ControlId) -> None:
        """Open the text form, the form of every question, or a page of a flat form, if still open."""
        try:
            prompt, form = await asyncio.wait_for(self._form_for(interaction, control), FORM_DEADLINE)
        except Refused as refused:
            await self._reply(interaction, Reply(refused.message))
            return
        except Exception as exc:  # slow or unreachable store: a form must be the first response, or none
            event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
            await self._reply(interaction, Reply(TRY_AGAIN))
            return
        if form is None:
            await self._reply(interaction, Reply(settled_notice(prompt)))
            return
        try:
            await interaction.response.send_modal(form)
        except discord.HTTPException as exc:
            event("discord.press.unanswered", logging.WARNING, prompt_id=prompt.prompt_id, error=str(exc))
        finally:
            # Its submission is decoded from its custom id like any press, by whichever process gets it,
            # so discord.py need not keep the form waiting for it.
            form.stop()

    async def _form_for(
        self, interaction: discord.Interaction[Any], control: ControlId
    ) -> tuple[Prompt, discord.ui.Modal | None]:
        """The form a button opens (``None`` once its prompt settled); a page shows what was given."""
        assert self.sink is not None
        prompt = await self._prompt_for(interaction, control)
        if control.action is Action.FILL:
            forms.check_control(prompt, control)
        else:
            choices.check_opens_form(prompt, control)
        if not prompt.pending:
            return prompt, None
        if control.action is Action.FILL:
            draft = forms.draft_name(prompt.prompt_id, interaction.user.id)
            given = forms.draft_answers(await self.sink.get_draft(prompt.thread_id, draft))
            return prompt, forms.page_form(FormPrompt.of_prompt(prompt), control.question, given)
        controls = PromptControls(prompt.prompt_id, prompt.kind, prompt.questions, prompt.tool_call)
        if control.action is Action.WRITE:
            return prompt, text_form(controls, control.question)
        return prompt, answers_form(controls)

    async def _page(
        self, interaction: discord.Interaction[Any], control: ControlId, fields: dict[str, choices.FieldValue]
    ) -> None:
        """A page of a flat form, kept in the person's draft (the next page, or the form reopened to change
        a value, shows it); the last page hands the whole form to the core, whose validator decides."""

        async def work() -> Reply:
            assert self.sink is not None
            prompt = await self._prompt_for(interaction, control)
            forms.check_control(prompt, control)
            form, page, sender = FormPrompt.of_prompt(prompt), control.question, interaction.user.id
            given = forms.page_answers(form, page, fields)
            saved = await self.sink.save_draft(
                prompt.prompt_id,
                identity_for(sender),
                forms.draft_name(prompt.prompt_id, sender),
                forms.draft_values(given),
            )
            if page == form.pages - 1:
                answers = forms.full_answers(form, {**forms.draft_answers(saved.values), **given})
                return await self._settle(interaction, control, lambda _: answers, prompt=prompt)
            if saved.status is DraftStatus.NOT_ALLOWED:
                return Reply(NOT_ALLOWED)
            if saved.status is DraftStatus.STALE:
                return Reply(settled_notice(await self.sink.get_prompt(prompt.prompt_id)))
            shown = form.page_fields(page)
            text = PAGE_KEPT.format(first=shown[0][0] + 1, last=shown[-1][0] + 1, total=len(form.fields))
            return Reply(text, forms.next_page_view(form, page + 1))

        await self._within_deadline(interaction, control, self._refusing(control, work))

    # Answers ---------------------------------------------------------------------------------------

    async def _answer(
        self,
        interaction: discord.Interaction[Any],
        control: ControlId,
        compute: Answering,
        *,
        decline: bool = False,
    ) -> None:
        """Check the press, hand it to the core, and answer privately within Discord's deadline."""

        async def work() -> Reply:
            return await self._settle(interaction, control, compute, decline=decline)

        await self._within_deadline(interaction, control, self._refusing(control, work))

    def _refusing(
        self, control: ControlId, work: Callable[[], Awaitable[Reply]]
    ) -> Callable[[], Awaitable[Reply]]:
        """``work``, with a refused press or an unreachable store said to the presser."""

        async def guarded() -> Reply:
            try:
                return await work()
            except Refused as refused:
                event(
                    "discord.press.refused", logging.INFO, prompt_id=control.prompt_id, error=refused.message
                )
                return Reply(refused.message)
            except Exception as exc:  # the store is unreachable: say so, and let the person press again
                event("discord.press.failed", logging.WARNING, prompt_id=control.prompt_id, error=str(exc))
                return Reply(TRY_AGAIN)

        return guarded

    async def _within_deadline(
        self, interaction: discord.Interaction[Any], control: ControlId, work: Callable[[], Awaitable[Reply]]
    ) -> None:
        """Answer with what ``work`` says: at once when it is quick, else deferred and edited in."""
        task = asyncio.ensure_future(work())
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

    async def _settle(
        self,
        interaction: discord.Interaction[Any],
        control: ControlId,
        compute: Answering,
        *,
        decline: bool = False,
        prompt: Prompt | None = None,
    ) -> Reply:
        """The reply for the presser; the core applies dedupe, staleness, who may answer, first wins."""
        assert self.sink is not None
        if prompt is None:
            prompt = await self._prompt_for(interaction, control)
        if control.action in (Action.DONE, Action.DECLINE):
            forms.check_control(prompt, control)
        answers = compute(prompt)
        text = choices.summary(answers)
        message = InboundMessage(
            thread_id=prompt.thread_id,
            sender=identity_for(interaction.user.id),
            text=text,
            answers=None if decline else choices.structured(prompt, answers),
            prompt_id=prompt.prompt_id,
            event_id=f"interaction:{interaction.id}",
            notify=False,
            decline=decline,
        )
        received = await self.sink.receive(message)
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
        notice = outcome_notice(received, text, prompt)
        if received.outcome is Outcome.KEPT and control.action is Action.PAGE:
            return Reply(notice, forms.next_page_view(FormPrompt.of_prompt(prompt), 0))
        return Reply(notice)

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
