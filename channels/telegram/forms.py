"""Forms and URL steps as Telegram messages: a form's fields one at a time, a URL step's link and Done.

A form's text stays the core's (the message, then each field with its constraints), so a typed value or
``name: value`` lines still answer; the buttons are for one field at a time (the first the draft lacks):
a button per choice, Yes and No, ticks and Submit for a multi-select, ``✎ Answer…`` (a ForceReply) for
text, numbers and dates. What a button sends is the text a person would type for that field, so the
core's one form validator reads it and keeps the draft. A URL step gets a link button, Done and Decline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from telegram import MaybeInaccessibleMessage, User

from channels.telegram.control_ids import Action, Control
from channels.telegram.controls import SUBMIT, TICK, WRITE, button_text, ticked_in
from channels.telegram.inbound import address_of
from channels.telegram.presses import Notice, Press, Presses, Refused, keyboard_of
from channels.telegram.render import (
    MAX_MESSAGE_UNITS,
    Button,
    Keyboard,
    Outgoing,
    asking_for_reply,
    split_text,
)
from gateway import forms
from gateway.ids import parse_thread_id
from gateway.models import Prompt, PromptKind
from gateway.render import answers_summary, prompt_body, shorten
from gateway.replies import DONE, draft_name, read_draft
from gateway.service import Outcome

FORM_KINDS = frozenset({PromptKind.FORM, PromptKind.URL})
YES_TEXT, NO_TEXT = "Yes", "No"
SKIP_TEXT = "Skip"
DONE_TEXT = "✓ Done"
DECLINE_TEXT = "✗ Decline"
OPEN_TEXT = "Open link"
MAX_FIELD_LINE_CHARS = 200
STEP_RESERVE = 320  # room kept in the last part for the field line
SAVED = "Saved. Now field {number} of {total}."
MOVED_ON = "That field has a value already; the buttons now show field {number} of {total}."
NOT_TAKEN = "Not taken; the form is still open."
DECLINED = "Declined; the agent is told."
SUPERSEDED = (
    "Not taken as an answer: the prompt was closed and your reply goes to the agent as a new message."
)
FORM_HINT = "Answer with the buttons, a field at a time, or reply with the value."
URL_HINT = "Open the link and finish there, then press Done or reply done."


@dataclass(frozen=True, slots=True)
class StepView:
    """A pending form or URL step, as its controls are drawn: read back from the posted item's metadata
    or taken from the core's record."""

    prompt_id: str
    kind: PromptKind
    body: str
    fields: list[forms.FormField]
    url: str | None = None

    @classmethod
    def of_metadata(cls, metadata: dict[str, Any], body: str) -> StepView | None:
        """From a pending_prompt item's metadata; None unless it is a readable form or URL step."""
        prompt = metadata.get("prompt")
        if metadata.get("type") != "pending_prompt" or not isinstance(prompt, dict):
            return None
        try:
            kind = PromptKind(str(prompt.get("kind")))
            if kind not in FORM_KINDS:
                return None
            fields = forms.check_schema(prompt["requested_schema"]) if kind is PromptKind.FORM else []
            url = prompt.get("url") if kind is PromptKind.URL else None
            return cls(str(prompt["prompt_id"]), kind, body, fields, url if isinstance(url, str) else None)
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def of_prompt(cls, prompt: Prompt) -> StepView:
        return cls(prompt.prompt_id, prompt.kind, prompt_body(prompt), prompt.form_fields(), prompt.url)


def linkable(url: str | None) -> bool:
    """Whether Telegram takes ``url`` on a button: it refuses hosts without a dot (``localhost``) and
    plain http to this machine would open nothing on the person's phone, so only https links qualify."""
    if url is None:
        return False
    parts = urlsplit(url)
    return parts.scheme == "https" and "." in (parts.hostname or "")


def field_line(view: StepView, step: int) -> str:
    """Which field the buttons are for, with what a valid value is."""
    field = view.fields[step]
    text = shorten(f"{field.title} — {', '.join(forms.constraints(field))}", MAX_FIELD_LINE_CHARS)
    return f"▶ Field {step + 1} of {len(view.fields)}: {text}"


