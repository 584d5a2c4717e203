"""Who is calling: forwarded headers count only from THREADGATE_TRUSTED_PROXIES, and browsers' event
streams are counted apart from agents', so no visitor can take the room agents wait in."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from gateway.api.client_address import proxy_options
from gateway.base.settings import Settings
from tests.web.conftest import AGENT_AUTH, WebGateway, web_gateway

FORWARDED = [
    lambda n: {"X-Forwarded-For": f"203.0.113.{n}"},
    lambda n: {"X-Forwarded-For": f"198.51.100.{n}, 10.0.0.{n}"},
    lambda n: {"Forwarded": f"for=203.0.113.{n};proto=https"},
    lambda n: {"X-Forwarded-For": f"[2001:db8::{n}]", "X-Forwarded-Proto": "https"},
]
FORWARDED_IDS = ["xff", "xff-chain", "forwarded", "xff-v6"]


@contextlib.asynccontextmanager
async def page_stream(client: httpx.AsyncClient, headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
    """A chat page's event stream, held open for the block (its status is known once it answers)."""
    async with client.stream("GET", "/chat/hall/events", headers=headers) as response:
        yield response


async def _third_stream(web: WebGateway, forwarded: Any) -> int:
    """Two pages held open, then a third, each claiming another address: the third's status."""
    async with (
        web.client() as client,
        page_stream(client, forwarded(1)) as first,
        page_stream(client, forwarded(2)) as second,
    ):
        assert (first.status_code, second.status_code) == (200, 200)
        async with page_stream(client, forwarded(3)) as third:
            return third.status_code


@pytest.mark.parametrize("forwarded", FORWARDED, ids=FORWARDED_IDS)
async def test_forwarded_headers_from_an_untrusted_peer_do_not_change_its_stream_slots(
    forwarded: Any,
) -> None:
    # Loopback is no trusted proxy unless named: one client claiming a new address each time keeps one cap.
    caps = {"threadgate_max_browser_streams_per_client": 2, "threadgate_max_streams_per_token": 2}
    async with web_gateway(**caps) as web:
        status = await _third_stream(web, forwarded)
    assert status == 429


async def test_a_trusted_proxy_is_believed_about_the_client_it_forwards() -> None:
    caps = {"threadgate_max_browser_streams_per_client": 2, "threadgate_trusted_proxies": "127.0.0.1"}
    async with web_gateway(**caps) as web:
        others = await _third_stream(web, FORWARDED[0])
        same = await _third_stream(web, lambda _n: {"X-Forwarded-For": "203.0.113.9"})
    assert (others, same) == (200, 429)


async def test_browsers_filling_their_streams_leave_agents_their_events_and_long_polls() -> None:
    caps = {"threadgate_max_browser_streams": 2, "threadgate_max_streams": 2}
    async with (
        web_gateway(**caps) as web,
        web.client() as visitor,
        web.client(AGENT_AUTH) as agent,
        page_stream(visitor, {}) as first,
        page_stream(visitor, {}) as second,
    ):
        assert (first.status_code, second.status_code) == (200, 200)
        async with page_stream(visitor, {}) as refused:
            refused_status = refused.status_code
        async with agent.stream("GET", "/v1/events") as events:
            events_status = events.status_code
        poll = await agent.get("/v1/messages", params={"wait": 0.1})
    assert refused_status == 429
    assert (events_status, poll.status_code) == (200, 200)


def test_the_server_reads_forwarded_headers_only_from_the_proxies_named() -> None:
    assert proxy_options(Settings(_env_file=None)) == {"proxy_headers": False, "forwarded_allow_ips": []}  # type: ignore[call-arg]
    named = Settings(_env_file=None, threadgate_trusted_proxies=" 10.0.0.7, 10.1.2.3/16 ,::1")  # type: ignore[call-arg]
    assert proxy_options(named) == {
        "proxy_headers": True,
        "forwarded_allow_ips": ["10.0.0.7", "10.1.0.0/16", "::1"],
    }


@pytest.mark.parametrize("entry", ["*", "proxy.internal", "10.0.0.300", "10.0.0.0/33", "http://10.0.0.1"])
def test_trusted_proxies_are_addresses_or_networks_only(entry: str) -> None:
    with pytest.raises(ValidationError, match="THREADGATE_TRUSTED_PROXIES"):
        Settings(_env_file=None, threadgate_trusted_proxies=f"10.0.0.1,{entry}")  # type: ignore[call-arg]
