"""Every call of the API as a method, written once: ``Threadgate`` runs them on httpx.AsyncClient and
``Client`` on httpx.Client, each by giving the three ways to reach the gateway below (send a request,
sleep, read a stream's lines). The sync client's ways never suspend, so it finishes each coroutine at once
without an event loop (``gateway.client.sync_client``)."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import httpx
from pydantic import BaseModel

from gateway.base.models import AgentDefinition, Person, Prompt, Run
from gateway.client import calls, form_flow
from gateway.client.calls import Allowed, Approval, Call, Flow, Page, Pause
from gateway.client.model_forms import reader
from gateway.client.sse import Event, EventParser
from gateway.rules.grants import Grant, GrantMatch

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")


def _prompt_or_none(
    decide: Callable[Concatenate[ClientMethods, P], Coroutine[Any, Any, Prompt | Allowed]],
) -> Callable[Concatenate[ClientMethods, P], Coroutine[Any, Any, Prompt | None]]:
    """``request_approval``, taking ``approval_decision``'s arguments (written once, there)."""

    async def request_approval(self: ClientMethods, /, *args: P.args, **kwargs: P.kwargs) -> Prompt | None:
        """Ask the agent's approval policy about a tool call without waiting: None when it (or a grant)
        allows it (nobody is asked), else the approval prompt it raised (``editable``: the person may edit
        the arguments, to fit ``input_schema``). PromptUnavailable when the post failed."""
        decided = await decide(self, *args, **kwargs)
        return None if isinstance(decided, Allowed) else decided

    request_approval.__qualname__ = "ClientMethods.request_approval"
    signature = inspect.signature(decide).replace(return_annotation="Prompt | None")
    request_approval.__signature__ = signature  # type: ignore[attr-defined]
    return request_approval


