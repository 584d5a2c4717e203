"""``Threadgate``: the async client, running the calls of ``ClientMethods`` on httpx.AsyncClient."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from gateway.client.calls import EVENTS_TIMEOUT, Call, auth_headers, base_url, decode
from gateway.client.errors import error_from
from gateway.client.methods import ClientMethods


class Threadgate(ClientMethods):
    """An async client for one gateway. Use as ``async with Threadgate() as tg: ...``."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        reconnect_delay: float = 0.2,
    ) -> None:
        self.url = base_url(url)
        self.reconnect_delay = reconnect_delay
        self._http = httpx.AsyncClient(
            base_url=self.url, timeout=timeout, transport=transport, headers=auth_headers(token)
        )

    async def __aenter__(self) -> Threadgate:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call) -> Any:
        return decode(await self._http.request(**call.request_args()))

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    @asynccontextmanager
    async def _lines(self, call: Call) -> AsyncIterator[AsyncIterator[str]]:
        async with self._http.stream(**{**call.request_args(), "timeout": EVENTS_TIMEOUT}) as response:
            if response.is_error:
                await response.aread()
                raise error_from(response)
            yield response.aiter_lines()
