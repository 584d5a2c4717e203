"""What the core lends a channel beyond its sink and lease: services it asks for by type, when it needs them.

Every channel gets ``ChannelContext.sink`` and ``ChannelContext.lease``. A channel that serves more than
ingress routes (its own chat page that people read live, say) asks ``context.services`` for what it needs:
``context.services.get(ThreadLog)``. Each service is generic, named for what it does and not for who uses
it; the core offers the same ones to every channel (docs/channels/plugins.md lists them and why).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from gateway.base.errors import GatewayError
from gateway.base.models import PERSON_PREFIX, InboundMessage
from gateway.people.signin import SESSION_COOKIE, SignedIn, SignIn
from gateway.rules.outcomes import Received

T = TypeVar("T")
SIGNED_IN_PREFIX = PERSON_PREFIX  # how the core names a signed-in person: person:<id>

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


# A request's headers -> why a write its session cookie carries is refused (None: it is not).
WriteRefusal = Callable[[Mapping[str, str]], "GatewayError | None"]
# A signed-in person's message and the groups their session vouches for -> what came of it in the core.
ReceiveAs = Callable[[InboundMessage, Collection[str]], Awaitable[Received]]


class SignedInPeople:
    """People signed in at the organisation's identity provider (OIDC), for a channel whose pages they use:
    who a request's session cookie (``tg_session``) is, and their messages handed to the core as that
    person. Lent only when sign-in is configured.

    The person and their groups (the directory's and the ID token's groups claim) come from the session
    in Redis, read again on every call: never from what the request says. So a channel cannot make anyone
    a member of a group, and a session that ended (logout, expiry, the person removed) stops at once.
    """

    cookie = SESSION_COOKIE
    login_path = "/auth/login"
    logout_path = "/auth/logout"

    def __init__(self, signin: SignIn, write_refusal: WriteRefusal, receive: ReceiveAs) -> None:
        self._signin = signin
        self._write_refusal = write_refusal
        self._receive = receive

    @staticmethod
    def has_session(headers: Mapping[str, str]) -> bool:
        """Whether the request carries a session cookie at all (live or not)."""
        return session_cookie(headers) is not None

    async def person(self, headers: Mapping[str, str], *, write: bool = False) -> SignedIn | None:
        """The person of the request's session; None without a session cookie. A GatewayError for a session
        that expired or ended (401), and for a ``write`` not sent as JSON from a same-origin page (403)."""
        session_id = session_cookie(headers)
        if session_id is None:
            return None
        if write and (refused := self._write_refusal(headers)) is not None:
            raise refused
        person = await self._signin.person(session_id)
        if person is None:
            raise GatewayError(
                "UNAUTHORIZED", "Your session has expired or ended; sign in again at /auth/login.", 401
            )
        return person

    async def receive(self, headers: Mapping[str, str], message: InboundMessage) -> Received:
        """Hand ``message`` to the core as the session's person: its sender is ``person:<id>`` whatever it
        said, and the session's groups count where approvers name ``group:<name>``. Refused as ``person``
        refuses a write; 401 without a session."""
        person = await self.person(headers, write=True)
        if person is None:
            raise GatewayError("UNAUTHORIZED", "Sign in first: this needs a session (/auth/login).", 401)
        as_person = message.model_copy(update={"sender": person.identity})
        return await self._receive(as_person, person.groups)


def session_cookie(headers: Mapping[str, str]) -> str | None:
    """The ``tg_session`` cookie's value from the ``Cookie`` header, or None."""
    for part in (headers.get("cookie") or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == SignedInPeople.cookie and value:
            return value
    return None
