"""``threadgate mcp``: an MCP server (stdio) whose tools ask a person in chat through the gateway.

``ask_user`` asks 1 to 4 questions (options, multiSelect, free text), ``request_approval`` asks to approve a
call, and ``permission_prompt`` answers Claude Code's ``--permission-prompt-tool`` with the JSON that flag
expects. Approvals go through the agent's approval policy: a call it allows is approved without asking.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from gateway import __version__
from gateway.client import Threadgate
from gateway.client.target import Target, session_header, session_key
from gateway.integrations.asking import Ask, Unavailable, ask
from gateway.integrations.permissions import ask_permission
from gateway.integrations.prompts import approval_body, approved, declined, declined_message, denial_message
from gateway.models import MAX_QUESTIONS, Prompt, PromptState

SERVER_NAME = "threadgate"
INSTRUCTIONS = (
    "Ask a person in the team's chat and wait for the answer. "
    "Use ask_user for decisions that are theirs to make, request_approval before a risky action."
)
BY_POLICY = "Allowed by the agent's approval policy; nobody was asked."


class OptionIn(BaseModel):
    label: str = Field(min_length=1, max_length=100, description="1-5 words, what the person picks")
    description: str | None = Field(default=None, max_length=300, description="what choosing it means")


class QuestionIn(BaseModel):
    question: str = Field(min_length=1, max_length=2000, description="the full question")
    header: str | None = Field(default=None, max_length=100, description="a short label for it")
    options: list[OptionIn] = Field(
        default_factory=list, max_length=25, description="the choices; none for a free-text answer"
    )
    multiSelect: bool = Field(default=False, description="true to let the person pick several")


class AnswerOut(BaseModel):
    question: str
    answer: list[str] = Field(description="the labels picked, or the person's own words")


class AskUserResult(BaseModel):
    answers: list[AnswerOut]
    answered_by: str | None = None


class ApprovalResult(BaseModel):
    approved: bool
    answered_by: str | None = None
    message: str


def _not_asked(exc: Unavailable, noun: str) -> ToolError:
    return ToolError(f"{noun} unavailable: {exc}. Nobody refused; ask again later.")


def _settled_without_answer(prompt: Prompt, noun: str) -> ToolError:
    if declined(prompt):
        return ToolError(declined_message(prompt))
    return ToolError(f"{noun} unavailable: {prompt.reason or 'it was withdrawn'}. Nobody refused; ask again.")


def _permission_json(behavior: Literal["allow", "deny"], **fields: Any) -> str:
    """The text ``--permission-prompt-tool`` expects: ``{"behavior": "allow", "updatedInput": …}`` or deny."""
    return json.dumps({"behavior": behavior, **fields}, ensure_ascii=False)


def build_server(
    target: Target | None = None,
    *,
    session_id: str | None = None,
    product: str | None = None,
    cwd: str | None = None,
    client: Callable[[], Threadgate] = Threadgate,
) -> MCPServer:
    """The MCP server. One server process is one agent session: its prompts share one thread."""
    target = target or Target.from_env("mcp")
    session_id = session_id or os.environ.get("THREADGATE_SESSION_ID") or uuid.uuid4().hex[:12]
    product = product or os.environ.get("THREADGATE_SESSION_NAME") or "Agent"
    key = session_key(target.agent, session_id)
    header = session_header(product, cwd or os.getcwd(), session_id)
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    async def settle(request: Ask) -> Prompt | None:
        async with client() as tg:
            return await ask(tg, target, request)

    @server.tool()
    async def ask_user(questions: list[QuestionIn]) -> AskUserResult:
        """Ask a person in chat 1 to 4 questions and wait for the answers.

        Each question is single-select (options), multi-select (options and multiSelect) or free text (no
        options). A person may always answer in their own words instead of picking an option.
        """
        if not 1 <= len(questions) <= MAX_QUESTIONS:
            raise ToolError(f"Ask 1 to {MAX_QUESTIONS} questions at a time.")
        asked = [q.model_dump(exclude_none=True) for q in questions]
        try:
            prompt = await settle(Ask("ask_user_question", asked, key, header))
        except Unavailable as exc:
            raise _not_asked(exc, "Question") from exc
        if prompt is None:  # only approvals go through the approval policy
            raise ToolError("Question unavailable: the gateway did not raise it. Nobody refused; ask again.")
        if prompt.prompt_state is not PromptState.ANSWERED:
            raise _settled_without_answer(prompt, "Question")
        answers = [AnswerOut(question=a.question, answer=a.answer) for a in prompt.answers or []]
        return AskUserResult(answers=answers, answered_by=prompt.answered_by)

    @server.tool()
    async def request_approval(
        tool_name: str,
        arguments: dict[str, Any] | None = None,
        question: str | None = None,
        destructive: bool | None = None,
    ) -> ApprovalResult:
        """Ask a person in chat to approve a call (the tool's name, its exact arguments) before making it.

        The agent's approval policy may allow the call without asking anyone. Set ``destructive`` to say
        whether the call changes or deletes something (false for a tool annotated readOnlyHint true or
        destructiveHint false); left out, the gateway asks about any tool but its read-only built-ins.
        """
        questions, tool_call = approval_body(tool_name, arguments or {})
        if question:
            questions = [{"question": question}]
        request = Ask("approval", questions, key, header, tool_call, destructive=destructive)
        try:
            prompt = await settle(request)
        except Unavailable as exc:
            raise _not_asked(exc, "Approval") from exc
        if prompt is None:
            return ApprovalResult(approved=True, answered_by=None, message=BY_POLICY)
        if prompt.prompt_state is not PromptState.ANSWERED:
            raise _settled_without_answer(prompt, "Approval")
        if approved(prompt):
            return ApprovalResult(approved=True, answered_by=prompt.answered_by, message="Approved in chat.")
        return ApprovalResult(approved=False, answered_by=prompt.answered_by, message=denial_message(prompt))

    @server.tool(structured_output=False)
    async def permission_prompt(tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
        """Claude Code's --permission-prompt-tool: ask in chat whether the tool may run.

        Returns ``{"behavior": "allow", "updatedInput": …}`` or ``{"behavior": "deny", "message": …}``; a call
        the agent's approval policy allows is allowed as it stands, without asking.
        """
        async with client() as tg:
            verdict = await ask_permission(tg, target, tool_name, input, key=key, header=header)
        if verdict.by_policy:
            return _permission_json("allow", updatedInput=input)
        if verdict.behavior == "allow":
            return _permission_json("allow", updatedInput=verdict.updated_input)
        if verdict.behavior == "deny":
            return _permission_json("deny", message=verdict.message)
        # The call is refused, but in words that say nobody was asked: never "the user denied".
        return _permission_json("deny", message=verdict.unavailable_message(tool_name))

    return server