def keyboard(view: StepView, step: int = 0, ticked: frozenset[int] = frozenset()) -> Keyboard:
    """A URL step's link, Done and Decline; or the buttons of form field ``step``, then Decline (and Skip
    for an optional field of a form with several)."""

    def button(text: str, action: Action, option: int = 0) -> Button:
        return Button(text, Control(action, view.prompt_id, step, option).encode())

    decline = button(DECLINE_TEXT, Action.DECLINE)
    if view.kind is PromptKind.URL:
        link = ((Button(OPEN_TEXT, "", view.url),),) if linkable(view.url) else ()
        return (*link, (button(DONE_TEXT, Action.DONE), decline))
    field = view.fields[step]
    rows: list[tuple[Button, ...]]
    if field.type == "boolean":
        rows = [(button(YES_TEXT, Action.PICK, 0), button(NO_TEXT, Action.PICK, 1))]
    elif field.type == "array":
        rows = [
            (button(TICK * (index in ticked) + button_text(index + 1, label), Action.TOGGLE, index),)
            for index, label in enumerate(field.labels)
        ]
        rows.append((button(SUBMIT, Action.SUBMIT),))
    elif field.choices:
        rows = [
            (button(button_text(index + 1, label), Action.PICK, index),)
            for index, label in enumerate(field.labels)
        ]
    else:
        rows = [(button(WRITE, Action.WRITE),)]
    last = (button(SKIP_TEXT, Action.SKIP), decline) if skippable(view, step) else (decline,)
    return (*rows, last)


def skippable(view: StepView, step: int) -> bool:
    """An optional field of a form with several may be left empty (``skip``, as typed)."""
    return len(view.fields) > 1 and not view.fields[step].required


def parts(view: StepView, step: int = 0) -> list[str]:
    """The prompt's text in messages; with several fields the last names the field the buttons are for."""
    if len(view.fields) < 2:
        return split_text(view.body)
    texts = split_text(view.body, limit=MAX_MESSAGE_UNITS - STEP_RESERVE)
    texts[-1] = f"{texts[-1]}\n\n{field_line(view, step)}"
    return texts


def controls_text(view: StepView, step: int = 0) -> str:
    """A group's buttons message: how to answer, and which field the buttons are for."""
    if view.kind is PromptKind.URL:
        return URL_HINT
    return f"{FORM_HINT}\n\n{field_line(view, step)}" if len(view.fields) > 1 else FORM_HINT


def step_text(view: StepView, step: int, *, group: bool) -> str:
    """The text of the message with the buttons while field ``step`` is shown."""
    return controls_text(view, step) if group else parts(view, step)[-1]


def messages(view: StepView, *, reply_to: int | None = None, group: bool = False) -> list[Outgoing]:
    """The messages a pending form or URL step becomes; the last carries the buttons. In a ``group`` the
    text asks for a reply (so a typed value reaches the bot) and the buttons follow on their own."""
    if group:
        asked = asking_for_reply(split_text(view.body), reply_to=reply_to)
        return [*asked, Outgoing(controls_text(view), keyboard=keyboard(view))]
    texts = parts(view)
    last = len(texts) - 1
    return [
        Outgoing(
            text=text,
            reply_to=reply_to if index == 0 else None,
            keyboard=keyboard(view) if index == last else None,
        )
        for index, text in enumerate(texts)
    ]


def fits_step(view: StepView, control: Control) -> bool:
    """Whether a decoded control is one this form or URL step shows; anything else was tampered with."""
    if control.action is Action.DECLINE:
        return control.option == 0 and control.question < max(len(view.fields), 1)
    if view.kind is PromptKind.URL:
        return control.action is Action.DONE and (control.question, control.option) == (0, 0)
    if control.question >= len(view.fields):
        return False
    field = view.fields[control.question]
    if control.action is Action.PICK:
        return field.type != "array" and control.option < len(field.labels)
    if control.action is Action.TOGGLE:
        return field.type == "array" and control.option < len(field.labels)
    if control.action in (Action.SUBMIT, Action.WRITE, Action.SKIP) and control.option != 0:
        return False
    if control.action is Action.SUBMIT:
        return field.type == "array"
    if control.action is Action.WRITE:
        return field.type != "array" and not field.labels
    return control.action is Action.SKIP and skippable(view, control.question)


def typed_value(field: forms.FormField, control: Control, ticked: frozenset[int] = frozenset()) -> str:
    """What a press says, as a person would type it for ``field``: yes or no, a choice's title, the
    ticked choices' titles a line each, or skip. The core reads and checks it like any typed value.

    Titles, not numbers: a typed number is a choice's value before it is a position (``["2", "1"]``).
    """
    if control.action is Action.SKIP:
        return "skip"
    if field.type == "boolean":
        return "yes" if control.option == 0 else "no"
    if control.action is Action.SUBMIT:
        return "\n".join(field.labels[index] for index in sorted(ticked))
    return field.labels[control.option]


