"""A platform's routes mount under its own prefix, and a configured platform without its SDK says what to
install, in one line, before anything starts."""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Route

from gateway.api import create_app
from gateway.base.settings import Settings
from gateway.delivery.plugins import ChannelSpec, MissingSdk, build_channels, register, unregister
from gateway.process.runtime import Runtime
from tests.support.acme import SPEC, TOKEN, AcmeChannel
from tests.unit.test_imports import ROOT

SDKS = ("slack_bolt", "slack_sdk", "telegram", "discord", "microsoft_teams")


async def _hello(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


@dataclasses.dataclass
class RoutedAcme(AcmeChannel):
    paths: tuple[str, ...] = ()

    def routes(self) -> list[BaseRoute]:  # type: ignore[override]
        return [Route(path, _hello, methods=["POST"]) for path in self.paths]


@pytest.fixture
def acme_with(request: pytest.FixtureRequest) -> Iterator[ChannelSpec]:
    spec = dataclasses.replace(SPEC, **getattr(request, "param", {}))
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    runtime = Runtime.build(Settings(_env_file=None), channels=[])  # type: ignore[call-arg]
    yield runtime
    await runtime.connection.client.aclose()


def _with_channel(runtime: Runtime, *paths: str) -> Runtime:
    return dataclasses.replace(runtime, channels=[RoutedAcme(paths=paths)])


@pytest.mark.parametrize(
    "path",
    ["/v1/runs", "/v1/prompts/{prompt_id}/cancel", "/mcp", "/slack/events", "/acme", "/acmex/hook", "/hook"],
)
async def test_a_route_outside_the_platforms_prefix_stops_the_start(
    acme_with: ChannelSpec, runtime: Runtime, path: str
) -> None:
    with pytest.raises(ValueError, match="outside its prefix /acme/"):
        create_app(_with_channel(runtime, path))


async def test_a_route_under_the_platforms_prefix_is_served(acme_with: ChannelSpec, runtime: Runtime) -> None:
    app = create_app(_with_channel(runtime, "/acme/hook", "/acme/{tenant}/events"))
    assert {"/acme/hook", "/acme/{tenant}/events"} <= {getattr(route, "path", "") for route in app.routes}


@pytest.mark.parametrize("acme_with", [{"paths": ("/v1/",)}, {"paths": ("/mcp",)}], indirect=True)
async def test_a_public_prefix_may_not_take_the_gateways_own_paths(
    acme_with: ChannelSpec, runtime: Runtime
) -> None:
    prefix = acme_with.paths[0]
    with pytest.raises(ValueError, match="the gateway's own"):
        create_app(_with_channel(runtime, prefix + "runs"))


@pytest.mark.parametrize("acme_with", [{"paths": ("/hooks/acme/",)}], indirect=True)
async def test_a_public_prefix_the_spec_names_is_served(acme_with: ChannelSpec, runtime: Runtime) -> None:
    app = create_app(_with_channel(runtime, "/hooks/acme/in"))
    assert "/hooks/acme/in" in {getattr(route, "path", "") for route in app.routes}


def _needs_sdk(_settings: object) -> AcmeChannel:
    import acme_chat_sdk  # type: ignore[import-not-found]  # noqa: F401  # not installed anywhere

    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("acme_with", "said"),
    [
        ({"build": _needs_sdk, "extra": "acme"}, "pip install 'threadgate[acme]'"),
        ({"build": _needs_sdk}, "install the package 'acme_chat_sdk'"),
    ],
    indirect=["acme_with"],
)
def test_a_configured_platform_without_its_sdk_names_what_to_install(
    acme_with: ChannelSpec, said: str
) -> None:
    with pytest.raises(MissingSdk) as missing:
        build_channels(Settings(_env_file=None, acme_token=TOKEN))  # type: ignore[call-arg]
    assert str(missing.value) == (
        f"the acme channel is configured but its SDK (acme_chat_sdk) is not installed: {said}"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_without_sdks(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where no platform SDK can be imported (a base install)."""
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        f"    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.partition('.')[0] in {SDKS!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TELEGRAM_", "DISCORD_", "TEAMS_"))
    }
    return subprocess.run(
        [sys.executable, "-c", blocker + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**clean, **(env or {})},
        timeout=60,
    )


def test_a_base_install_imports_the_cli_and_serves_the_web_chat_without_any_platform_sdk() -> None:
    done = _run_without_sdks(
        "import gateway.cli\n"
        "from gateway.api import create_app\n"
        "from gateway.process.runtime import Runtime\n"
        "from gateway.base.settings import Settings\n"
        "runtime = Runtime.build(Settings(_env_file=None, threadgate_web_chat='open'))\n"
        "create_app(runtime)\n"
        "print(sorted(channel.platform for channel in runtime.channels))\n"
        f"print([m for m in sys.modules if m.partition('.')[0] in {SDKS!r}])\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['web']", "[]"]


@pytest.mark.parametrize(
    ("setting", "extra"),
    [
        ("SLACK_BOT_TOKEN=xoxb-1-2-abc", "slack"),
        ("TELEGRAM_BOT_TOKEN=123456:" + "A" * 35, "telegram"),
        ("DISCORD_BOT_TOKEN=" + "x" * 24 + "." + "y" * 6 + "." + "z" * 27, "discord"),
        ("TEAMS_APP_ID=00000000-0000-0000-0000-000000000001", "teams"),
    ],
)
def test_serve_with_a_platform_whose_extra_is_missing_stops_with_one_line(setting: str, extra: str) -> None:
    name, _, value = setting.partition("=")
    env = {
        name: value,
        "TEAMS_APP_PASSWORD": "secret",
        "SLACK_SIGNING_SECRET": "s" * 32,
        "THREADGATE_PORT": str(_free_port()),
    }
    done = _run_without_sdks("from gateway.cli import main\nsys.exit(main(['serve']))\n", env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(f"pip install 'threadgate[{extra}]'")
    assert "Traceback" not in done.stderr
