"""``require_approval``: a function that runs only once a person approves the exact call in chat; and
``ask_human``, a question to a person as a plain function an agent framework can register as a tool."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast, overload

from gateway.client.human import Human, HumanUnavailable

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class _Where:
    """The decorator's explicit settings; anything left None comes from the environment at call time."""

    thread: str | None
    session_channel: str | None
    started_by: str | None
    agent: str | None
    url: str | None
    token: str | None
    wait_s: float | None

    def human(self) -> Human:
        return Human.from_env(
            agent=self.agent,
            thread=self.thread,
            session_channel=self.session_channel,
            started_by=self.started_by,
            wait_s=self.wait_s,
            url=self.url,
            token=self.token,
        )


@dataclass(frozen=True, slots=True)
class _BoundCall:
    """A call's arguments, bound to the signature, and the JSON a person approves."""

    bound: inspect.BoundArguments
    shown: str

    @classmethod
    def of(cls, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _BoundCall:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return cls(bound, _as_json(bound))

    def arguments(self) -> dict[str, Any]:
        shown: dict[str, Any] = json.loads(self.shown)
        return shown

    def check_unchanged(self) -> None:
        """The body runs with exactly the approved arguments: one changed while waiting is not approved."""
        if _as_json(self.bound) != self.shown:
            raise HumanUnavailable("the arguments changed while the approval was pending; ask again")


def _as_json(bound: inspect.BoundArguments) -> str:
    arguments = {name: value for name, value in bound.arguments.items() if name not in ("self", "cls")}
    return json.dumps(arguments, default=repr, ensure_ascii=False, sort_keys=True)


@overload
def require_approval(func: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def require_approval(
    *,
    question: str | None = None,
    thread: str | None = None,
    session_channel: str | None = None,
    started_by: str | None = None,
    agent: str | None = None,
    url: str | None = None,
    token: str | None = None,
    wait_seconds: float | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def require_approval(
    func: Callable[P, R] | None = None,
    /,
    *,
    question: str | None = None,
    thread: str | None = None,
    session_channel: str | None = None,
    started_by: str | None = None,
    agent: str | None = None,
    url: str | None = None,
    token: str | None = None,
    wait_seconds: float | None = None,
) -> Callable[P, R] | Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the decorated function (sync or async) only after a person approves the call in chat.

    Each call raises an ``approval`` prompt whose ``tool_call`` is the function's qualified name and its
    bound arguments as JSON; on Approve the body runs with exactly those arguments. Deny raises
    ApprovalDenied (``who``, ``why``); nobody deciding (gateway down, prompt not posted, expired,
    cancelled, ``wait_seconds`` passed) raises HumanUnavailable, never a denial. Where to ask comes from
    the arguments, else the environment (see ``Human.from_env``).
    """
    where = _Where(thread, session_channel, started_by, agent, url, token, wait_seconds)

    def decorate(target: Callable[P, R]) -> Callable[P, R]:
        return _guarded(target, where, question)

    return decorate(func) if func is not None else decorate


def _guarded(func: Callable[P, R], where: _Where, question: str | None) -> Callable[P, R]:
    tool = func.__qualname__
    signature = inspect.signature(func)
    if inspect.iscoroutinefunction(func):
        body = cast(Callable[..., Awaitable[Any]], func)

        @functools.wraps(func)
        async def approved_async(*args: Any, **kwargs: Any) -> Any:
            call = _BoundCall.of(signature, args, kwargs)
            await where.human().approve_async(tool, call.arguments(), question=question)
            call.check_unchanged()
            return await body(*call.bound.args, **call.bound.kwargs)

        return cast(Callable[P, R], approved_async)

    @functools.wraps(func)
    def approved(*args: Any, **kwargs: Any) -> Any:
        call = _BoundCall.of(signature, args, kwargs)
        where.human().approve(tool, call.arguments(), question=question)
        call.check_unchanged()
        return func(*call.bound.args, **call.bound.kwargs)

    return cast(Callable[P, R], approved)


def ask_human(question: str, options: list[str] | None = None) -> str:
    """Ask a person in chat and wait for the answer.

    Args:
        question: what to ask, as the person should read it.
        options: labels to choose from; leave out for a free-text answer.

    Returns the chosen label, or the person's own words.
    """
    return Human.from_env().ask(question, options)


async def ask_human_async(question: str, options: list[str] | None = None) -> str:
    """Ask a person in chat and wait for the answer.

    Args:
        question: what to ask, as the person should read it.
        options: labels to choose from; leave out for a free-text answer.

    Returns the chosen label, or the person's own words.
    """
    return await Human.from_env().ask_async(question, options)
