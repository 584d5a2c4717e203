"""The platform plugin interface: what a chat platform package under ``channels/<name>/`` exports."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic_settings import BaseSettings

from gateway.channel import ChannelRuntime
from gateway.checks import Check


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """One chat platform: its id grammar, its settings, and how to build and check it."""

    name: str  # the prefix of its thread ids, channel references and identities
    title: str  # for people
    threads: re.Pattern[str]  # fullmatch of a thread id; its groups are the coordinates (ThreadRef.parts)
    channels: re.Pattern[str]  # fullmatch of a channel reference where a session's header starts a thread
    people: re.Pattern[str]  # fullmatch of a person's identity
    thread_example: str
    channel_example: str
    person_example: str
    settings: type[BaseSettings]  # its own pydantic-settings model
    enabled: Callable[[Any], bool]  # from an instance of ``settings``: whether to run it
    build: Callable[[Any], ChannelRuntime]  # the channel from its settings; imports the SDK lazily
    doctor: Callable[[Any], Awaitable[list[Check]]] | None = None
    secrets: tuple[re.Pattern[str], ...] = ()  # token shapes the JSON logs must redact
    local: bool = False  # runs with no outside service
