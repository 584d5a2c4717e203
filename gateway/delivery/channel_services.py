"""What the core lends a channel beyond its sink and lease: services it asks for by type, when it needs them.

Every channel gets ``ChannelContext.sink`` and ``ChannelContext.lease``. A channel that serves more than
ingress routes (its own chat page that people read live, say) asks ``context.services`` for what it needs:
``context.services.get(ThreadLog)``. Each service is generic, named for what it does and not for who uses
it; the core offers the same ones to every channel (docs/channels/plugins.md lists them and why).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

# (thread_id, after, limit, wait) -> the thread's log entries after the cursor, as (cursor, entry) pairs.
ReadLog = Callable[[str, "str | None", int, float], Awaitable[list[tuple[str, dict[str, Any]]]]]


class Services:
    """The core's services for channels, each found by its type (or a base of it): a small, typed registry."""

    def __init__(self, *provided: object) -> None:
        self._provided = provided

    def get(self, kind: type[T]) -> T | None:
        """The service of type ``kind``, or None when this gateway offers none (a test's bare context)."""
        return next((found for found in self._provided if isinstance(found, kind)), None)

    def need(self, kind: type[T]) -> T:
        """The service of type ``kind``; a LookupError naming it when this gateway offers none."""
        found = self.get(kind)
        if found is None:
            raise LookupError(f"this gateway offers channels no {kind.__name__}")
        return found


class ThreadLog:
    """A thread's item log (everything the core logged into it, in order), read after a cursor: for a
    channel whose chat is that log. A read waits up to ``wait`` seconds while there is nothing new, served
    from the process's one follower of the thread, so a waiting reader holds no Redis connection."""

    def __init__(self, read: ReadLog) -> None:
        self._read = read

    async def read(
        self, thread_id: str, after: str | None = None, limit: int = 100, wait: float = 0
    ) -> list[tuple[str, dict[str, Any]]]:
        return await self._read(thread_id, after, limit, wait)


@dataclass(frozen=True, slots=True)
class ProcessState:
    """Whether the store answers now (a long-lived stream is not opened while it does not), and whether
    this process is draining (told to stop: a stream it serves ends now, with a reconnect hint)."""

    store_available: Callable[[], bool] = lambda: True
    draining: Callable[[], bool] = lambda: False


@dataclass(frozen=True, slots=True)
class SignedInPerson:
    """The person a browser's session names: ``identity`` is how an answer names them (``person:<id>``),
    with the email address and platform identities the directory (or the ID token) gives them."""

    identity: str
    email: str | None = None
    identities: tuple[str, ...] = ()


# (the request's Cookie header) -> the person its session cookie names, or None (no cookie, a dead session).
SessionLookup = Callable[["str | None"], Awaitable["SignedInPerson | None"]]


@dataclass(frozen=True, slots=True)
class Sessions:
    """Sign-in, when the gateway has it configured: who a request's session cookie names, and where a
    browser goes to sign in (``login_url``, which takes ``?next=`` a same-origin path to come back to). A
    gateway without sign-in offers no ``Sessions``: a channel that asks gets None."""

    person: SessionLookup
    login_url: str = "/auth/login"
