"""Presses on a prompt's native controls: checked, handed to the core, and answered privately.

Slack wants every interaction acknowledged within 3 s. A press is acknowledged at once and handled in
the background (a submitted modal is handled in ``submissions``). Nothing is kept per process: the prompt
reference rides in the control's value or the modal's ``private_metadata``, so any gateway process can
take any press.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from channels.slack.answer_modal import form_view
from channels.slack.calls import call
from channels.slack.control_ids import PREFIX, TOGGLES_BLOCK, ControlRef, Verb, action_id, decode, verb_of
from channels.slack.controls import fits_step, opens_form, press_answer, structured
from channels.slack.forms import fields_view
from channels.slack.notices import FAILED_NOTICE, MISMATCH_NOTICE, outcome_notice, stale_notice
from channels.slack.submissions import Submissions
from gateway.channel import ChannelError, InboundSink
from gateway.errors import GatewayError
from gateway.ids import ThreadRef, parse_thread_id
from gateway.logs import event
from gateway.models import MAX_TEXT_CHARS, InboundMessage, Prompt, PromptKind
from gateway.render import answers_summary
from gateway.replies import DONE
from gateway.service import Received

ACK_BUDGET_S = 2.0  # of Slack's 3 s, what checking a submitted modal may take before it is acknowledged
OPEN_FORM_WAIT_S = 1.0  # a trigger id lives 3 s: a rate limit longer than this is not waited out
DECLINE_TEXT = "decline"  # the text a Decline press is logged with; the press itself says decline

NotifyPrivate = Callable[[ThreadRef, str, str], Awaitable[None]]


def _thread_of(body: dict[str, Any]) -> str:
    """The thread id of the message a press was on."""
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    thread_ts = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
    return f"slack:{channel}:{thread_ts}"


def _checked(body: dict[str, Any]) -> list[ControlRef] | None:
    """The boxes ticked in the pressed message's checkboxes (its ``state.values``); None if malformed."""
    values = ((body.get("state") or {}).get("values") or {}).get(TOGGLES_BLOCK) or {}
    state = values.get(action_id(Verb.TOGGLE)) or {}
    entries = state.get("selected_options") or []
    refs = [decode(entry.get("value") if isinstance(entry, dict) else None) for entry in entries]
    return [ref for ref in refs if ref is not None] if all(refs) else None


