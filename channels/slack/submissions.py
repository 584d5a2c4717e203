"""Submitted modals: a prompt's answer modal and a form prompt's fields modal, checked and handed to the
core within Slack's 3 s, so a modal the core did not take stays open with the problem by its input.

The answer modal is read against its prompt's questions here (an option or a typed answer, not both)
and handed over in the background. The fields modal is handed to the core before it is acknowledged:
the core's one form validator decides, and the values it did not take are shown under their inputs. If
that cannot finish within the budget, the modal closes and the presser is told privately how it ended.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from channels.slack.answer_modal import read_form
from channels.slack.control_ids import ANSWER_CALLBACK, FIELDS_CALLBACK, ControlRef, decode
from channels.slack.controls import structured
from channels.slack.forms import block_errors, read_fields
from channels.slack.notices import (
    BUSY_ERROR,
    FAILED_NOTICE,
    MISMATCH_NOTICE,
    notice_view,
    outcome_notice,
    stale_notice,
)
from gateway.logs import event
from gateway.models import Prompt, PromptKind
from gateway.render import answers_summary
from gateway.service import Outcome, Received


class Presses(Protocol):
    """What the submissions use of ``channels.slack.presses.Presses`` (which installs them): a Protocol,
    so the two modules do not import each other."""

    ack_budget: float

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    async def tell(self, prompt: Prompt, presser: str, notice: str) -> None: ...

    async def prompt(self, ref: ControlRef | None) -> Prompt | None: ...

    async def answer(self, prompt: Prompt, presser: str, lists: list[list[str]], event_id: str) -> str: ...

    async def hand_over(
        self,
        prompt: Prompt,
        presser: str,
        event_id: str,
        text: str,
        answers: list[dict[str, Any]] | None = None,
        *,
        decline: bool = False,
    ) -> Received: ...


class Submissions:
    """Listens for submitted modals on the Bolt app and hands them over through ``presses``."""

    def __init__(self, presses: Presses) -> None:
        self.presses = presses

    def install(self, app: AsyncApp) -> None:
        app.view(ANSWER_CALLBACK)(self._on_answers)
        app.view(FIELDS_CALLBACK)(self._on_fields)

    async def _checked_prompt(self, ack: AsyncAck, view: dict[str, Any]) -> Prompt | None:
        """The pending prompt a modal is for, read within the budget; None once ``ack`` said why not."""
        values = (view.get("state") or {}).get("values") or {}
        try:
            async with asyncio.timeout(self.presses.ack_budget):
                prompt = await self.presses.prompt(decode(view.get("private_metadata")))
        except TimeoutError:
            first = next(iter(values), None)
            if first is None:
                await ack(response_action="update", view=notice_view(FAILED_NOTICE))
            else:
                await ack(response_action="errors", errors={first: BUSY_ERROR})
            return None
        if prompt is None:
            await ack(response_action="update", view=notice_view(MISMATCH_NOTICE))
            return None
        return prompt

    # The answer modal (a prompt's questions) ---------------------------------------------------------

    async def _on_answers(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, view)
        if prompt is None:
            return
        reading = read_form(prompt, (view.get("state") or {}).get("values") or {})
        if reading.errors:
            await ack(response_action="errors", errors=reading.errors)
            return
        if reading.answers is None or prompt.kind is PromptKind.FORM:
            await ack(response_action="update", view=notice_view(MISMATCH_NOTICE))
            return
        if not prompt.pending:
            await ack(response_action="update", view=notice_view(stale_notice(prompt)))
            return
        await ack()
        presser = str((body.get("user") or {}).get("id") or "")
        event_id = f"form:{body.get('trigger_id') or view.get('id')}"
        self.presses.spawn(self._answer_later(prompt, presser, reading.answers, event_id))

    async def _answer_later(
        self, prompt: Prompt, presser: str, answers: list[list[str]], event_id: str
    ) -> None:
        try:
            notice = await self.presses.answer(prompt, presser, answers, event_id)
        except Exception as exc:
            event("slack.form_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            notice = FAILED_NOTICE
        await self.presses.tell(prompt, presser, notice)

    # The fields modal (a form prompt) -------------------------------------------------------------------

    async def _on_fields(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        started = asyncio.get_running_loop().time()
        view = body.get("view") or {}
        prompt = await self._checked_prompt(ack, view)
        if prompt is None:
            return
        lists = read_fields(prompt, (view.get("state") or {}).get("values") or {})
        if lists is None or prompt.kind is not PromptKind.FORM:
            await ack(response_action="update", view=notice_view(MISMATCH_NOTICE))
            return
        if not prompt.pending:
            await ack(response_action="update", view=notice_view(stale_notice(prompt)))
            return
        presser = str((body.get("user") or {}).get("id") or "")
        event_id = f"form:{body.get('trigger_id') or view.get('id')}"
        answers = structured(prompt, lists)
        entries = [answer.model_dump(mode="json") for answer in answers]
        summary = answers_summary(answers)
        handing = self.presses.spawn(self.presses.hand_over(prompt, presser, event_id, summary, entries))
        left = self.presses.ack_budget - (asyncio.get_running_loop().time() - started)
        done, _ = await asyncio.wait({handing}, timeout=max(left, 0.0))
        if not done:  # the core still decides; the person hears how it ended privately
            await ack()
            self.presses.spawn(self._tell_later(prompt, presser, handing, summary))
            return
        try:
            received: Received = handing.result()
        except Exception as exc:
            event("slack.form_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            await ack(response_action="update", view=notice_view(FAILED_NOTICE))
            return
        if received.outcome is Outcome.KEPT:
            await ack(response_action="errors", errors=block_errors(prompt, received.errors, received.notice))
            return
        notice = outcome_notice(received, prompt, summary)
        if received.outcome is Outcome.ANSWERED:
            await ack()
            self.presses.spawn(self.presses.tell(prompt, presser, notice))
            return
        await ack(response_action="update", view=notice_view(notice))

    async def _tell_later(
        self, prompt: Prompt, presser: str, handing: asyncio.Task[Received], summary: str
    ) -> None:
        try:
            notice = outcome_notice(await handing, prompt, summary)
        except Exception as exc:
            event("slack.form_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            notice = FAILED_NOTICE
        await self.presses.tell(prompt, presser, notice)
