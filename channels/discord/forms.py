"""Flat forms and URL steps on Discord: their buttons, a form's pages as modals, and what a page answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import discord

from channels.discord.choices import FieldValue, Refused
from channels.discord.control_ids import Action, ControlId, field_id
from gateway.sdk import FormField, FormView, Prompt, PromptKind, forms, shorten

PAGE_SIZE = 5  # a modal holds at most five components
FIELD = "field"
FILL_IN = "Fill in…"
DECLINE = "Decline"
DONE = "Done"
OPEN_PAGE = "Open the page"
CHANGE_ANSWERS = "Change answers…"
MAX_LINK_URL = 512
MAX_TITLE = 45
MAX_LABEL_DESCRIPTION = 100
MAX_PLACEHOLDER = 100
MAX_TEXT_INPUT = 4000
SHORT_TEXT = 100  # up to this many characters a text field is one line
# Shown by the modal itself: the asterisk of a required field, a select's own choices and what it preselects.
_SHOWN_BY_MODAL = ("required", "optional", "pick one", "default ")


@dataclass(frozen=True, slots=True)
class FormPrompt(FormView):
    """A pending flat form or URL step, with the custom ids of its controls."""

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.fields) // PAGE_SIZE))

    def page_fields(self, page: int) -> list[tuple[int, FormField]]:
        """The fields on ``page`` with their index in the form."""
        start = page * PAGE_SIZE
        return list(enumerate(self.fields))[start : start + PAGE_SIZE]

    def control(self, action: Action, page: int = 0) -> str:
        return ControlId(action, self.prompt_id, page).encode()


def check_control(prompt: Prompt, control: ControlId) -> None:
    """A form or URL control must be one this prompt's messages could carry."""
    if control.action in (Action.FILL, Action.PAGE):
        if prompt.kind is not PromptKind.FORM or control.question >= FormPrompt.of_prompt(prompt).pages:
            raise Refused()
    elif control.action is Action.DONE:
        if prompt.kind is not PromptKind.URL:
            raise Refused()
    elif control.action is not Action.DECLINE or prompt.kind not in (PromptKind.FORM, PromptKind.URL):
        raise Refused()


# Buttons -------------------------------------------------------------------------------------------


def prompt_view(form: FormPrompt) -> discord.ui.View:
    """Under a form: Fill in… and Decline. Under a URL step: the link, Done and Decline."""
    view = discord.ui.View(timeout=None)
    if form.kind is PromptKind.URL:
        if form.url is not None and len(form.url) <= MAX_LINK_URL:  # longer links stay in the text only
            view.add_item(discord.ui.Button(label=OPEN_PAGE, url=form.url, style=discord.ButtonStyle.link))
        view.add_item(_button(DONE, form.control(Action.DONE), discord.ButtonStyle.success))
    else:
        view.add_item(_button(FILL_IN, form.control(Action.FILL), discord.ButtonStyle.primary))
    view.add_item(_button(DECLINE, form.control(Action.DECLINE), discord.ButtonStyle.danger))
    return view


def next_page_view(form: FormPrompt, page: int) -> discord.ui.View:
    """One button that opens ``page``: the next part of a long form, or the first to change answers."""
    fields = form.page_fields(page)
    label = CHANGE_ANSWERS if page == 0 else f"Continue: fields {fields[0][0] + 1}–{fields[-1][0] + 1}…"
    view = discord.ui.View(timeout=None)
    view.add_item(_button(label, form.control(Action.FILL, page), discord.ButtonStyle.primary))
    return view


def _button(label: str, custom_id: str, style: discord.ButtonStyle) -> discord.ui.Button[Any]:
    return discord.ui.Button(label=label, custom_id=custom_id, style=style)


# A page as a modal ---------------------------------------------------------------------------------


