"""What a channel gets from the core: a context of what any channel needs, and generic services by type."""

from __future__ import annotations

from dataclasses import fields

import pytest

from gateway.base.ratelimit import RateLimiter
from gateway.base.settings import Settings
from gateway.delivery.channel import ChannelContext
from gateway.delivery.channel_services import ProcessState, Services, ThreadLog
from gateway.process.runtime import Runtime
from gateway.rules.audience import Audiences


class QuietState(ProcessState):
    """A subclass stands in for its base, as a test's fake would."""


def test_the_context_holds_only_what_any_channel_needs() -> None:
    assert [field.name for field in fields(ChannelContext)] == ["sink", "lease", "public_url", "services"]


def test_a_service_is_found_by_its_type_or_a_base_of_it() -> None:
    state = QuietState(draining=lambda: True)
    services = Services(state)
    assert services.get(ProcessState) is state
    assert services.need(QuietState) is state
    assert services.get(ThreadLog) is None


def test_a_service_not_offered_is_a_lookup_error_naming_it() -> None:
    with pytest.raises(LookupError, match="ThreadLog"):
        Services().need(ThreadLog)


async def test_the_gateway_lends_every_channel_the_same_generic_services() -> None:
    runtime = Runtime.build(Settings(_env_file=None), channels=[])  # type: ignore[call-arg]
    services = runtime.channel_services()
    for kind in (ThreadLog, Audiences, RateLimiter, ProcessState):
        assert services.get(kind) is not None, kind.__name__
    state = services.need(ProcessState)
    assert state.draining() is False
    runtime.drain()
    assert state.draining() is True
    await runtime.connection.client.aclose()
