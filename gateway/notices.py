"""What a person is told about their press, form or reply: every notice's wording, every platform. Pure."""

from __future__ import annotations

from gateway.forms import FormField
from gateway.mapper import Unanswered
from gateway.models import Prompt, PromptState
from gateway.outcomes import Outcome, Received
from gateway.render import answers_summary

NOT_ALLOWED = (
    "Your answer was not taken: only the person who started this run and the agent's approvers can "
    "answer its prompts."
)
STALE = "This prompt is no longer open, so nothing was changed."
MISMATCH = "That control does not match its prompt, so nothing was changed."
UNKNOWN_PROMPT = "This control belongs to a prompt Threadgate no longer knows, so nothing was changed."
DUPLICATE = "That was already received, so nothing more was changed."
TRY_AGAIN = "Threadgate could not take your answer just now; nothing was changed. Please try again."
DECLINED = "You declined it; the agent is told."
SUPERSEDED = (
    "Not taken as an answer: the prompt was closed and your reply goes to the agent as a new message."
)
NOT_TAKEN = "Not taken; the form is still open."
EMPTY_TEXT = "Type an answer before submitting; nothing was changed."
TICKS_UNREADABLE = (
    "The ticks on this message can no longer be read; reply to the prompt with the numbers of your "
    "choices instead (for example 1, 3)."
)
# A form of every question, sent with a question left open (the per-question problem beside its field).
UNANSWERED = {
    Unanswered.NONE: "Choose an option, or type your own answer below.",
    Unanswered.BOTH: "Choose an option or type your own answer, not both.",
    Unanswered.EMPTY: "Type an answer.",
}
REPLY_BELOW = "Reply to the message below with your answer."
ASK_TEXT = "✎ {name}, reply to this message with your answer to: {question}"


def reminder(names: list[str]) -> str:
    """A reminder posted in a prompt's thread by its escalation; ``names``: the people who may answer it,
    when the platform cannot mention them."""
    waiting = f" Waiting on {', '.join(names)}." if names else ""
    return f"🔔 Reminder: this prompt is still waiting for an answer.{waiting}"


def escalated(origin: str, waited_s: int) -> str:
    """The note above a copy of a prompt posted elsewhere by its escalation."""
    return (
        f"⏫ Escalated: a prompt in {origin} has waited {duration(waited_s)} for an answer. Answer it here "
        "or there; the first answer counts. Only the person who started its run and the agent's approvers "
        "can answer."
    )


def duration(seconds: int) -> str:
    """``45 seconds``, ``15 minutes``, ``2 hours``, ``3 days``: the largest whole unit."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if (seconds >= size and seconds % size == 0) or seconds >= 2 * size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def answered(summary: str) -> str:
    return f"Your answer was recorded: {summary}"


def settled(prompt: Prompt | None) -> str:
    """Why a press on a settled prompt changed nothing, saying how it settled when that is known."""
    if prompt is not None and prompt.prompt_state is PromptState.ANSWERED:
        summary = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({summary}), so nothing was changed."
    if prompt is not None and prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}), so nothing was changed."
    return STALE


def outcome(received: Received, prompt: Prompt | None, summary: str) -> str:
    """What a person is told once the core took (or did not take) what they sent about ``prompt``."""
    if received.outcome is Outcome.ANSWERED:
        return answered(summary)
    if received.outcome is Outcome.DECLINED:
        return DECLINED
    if received.outcome is Outcome.SUPERSEDED:
        return SUPERSEDED
    if received.outcome is Outcome.KEPT:
        return received.notice or NOT_TAKEN  # a value the form validator did not take
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.DUPLICATE:
        return DUPLICATE
    return settled(received.prompt or prompt)


def for_sender(received: Received) -> str | None:
    """What a sender who reads the thread (the web chat) is told beside it: why it was not taken."""
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.STALE:
        return settled(received.prompt)
    return received.notice


def toggled(label: str, ticked: bool) -> str:
    return f"{'✓' if ticked else '✗'} {label}"


def next_question(number: int, total: int) -> str:
    return f"Saved. Now question {number} of {total}."


def next_field(number: int, total: int) -> str:
    return f"Saved. Now field {number} of {total}."


def moved_on(number: int, total: int) -> str:
    """A press on a form field that already has a value (it was typed): the form is further on."""
    return f"That field has a value already; the buttons now show field {number} of {total}."


def fields_kept(fields: list[FormField], given: list[str]) -> str:
    """A part of a long form kept while the rest is asked for."""
    numbers = [index + 1 for index, field in enumerate(fields) if field.name in given]
    return f"Fields {numbers[0]}–{numbers[-1]} of {len(fields)} are kept. Continue with the rest:"


def ask_text(name: str, question: str) -> str:
    """A request for free text, naming the person it is for."""
    return ASK_TEXT.format(name=name, question=question)
