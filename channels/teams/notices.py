"""Everything a person is told about a press on a card, in one place. Pure.

A press is answered with the invoke response, which only the presser sees.
"""

from __future__ import annotations

from gateway.models import Prompt, PromptState
from gateway.outcomes import Outcome, Received
from gateway.render import answers_summary

NOT_ALLOWED_NOTICE = (
    "That was not taken as an answer: only the person who started this run and the agent's approvers "
    "can answer its prompts."
)
MISMATCH_NOTICE = "That control does not match its prompt, so nothing was changed."
DUPLICATE_NOTICE = "That was already received, so nothing more was changed."
FAILED_NOTICE = "Your answer could not be recorded just now; please try again."
DECLINED_NOTICE = "You declined it; the agent is told."
UNKNOWN_NOTICE = "That control belongs to a prompt that is no longer open, so nothing was changed."
NOT_BOTH = "Pick an option or type an answer, not both."
PICK_ONE = "Pick an option or type an answer."
TYPE_SOMETHING = "Type an answer."
ANSWERED_BY = "Answered by {who}"
DECLINED_BY = "Declined by {who}"


def answered_notice(summary: str) -> str:
    return f"Your answer was recorded: {summary}"


def stale_notice(prompt: Prompt | None) -> str:
    """Why a press on a settled prompt changed nothing, saying how it settled when that is known."""
    if prompt is not None and prompt.prompt_state is PromptState.ANSWERED:
        summary = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({summary}), so nothing was changed."
    if prompt is not None and prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}), so nothing was changed."
    return UNKNOWN_NOTICE


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