class ClientMethods(ABC):
    """The client's calls, each a coroutine over ``_send``, ``_sleep`` and ``_lines``."""

    reconnect_delay: float

    @abstractmethod
    async def _send(self, call: Call) -> Any:
        """The decoded JSON answer to ``call``; a failure raises the contract's error."""

    @abstractmethod
    async def _sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a backoff)."""

    @abstractmethod
    def _lines(self, call: Call) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        """The lines of the stream ``call`` opens (read timeout off); an error answer raises its error."""

    async def _run(self, flow: Flow[T]) -> T:
        """Send each request the flow yields and hand back the answer (or throw in the error)."""
        reply: Any = None
        error: Exception | None = None
        try:
            while True:
                try:
                    step = flow.send(reply) if error is None else flow.throw(error)
                except StopIteration as done:
                    result: T = done.value
                    return result
                reply, error = None, None
                try:
                    if isinstance(step, Pause):
                        await self._sleep(step.seconds)
                    else:
                        reply = await self._send(step)
                except Exception as exc:
                    error = exc
        finally:
            flow.close()

    # Agent side ------------------------------------------------------------------------------------

    async def create_run(self, thread_id: str, agent: str, started_by: str | None = None) -> Run:
        """Start a run in a thread (``<platform>:<coordinates>``, as the platform spells it)."""
        return await self._run(calls.create_run(thread_id, agent, started_by))

    async def end_run(self, run_id: str) -> Run:
        return await self._run(calls.end_run(run_id))

    async def abort_run(self, run_id: str) -> Run:
        """Abort a run: it ends, and its pending prompt is cancelled with ``reason_code: aborted``."""
        return await self._run(calls.abort_run(run_id))

    async def session_thread(self, session_key: str, channel: str, header: str) -> str:
        """The thread of an agent session (e.g. ``claude-code:<session_id>``); the first call starts it by
        posting ``header`` into ``channel`` (``<platform>:<channel>``)."""
        return await self._run(calls.session_thread(session_key, channel, header))

    async def session_run(
        self, session_key: str, thread_id: str, agent: str, started_by: str | None = None
    ) -> Run:
        """The run a session's questions share in ``thread_id``: the running one, or a new one when it has
        none or it ended. A grant made on one of its prompts then answers the session's later identical
        calls; leave the run open between questions (don't end it after each)."""
        return await self._run(calls.session_run(session_key, thread_id, agent, started_by))

    async def session_call(self, session_key: str, call_id: str) -> str | None:
        """The prompt bound to one tool call of a session (``bind_session_call``); None when none is."""
        return await self._run(calls.session_call(session_key, call_id))

    async def bind_session_call(
        self,
        session_key: str,
        call_id: str,
        prompt_id: str,
        *,
        replaces: str | None = None,
        tool_call: dict[str, Any] | None = None,
    ) -> str:
        """Bind a tool call of a session to the prompt asking about it; returns the prompt bound (another
        one when someone bound the call first). ``replaces`` names a settled prompt this one replaces;
        ``tool_call`` (``{name, arguments}``) makes the gateway refuse (409 CALL_MISMATCH) a prompt that
        was raised for any other call."""
        return await self._run(calls.bind_session_call(session_key, call_id, prompt_id, replaces, tool_call))

    async def raise_step(
        self,
        run_id: str,
        kind: str,
        *,
        message: str,
        requested_schema: dict[str, Any] | None = None,
        url: str | None = None,
        expires_in_seconds: int | None = None,
    ) -> Prompt:
        """Raise a form (``kind="form"``, ``requested_schema``) or a URL step (``kind="url"``, ``url``)
        without waiting; the gateway derives its questions. PromptUnavailable when the chat post failed."""
        body = calls.step_body(kind, message, requested_schema, url, expires_in_seconds)
        return await self._run(calls.raise_prompt(run_id, body, self.reconnect_delay))

    async def raise_prompt(
        self,
        run_id: str,
        kind: Literal["approval", "ask_user_question", "text", "form", "url"],
        questions: list[dict[str, Any]],
        *,
        tool_call: dict[str, Any] | None = None,
        expires_in_seconds: int | None = None,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
        approvals: int | None = None,
        starter_counts: bool | None = None,
        escalation: list[dict[str, Any]] | None = None,
    ) -> Prompt:
        """Raise a prompt; raises PromptUnavailable when the chat post failed (the question was not asked).

        An approval may take edits (``editable``, checked against ``input_schema``) or need ``approvals``
        distinct people (``starter_counts``: whether the run's starter is one of them). ``escalation``
        replaces the agent's reminders and copies for this prompt (``[]``: none)."""
        body = calls.prompt_body(
            kind,
            questions,
            tool_call=tool_call,
            expires_in_seconds=expires_in_seconds,
            editable=editable,
            input_schema=input_schema,
            approvals=approvals,
            starter_counts=starter_counts,
            escalation=escalation,
        )
        return await self._run(calls.raise_prompt(run_id, body, self.reconnect_delay))

    async def approval_decision(
        self,
        run_id: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        destructive: bool | None = None,
        question: str | None = None,
        expires_in_seconds: int | None = None,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Prompt | Allowed:
        """``request_approval`` that says who let the call through: ``Allowed(by="policy")`` or
        ``Allowed(by="grant:<grant_id>")``, else the approval prompt raised (not waited for)."""
        body = calls.approval_body(
            tool,
            dict(arguments or {}),
            destructive,
            question,
            expires_in_seconds,
            editable=editable,
            input_schema=input_schema,
        )
        return await self._run(calls.approval_decision(run_id, body, self.reconnect_delay))

    request_approval = _prompt_or_none(approval_decision)

    async def get_prompt(self, prompt_id: str, wait: float = 0) -> Prompt:
        """The prompt; with ``wait`` (≤ 60 s) the call returns as soon as it settles."""
        return await self._run(calls.get_prompt(prompt_id, wait))

    async def wait_prompt(self, prompt_id: str, timeout: float | None = None) -> Prompt:
        """Long-poll until the prompt settles, across any number of polls and gateway restarts.

        Raises TimeoutError after ``timeout`` seconds (None: wait as long as it takes).
        """
        return await self._run(calls.wait_prompt(prompt_id, timeout, self.reconnect_delay))

    async def cancel_prompt(self, prompt_id: str, reason: str | None = None) -> Prompt:
        return await self._run(calls.cancel_prompt(prompt_id, reason))

    async def list_prompts(
        self,
        *,
        agent: str | None = None,
        thread_id: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> Page[Prompt]:
        """The inbox of pending prompts across agents, newest first."""
        return await self._run(calls.list_prompts(agent, thread_id, cursor, limit))

    async def post_message(self, thread_id: str, text: str) -> dict[str, Any]:
        """Post an agent message into the thread (queued, posted in order, retried)."""
        return await self._run(calls.post_message(thread_id, text))

    async def thread_items(
        self, thread_id: str, *, after: str | None = None, limit: int = 100
    ) -> Page[dict[str, Any]]:
        return await self._run(calls.thread_items(thread_id, after, limit))

    async def messages(
        self, *, after: str | None = None, wait: float = 0, thread_id: str | None = None, limit: int = 100
    ) -> Page[dict[str, Any]]:
        """People's queued messages after ``after``; pass the returned cursor next time to lose none."""
        return await self._run(calls.messages(after, wait, thread_id, limit))

    async def events(
        self,
        *,
        after: str | None = None,
        thread_id: str | None = None,
        run_id: str | None = None,
        agent: str | None = None,
    ) -> AsyncIterator[Event]:
        """Server-Sent Events, reconnecting after a dropped connection from the last event seen."""
        cursor = after
        delay = self.reconnect_delay
        filters = {"thread_id": thread_id, "run_id": run_id, "agent": agent}
        while True:
            try:
                async with self._lines(calls.events_call(cursor, filters)) as lines:
                    delay = self.reconnect_delay
                    parser = EventParser()
                    async for line in lines:
                        if (event := parser.feed(line)) is not None:
                            cursor = event.cursor
                            yield event
            except httpx.TransportError:
                await self._sleep(delay)
                delay = min(delay * 2, calls.MAX_BACKOFF_S)

    # Human side ------------------------------------------------------------------------------------

    async def list_inputs(self, agent: str, *, cursor: str | None = None, limit: int = 50) -> Page[Prompt]:
        """The agent's pending inputs (seed 002)."""
        return await self._run(calls.list_inputs(agent, cursor, limit))

    async def answer_input(
        self,
        agent: str,
        prompt_id: str,
        action: Literal["accept", "decline", "cancel"],
        *,
        content: Any = None,
        from_: str | None = None,
        grant: GrantMatch | dict[str, Any] | None = None,
        answers: list[Any] | None = None,
        note: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> Prompt:
        """Accept, decline or cancel an input on behalf of ``from_`` (an operator token).

        ``answers`` is the seed's shape instead of ``content`` (``["Approve"]``, ``["Deny"]``); on an
        approval, ``note`` is the person's words for the agent and ``arguments`` the call as they edited it.
        ``grant`` (with an approve of a tool call) lets the run's later calls matching that pattern through
        without asking: ``gateway.rules.grants.exact_match(call)`` or ``widened_match(call)`` build one.
        """
        flow = calls.answer_input(
            agent, prompt_id, action, content, from_, grant, answers=answers, note=note, arguments=arguments
        )
        return await self._run(flow)

    async def list_grants(self, run_id: str) -> list[Grant]:
        """The run's grants in force, each with its ``uses`` (the run's agent token, or an operator's)."""
        return await self._run(calls.list_grants(run_id))

    async def revoke_grant(self, run_id: str, grant_id: str, *, from_: str | None = None) -> Grant:
        """Revoke a grant (``from_``: the person doing it, who must be allowed to answer the run); the grant
        as it was."""
        return await self._run(calls.revoke_grant(run_id, grant_id, from_))

    async def respond(
        self,
        run_id: str,
        thread_id: str,
        request_id: str,
        *,
        answers: list[dict[str, Any]] | None = None,
        skip: bool = False,
        from_: str | None = None,
        note: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Seed 003: ``answers`` (questionId, selected, otherText) or ``skip``; returns the status. On an
        approval, ``note`` and ``arguments`` (the edited call) go with the answer."""
        flow = calls.respond(
            run_id, thread_id, request_id, answers, skip, from_, note=note, arguments=arguments
        )
        return await self._run(flow)

    async def put_agent(
        self,
        agent: str,
        *,
        approvers: list[str],
        expires_in_seconds: int | None = None,
        on_unmatched_reply: Literal["answer", "new_message"] | None = None,
        approval: dict[str, Any] | None = None,
        escalation: list[dict[str, Any]] | None = None,
        require_sign_in: bool | None = None,
    ) -> AgentDefinition:
        """Define an agent (the whole definition: what is left out takes its default); ``escalation``:
        the reminders and copies of its prompts nobody answers (``[{after_seconds, remind, to}]``)."""
        flow = calls.put_agent(
            agent, approvers, expires_in_seconds, on_unmatched_reply, approval, escalation, require_sign_in
        )
        return await self._run(flow)

    async def get_agent(self, agent: str) -> AgentDefinition:
        return await self._run(calls.get_agent(agent))

    # The directory of people (operator tokens) ------------------------------------------------------

    async def list_people(self) -> list[Person]:
        return await self._run(calls.list_people())

    async def get_person(self, person: str) -> Person:
        """One person (``alice`` or ``person:alice``)."""
        return await self._run(calls.get_person(person))

    async def put_person(
        self,
        person: str,
        *,
        name: str | None = None,
        email: str | None = None,
        identities: list[str] | None = None,
        groups: list[str] | None = None,
    ) -> Person:
        """Create or replace a person whole; an identity of another person raises IDENTITY_TAKEN."""
        return await self._run(calls.put_person(person, name, email, identities or [], groups or []))

    async def delete_person(self, person: str) -> Person:
        return await self._run(calls.delete_person(person))

    async def history(
        self,
        *,
        agent: str | None = None,
        run: str | None = None,
        thread: str | None = None,
        by: str | None = None,
        outcome: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        after: str | None = None,
        limit: int = 50,
        order: Literal["newest", "oldest"] = "newest",
    ) -> Page[dict[str, Any]]:
        """One page of settled prompts for the audit (``GET /v1/history``); pass ``cursor`` back as
        ``after`` for the next, until it is None (a page may be short, even empty, before that)."""
        filters = {"agent": agent, "run": run, "thread": thread, "by": by, "outcome": outcome}
        filters |= {"since": calls.moment(since), "until": calls.moment(until)}
        return await self._run(calls.history(filters, after, limit, order))

    # Helpers ---------------------------------------------------------------------------------------

    async def ask(
        self,
        run_id: str,
        question: str,
        options: list[str] | None = None,
        *,
        multi_select: bool = False,
        header: str | None = None,
        expires_in_seconds: int | None = None,
        timeout: float | None = None,
    ) -> list[str]:
        """Ask one question and wait for the answer: the chosen labels, or the person's own text.

        Raises PromptCancelled when it settles unanswered, PromptUnavailable when it could not be asked.
        """
        flow = calls.ask(
            run_id,
            question,
            options,
            multi_select=multi_select,
            header=header,
            expires_in_seconds=expires_in_seconds,
            timeout=timeout,
            reconnect_delay=self.reconnect_delay,
        )
        return await self._run(flow)

    async def approval(
        self,
        run_id: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        destructive: bool | None = None,
        question: str | None = None,
        expires_in_seconds: int | None = None,
        timeout: float | None = None,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Approval:
        """The decision on a tool call, with who made it: the agent's approval policy (``by: policy``), or
        a person; the Approval is truthy when the call may run, with exactly ``Approval.arguments``
        (``approve`` is the same call). ``destructive`` says the call changes or deletes something (MCP
        ``destructiveHint``). With ``editable`` the person may edit the arguments (to fit ``input_schema``):
        ``Approval.arguments`` are then the edited ones, and ``Approval.note`` carries the person's words
        either way.

        A prompt that settles unanswered raises PromptCancelled, and one that could not be posted raises
        PromptUnavailable: neither is ever reported as a denial.
        """
        flow = calls.approval(
            run_id,
            tool,
            arguments,
            question=question,
            expires_in_seconds=expires_in_seconds,
            timeout=timeout,
            reconnect_delay=self.reconnect_delay,
            destructive=destructive,
            editable=editable,
            input_schema=input_schema,
        )
        return await self._run(flow)

    approve = approval  # the same decision, named for ``if await tg.approve(...):``

    async def ask_form(
        self,
        run_id: str,
        message: str,
        schema: type[M] | dict[str, Any],
        *,
        expires_in_seconds: int | None = None,
        timeout: float | None = None,
    ) -> M | dict[str, Any] | None:
        """Ask for a flat form and wait: a pydantic model class in, an instance out (a JSON Schema in, its
        typed content out); None when the person declined. Other cancellations raise PromptCancelled."""
        read: Callable[[dict[str, Any]], M | dict[str, Any]] = dict
        if isinstance(schema, type):  # the model's validators decide before the answer is final
            requested, read = calls.form_schema(schema), reader(schema)
        else:
            requested = schema
        flow = form_flow.ask_form(
            run_id,
            message,
            requested,
            read,
            expires_in_seconds=expires_in_seconds,
            timeout=timeout,
            reconnect_delay=self.reconnect_delay,
        )
        return await self._run(flow)
