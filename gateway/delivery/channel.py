"""What the core needs from a chat platform: a small required Protocol plus optional capabilities."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from starlette.routing import BaseRoute

from gateway.base import metrics
from gateway.base.errors import GatewayError
from gateway.base.ids import ThreadRef
from gateway.base.models import InboundMessage, ThreadItem
from gateway.delivery.channel_services import SIGNED_IN_PREFIX, Services

# What a channel tells apart when the core fails it: a store outage (retry later, or answer 503) or not.
# Channels take it from here, never from the store; the rule itself stays with the store's health.
from gateway.store.outage import is_store_outage as is_store_outage
from gateway.store.outage import store_unavailable as store_unavailable

if TYPE_CHECKING:
    from gateway.delivery.lease import Lease
    from gateway.rules.outcomes import Received
    from gateway.rules.steps import StepRequest, StepResult


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Where a posted item landed, so it can be edited later (native controls)."""

    thread_id: str
    message_id: str


class ChannelError(Exception):
    """A platform refused or failed a post. ``retry_after`` is set when the platform said when to retry."""

    def __init__(self, message: str, *, retry_after: float | None = None, permanent: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.permanent = permanent


@runtime_checkable
class Channel(Protocol):
    """A chat platform the gateway posts into. ``platform`` is the thread id prefix it serves."""

    platform: str

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post an item into the thread; raise ChannelError when it cannot be posted."""
        ...


@runtime_checkable
class PrivateNotices(Protocol):
    """Capability: tell one person something nobody else in the thread sees."""

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None: ...


@runtime_checkable
class EditsMessages(Protocol):
    """Capability: replace a posted item (to show a prompt's outcome and retire its controls)."""

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None: ...


@runtime_checkable
class StartsThreads(Protocol):
    """Capability: post a header message into a channel and return the id of the thread it starts.

    ``channel`` is a parsed channel reference (its platform's ``channels`` grammar,
    ``gateway.delivery.plugins``);
    the result is a thread id of the same platform.
    Raise ChannelError when the header cannot be posted.
    """

    async def start_thread(self, channel: ThreadRef, text: str) -> str: ...


@runtime_checkable
class Mentions(Protocol):
    """Capability: a post can notify people by name. ``mention`` is the platform's markup that notifies
    ``identity`` (one of its own people), or None for one it cannot notify. The channel renders the
    identities an item lists under ``metadata["mentions"]`` that way (a reminder's approvers); a channel
    without it gets their names in the item's text instead."""

    def mention(self, identity: str) -> str | None: ...


@runtime_checkable
class DirectMessages(Protocol):
    """Capability: a one-to-one conversation between the bot and one of the platform's people.

    ``direct_thread`` names where a message reaches ``identity`` alone: a thread id of the platform, or a
    channel reference (its ``channels`` grammar) to start a thread in, for a channel that also
    ``StartsThreads``. None when the platform cannot open one with that person (the channel logs why);
    raise ChannelError when the platform failed to answer (permanent when asking again cannot help).
    """

    async def direct_thread(self, identity: str) -> str | None: ...


@runtime_checkable
class Permalinks(Protocol):
    """Capability: the URL where a person opens a thread (None when the platform cannot say)."""

    def permalink(self, thread_id: str) -> str | None: ...


class Channels:
    """The configured channels, by platform."""

    def __init__(self, channels: list[Channel] | None = None) -> None:
        self._by_platform: dict[str, Channel] = {}
        for channel in channels or []:
            self.add(channel)

    def add(self, channel: Channel) -> None:
        self._by_platform[channel.platform] = channel

    def __contains__(self, platform: str) -> bool:
        return platform in self._by_platform

    def platforms(self) -> list[str]:
        return sorted(self._by_platform)

    def get(self, platform: str) -> Channel | None:
        """The channel of ``platform``, when it is configured here."""
        return self._by_platform.get(platform)

    def permalink(self, thread_id: str) -> str | None:
        """Where a person opens ``thread_id``, when its channel can say."""
        channel = self._by_platform.get(thread_id.split(":", 1)[0])
        return channel.permalink(thread_id) if isinstance(channel, Permalinks) else None

    def for_thread(self, thread: ThreadRef) -> Channel:
        channel = self._by_platform.get(thread.platform)
        if channel is None:
            raise GatewayError(
                "CHANNEL_NOT_CONFIGURED",
                f"The {thread.platform} channel is not configured on this gateway; set its settings "
                "(see .env.example) or use a configured channel.",
                400,
                {"thread_id": thread.thread_id, "configured": self.platforms()},
            )
        return channel


class InboundSink(Protocol):
    """Where a channel hands people's input, decoded, and gets back what came of it: the core's one entry
    point. A typed message goes to ``receive``; a press, a submitted form or a reply to a text request
    to ``step``, which runs the core's answer step on it once."""

    async def receive(self, message: InboundMessage) -> Received: ...

    async def step(self, request: StepRequest) -> StepResult:
        """What came of a decoded press, form or reply (see ``gateway.rules.steps``): never raises for the
        person's input; a store outage or a bug of ours is a refused result with the notice to show."""
        ...


class CountedInbound:
    """The core's inbound entry point, as handed to channels: counts each message by its outcome.

    A channel names people by their platform identity only: a ``person:<id>`` sender is a signed-in
    person, whom only the core's sign-in service (``SignedInPeople``) hands over, so one here is refused.
    """

    def __init__(self, sink: InboundSink) -> None:
        self.sink = sink

    async def receive(self, message: InboundMessage) -> Received:
        _platform_sender(message.sender)
        received = await self.sink.receive(message)
        metrics.inbound(message.thread_id, received.outcome)
        return received

    async def step(self, request: StepRequest) -> StepResult:
        _platform_sender(getattr(request, "sender", ""))
        return await self.sink.step(request)  # the core counts what its step hands to receive


def _platform_sender(sender: str) -> None:
    if sender.startswith(SIGNED_IN_PREFIX):
        raise GatewayError(
            "FORBIDDEN",
            "A channel hands over platform identities only; a signed-in person's messages go through "
            "the SignedInPeople service, which takes who they are from their session.",
            403,
            {"sender": sender},
        )


@dataclass(frozen=True, slots=True)
class ChannelContext:
    """What a running channel gets from the gateway: the inbound sink, a way to hold a lease, where people
    open the gateway (``public_url``, for links to pages it serves; None when unknown), and the core's
    other services for channels, asked for by type when a channel needs one (``services``: see
    ``gateway.delivery.channel_services``)."""

    sink: InboundSink
    lease: Callable[[str], Lease]
    public_url: str | None = None
    services: Services = field(default_factory=Services)


@runtime_checkable
class ChannelRuntime(Channel, Protocol):
    """A channel that runs inside ``threadgate serve``: started with the app, stopped on shutdown.

    ``routes()`` lists the HTTP ingress routes it needs on the gateway's server (may be empty).
    """

    async def start(self, context: ChannelContext) -> None: ...

    async def stop(self) -> None: ...

    def routes(self) -> list[BaseRoute]: ...


class Handed(StrEnum):
    """How handing one platform event to the core ended."""

    TAKEN = "taken"
    DROPPED = "dropped"  # the core refused it, or it kept failing for another reason than a store outage
    CLOSING = "closing"  # the channel is stopping: the platform (or the next holder) will deliver it again


# What ``HandOver`` reports of each failed try: the error, the try's number (store outages not counted),
# whether it was a store outage, and the pause before the next try (None: no next try).
FailedTry = Callable[[Exception, int, bool, "float | None"], None]


@dataclass(frozen=True, slots=True)
class HandOver:
    """The one rule for handing a platform event to the core when nothing else would deliver it again: a
    store outage is retried with backoff for as long as it lasts (the gateway rides outages out everywhere
    else, so an event must not be lost to one); any other failure is tried ``tries`` times; the core's own
    refusal (a GatewayError) once. Pauses double from ``first_delay_s`` up to ``max_delay_s``."""

    tries: int
    first_delay_s: float
    max_delay_s: float

    async def __call__(
        self,
        handle: Callable[[], Awaitable[object]],
        failed: FailedTry,
        *,
        closing: Callable[[], bool] = lambda: False,
        pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> Handed:
        attempt = outages = 0
        while not closing():
            try:
                await handle()
                return Handed.TAKEN
            except Exception as exc:
                outage = is_store_outage(exc)
                outages = outages + 1 if outage else 0
                attempt += 0 if outage else 1
                last = not outage and (isinstance(exc, GatewayError) or attempt >= self.tries)
                tries = outages if outage else attempt
                delay = None if last else min(self.first_delay_s * 2.0 ** (tries - 1), self.max_delay_s)
                failed(exc, attempt, outage, delay)
                if delay is None:
                    return Handed.DROPPED
                await pause(delay)
        return Handed.CLOSING
