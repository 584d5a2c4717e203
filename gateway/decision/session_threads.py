"""Session threads: an agent session's first prompt starts a thread with a header; later prompts reuse it."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from gateway.base import platforms
from gateway.base.errors import GatewayError
from gateway.base.ids import ThreadRef, parse_thread_id
from gateway.base.logs import event
from gateway.delivery.channel import ChannelError, Channels, StartsThreads
from gateway.store import Store
from gateway.store.sessions import SessionBindings

CLAIM_TTL_MS = 30_000
POLL_S = 0.1


def parse_channel_ref(ref: str) -> ThreadRef:
    """Parse a channel reference (where a session's header message starts its thread) by its platform's
    grammar, or raise ``INVALID_CHANNEL``."""
    platform = platforms.platform(platforms.prefix(ref)) if isinstance(ref, str) else None
    match = platform.channels.fullmatch(ref) if platform else None
    if platform is None or match is None:
        forms = platforms.either(found.channel_example for found in platforms.installed())
        raise GatewayError(
            "INVALID_CHANNEL", f"{ref!r} is not a channel. Use {forms}.", 400, {"channel": ref}
        )
    return ThreadRef(ref, platform.name, tuple(value for value in match.groups() if value is not None))


def thread_starter(
    channels: Channels, ref: ThreadRef, instead: str, details: dict[str, str]
) -> StartsThreads:
    """The channel of ``ref``, which must be able to start threads there: else THREADS_NOT_SUPPORTED
    (400), saying what to do ``instead``."""
    channel = channels.for_thread(ref)
    if not isinstance(channel, StartsThreads):
        raise GatewayError(
            "THREADS_NOT_SUPPORTED",
            f"The {ref.platform} channel cannot start threads; {instead}.",
            400,
            details,
        )
    return channel


@dataclass(frozen=True, slots=True)
class SessionThread:
    session_key: str
    thread_id: str
    created: bool


def _unavailable(message: str, session_key: str) -> GatewayError:
    return GatewayError("SESSION_THREAD_UNAVAILABLE", message, 503, {"session_key": session_key})


class SessionThreads:
    """Finds or starts the thread of an agent session. The binding lives in Redis, shared by all processes."""

    def __init__(
        self, store: Store, channels: Channels, *, claim_ttl_ms: int = CLAIM_TTL_MS, poll_s: float = POLL_S
    ) -> None:
        self.store = store
        self.channels = channels
        self.bindings = SessionBindings(store.redis)
        self.claim_ttl_ms = claim_ttl_ms
        self.poll_s = poll_s

    async def get(self, session_key: str) -> str | None:
        return await self.bindings.get(session_key)

    async def thread_for(self, session_key: str, channel_ref: str, header: str) -> SessionThread:
        """The session's thread; the first call posts ``header`` into the channel to start it.

        Two first calls at once start one thread: one posts, the other waits for its binding (and takes
        over if the first gave up).
        """
        existing = await self.bindings.get(session_key)
        if existing is not None:
            return SessionThread(session_key, existing, False)
        ref = parse_channel_ref(channel_ref)
        channel = thread_starter(self.channels, ref, "name a fixed thread instead", {"channel": channel_ref})
        token = uuid.uuid4().hex
        deadline = time.monotonic() + self.claim_ttl_ms / 1000
        while not await self.bindings.claim(session_key, token, self.claim_ttl_ms):
            if time.monotonic() > deadline:
                raise _unavailable(
                    "Another request is starting this session's thread and has not finished; try again.",
                    session_key,
                )
            await asyncio.sleep(self.poll_s)
            existing = await self.bindings.get(session_key)
            if existing is not None:
                return SessionThread(session_key, existing, False)
        try:
            existing = await self.bindings.get(session_key)  # bound between our lookup and our claim
            if existing is not None:
                return SessionThread(session_key, existing, False)
            thread_id = await self._start(channel, ref, session_key, header)
            # Marked before anything is logged in it: its approvers alone read it (tool calls in full).
            await self.store.mark_session_thread(thread_id, session_key)
            await self.bindings.bind(session_key, thread_id)
        finally:
            await self.bindings.release(session_key, token)
        entry = {
            "role": "gateway",
            "type": "message",
            "content": [{"type": "text", "text": header}],
            "metadata": {"type": "session_header", "session_key": session_key},
        }
        await self.store.log_item(thread_id, entry)
        event("session.thread_started", session_key=session_key, thread_id=thread_id)
        return SessionThread(session_key, thread_id, True)

    async def _start(self, channel: StartsThreads, ref: ThreadRef, session_key: str, header: str) -> str:
        try:
            thread_id = await channel.start_thread(ref, header)
        except ChannelError as exc:
            raise _unavailable(
                f"The session's thread could not be started in {ref.thread_id} ({exc}); "
                "the prompt was not posted.",
                session_key,
            ) from exc
        return parse_thread_id(thread_id).thread_id