def page_form(form: FormPrompt, page: int, given: Mapping[str, list[str]]) -> discord.ui.Modal:
    """Page ``page`` of the form: a select for choices and yes/no, a text field for the rest, filled in
    with what the person gave before (else the schema's default). The core checks what comes back."""
    suffix = f" ({page + 1}/{form.pages})" if form.pages > 1 else ""
    title = (shorten(form.message, MAX_TITLE - len(suffix)) or "Form") + suffix
    modal = discord.ui.Modal(title=title, custom_id=form.control(Action.PAGE, page))
    for index, field in form.page_fields(page):
        shown = given.get(field.name)
        if shown is None:
            shown = forms.shown(field, field.default)
        custom_id = field_id(FIELD, index)
        component: discord.ui.Item[Any]
        if field.labels:  # the constraints go under the title; a text field shows them as its placeholder
            component = _select(field, custom_id, shown)
            description = "; ".join(part for part in (field.description, _hints(field)) if part)
        else:
            component = _text_input(field, custom_id, shown)
            description = field.description or ""
        label = shorten(field.title, MAX_TITLE)
        modal.add_item(
            discord.ui.Label(
                text=label,
                description=shorten(description, MAX_LABEL_DESCRIPTION) or None,
                component=component,
            )
        )
    return modal


def _hints(field: FormField) -> str:
    """The field's constraints in words, less what the modal shows by itself."""
    parts = [part for part in forms.constraints(field) if part != "text"]  # a text field says so itself
    return ", ".join(part for part in parts if not part.startswith(_SHOWN_BY_MODAL))


def _select(field: FormField, custom_id: str, shown: list[str]) -> discord.ui.Select[Any]:
    labels = field.labels
    options = [
        discord.SelectOption(label=shorten(label, 100), value=str(index), default=label in shown)
        for index, label in enumerate(labels)
    ]
    if field.type == "array":
        high = max(1, min(field.max_items if field.max_items is not None else len(labels), len(labels)))
        low = min(field.min_items or 0, high)
    else:
        high, low = 1, 1 if field.required else 0
    return discord.ui.Select(
        custom_id=custom_id,
        placeholder="Choose any number" if field.type == "array" else "Choose one",
        min_values=low,
        max_values=high,
        options=options,
        required=low > 0,
    )


def _text_input(field: FormField, custom_id: str, shown: list[str]) -> discord.ui.TextInput[Any]:
    high = max(1, min(field.max_length if field.max_length is not None else MAX_TEXT_INPUT, MAX_TEXT_INPUT))
    low = min(field.min_length or 0, high)
    short = field.type != "string" or field.format is not None or high <= SHORT_TEXT
    default = shown[0] if len(shown) == 1 and len(shown[0]) <= high else None
    return discord.ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.short if short else discord.TextStyle.paragraph,
        placeholder=shorten(_hints(field), MAX_PLACEHOLDER) or None,
        default=default,
        required=field.required,
        min_length=low or None,
        max_length=high,
    )


# What a page answers -------------------------------------------------------------------------------


def page_answers(form: FormPrompt, page: int, submitted: Mapping[str, FieldValue]) -> dict[str, list[str]]:
    """The answers a submitted page gives, by property, as people see them (a choice's title, Yes/No,
    the text typed); a blank or empty field gives none. Refused for values the page never offered."""
    answers: dict[str, list[str]] = {}
    for index, field in form.page_fields(page):
        value = submitted.get(field_id(FIELD, index))
        if field.labels:
            answers[field.name] = _chosen(field, value)
        elif value is None or isinstance(value, str):
            answers[field.name] = [value] if value is not None and value.strip() else []
        else:
            raise Refused()
    return answers


def _chosen(field: FormField, value: FieldValue | None) -> list[str]:
    values = [] if value is None else value
    if not isinstance(values, list):
        raise Refused()
    labels = field.labels
    indexes: list[int] = []
    for raw in values:
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 2) or int(raw) >= len(labels):
            raise Refused()
        indexes.append(int(raw))
    return [labels[index] for index in sorted(set(indexes))]