def next_step(view: StepView, given: dict[str, Any]) -> int | None:
    """The first field the draft has no value for (the one the buttons show); None when all have one."""
    for index, field in enumerate(view.fields):
        if field.name not in given:
            return index
    return None


class FormPresses:
    """Presses of a form's or URL step's buttons, and replies to a form field's text request: each is
    handed to the core as the text a person would type; the buttons then show the next field."""

    def __init__(self, presses: Presses) -> None:
        self.presses = presses

    async def on_press(
        self, press: Press, control: Control, message: MaybeInaccessibleMessage, user: User
    ) -> Notice:
        view = StepView.of_prompt(press.prompt)
        if not fits_step(view, control):
            raise Refused()
        if control.action is Action.DECLINE:
            return await self._hand_over(view, press, "decline", decline=True)
        if control.action is Action.DONE:
            return await self._hand_over(view, press, DONE)
        await self._on_field(view, press)
        field = view.fields[press.step]
        if control.action is Action.WRITE:
            return await self.presses.ask_text(press, user)
        if control.action is Action.TOGGLE:
            return await self._toggle(view, press, message, control.option)
        ticked = self._ticked(press, message) if control.action is Action.SUBMIT else frozenset()
        return await self._hand_over(view, press, typed_value(field, control, ticked))

    async def on_reply(self, press: Press, text: str) -> Notice:
        """A reply to a field's text request: that field's value, as typed."""
        view = StepView.of_prompt(press.prompt)
        if view.kind is not PromptKind.FORM:
            raise Refused()
        await self._on_field(view, press)
        return await self._hand_over(view, press, text)

    async def _on_field(self, view: StepView, press: Press) -> None:
        """The press may answer, the prompt is open, and the field is the one the form is at; when the
        buttons show a field that already has a value (it was typed), they move on to the next."""
        draft = await self.presses.draft(press, {}, name=draft_name(view.prompt_id))
        await self.presses.check(draft, press)
        step = next_step(view, read_draft(draft.values)) if len(view.fields) > 1 else 0
        if step is not None and step != press.step:
            await self._show(view, step, press)
            raise Refused(MOVED_ON.format(number=step + 1, total=len(view.fields)))

    def _ticked(self, press: Press, message: MaybeInaccessibleMessage) -> frozenset[int]:
        return ticked_in(keyboard_of(message), press.prompt.prompt_id, press.step)

    async def _toggle(
        self, view: StepView, press: Press, message: MaybeInaccessibleMessage, option: int
    ) -> Notice:
        """Tick or untick a choice of a multi-select field: the new state is the message's keyboard."""
        ticked = self._ticked(press, message) ^ {option}
        address = address_of(parse_thread_id(press.prompt.thread_id))
        await self.presses.sender.edit_keyboard(address, press.message_id, keyboard(view, press.step, ticked))
        label = view.fields[press.step].labels[option]
        return Notice(f"{'✓' if option in ticked else '✗'} {label}")

    async def _hand_over(self, view: StepView, press: Press, text: str, *, decline: bool = False) -> Notice:
        """The core reads the step; a value it kept moves the buttons on, one it refused is said why."""
        received = await self.presses.hand_over(press, text, decline=decline)
        if received.outcome is Outcome.KEPT:
            step = await self._next(view, press)
            if step is not None and step != press.step:
                await self._show(view, step, press)
                return Notice(SAVED.format(number=step + 1, total=len(view.fields)))
            return Notice(received.notice or NOT_TAKEN, ok=False)
        if received.outcome is Outcome.DECLINED:
            return Notice(DECLINED)
        if received.outcome is Outcome.SUPERSEDED:
            return Notice(SUPERSEDED, ok=False)
        answered = received.prompt.answers if received.prompt is not None else None
        given = answers_summary(answered) if answered else text
        return await self.presses.outcome(received, given, press.prompt)

    async def _next(self, view: StepView, press: Press) -> int | None:
        """The field the form is at now, from the core's draft (a one-field form has no draft)."""
        if len(view.fields) < 2:
            return 0
        sink = self.presses.sink
        assert sink is not None
        values = await sink.get_draft(press.prompt.thread_id, draft_name(view.prompt_id))
        return next_step(view, read_draft(values))

    async def _show(self, view: StepView, step: int, press: Press) -> None:
        """Show field ``step``'s buttons (and its line) on the message that carries the buttons."""
        address = address_of(parse_thread_id(press.prompt.thread_id))
        text = step_text(view, step, group=address.is_group)
        await self.presses.sender.edit(address, press.message_id, text, keyboard(view, step))
