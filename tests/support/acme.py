"""``acme``: a platform no Threadgate release ships, installed at run time like a package beside it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic import SecretStr

from gateway.base.checks import Check
from gateway.base.ids import ThreadRef
from gateway.delivery.plugins import ChannelSpec, PlatformSettings, register, unregister
from tests.support.memory_channel import MemoryChannel

# Built at run time so no token-shaped literal sits in the repository.
TOKEN = "acme-" + "k" * 24


class AcmeSettings(PlatformSettings):
    acme_token: SecretStr | None = None
    acme_rooms: int = 3


@dataclass
class AcmeChannel(MemoryChannel):
    """Acme's channel: posts kept in memory, threads started under a room."""

    platform: str = "acme"
    headers: list[str] = field(default_factory=list)

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        self.headers.append(text)
        return f"{channel.thread_id}:t{len(self.headers)}"

    async def start(self, context: object) -> None:
        return None

    async def stop(self) -> None:
        return None

    def routes(self) -> list[object]:
        return []


async def acme_doctor(settings: AcmeSettings) -> list[Check]:
    if settings.acme_token is None:
        return []
    return [Check.ok("acme", f"token works for {settings.acme_rooms} rooms")]


SPEC = ChannelSpec(
    name="acme",
    title="Acme Chat",
    threads=re.compile(r"acme:(?P<room>[a-z]{2,10}):(?P<thread>t\d{1,6})", re.ASCII),
    channels=re.compile(r"acme:(?P<room>[a-z]{2,10})", re.ASCII),
    people=re.compile(r"acme:@[a-z]{2,20}", re.ASCII),
    thread_example="acme:<room>:t<n>",
    channel_example="acme:<room>",
    person_example="acme:@ada",
    settings=AcmeSettings,
    enabled=lambda settings: settings.acme_token is not None,
    build=lambda settings: AcmeChannel(),
    doctor=acme_doctor,
    secrets=(re.compile(r"acme-[a-z]{24}"),),
)


@contextmanager
def acme_installed() -> Iterator[ChannelSpec]:
    register(SPEC)
    try:
        yield SPEC
    finally:
        unregister(SPEC.name)