class Presses:
    """Native prompt controls on Slack: listens for presses and forms on the Bolt app, hands each checked
    answer to the core (``notify=False``), and tells the presser privately what came of it."""

    def __init__(
        self,
        client: AsyncWebClient,
        notify_private: NotifyPrivate,
        *,
        max_inline_wait: float,
        ack_budget: float = ACK_BUDGET_S,
    ) -> None:
        self.client = client
        self.notify_private = notify_private
        self.max_inline_wait = max_inline_wait
        self.ack_budget = ack_budget
        self.sink: InboundSink | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def install(self, app: AsyncApp) -> None:
        app.action(re.compile(rf"^{re.escape(PREFIX)}"))(self._on_action)
        Submissions(self).install(app)

    async def idle(self) -> None:
        """Wait until every press this process took has been handled (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self, timeout: float = 5.0) -> None:
        """Finish the presses in hand within ``timeout``, then drop the rest."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.idle(), timeout)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``work`` in the background, awaited by ``idle`` and ``stop``."""
        task = asyncio.create_task(work, name="threadgate.slack.press")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # Presses on a message's controls ----------------------------------------------------------------

    async def _on_action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        action = (body.get("actions") or [{}])[0]
        verb = verb_of(action.get("action_id"))
        # A ticked box answers nothing until Submit; a link button's page opens in the browser.
        if verb not in (Verb.TOGGLE, Verb.LINK):
            self.spawn(self._press(verb, action, body))

    async def _press(self, verb: Verb | None, action: dict[str, Any], body: dict[str, Any]) -> None:
        presser = str((body.get("user") or {}).get("id") or "")
        try:
            notice = await self._answer_press(verb, action, body, presser)
        except Exception as exc:
            event("slack.press_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            notice = FAILED_NOTICE
        if notice is not None:
            await self._reply(body, presser, notice)

    async def _answer_press(
        self, verb: Verb | None, action: dict[str, Any], body: dict[str, Any], presser: str
    ) -> str | None:
        """Check the press against its prompt, then answer it or open the form; the notice to send."""
        value = action.get("value") or (action.get("selected_option") or {}).get("value")
        ref = decode(value)
        prompt = await self.prompt(ref)
        if verb is None or ref is None or prompt is None or prompt.thread_id != _thread_of(body):
            return MISMATCH_NOTICE
        event_id = f"act:{body.get('trigger_id') or action.get('action_ts')}"
        if verb in (Verb.DONE, Verb.DECLINE):
            if not fits_step(prompt, verb, ref):
                return MISMATCH_NOTICE
            if verb is Verb.DONE:
                return await self.answer(prompt, presser, [[DONE]], event_id)
            received = await self.hand_over(prompt, presser, event_id, DECLINE_TEXT, decline=True)
            return outcome_notice(received, prompt, DECLINE_TEXT)
        if verb in (Verb.OTHER, Verb.FORM):
            if not opens_form(prompt, verb, ref):
                return MISMATCH_NOTICE
            if not prompt.pending:
                return stale_notice(prompt)
            ticked = [box.option for box in _checked(body) or [] if box.prompt_id == prompt.prompt_id]
            checked = [index for index in ticked if index is not None]
            if prompt.kind is PromptKind.FORM:
                view = fields_view(prompt)
            else:
                view = form_view(prompt, focus_other=verb is Verb.OTHER, checked=checked)
            await self._open_form(str(body.get("trigger_id") or ""), view)
            return None
        checked_refs = _checked(body) if verb is Verb.SUBMIT else []
        answer = press_answer(prompt, verb, ref, checked_refs) if checked_refs is not None else None
        if answer is None:
            return MISMATCH_NOTICE
        return await self.answer(prompt, presser, [answer], event_id)

    async def _open_form(self, trigger_id: str, view: dict[str, Any]) -> None:
        async def send() -> Any:
            return await self.client.views_open(trigger_id=trigger_id, view=view)

        await call("views.open", send, max_wait=min(self.max_inline_wait, OPEN_FORM_WAIT_S))

    async def _reply(self, body: dict[str, Any], presser: str, text: str) -> None:
        """Answer a press privately: through its ``response_url``, else as an ephemeral message."""
        response_url = body.get("response_url")
        try:
            if isinstance(response_url, str) and response_url:
                response = await AsyncWebhookClient(response_url).send_dict(
                    {"response_type": "ephemeral", "replace_original": False, "text": text}
                )
                if response.status_code != 200:
                    raise ChannelError(f"Slack refused the press's response: HTTP {response.status_code}")
            else:
                await self.notify_private(parse_thread_id(_thread_of(body)), f"slack:{presser}", text)
        except Exception as exc:  # the press itself was handled; only the notice is lost
            # Only the type: a response_url is a credential and may appear in an exception's text.
            event("slack.press_notice_failed", logging.WARNING, error=type(exc).__name__)

    async def tell(self, prompt: Prompt, presser: str, notice: str) -> None:
        """A private notice in the prompt's thread (the answer to a submitted modal)."""
        try:
            await self.notify_private(parse_thread_id(prompt.thread_id), f"slack:{presser}", notice)
        except ChannelError as exc:
            event("slack.press_notice_failed", logging.WARNING, error=str(exc))

    # Shared -------------------------------------------------------------------------------------------

    async def prompt(self, ref: ControlRef | None) -> Prompt | None:
        """The prompt a control points at, or None when there is no such prompt."""
        if ref is None:
            return None
        if self.sink is None:
            raise ChannelError("the Slack channel is not running")
        try:
            return await self.sink.get_prompt(ref.prompt_id)
        except GatewayError as exc:
            if exc.status == 404:
                return None
            raise

    async def answer(self, prompt: Prompt, presser: str, lists: list[list[str]], event_id: str) -> str:
        """Hand a checked answer set to the core as one structured answer; the notice for the presser."""
        answers = structured(prompt, lists)
        summary = answers_summary(answers)
        entries = [answer.model_dump(mode="json") for answer in answers]
        received = await self.hand_over(prompt, presser, event_id, summary, entries)
        return outcome_notice(received, prompt, summary)

    async def hand_over(
        self,
        prompt: Prompt,
        presser: str,
        event_id: str,
        text: str,
        answers: list[dict[str, Any]] | None = None,
        *,
        decline: bool = False,
    ) -> Received:
        """Hand what a press or a modal says to the core (which decides who may answer and whether it
        is a valid answer), as the presser's message about ``prompt``; ``decline`` for a Decline press."""
        if self.sink is None:
            raise ChannelError("the Slack channel is not running")
        message = InboundMessage(
            thread_id=prompt.thread_id,
            sender=f"slack:{presser}",
            text=text[:MAX_TEXT_CHARS],
            answers=answers,
            prompt_id=prompt.prompt_id,
            event_id=event_id[:200],
            notify=False,
            decline=decline,
        )
        received = await self.sink.receive(message)
        event(
            "slack.press",
            thread_id=prompt.thread_id,
            prompt_id=prompt.prompt_id,
            outcome=received.outcome.value,
        )
        return received
