"""The MCP tools that ask a person in chat through the gateway: served on stdio (``threadgate mcp``) and
at ``/mcp`` on the gateway itself (``gateway.api.mcp_http``).

``ask_user`` asks 1 to 4 questions (options, multiSelect, free text), ``request_approval`` asks to approve a
call, and ``permission_prompt`` answers Claude Code's ``--permission-prompt-tool`` with the JSON that flag
expects. Approvals go through the agent's approval policy: a call it allows is approved without asking.
While nobody has answered, a call that carries a ``progressToken`` gets a progress notification every
``progress_s`` seconds, so clients that reset their timeout on progress keep waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Any, Literal, TypeVar, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, Field, StrictBool

from gateway import __version__
from gateway.base.models import MAX_QUESTIONS, Prompt, PromptState
from gateway.client import Allowed, Threadgate
from gateway.client.human import reason_given
from gateway.client.target import Target, session_header, session_key
from gateway.client.waiting import say_where
from gateway.integrations.asking import Ask, Unavailable, ask
from gateway.integrations.mcp_protocol import KnownNames, WithoutTracebacks, checked_lines
from gateway.integrations.permissions import ask_permission
from gateway.integrations.prompts import (
    approval_body,
    approval_message,
    approved,
    declined,
    declined_message,
    denial_message,
    edited_arguments,
    granted_message,
)

SERVER_NAME = "threadgate"
INSTRUCTIONS = (
    "Ask a person in the team's chat and wait for the answer. "
    "Use ask_user for decisions that are theirs to make, request_approval before a risky action."
)
BY_POLICY = "Allowed by the agent's approval policy; nobody was asked."
PROGRESS_EVERY_S = 10.0
WAITING = "Waiting for a person to answer in chat."

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Asker:
    """Who a tool call asks for: where (the target), the session's key and thread header, and the client."""

    target: Target
    key: str
    header: str
    client: Callable[[], Threadgate]
    on_raised: Callable[[Prompt], None] = say_where  # tells where the question waits (stdio: on stderr)


AskerFor = Callable[[Context], Asker]


async def patiently(ctx: Context, work: Awaitable[T], every_s: float) -> T:
    """Await ``work``, sending ``notifications/progress`` every ``every_s`` seconds while it runs (the SDK
    sends nothing when the request carried no ``progressToken``)."""

    async def tick() -> None:
        ticks = 0
        while True:
            await asyncio.sleep(every_s)
            ticks += 1
            await ctx.report_progress(ticks, message=WAITING)

    ticker = asyncio.create_task(tick())
    try:
        return await work
    finally:
        ticker.cancel()
        # Progress is a courtesy to the client: a notification that failed never fails the answer.
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await ticker


class OptionIn(BaseModel):
    label: str = Field(min_length=1, max_length=100, description="1-5 words, what the person picks")
    description: str | None = Field(default=None, max_length=300, description="what choosing it means")


class QuestionIn(BaseModel):
    question: str = Field(min_length=1, max_length=2000, description="the full question")
    header: str | None = Field(default=None, max_length=100, description="a short label for it")
    options: list[OptionIn] = Field(
        default_factory=list, max_length=25, description="the choices; none for a free-text answer"
    )
    multiSelect: StrictBool = Field(default=False, description="true to let the person pick several")


class AnswerOut(BaseModel):
    question: str
    answer: list[str] = Field(description="the labels picked, or the person's own words")


class AskUserResult(BaseModel):
    answers: list[AnswerOut]
    answered_by: str | None = None


class CallOut(BaseModel):
    name: str
    arguments: dict[str, Any]


class ApprovalResult(BaseModel):
    approved: bool
    answered_by: str | None = None
    message: str
    note: str | None = Field(default=None, description="the person's own words, when they gave any")
    approved_call: CallOut | None = Field(
        default=None, description="the call to make, exactly: the one asked about unless the person edited it"
    )


def _not_asked(exc: Unavailable, noun: str) -> ToolError:
    return ToolError(f"{noun} unavailable: {exc}. Nobody refused; ask again later.")


def _settled_without_answer(prompt: Prompt, noun: str) -> ToolError:
    if declined(prompt):
        return ToolError(declined_message(prompt))
    return ToolError(f"{noun} unavailable: {prompt.reason or 'it was withdrawn'}. Nobody refused; ask again.")


def _permission_json(behavior: Literal["allow", "deny"], **fields: Any) -> str:
    """The text ``--permission-prompt-tool`` expects: ``{"behavior": "allow", "updatedInput": …}`` or deny."""
    return json.dumps({"behavior": behavior, **fields}, ensure_ascii=False)


def stdio_asker(
    target: Target | None = None,
    *,
    session_id: str | None = None,
    product: str | None = None,
    cwd: str | None = None,
    client: Callable[[], Threadgate] = Threadgate,
) -> Asker:
    """The one session a stdio server process is: its target and ids from the environment."""
    target = target or Target.from_env("mcp")
    session_id = session_id or os.environ.get("THREADGATE_SESSION_ID") or uuid.uuid4().hex[:12]
    product = product or os.environ.get("THREADGATE_SESSION_NAME") or "Agent"
    key = session_key(target.agent, session_id)
    return Asker(target, key, session_header(product, cwd or os.getcwd(), session_id), client)


