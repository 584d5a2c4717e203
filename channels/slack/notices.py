"""What a person who pressed a control or submitted a modal is told privately, from what came of it. Pure."""

from __future__ import annotations

from typing import Any

from channels.slack.controls import plain
from gateway.models import Prompt, PromptState
from gateway.render import answers_summary
from gateway.service import STALE_NOTICE, Outcome, Received

NOT_ALLOWED_NOTICE = (
    "That was not taken as an answer: only the person who started this run and the agent's approvers "
    "can answer its prompts."
)
MISMATCH_NOTICE = "That control does not match its prompt, so nothing was changed."
DUPLICATE_NOTICE = "That was already received, so nothing more was changed."
FAILED_NOTICE = "Your answer could not be recorded just now; please try again."
BUSY_ERROR = "The answer could not be checked just now; please submit again."
DECLINED_NOTICE = "You declined it; the agent is told."


def answered_notice(summary: str) -> str:
    return f"Your answer was recorded: {summary}"


def stale_notice(prompt: Prompt | None) -> str:
    """Why a press on a settled prompt changed nothing, saying how it settled when that is known."""
    if prompt is not None and prompt.prompt_state is PromptState.ANSWERED:
        summary = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({summary}), so nothing was changed."
    if prompt is not None and prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}), so nothing was changed."
    return STALE_NOTICE


def outcome_notice(received: Received, prompt: Prompt, summary: str) -> str:
    """The private answer to a press, from what the core made of it."""
    if received.outcome is Outcome.ANSWERED:
        return answered_notice(summary)
    if received.outcome is Outcome.DECLINED:
        return DECLINED_NOTICE
    if received.outcome is Outcome.KEPT and received.notice:
        return received.notice  # a value the form validator did not take: the prompt stays open
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED_NOTICE
    if received.outcome is Outcome.DUPLICATE:
        return DUPLICATE_NOTICE
    return stale_notice(received.prompt or prompt)


def notice_view(text: str) -> dict[str, Any]:
    """A modal replaced by a notice: what happened, and a Close button."""
    return {
        "type": "modal",
        "title": plain("Answer"),
        "close": plain("Close"),
        "blocks": [{"type": "section", "text": plain(text)}],
    }
