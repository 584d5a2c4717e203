"""Submitted modals: a prompt's answer modal, a form prompt's fields modal and an approval's deny and edit
modals, checked and handed to the core within Slack's 3 s, so a modal the core did not take stays open
with the problem by its input.

The answer modal is read against its prompt's questions here (an option or a typed answer, not both)
and handed over in the background. The others are handed to the core before they are acknowledged: the
core decides (the form validator, the tool's schema for an edited call, who may answer), and what it did
not take is shown under the inputs. If that cannot finish within the budget, the modal closes and the
presser is told privately how it ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from channels.slack.answer_modal import TYPE_SOMETHING, read_form
from channels.slack.approval_modals import edit_errors, read_edit, read_reason, reason_errors
from channels.slack.control_ids import (
    ANSWER_CALLBACK,
    EDIT_CALLBACK,
    FIELDS_CALLBACK,
    NOTE,
    REASON_CALLBACK,
    decode,
)
from channels.slack.forms import block_errors, read_fields
from channels.slack.notices import BUSY_ERROR, notice_view
from gateway.sdk import FieldError, Outcome, Prompt, PromptKind, StepResult, notices, steps

APPROVE_OPTION, DENY_OPTION = 0, 1  # an approval's options, as its buttons name them


class Presses(Protocol):
    """What the submissions use of ``channels.slack.presses.Presses`` (which installs them): a Protocol,
    so the two modules do not import each other."""

    ack_budget: float

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    async def tell(self, prompt: Prompt, identity: str, notice: str) -> None: ...

    async def step(self, request: steps.Press) -> StepResult: ...


class Submissions:
    """Listens for submitted modals on the Bolt app and hands them over through ``presses``."""

    def __init__(self, presses: Presses) -> None:
        self.presses = presses

    def install(self, app: AsyncApp) -> None:
        app.view(ANSWER_CALLBACK)(self._on_answers)
        app.view(FIELDS_CALLBACK)(self._on_fields)
        app.view(REASON_CALLBACK)(self._on_reason)
        app.view(EDIT_CALLBACK)(self._on_edit)

    async def _checked_prompt(self, ack: AsyncAck, body: dict[str, Any]) -> Prompt | None:
        """The pending prompt a modal is for, read within the budget; None once ``ack`` said why not."""
        view = body.get("view") or {}
        values = (view.get("state") or {}).get("values") or {}
        ref = decode(view.get("private_metadata"))
        if ref is None:
            await ack(response_action="update", view=notice_view(notices.MISMATCH))
            return None
        try:
            async with asyncio.timeout(self.presses.ack_budget):
                opened = await self.presses.step(steps.Open(**self._where(ref.prompt_id, body)))
        except TimeoutError:
            first = next(iter(values), None)
            if first is None:
                await ack(response_action="update", view=notice_view(notices.TRY_AGAIN))
            else:
                await ack(response_action="errors", errors={first: BUSY_ERROR})
            return None
        if opened.refused or opened.prompt is None:
            await ack(response_action="update", view=notice_view(opened.notice))
            return None
        return opened.prompt

    # The answer modal (a prompt's questions) ---------------------------------------------------------

    async def _on_answers(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, body)
        if prompt is None:
            return
        reading = read_form(prompt, (view.get("state") or {}).get("values") or {})
        if reading.errors:
            await ack(response_action="errors", errors=reading.errors)
            return
        if reading.answers is None or prompt.kind is PromptKind.FORM:
            await ack(response_action="update", view=notice_view(notices.MISMATCH))
            return
        await ack()
        request = steps.Answers(**self._where(prompt.prompt_id, body), lists=reading.answers)
        self.presses.spawn(self._tell_later(prompt, request, self.presses.spawn(self.presses.step(request))))

    # The fields modal (a form prompt) -------------------------------------------------------------------

    async def _on_fields(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        started = asyncio.get_running_loop().time()
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, body)
        if prompt is None:
            return
        lists = read_fields(prompt, (view.get("state") or {}).get("values") or {})
        if lists is None or prompt.kind is not PromptKind.FORM:
            await ack(response_action="update", view=notice_view(notices.MISMATCH))
            return
        names = [field.name for field in prompt.form_fields()]
        request = steps.Fields(
            **self._where(prompt.prompt_id, body), fields=dict(zip(names, lists, strict=True))
        )
        await self._decide(ack, prompt, request, started, block_errors)

    # An approval's modals: deny with a reason, edit and approve -----------------------------------------

    async def _on_reason(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        started = asyncio.get_running_loop().time()
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, body)
        if prompt is None:
            return
        reason = read_reason((view.get("state") or {}).get("values") or {})
        if reason is None or prompt.kind is not PromptKind.APPROVAL:
            await ack(response_action="update", view=notice_view(notices.MISMATCH))
            return
        if not reason.strip():
            await ack(response_action="errors", errors={NOTE: TYPE_SOMETHING})
            return
        # The Deny option, with the person's words: the core records them as the approval's note.
        request = steps.Pick(**self._where(prompt.prompt_id, body), option=DENY_OPTION, note=reason)
        await self._decide(ack, prompt, request, started, reason_errors)

    async def _on_edit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        started = asyncio.get_running_loop().time()
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, body)
        if prompt is None:
            return
        reading = read_edit(prompt, (view.get("state") or {}).get("values") or {})
        if reading.errors:
            await ack(response_action="errors", errors=reading.errors)
            return
        if reading.arguments is None or prompt.kind is not PromptKind.APPROVAL:
            await ack(response_action="update", view=notice_view(notices.MISMATCH))
            return
        # The Approve option, with the call as edited: the core checks it against the tool's schema.
        where = self._where(prompt.prompt_id, body)
        request = steps.Pick(**where, option=APPROVE_OPTION, arguments=reading.arguments)
        await self._decide(ack, prompt, request, started, edit_errors)

    # Shared -----------------------------------------------------------------------------------------------

    async def _decide(
        self,
        ack: AsyncAck,
        prompt: Prompt,
        request: steps.Press,
        started: float,
        shown: Callable[[Prompt, tuple[FieldError, ...], str | None], dict[str, str]],
    ) -> None:
        """Hand a modal to the core before acknowledging it, within the budget: what the core did not take
        stays in the modal (``shown`` places the reasons by input), anything else closes or replaces it.
        Past the budget the modal closes and the person is told privately how it ended."""
        handing = self.presses.spawn(self.presses.step(request))
        left = self.presses.ack_budget - (asyncio.get_running_loop().time() - started)
        done, _ = await asyncio.wait({handing}, timeout=max(left, 0.0))
        if not done:  # the core still decides; the person hears how it ended privately
            await ack()
            self.presses.spawn(self._tell_later(prompt, request, handing))
            return
        result: StepResult = handing.result()
        errors = shown(prompt, result.errors, result.notice) if result.outcome is Outcome.KEPT else {}
        if errors:
            await ack(response_action="errors", errors=errors)
        elif result.outcome in (Outcome.ANSWERED, Outcome.VOTED):
            await ack()
            self.presses.spawn(self.presses.tell(prompt, request.sender, result.notice))
        else:
            await ack(response_action="update", view=notice_view(result.notice))

    @staticmethod
    def _where(prompt_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The prompt, the presser and the submission's id, as every act of a modal names them."""
        view = body.get("view") or {}
        presser = str((body.get("user") or {}).get("id") or "")
        event_id = f"form:{body.get('trigger_id') or view.get('id')}"
        return {"prompt_id": prompt_id, "sender": f"slack:{presser}", "event_id": event_id}

    async def _tell_later(
        self, prompt: Prompt, request: steps.Press, handing: asyncio.Task[StepResult]
    ) -> None:
        result = await handing
        await self.presses.tell(prompt, request.sender, result.notice)