def build_server(asker_for: AskerFor, *, progress_s: float = PROGRESS_EVERY_S) -> MCPServer:
    """The MCP server; ``asker_for`` says, for each tool call, whose session asks and through which client."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    root.handlers[:], root.level = handlers, level  # the SDK sets up the root logger; its host owns it
    server.middleware.append(KnownNames(server))

    async def settle(ctx: Context, question: Callable[[Asker], Ask]) -> Prompt | Allowed:
        asker = asker_for(ctx)
        async with asker.client() as tg:
            asking = ask(tg, asker.target, question(asker), on_raised=asker.on_raised)
            return await patiently(ctx, asking, progress_s)

    @server.tool()
    async def ask_user(questions: list[QuestionIn], ctx: Context) -> AskUserResult:
        """Ask a person in chat 1 to 4 questions and wait for the answers.

        Each question is single-select (options), multi-select (options and multiSelect) or free text (no
        options). A person may always answer in their own words instead of picking an option.
        """
        if not 1 <= len(questions) <= MAX_QUESTIONS:
            raise ToolError(f"Ask 1 to {MAX_QUESTIONS} questions at a time.")
        asked = [q.model_dump(exclude_none=True) for q in questions]
        try:
            prompt = await settle(ctx, lambda who: Ask("ask_user_question", asked, who.key, who.header))
        except Unavailable as exc:
            raise _not_asked(exc, "Question") from exc
        if isinstance(prompt, Allowed):  # only approvals go through the approval policy
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
        destructive: StrictBool | None = None,  # JSON booleans only, as REST takes them: "no" is not false
        editable: StrictBool = False,
        input_schema: dict[str, Any] | None = None,
        *,
        ctx: Context,
    ) -> ApprovalResult:
        """Ask a person in chat to approve a call (the tool's name, its exact arguments) before making it.

        The agent's approval policy may allow the call without asking anyone. Set ``destructive`` to say
        whether the call changes or deletes something (false for a tool annotated readOnlyHint true or
        destructiveHint false); left out, the gateway asks about any tool but its read-only built-ins.
        Set ``editable`` to let the person edit the arguments before approving (checked against
        ``input_schema``, the tool's JSON Schema, when given). Make exactly ``approved_call`` when approved;
        ``note`` is the person's reason, when they gave one.
        """
        questions, tool_call = approval_body(tool_name, arguments or {})
        if question:
            questions = [{"question": question}]
        try:
            prompt = await settle(
                ctx,
                lambda who: Ask(
                    "approval",
                    questions,
                    who.key,
                    who.header,
                    tool_call,
                    destructive=destructive,
                    editable=editable,
                    input_schema=input_schema,
                ),
            )
        except Unavailable as exc:
            raise _not_asked(exc, "Approval") from exc
        if isinstance(prompt, Allowed):
            if prompt.grant_id is not None:
                return ApprovalResult(
                    approved=True,
                    answered_by=prompt.by,
                    message=granted_message(prompt.grant_id),
                    approved_call=CallOut(**tool_call),
                )
            return ApprovalResult(
                approved=True, answered_by=None, message=BY_POLICY, approved_call=CallOut(**tool_call)
            )
        if prompt.prompt_state is not PromptState.ANSWERED:
            raise _settled_without_answer(prompt, "Approval")
        note = reason_given(prompt.note)
        if approved(prompt):
            edited = edited_arguments(prompt)
            allowed = CallOut(
                name=tool_call["name"], arguments=tool_call["arguments"] if edited is None else edited
            )
            return ApprovalResult(
                approved=True,
                answered_by=prompt.answered_by,
                message=approval_message(prompt),
                note=note,
                approved_call=allowed,
            )
        return ApprovalResult(
            approved=False, answered_by=prompt.answered_by, message=denial_message(prompt), note=note
        )

    @server.tool(structured_output=False)
    async def permission_prompt(
        tool_name: str, input: dict[str, Any], ctx: Context, tool_use_id: str | None = None
    ) -> str:
        """Claude Code's --permission-prompt-tool: ask in chat whether the tool may run.

        Returns ``{"behavior": "allow", "updatedInput": …}`` or ``{"behavior": "deny", "message": …}``; a call
        the agent's approval policy allows is allowed as it stands, without asking.
        """
        who = asker_for(ctx)
        async with who.client() as tg:
            asking = ask_permission(
                tg, who.target, tool_name, input, key=who.key, header=who.header, on_raised=who.on_raised
            )
            verdict = await patiently(ctx, asking, progress_s)
        if verdict.by_policy:
            return _permission_json("allow", updatedInput=input)
        if verdict.behavior == "allow":
            return _permission_json("allow", updatedInput=verdict.updated_input)
        if verdict.behavior == "deny":
            return _permission_json("deny", message=verdict.message)
        # The call is refused, but in words that say nobody was asked: never "the user denied".
        return _permission_json("deny", message=verdict.unavailable_message(tool_name))

    return server


def progress_from_env() -> float:
    """``THREADGATE_PROGRESS_SECONDS``: how often a waiting call reports progress (default 10 s)."""
    raw = os.environ.get("THREADGATE_PROGRESS_SECONDS", "").strip()
    try:
        value = float(raw) if raw else PROGRESS_EVERY_S
    except ValueError:
        raise ValueError(f"THREADGATE_PROGRESS_SECONDS must be a number of seconds, not {raw!r}") from None
    if not 0 < value < float("inf"):
        raise ValueError("THREADGATE_PROGRESS_SECONDS must be a positive number of seconds")
    return value


def quiet_stderr() -> None:
    """Warnings and errors only on stderr, one line each, never a traceback."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("threadgate mcp: %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(WithoutTracebacks())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout until the client closes the connection, answering a request whose
    params are not an object with -32602 (see ``mcp_protocol``)."""
    lines = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    lowlevel = server._lowlevel_server  # the SDK's stdio entry point takes no input of its own
    checked = cast("anyio.AsyncFile[str]", checked_lines(lines))  # the transport only iterates its lines
    async with stdio_server(stdin=checked) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
