"""An in-memory channel: records what the core posts, and can be told to fail. Our own collaborator."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from gateway.base.ids import ThreadRef
from gateway.base.models import ThreadItem
from gateway.delivery.channel import ChannelError, MessageRef


@dataclass
class Posted:
    thread_id: str
    item: ThreadItem
    message_id: str


@dataclass
class MemoryChannel:
    """A channel for ``platform`` that keeps posts, edits and private notices in lists."""

    platform: str = "slack"
    posts: list[Posted] = field(default_factory=list)
    edits: list[tuple[str, ThreadItem]] = field(default_factory=list)
    notices: list[tuple[str, str, str]] = field(default_factory=list)
    fail_next: int = 0
    fail_with_retry_after: float | None = None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        if self.fail_next:
            self.fail_next -= 1
            raise ChannelError("platform said no", retry_after=self.fail_with_retry_after)
        message_id = f"m{len(self.posts) + 1}"
        self.posts.append(Posted(thread.thread_id, item, message_id))
        return MessageRef(thread.thread_id, message_id)

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        self.edits.append((ref.message_id, item))

    async def notify_private(self, thread: ThreadRef, identity: str, text: str) -> None:
        self.notices.append((thread.thread_id, identity, text))

    def items_of(self, kind: str) -> list[ThreadItem]:
        return [posted.item for posted in self.posts if posted.item.type == kind]


class HeldChannel(MemoryChannel):
    """A channel whose posts wait until the test lets them go (a platform answering slowly)."""

    def __init__(self) -> None:
        super().__init__("slack")
        self.posting = asyncio.Event()
        self.go = asyncio.Event()

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        self.posting.set()
        await self.go.wait()
        return await super().post(thread, item)
