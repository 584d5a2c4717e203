"""``Client``: the blocking twin of ``Threadgate``, running the same ``ClientMethods`` on httpx.Client.

Its ways to reach the gateway block instead of awaiting, so each call's coroutine ends at its first step;
``finish`` reads the result off it without an event loop, on the caller's thread.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from gateway.client.calls import EVENTS_TIMEOUT, Call, Flow, auth_headers, base_url, decode
from gateway.client.errors import error_from
from gateway.client.methods import ClientMethods

P = ParamSpec("P")
R = TypeVar("R")


class _BlockingMethods(ClientMethods):
    """The calls over httpx.Client: every await in them is over before it returns."""

    def __init__(self, http: httpx.Client, reconnect_delay: float) -> None:
        self.http = http
        self.reconnect_delay = reconnect_delay

    async def _send(self, call: Call) -> Any:
        return decode(self.http.request(**call.request_args()))

    async def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)  # noqa: ASYNC251 - this client blocks on purpose: the coroutine never suspends

    @asynccontextmanager
    async def _lines(self, call: Call) -> AsyncIterator[AsyncIterator[str]]:
        with self.http.stream(**{**call.request_args(), "timeout": EVENTS_TIMEOUT}) as response:
            if response.is_error:
                response.read()
                raise error_from(response)
            yield _each(response.iter_lines())


async def _each(lines: Iterator[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


def finish(awaitable: Awaitable[R]) -> R:
    """The result of an awaitable that never suspends (all it awaits blocks instead)."""
    steps = awaitable.__await__()
    try:
        steps.send(None)
    except StopIteration as done:
        result: R = done.value
        return result
    getattr(steps, "close", lambda: None)()
    raise RuntimeError("a blocking client call awaited something that suspends")


def blocking(
    method: Callable[Concatenate[ClientMethods, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[Client, P], R]:
    """``method`` of ``ClientMethods`` as a ``Client`` method: its signature and docstring, its result."""

    @functools.wraps(method)
    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return finish(method(self._methods, *args, **kwargs))

    return call


def iterating(
    method: Callable[Concatenate[ClientMethods, P], AsyncIterator[R]],
) -> Callable[Concatenate[Client, P], Iterator[R]]:
    """An async-iterating method of ``ClientMethods`` as a ``Client`` method that iterates plainly."""

    @functools.wraps(method)
    def call(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[R]:
        items = method(self._methods, *args, **kwargs)
        try:
            while True:
                try:
                    yield finish(items.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                finish(aclose())

    signature = inspect.signature(method)
    returns = str(signature.return_annotation).replace("AsyncIterator", "Iterator")
    call.__signature__ = signature.replace(return_annotation=returns)  # type: ignore[attr-defined]
    return call


class Client:
    """A blocking client for one gateway, for scripts and sync frameworks. Use as ``with Client() as tg:``.

    Same methods, arguments and errors as the async ``Threadgate`` (they are its methods, run blocking).
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        reconnect_delay: float = 0.2,
    ) -> None:
        self.url = base_url(url)
        http = httpx.Client(
            base_url=self.url, timeout=timeout, transport=transport, headers=auth_headers(token)
        )
        self._methods = _BlockingMethods(http, reconnect_delay)

    @property
    def reconnect_delay(self) -> float:
        return self._methods.reconnect_delay

    @reconnect_delay.setter
    def reconnect_delay(self, seconds: float) -> None:
        self._methods.reconnect_delay = seconds

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._methods.http.close()

    def _run(self, flow: Flow[R]) -> R:
        """Send each request the flow yields and hand back the answer (or raise the error)."""
        return finish(self._methods._run(flow))

    create_run = blocking(ClientMethods.create_run)
    end_run = blocking(ClientMethods.end_run)
    abort_run = blocking(ClientMethods.abort_run)
    session_thread = blocking(ClientMethods.session_thread)
    session_run = blocking(ClientMethods.session_run)
    session_call = blocking(ClientMethods.session_call)
    bind_session_call = blocking(ClientMethods.bind_session_call)
    raise_step = blocking(ClientMethods.raise_step)
    raise_prompt = blocking(ClientMethods.raise_prompt)
    request_approval = blocking(ClientMethods.request_approval)
    approval_decision = blocking(ClientMethods.approval_decision)
    get_prompt = blocking(ClientMethods.get_prompt)
    wait_prompt = blocking(ClientMethods.wait_prompt)
    cancel_prompt = blocking(ClientMethods.cancel_prompt)
    list_prompts = blocking(ClientMethods.list_prompts)
    post_message = blocking(ClientMethods.post_message)
    thread_items = blocking(ClientMethods.thread_items)
    messages = blocking(ClientMethods.messages)
    events = iterating(ClientMethods.events)
    list_inputs = blocking(ClientMethods.list_inputs)
    answer_input = blocking(ClientMethods.answer_input)
    list_grants = blocking(ClientMethods.list_grants)
    revoke_grant = blocking(ClientMethods.revoke_grant)
    respond = blocking(ClientMethods.respond)
    put_agent = blocking(ClientMethods.put_agent)
    get_agent = blocking(ClientMethods.get_agent)
    history = blocking(ClientMethods.history)
    list_people = blocking(ClientMethods.list_people)
    get_person = blocking(ClientMethods.get_person)
    put_person = blocking(ClientMethods.put_person)
    delete_person = blocking(ClientMethods.delete_person)
    ask = blocking(ClientMethods.ask)
    approval = blocking(ClientMethods.approval)
    approve = blocking(ClientMethods.approve)
    ask_form = blocking(ClientMethods.ask_form)
