"""Presses on a prompt's native controls: decoded for the core's answer step, and answered privately.

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
from channels.slack.approval_modals import edit_view, reason_view
from channels.slack.calls import call
from channels.slack.control_ids import PREFIX, TOGGLES_BLOCK, ControlRef, Verb, action_id, decode, verb_of
from channels.slack.controls import opens_form
from channels.slack.forms import fields_view
from channels.slack.submissions import Submissions
from gateway.sdk import (
    ChannelError,
    InboundSink,
    Prompt,
    PromptKind,
    StepResult,
    ThreadRef,
    event,
    notices,
    parse_thread_id,
    steps,
)

ACK_BUDGET_S = 2.0  # of Slack's 3 s, what checking a submitted modal may take before it is acknowledged
OPEN_FORM_WAIT_S = 1.0  # a trigger id lives 3 s: a rate limit longer than this is not waited out

NotifyPrivate = Callable[[ThreadRef, str, str], Awaitable[None]]


def _thread_of(body: dict[str, Any]) -> str:
    """The thread id of the message a press was on."""
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    thread_ts = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
    return f"slack:{channel}:{thread_ts}"


def _ticks(ref: ControlRef, body: dict[str, Any]) -> frozenset[int]:
    """The boxes ticked in the pressed message's checkboxes (its ``state.values``), as option indexes:
    -1 for a box that is not one of this prompt's (or a state that does not read)."""
    values = ((body.get("state") or {}).get("values") or {}).get(TOGGLES_BLOCK) or {}
    entries = (values.get(action_id(Verb.TOGGLE)) or {}).get("selected_options") or []
    boxes = [decode(entry.get("value") if isinstance(entry, dict) else None) for entry in entries]
    return frozenset(
        box.option
        if box and box.prompt_id == ref.prompt_id and box.question == 0 and box.option is not None
        else -1
        for box in boxes
    )


class Presses:
    """Native prompt controls on Slack: listens for presses and forms on the Bolt app, hands each decoded
    one to the core's answer step, and tells the presser privately what came of it."""

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
        except Exception as exc:  # the form could not be opened
            event("slack.press_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
            notice = notices.TRY_AGAIN
        if notice is not None:
            await self._reply(body, presser, notice)

    async def _answer_press(
        self, verb: Verb | None, action: dict[str, Any], body: dict[str, Any], presser: str
    ) -> str | None:
        """Decode the press for the core's answer step, or open the form it asks for; the notice to send."""
        value = action.get("value") or (action.get("selected_option") or {}).get("value")
        ref = decode(value)
        if verb is None or ref is None:
            return notices.MISMATCH
        where = {
            "prompt_id": ref.prompt_id,
            "sender": f"slack:{presser}",
            "event_id": f"act:{body.get('trigger_id') or action.get('action_ts')}",
            "thread_id": _thread_of(body),
        }
        request = _request(verb, ref, body, where)
        result = await self.step(request)
        if not isinstance(request, steps.Open) or result.refused or result.prompt is None:
            return result.notice
        prompt = result.prompt
        if not opens_form(prompt, verb, ref):
            return notices.MISMATCH
        checked = sorted(index for index in _ticks(ref, body) if index >= 0)
        if verb is Verb.REASON:
            view = reason_view(prompt)
        elif verb is Verb.EDIT:
            view = edit_view(prompt)
        elif prompt.kind is PromptKind.FORM:
            view = fields_view(prompt)
        else:
            view = form_view(prompt, focus_other=verb is Verb.OTHER, checked=checked)
        await self._open_form(str(body.get("trigger_id") or ""), view)
        return None

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

    async def tell(self, prompt: Prompt, identity: str, notice: str) -> None:
        """A private notice to ``identity`` in the prompt's thread (the answer to a submitted modal)."""
        try:
            await self.notify_private(parse_thread_id(prompt.thread_id), identity, notice)
        except ChannelError as exc:
            event("slack.press_notice_failed", logging.WARNING, error=str(exc))

    # Shared -------------------------------------------------------------------------------------------

    async def step(self, request: steps.Press) -> StepResult:
        """Hand a decoded press or modal to the core's answer step (who may answer, first answer wins)."""
        if self.sink is None:
            return StepResult(notice=notices.TRY_AGAIN, status=steps.Status.REFUSED)
        result = await self.sink.step(request)
        event("slack.press", prompt_id=request.prompt_id, act=request.act.value, outcome=str(result.outcome))
        return result


def _request(verb: Verb, ref: ControlRef, body: dict[str, Any], where: dict[str, Any]) -> steps.Press:
    """The act a press makes (a form opener's: ``Open``); ``where`` names the prompt, presser and press."""
    index = ref.question if ref.question is not None else -1
    option = ref.option if ref.option is not None else -1
    if verb in (Verb.PICK, Verb.SESSION):  # SESSION: Approve, with the call granted for the run
        return steps.Pick(**where, index=index, option=option, grant=verb is Verb.SESSION)
    if verb is Verb.CHOOSE:
        return steps.Choose(**where, index=index, options=() if ref.option is None else (ref.option,))
    if verb is Verb.SUBMIT:
        return steps.Submit(**where, index=index, ticked=_ticks(ref, body))
    if verb is Verb.DONE:
        return steps.Done(**where)
    if verb is Verb.DECLINE:
        return steps.Decline(**where)
    if verb is Verb.CLAIM:
        return steps.Claim(**where)
    return steps.Open(**where, index=index)
