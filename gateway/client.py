"""Threadgate's Python client (async, httpx): a call per endpoint of the API, plus ``ask`` and ``approve``.

Example (an agent asking a person in a chat thread, then acting on the answer)::

    import asyncio

    from gateway.client import Threadgate


    async def main() -> None:
        # THREADGATE_URL (default http://127.0.0.1:8787) and THREADGATE_TOKEN come from the environment.
        async with Threadgate() as tg:
            run = await tg.create_run("web:ops-room", agent="ops", started_by="web:alice")
            target = await tg.ask(run.run_id, "Deploy where?", ["staging", "production"])
            if await tg.approve(run.run_id, "deploy", {"target": target[0]}):
                await tg.post_message(run.thread_id, f"Deploying to {target[0]}.")
            await tg.end_run(run.run_id)


    asyncio.run(main())

``ask`` and ``approve`` raise the prompt, then wait for its answer across as many long-polls as it takes,
riding out gateway restarts (the prompt lives in Redis, not in the gateway process).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import httpx

from gateway.models import APPROVE, AgentDefinition, Prompt, PromptState, Run

DEFAULT_URL = "http://127.0.0.1:8787"
LONG_POLL_S = 60.0
_RETRY_STATUSES = frozenset({502, 503, 504})

T = TypeVar("T")


class ThreadgateError(Exception):
    """An error answered by the gateway: the contract's ``code``, ``message`` and ``details``."""

    def __init__(self, code: str, message: str, status: int, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = details or {}


class PromptUnavailable(ThreadgateError):
    """The prompt could not be posted to the chat: the question was never asked (not a denial)."""


class PromptCancelled(Exception):
    """The prompt settled without an answer (run ended, superseded, declined, expired, cancelled)."""

    def __init__(self, prompt: Prompt) -> None:
        super().__init__(f"prompt {prompt.prompt_id} was cancelled: {prompt.reason} ({prompt.reason_code})")
        self.prompt = prompt


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list; pass ``cursor`` back for the next (``None`` at the end of a paged list)."""

    items: list[T]
    cursor: str | None


@dataclass(frozen=True, slots=True)
class Event:
    """One Server-Sent Event: ``cursor`` resumes after it; ``id`` is the event's own id, for dedupe."""

    cursor: str
    type: str
    id: str
    created_at: str
    data: dict[str, Any] = field(default_factory=dict)


def _error_from(response: httpx.Response) -> ThreadgateError:
    try:
        body = response.json()["error"]
        code, message, details = str(body["code"]), str(body["message"]), dict(body.get("details") or {})
    except (ValueError, KeyError, TypeError):
        code, message, details = "HTTP_ERROR", f"HTTP {response.status_code}", {}
    kind = PromptUnavailable if code == "PROMPT_UNAVAILABLE" else ThreadgateError
    return kind(code, message, response.status_code, details)


class Threadgate:
    """An async client for one gateway. Use as ``async with Threadgate() as tg: ...``."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        reconnect_delay: float = 0.2,
    ) -> None:
        self.url = (url or os.environ.get("THREADGATE_URL") or DEFAULT_URL).rstrip("/")
        secret = token if token is not None else os.environ.get("THREADGATE_TOKEN", "")
        self.reconnect_delay = reconnect_delay
        self._http = httpx.AsyncClient(
            base_url=self.url,
            timeout=timeout,
            transport=transport,
            headers={"Authorization": f"Bearer {secret}"} if secret else {},
        )

    async def __aenter__(self) -> Threadgate:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        query = {key: value for key, value in (params or {}).items() if value is not None}
        response = await self._http.request(
            method,
            path,
            json=body,
            params=query,
            headers=headers,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
        if response.is_error:
            raise _error_from(response)
        return response.json()

    # Agent side ------------------------------------------------------------------------------------

    async def create_run(self, thread_id: str, agent: str, started_by: str | None = None) -> Run:
        """Start a run in a thread (``web:<room>``, ``slack:<channel>:<ts>``, …)."""
        body = {"thread_id": thread_id, "agent": agent, "started_by": started_by}
        return Run.model_validate(await self._call("POST", "/v1/runs", body=body))

    async def end_run(self, run_id: str) -> Run:
        return Run.model_validate(await self._call("POST", f"/v1/runs/{run_id}/end"))

    async def session_thread(self, session_key: str, channel: str, header: str) -> str:
        """The thread of an agent session (e.g. ``claude-code:<session_id>``); the first call starts it by
        posting ``header`` into ``channel`` (``slack:C0456``, ``telegram:-100123``, ``web:ops``, …)."""
        body = {"channel": channel, "header": header}
        data = await self._call("PUT", f"/v1/sessions/{session_key}/thread", body=body)
        return str(data["thread_id"])

    async def raise_prompt(
        self,
        run_id: str,
        kind: Literal["approval", "ask_user_question", "text"],
        questions: list[dict[str, Any]],
        *,
        tool_call: dict[str, Any] | None = None,
        expires_in_seconds: int | None = None,
    ) -> Prompt:
        """Raise a prompt; raises PromptUnavailable when the chat post failed (the question was not asked)."""
        body: dict[str, Any] = {"kind": kind, "questions": questions}
        if tool_call is not None:
            body["tool_call"] = tool_call
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        return await self._raise(run_id, body)

    async def _raise(self, run_id: str, body: dict[str, Any]) -> Prompt:
        delay = self.reconnect_delay
        while True:
            try:
                return Prompt.model_validate(
                    await self._call("POST", f"/v1/runs/{run_id}/prompts", body=body)
                )
            except httpx.ConnectError:  # never sent: safe to send again once the gateway is back
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def get_prompt(self, prompt_id: str, wait: float = 0) -> Prompt:
        """The prompt; with ``wait`` (≤ 60 s) the call returns as soon as it settles."""
        data = await self._call(
            "GET", f"/v1/prompts/{prompt_id}", params={"wait": wait or None}, timeout=wait + 30.0
        )
        return Prompt.model_validate(data)

    async def wait_prompt(self, prompt_id: str, timeout: float | None = None) -> Prompt:
        """Long-poll until the prompt settles, across any number of polls and gateway restarts.

        Raises TimeoutError after ``timeout`` seconds (None: wait as long as it takes).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = self.reconnect_delay
        while True:
            left = LONG_POLL_S if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"prompt {prompt_id} is still pending after {timeout} s")
            try:
                prompt = await self.get_prompt(prompt_id, wait=min(left, LONG_POLL_S))
            except httpx.TransportError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            except ThreadgateError as exc:
                if exc.status not in _RETRY_STATUSES:
                    raise
                await asyncio.sleep(delay)
                continue
            delay = self.reconnect_delay
            if prompt.prompt_state is not PromptState.PENDING:
                return prompt

    async def cancel_prompt(self, prompt_id: str, reason: str | None = None) -> Prompt:
        body = {"reason": reason} if reason else None
        return Prompt.model_validate(await self._call("POST", f"/v1/prompts/{prompt_id}/cancel", body=body))

    async def list_prompts(
        self,
        *,
        agent: str | None = None,
        thread_id: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> Page[Prompt]:
        """The inbox of pending prompts across agents, newest first."""
        params = {
            "state": "pending",
            "agent": agent,
            "thread_id": thread_id,
            "cursor": cursor,
            "limit": limit,
        }
        data = await self._call("GET", "/v1/prompts", params=params)
        return Page([Prompt.model_validate(item) for item in data["items"]], data["cursor"])

    async def post_message(self, thread_id: str, text: str) -> dict[str, Any]:
        """Post an agent message into the thread (queued, posted in order, retried)."""
        body = {"content": [{"type": "text", "text": text}]}
        result: dict[str, Any] = await self._call("POST", f"/v1/threads/{thread_id}/items", body=body)
        return result

    async def thread_items(
        self, thread_id: str, *, after: str | None = None, limit: int = 100
    ) -> Page[dict[str, Any]]:
        data = await self._call(
            "GET", f"/v1/threads/{thread_id}/items", params={"after": after, "limit": limit}
        )
        return Page(list(data["items"]), data["cursor"])

    async def messages(
        self, *, after: str | None = None, wait: float = 0, thread_id: str | None = None, limit: int = 100
    ) -> Page[dict[str, Any]]:
        """People's queued messages after ``after``; pass the returned cursor next time to lose none."""
        params = {"after": after, "wait": wait or None, "thread_id": thread_id, "limit": limit}
        data = await self._call("GET", "/v1/messages", params=params, timeout=wait + 30.0)
        return Page(list(data["items"]), data["cursor"])

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
        params = {"thread_id": thread_id, "run_id": run_id, "agent": agent}
        while True:
            headers = {"Last-Event-ID": cursor} if cursor else {}
            query = {key: value for key, value in params.items() if value is not None}
            try:
                async with self._http.stream(
                    "GET", "/v1/events", params=query, headers=headers, timeout=httpx.Timeout(10.0, read=None)
                ) as response:
                    if response.is_error:
                        await response.aread()
                        raise _error_from(response)
                    delay = self.reconnect_delay
                    async for item in _parse_sse(response.aiter_lines()):
                        cursor = item.cursor
                        yield item
            except httpx.TransportError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    # Human side ------------------------------------------------------------------------------------

    async def list_inputs(self, agent: str, *, cursor: str | None = None, limit: int = 50) -> Page[Prompt]:
        """The agent's pending inputs (seed 002)."""
        params = {"state": "pending", "cursor": cursor, "limit": limit}
        data = await self._call("GET", f"/v1/agents/{agent}/inputs", params=params)
        return Page([Prompt.model_validate(item) for item in data["items"]], data["cursor"])

    async def answer_input(
        self,
        agent: str,
        prompt_id: str,
        action: Literal["accept", "decline", "cancel"],
        *,
        content: Any = None,
        from_: str | None = None,
    ) -> Prompt:
        """Accept, decline or cancel an input on behalf of ``from_`` (an operator token)."""
        body: dict[str, Any] = {"action": action, "from": from_}
        if content is not None:
            body["content"] = content
        data = await self._call("POST", f"/v1/agents/{agent}/inputs/{prompt_id}", body=body)
        return Prompt.model_validate(data)

    async def respond(
        self,
        run_id: str,
        thread_id: str,
        request_id: str,
        *,
        answers: list[dict[str, Any]] | None = None,
        skip: bool = False,
        from_: str | None = None,
    ) -> dict[str, Any]:
        """Seed 003: ``answers`` (questionId, selected, otherText) or ``skip``; returns the status."""
        body: dict[str, Any] = {"skip": True} if skip else {"answers": answers or []}
        headers = {"X-Threadgate-From": from_} if from_ else None
        path = f"/v1/agent-runs/{run_id}/threads/{thread_id}/user-inputs/{request_id}/respond"
        result: dict[str, Any] = await self._call("POST", path, body=body, headers=headers)
        return result

    async def put_agent(
        self, agent: str, *, approvers: list[str], expires_in_seconds: int | None = None
    ) -> AgentDefinition:
        human: dict[str, Any] = {"approvers": approvers}
        if expires_in_seconds is not None:
            human["expires_in_seconds"] = expires_in_seconds
        data = await self._call("PUT", f"/v1/agents/{agent}", body={"human_input": human})
        return AgentDefinition.model_validate(data)

    async def get_agent(self, agent: str) -> AgentDefinition:
        return AgentDefinition.model_validate(await self._call("GET", f"/v1/agents/{agent}"))

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
        entry: dict[str, Any] = {"question": question, "multiSelect": multi_select}
        if options:
            entry["options"] = [{"label": label} for label in options]
        if header is not None:
            entry["header"] = header
        body: dict[str, Any] = {"kind": "ask_user_question", "questions": [entry]}
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        prompt = await self.wait_prompt((await self._raise(run_id, body)).prompt_id, timeout)
        if prompt.prompt_state is not PromptState.ANSWERED or not prompt.answers:
            raise PromptCancelled(prompt)
        return list(prompt.answers[0].answer)

    async def approve(
        self,
        run_id: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        question: str | None = None,
        expires_in_seconds: int | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Ask a person to approve a tool call; True for Approve, False for Deny.

        A prompt that settles unanswered raises PromptCancelled, and one that could not be posted raises
        PromptUnavailable: neither is ever reported as a denial.
        """
        body: dict[str, Any] = {
            "kind": "approval",
            "questions": [{"question": question or f"Allow {tool} to run?"}],
            "tool_call": {"name": tool, "arguments": arguments or {}},
        }
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        prompt = await self.wait_prompt((await self._raise(run_id, body)).prompt_id, timeout)
        if prompt.prompt_state is not PromptState.ANSWERED or not prompt.answers:
            raise PromptCancelled(prompt)
        return prompt.answers[0].answer == [APPROVE]


async def _parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """Server-Sent Events from response lines; comment lines and unknown fields are skipped."""
    cursor, kind = "", ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                payload = json.loads("\n".join(data))
                yield Event(
                    cursor=cursor,
                    type=kind or str(payload.get("type", "")),
                    id=str(payload.get("id", "")),
                    created_at=str(payload.get("created_at", "")),
                    data=dict(payload.get("data") or {}),
                )
            kind, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            cursor = value
        elif name == "event":
            kind = value
        elif name == "data":
            data.append(value)
