"""`threadgate mcp` tells its clients which Threadgate it is."""

from __future__ import annotations

from gateway import __version__
from tests.integrations.conftest import Gateway, unique
from tests.integrations.test_mcp_server import mcp_client


async def test_the_server_reports_the_package_version(gateway: Gateway) -> None:
    async with mcp_client(gateway.env(unique("mcp"))) as client:
        info = client.server_info
    assert info is not None
    assert (info.name, info.version) == ("threadgate", __version__)
