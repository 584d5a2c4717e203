"""A tool's permission request asked in chat, and the verdict: allow, deny, or nobody could decide.

Shared by the hooks, the Agent SDK callback and the MCP permission prompt tool; each renders the verdict in
its own tool's shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gateway.client import Threadgate
from gateway.integrations.asking import Ask, Unavailable, ask
from gateway.integrations.prompts import (
    ASK_USER_QUESTION,
    answers_by_question,
    approval_body,
    approved,
    ask_user_questions,
    declined,
    declined_message,
    denial_message,
)
from gateway.integrations.settings import Target
from gateway.models import PromptState


@dataclass(frozen=True, slots=True)
class Verdict:
    """``behavior`` None means nobody decided (``unavailable`` says why): never to be shown as a denial."""

    behavior: Literal["allow", "deny"] | None
    updated_input: dict[str, Any] | None = None
    message: str | None = None
    unavailable: str | None = None

    def unavailable_message(self, tool_name: str) -> str:
        """The refusal text for callers that must answer something: it says nobody was asked."""
        noun = "Question" if tool_name == ASK_USER_QUESTION else "Approval"
        return f"{noun} unavailable: {self.unavailable}. Nobody denied it; ask again."


async def ask_permission(
    tg: Threadgate, target: Target, tool_name: str, tool_input: dict[str, Any], *, key: str, header: str
) -> Verdict:
    """Ask whether ``tool_name`` may run with ``tool_input`` (AskUserQuestion: ask its questions)."""
    try:
        if tool_name == ASK_USER_QUESTION:
            request = Ask("ask_user_question", ask_user_questions(tool_input), key, header)
        else:
            questions, tool_call = approval_body(tool_name, tool_input)
            request = Ask("approval", questions, key, header, tool_call)
        prompt = await ask(tg, target, request)
    except (Unavailable, ValueError) as exc:
        return Verdict(None, unavailable=str(exc))
    if prompt.prompt_state is not PromptState.ANSWERED:
        if declined(prompt):
            return Verdict("deny", message=declined_message(prompt))
        return Verdict(None, unavailable=prompt.reason or "it was withdrawn")
    if tool_name == ASK_USER_QUESTION:
        # The tool takes its answers in its input; the questions stay beside them.
        return Verdict("allow", updated_input={**tool_input, "answers": answers_by_question(prompt)})
    if approved(prompt):
        return Verdict("allow", updated_input=tool_input)
    return Verdict("deny", message=denial_message(prompt))
