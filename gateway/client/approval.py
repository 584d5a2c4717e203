"""``require_approval``: a function that runs only once a person approves the exact call in chat; and
``ask_human``, a question to a person as a plain function an agent framework can register as a tool."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast, overload

from gateway.client.call_types import SKIPPED, VARIADIC, CallTypes
from gateway.client.calls import Approval
from gateway.client.errors import ApprovalMismatch
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

    def approved(self, name: str, arguments: dict[str, Any], types: CallTypes) -> inspect.BoundArguments:
        """The call as the person approved it: each argument they left as shown keeps its own value (which
        JSON may only show as its ``repr``), each one they edited takes the edited value as its annotation
        reads it, one they left out its default. ApprovalMismatch when the edited call does not fit the
        function."""
        shown = self.arguments()
        signature = self.bound.signature
        unknown = sorted(set(arguments) - set(shown))
        if unknown:
            raise ApprovalMismatch(f"the call approved in chat gives {name}() no argument {unknown[0]!r}")
        values: dict[str, Any] = {}
        for parameter in signature.parameters.values():
            key = parameter.name
            if key in SKIPPED or (key in arguments and arguments[key] == shown.get(key)):
                if key in self.bound.arguments:
                    values[key] = self.bound.arguments[key]
            elif key in arguments:
                try:
                    value = types.read(key, arguments[key])
                except ValueError as exc:
                    raise ApprovalMismatch(f"the call approved in chat gives {name}() {key}={exc}") from None
                values[key] = tuple(value) if parameter.kind is parameter.VAR_POSITIONAL else value
            elif parameter.default is parameter.empty and parameter.kind not in VARIADIC:
                raise ApprovalMismatch(f"the call approved in chat leaves out {name}()'s argument {key!r}")
        approved = inspect.BoundArguments(signature, values)
        approved.apply_defaults()
        return approved


def _as_json(bound: inspect.BoundArguments) -> str:
    arguments = {name: value for name, value in bound.arguments.items() if name not in SKIPPED}
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
    editable: bool = False,
    input_schema: dict[str, Any] | None = None,
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
    editable: bool = False,
    input_schema: dict[str, Any] | None = None,
) -> Callable[P, R] | Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the decorated function (sync or async) only after a person approves the call in chat.

    Each call raises an ``approval`` prompt whose ``tool_call`` is the function's qualified name and its
    bound arguments as JSON; on Approve the body runs with exactly those arguments. With ``editable`` (or
    the agent's policy rule ``edit``) the person may change them first, and the body runs with the call
    as they approved it; the edit must fit ``input_schema``, by default the function's parameters as their
    annotations type them (pydantic's JSON Schema), and each edited value is read as the annotation reads it.
    Deny raises ApprovalDenied (``who``, ``why``, ``note``: the person's reason); nobody deciding (gateway
    down, prompt not posted, expired, cancelled, ``wait_seconds`` passed) raises HumanUnavailable, never
    a denial. Where to ask comes from the arguments, else the environment (see ``Human.from_env``).
    """
    where = _Where(thread, session_channel, started_by, agent, url, token, wait_seconds)

    def decorate(target: Callable[P, R]) -> Callable[P, R]:
        return _guarded(target, where, _Asking(question, editable, input_schema, CallTypes(target)))

    return decorate(func) if func is not None else decorate


@dataclass(frozen=True, slots=True)
class _Asking:
    """What each call's approval asks: the question, and whether (and within what) the call is editable."""

    question: str | None
    editable: bool
    input_schema: dict[str, Any] | None
    types: CallTypes

    def schema(self, call: _BoundCall) -> dict[str, Any]:
        """The given schema, else the function's parameters as typed, for the values this call shows:
        sent even when the decorator does not ask for edits, as the agent's policy may allow them."""
        return self.input_schema if self.input_schema is not None else self.types.schema(call.arguments())

    def options(self, call: _BoundCall) -> dict[str, Any]:
        """``Human.approve``'s keyword arguments for ``call``."""
        return {"question": self.question, "editable": self.editable, "input_schema": self.schema(call)}

    def approved(self, tool: str, call: _BoundCall, approval: Approval) -> inspect.BoundArguments:
        """The arguments the body runs with: the call as approved, unchanged since it was shown."""
        call.check_unchanged()
        return call.approved(tool, approval.arguments, self.types)


def _guarded(func: Callable[P, R], where: _Where, asking: _Asking) -> Callable[P, R]:
    tool = func.__qualname__
    signature = inspect.signature(func)
    if inspect.iscoroutinefunction(func):
        body = cast(Callable[..., Awaitable[Any]], func)

        @functools.wraps(func)
        async def approved_async(*args: Any, **kwargs: Any) -> Any:
            call = _BoundCall.of(signature, args, kwargs)
            approval = await where.human().approve_async(tool, call.arguments(), **asking.options(call))
            bound = asking.approved(tool, call, approval)
            return await body(*bound.args, **bound.kwargs)

        return cast(Callable[P, R], approved_async)

    @functools.wraps(func)
    def approved(*args: Any, **kwargs: Any) -> Any:
        call = _BoundCall.of(signature, args, kwargs)
        approval = where.human().approve(tool, call.arguments(), **asking.options(call))
        bound = asking.approved(tool, call, approval)
        return func(*bound.args, **bound.kwargs)

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
    return await Human.from_env().ask_async(question, options)


ask_human_async.__doc__ = ask_human.__doc__  # the same tool for a framework's model, awaited
