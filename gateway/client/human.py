"""A person asked in chat from plain Python: ``Human`` asks once and waits; a denial and an unavailable
person are different errors, so nobody's silence is ever taken for a refusal."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import os
import sys
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from gateway.base.models import Prompt, ReasonCode
from gateway.client import calls
from gateway.client.async_client import Threadgate
from gateway.client.calls import Approval, Flow
from gateway.client.errors import PromptCancelled, ThreadgateError
from gateway.client.sync_client import Client
from gateway.client.target import Target, session_header, session_key
from gateway.client.waiting import GAVE_UP_REASON, say_where
from gateway.rules.mapper import NEGATIVE

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")

DEFAULT_AGENT = "python"
_PROCESS_SESSION = uuid.uuid4().hex[:12]


class ApprovalDenied(Exception):
    """A person denied the call, or declined to answer: ``who`` (their identity, when known), ``why`` (a
    sentence to show or hand the model) and ``note``, the person's own words when they gave a reason."""

    def __init__(self, tool: str, who: str | None, why: str, note: str | None = None) -> None:
        super().__init__(f"{tool} was not approved: {why}")
        self.tool = tool
        self.who = who
        self.why = why
        self.note = note


class HumanUnavailable(Exception):
    """Nobody could be asked or nobody answered (gateway down, prompt not posted, expired, cancelled).

    Never a denial: the question is still open, so ask again or fall back to another way of asking.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"Nobody could answer: {reason}. Nobody denied it; ask again.")
        self.reason = reason


# A question to ask, as the flow that asks it given the client's reconnect delay: written once, run by
# ``Client`` for the blocking method and by ``Threadgate`` for its ``_async`` twin.
Asking = Callable[[float], Flow[T]]


def _blocking(
    asking: Callable[Concatenate[Human, P], Asking[R]], name: str
) -> Callable[Concatenate[Human, P], R]:
    """The blocking method that runs ``asking``'s flow on ``Client``, with its signature and docstring."""

    @functools.wraps(asking)
    def run(self: Human, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with Client(self.url, self.token) as tg:
            return tg._run(asking(self, *args, **kwargs)(tg.reconnect_delay))

    run.__name__, run.__qualname__ = name, f"Human.{name}"
    run.__signature__ = _answering(asking)  # type: ignore[attr-defined]
    return run


def _awaiting(
    asking: Callable[Concatenate[Human, P], Asking[R]], name: str
) -> Callable[Concatenate[Human, P], Coroutine[Any, Any, R]]:
    """``name`` for async code: the same flow run on ``Threadgate``."""

    @functools.wraps(asking)
    async def run(self: Human, /, *args: P.args, **kwargs: P.kwargs) -> R:
        async with Threadgate(self.url, self.token) as tg:
            return await tg._run(asking(self, *args, **kwargs)(tg.reconnect_delay))

    run.__name__, run.__qualname__ = f"{name}_async", f"Human.{name}_async"
    run.__doc__ = f"``{name}`` for async code."
    run.__signature__ = _answering(asking)  # type: ignore[attr-defined]
    return run


def _answering(asking: Callable[..., Asking[Any]]) -> inspect.Signature:
    """``asking``'s signature, returning the answer its flow ends with (``Asking[X]`` -> ``X``)."""
    signature = inspect.signature(asking)
    returns = str(signature.return_annotation).removeprefix("Asking[").removesuffix("]")
    return signature.replace(return_annotation=returns)


@dataclass(frozen=True, slots=True)
class Human:
    """Where to ask (a thread, or this session's own thread in a channel) and the gateway to ask through.

    ``from_env`` reads the integrations' environment (``THREADGATE_THREAD`` or
    ``THREADGATE_SESSION_CHANNEL``, ``THREADGATE_STARTED_BY``, ``THREADGATE_AGENT``,
    ``THREADGATE_WAIT_SECONDS``, ``THREADGATE_URL``, ``THREADGATE_TOKEN``). Every question of a session
    is asked in the session's one run, so a grant a person makes on one ("approve for this session")
    answers its later identical calls; a wait that gives up cancels its prompt in the chat.
    """

    target: Target
    url: str | None = None
    token: str | None = None
    session: str = _PROCESS_SESSION
    product: str = "Python"

    @classmethod
    def from_env(
        cls,
        default_agent: str = DEFAULT_AGENT,
        *,
        agent: str | None = None,
        thread: str | None = None,
        session_channel: str | None = None,
        started_by: str | None = None,
        wait_s: float | None = None,
        url: str | None = None,
        token: str | None = None,
        product: str | None = None,
    ) -> Human:
        """The environment's settings, each replaced by the argument given explicitly.

        ``default_agent`` names the agent when neither ``agent`` nor ``THREADGATE_AGENT`` does.
        """
        target = Target.from_env(default_agent)
        # An explicit thread wins over the environment's session channel.
        target = dataclasses.replace(
            target,
            agent=agent or target.agent,
            thread=thread or target.thread,
            session_channel=None if thread else session_channel or target.session_channel,
            started_by=started_by or target.started_by,
            wait_s=wait_s if wait_s is not None else target.wait_s,
        )
        return cls(target, url, token, product=product or _script_name())

    def _approval(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        question: str | None = None,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Asking[Approval]:
        """Ask a person to approve ``tool`` with ``arguments``; returns the approval, whose ``arguments``
        are the ones to run with (edited, where ``editable`` let the person change them).

        Raises ApprovalDenied on Deny (or a declined question) and HumanUnavailable when nobody decided.
        """
        return lambda reconnect_delay: self._approval_flow(
            tool, arguments, question, reconnect_delay, editable, input_schema
        )

    def _ask(self, question: str, options: list[str] | None = None) -> Asking[str]:
        """Ask one question; the chosen label, or the person's own words. HumanUnavailable if unanswered."""
        return lambda reconnect_delay: self._question(question, options, reconnect_delay)

    approve = _blocking(_approval, "approve")
    approve_async = _awaiting(_approval, "approve")
    ask = _blocking(_ask, "ask")
    ask_async = _awaiting(_ask, "ask")

    # The flows both transports run ------------------------------------------------------------------

    def _approval_flow(
        self,
        tool: str,
        arguments: dict[str, Any],
        question: str | None,
        reconnect_delay: float,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Flow[Approval]:
        def decide(run_id: str, on_raised: Callable[[Prompt], None]) -> Flow[Approval]:
            return calls.approval(
                run_id,
                tool,
                arguments,
                question=question,
                expires_in_seconds=None,
                timeout=self.target.wait_s,
                reconnect_delay=reconnect_delay,
                on_raised=on_raised,
                editable=editable,
                input_schema=input_schema,
            )

        try:
            decision = yield from self._in_run(decide)
        except PromptCancelled as exc:
            if exc.prompt.reason_code is ReasonCode.DECLINED:
                raise ApprovalDenied(tool, exc.prompt.answered_by, "declined to answer in chat") from exc
            raise HumanUnavailable(_cancelled(exc.prompt)) from exc
        if not decision.allowed:
            note = reason_given(decision.note)
            why = f"denied in chat by {decision.by or 'a person'}"
            raise ApprovalDenied(tool, decision.by, f"{why}: {note}" if note else why, note)
        return decision

    def _question(self, question: str, options: list[str] | None, reconnect_delay: float) -> Flow[str]:
        def answer(run_id: str, on_raised: Callable[[Prompt], None]) -> Flow[list[str]]:
            return calls.ask(
                run_id,
                question,
                options,
                multi_select=False,
                header=None,
                expires_in_seconds=None,
                timeout=self.target.wait_s,
                reconnect_delay=reconnect_delay,
                on_raised=on_raised,
            )

        try:
            answers = yield from self._in_run(answer)
        except PromptCancelled as exc:
            raise HumanUnavailable(_cancelled(exc.prompt)) from exc
        return ", ".join(answers)

    def _in_run(self, asking: Callable[[str, Callable[[Prompt], None]], Flow[T]]) -> Flow[T]:
        """Ask in the session's run (started on first use, never ended here); every failure to ask
        becomes HumanUnavailable, and a prompt given up on is cancelled so the chat stops waiting."""
        target = self.target
        key = session_key(target.agent, self.session)
        try:
            if target.thread is not None:
                thread = target.thread
            elif target.session_channel is not None:
                header = session_header(self.product, os.getcwd(), self.session)
                thread = yield from calls.session_thread(key, target.session_channel, header)
            else:
                raise HumanUnavailable(
                    "nowhere to ask: set THREADGATE_SESSION_CHANNEL (a channel) or THREADGATE_THREAD"
                )
            run = yield from calls.session_run(key, thread, target.agent, target.started_by)
        except (httpx.HTTPError, ThreadgateError) as exc:
            raise HumanUnavailable(f"the gateway could not start the question ({_describe(exc)})") from exc
        raised: list[str] = []

        def on_raised(prompt: Prompt) -> None:
            raised.append(prompt.prompt_id)
            say_where(prompt)

        try:
            return (yield from asking(run.run_id, on_raised))
        except TimeoutError as exc:
            yield from _cancel_quietly(raised)
            raise HumanUnavailable(f"nobody answered within {target.wait_s} s") from exc
        except (httpx.HTTPError, ThreadgateError) as exc:
            yield from _cancel_quietly(raised)
            raise HumanUnavailable(_describe(exc)) from exc


def reason_given(note: str | None) -> str | None:
    """A person's note as a reason: None when they typed nothing but a deny word ("no", "deny"), which
    says no more than the denial itself."""
    if note is None or note.strip().casefold() in NEGATIVE:
        return None
    return note


def _cancel_quietly(prompt_ids: list[str]) -> Flow[None]:
    # An unreachable gateway cancels nothing; the prompt then expires on its own.
    for prompt_id in prompt_ids:
        with contextlib.suppress(httpx.HTTPError, ThreadgateError):
            yield from calls.cancel_prompt(prompt_id, GAVE_UP_REASON)


def _cancelled(prompt: Prompt) -> str:
    return f"the prompt was closed unanswered ({prompt.reason or prompt.reason_code})"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ThreadgateError):
        return exc.message
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _script_name() -> str:
    name = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else ""
    return name or "Python"
