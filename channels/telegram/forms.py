"""Forms and URL steps as Telegram messages: a form's fields one at a time, a URL step's link and Done.

A form's text stays the core's (the message, then each field with its constraints), so a typed value or
``name: value`` lines still answer; the buttons are for one field at a time (the first the draft lacks):
a button per choice, Yes and No, ticks and Submit for a multi-select, ``✎ Answer…`` (a ForceReply) for
text, numbers and dates. What a button sends is the text a person would type for that field, so the
core's one form validator reads it and keeps the draft (see ``gateway.decision.answer_step``). A URL step
gets a
link button, Done and Decline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlsplit

from channels.telegram.control_ids import Action, Control
from channels.telegram.controls import SUBMIT, TICK, WRITE, button_text, with_buttons, with_step_line
from channels.telegram.render import (
    Button,
    Keyboard,
    Outgoing,
)
from gateway.sdk import FormView, Prompt, PromptKind, forms, prompt_body, shorten

FORM_KINDS = frozenset({PromptKind.FORM, PromptKind.URL})
YES_TEXT, NO_TEXT = "Yes", "No"
SKIP_TEXT = "Skip"
DONE_TEXT = "✓ Done"
DECLINE_TEXT = "✗ Decline"
OPEN_TEXT = "Open link"
MAX_FIELD_LINE_CHARS = 200
FORM_HINT = "Answer with the buttons, a field at a time, or reply with the value."
URL_HINT = "Open the link and finish there, then press Done or reply done."


@dataclass(frozen=True, slots=True)
class StepView(FormView):
    """A pending form or URL step, with the text it is posted as."""

    body: str = ""

    @classmethod
    def of_metadata(cls, metadata: dict[str, Any], body: str = "") -> Self | None:
        """From a pending_prompt item's metadata and text; None unless it is a readable form or URL step."""
        view = FormView.of_metadata(metadata)
        return None if view is None else cls.of_view(view, body)

    @classmethod
    def of_prompt(cls, prompt: Prompt) -> Self:
        return cls.of_view(FormView.of_prompt(prompt), prompt_body(prompt))

    @classmethod
    def of_view(cls, view: FormView, body: str) -> Self:
        return cls(view.prompt_id, view.kind, view.message, view.fields, view.url, body)


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
    return with_step_line(view.body, field_line(view, step) if len(view.fields) > 1 else None)


def controls_text(view: StepView, step: int = 0) -> str:
    """A group's buttons message: how to answer, and which field the buttons are for."""
    if view.kind is PromptKind.URL:
        return URL_HINT
    return f"{FORM_HINT}\n\n{field_line(view, step)}" if len(view.fields) > 1 else FORM_HINT


def step_text(view: StepView, step: int, *, group: bool) -> str:
    """The text of the message with the buttons while field ``step`` is shown."""
    return controls_text(view, step) if group else parts(view, step)[-1]


def messages(view: StepView, *, reply_to: int | None = None, group: bool = False) -> list[Outgoing]:
    """The messages a pending form or URL step becomes (see ``controls.with_buttons``)."""
    hint = controls_text(view)
    return with_buttons(view.body, parts(view), hint, keyboard(view), reply_to=reply_to, group=group)
