"""A tool's permission request asked in chat, and the verdict: allow, deny, the agent's approval policy
asks nobody, or nobody could decide.

Shared by the hooks, the Agent SDK callback and the MCP permission prompt tool; each renders the verdict in
its own tool's shape. Whether a call is asked at all is the agent's approval policy's to say, decided by
the gateway (gateway/rules/approval_policy.py); ``AskUserQuestion`` is a question, always asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from gateway.base.models import Prompt, PromptState, ToolCall, ToolRule
from gateway.client import Allowed, Threadgate, ThreadgateError
from gateway.client.human import reason_given
from gateway.client.target import Target
from gateway.client.waiting import say_where
from gateway.integrations.asking import Ask, StillPending, Unavailable, ask
from gateway.integrations.prompts import (
    ASK_USER_QUESTION,
    answers_by_question,
    approval_body,
    approval_choices,
    approval_message,
    approved,
    ask_user_questions,
    chosen_option,
    declined,
    declined_message,
    denial_message,
    edited_arguments,
    typed_reason,
)
from gateway.integrations.suggestions import Choice, choices
from gateway.rules.approval_policy import needs_approval, tool_rule


@dataclass(frozen=True, slots=True)
class Verdict:
    """``behavior`` None means nobody decided (``unavailable`` says why): never to be shown as a denial.

    ``pending`` is set when the prompt is still open and a later attempt at the same call will find it.
    ``updated_permissions`` holds the "always allow" suggestion the person picked, as the tool sent it.
    ``by_policy`` is set when the agent's approval policy asks nobody about the call: no person decided,
    and the call may run as far as the gateway is concerned. ``grant_id`` names the grant that allowed
    the call when a person approved such calls earlier in the run (``behavior`` is then allow).
    ``message`` is what the agent reads: who decided, and the person's ``note`` when they gave a reason.
    ``edited`` is set when the person approved the call with other arguments: ``updated_input`` holds them,
    and the call must run with exactly those.
    """

    behavior: Literal["allow", "deny"] | None
    updated_input: dict[str, Any] | None = None
    message: str | None = None
    unavailable: str | None = None
    updated_permissions: list[dict[str, Any]] | None = None
    pending: bool = False
    answered_by: str | None = None
    by_policy: bool = False
    grant_id: str | None = None
    note: str | None = None
    edited: bool = False

    def unavailable_message(self, tool_name: str) -> str:
        """The refusal text for callers that must answer something: it says nobody was asked."""
        noun = "Question" if tool_name == ASK_USER_QUESTION else "Approval"
        return f"{noun} unavailable: {self.unavailable}. Nobody denied it; ask again."


async def ask_permission(
    tg: Threadgate,
    target: Target,
    tool_name: str,
    tool_input: dict[str, Any],
    *,
    key: str,
    header: str,
    suggestions: Any = None,
    call_id: str | None = None,
    on_raised: Callable[[Prompt], None] = say_where,
) -> Verdict:
    """Ask whether ``tool_name`` may run with ``tool_input`` (AskUserQuestion: ask its questions).

    ``suggestions`` (a PermissionRequest's ``permission_suggestions``) become extra "always allow" choices.
    ``call_id`` makes the question resumable (see ``Ask``). A call the agent's approval policy allows is
    asked nowhere: the verdict is ``by_policy``.
    """
    offered: list[Choice] = []
    try:
        if tool_name == ASK_USER_QUESTION:
            request = Ask("ask_user_question", ask_user_questions(tool_input), key, header, call_id=call_id)
        else:
            offered = choices(suggestions)
            questions, tool_call = approval_body(tool_name, tool_input)
            if offered:  # an approval has exactly Approve/Deny: the extra choices make it a question
                rule = await _policy_rule(tg, target.agent, tool_call)
                if rule is None:
                    return Verdict(None, by_policy=True)
                if rule.edit or rule.approvals > 1:
                    offered = []  # an edit, or several approvers, need the approval itself: no choices
            if offered:
                with_choices, offered = approval_choices(questions, offered)
                request = Ask("ask_user_question", with_choices, key, header, call_id=call_id)
            else:
                request = Ask("approval", questions, key, header, tool_call, call_id=call_id)
        prompt = await ask(tg, target, request, on_raised=on_raised)
    except StillPending as exc:
        return Verdict(None, unavailable=str(exc), pending=True)
    except (Unavailable, ValueError) as exc:
        return Verdict(None, unavailable=str(exc))
    if isinstance(prompt, Allowed):
        if prompt.grant_id is not None:  # a person allowed calls like this one for the run: as asked
            return Verdict("allow", updated_input=tool_input, grant_id=prompt.grant_id, answered_by=prompt.by)
        return Verdict(None, by_policy=True)
    if prompt.prompt_state is not PromptState.ANSWERED:
        if declined(prompt):
            return Verdict("deny", message=declined_message(prompt))
        return Verdict(None, unavailable=prompt.reason or "it was withdrawn")
    who = prompt.answered_by
    if tool_name == ASK_USER_QUESTION:
        # The tool takes its answers in its input; the questions stay beside them.
        updated = {**tool_input, "answers": answers_by_question(prompt)}
        return Verdict("allow", updated_input=updated, answered_by=who)
    if offered:
        picked = chosen_option(prompt, offered)
        if picked is None:
            note = typed_reason(prompt)
            return Verdict("deny", message=denial_message(prompt, note), answered_by=who, note=note)
        always = [picked.suggestion] if isinstance(picked, Choice) else None
        return Verdict("allow", updated_input=tool_input, updated_permissions=always, answered_by=who)
    note = reason_given(prompt.note)
    if approved(prompt):
        edited = edited_arguments(prompt)
        return Verdict(
            "allow",
            updated_input=tool_input if edited is None else edited,
            message=approval_message(prompt),
            answered_by=who,
            note=note,
            edited=edited is not None,
        )
    return Verdict("deny", message=denial_message(prompt), answered_by=who, note=note)


async def _policy_rule(tg: Threadgate, agent: str, tool_call: dict[str, Any]) -> ToolRule | None:
    """The rule the agent's approval policy asks about ``tool_call`` by (None: it asks nobody), by the
    gateway's own rule on the agent's definition: an approval with "always allow" choices is raised as a
    question, which the approvals endpoint does not raise."""
    try:
        definition = await tg.get_agent(agent)
    except (httpx.HTTPError, ThreadgateError) as exc:
        why = exc.message if isinstance(exc, ThreadgateError) else type(exc).__name__
        raise Unavailable(f"the gateway could not read the agent's approval policy ({why})") from exc
    call = ToolCall.model_validate(tool_call)
    if not needs_approval(definition.approval, call):
        return None
    return tool_rule(definition.approval, call.name) or ToolRule()
