"""``threadgate demo``: the gateway on the embedded store, the local chat platform and a demo agent, on
one machine. The local platform is the installed spec that needs no outside service: its ``local``
(a ``LocalChat``) says how to run it here, which room a visitor is sent to and where a room opens."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import uvicorn

from gateway.client import Threadgate
from gateway.client.human import DEFAULT_AGENT as HUMAN_AGENT
from gateway.delivery.plugins import ChannelSpec, LocalChat, spec_for, specs
from gateway.demo.agent import AGENT, DemoAgent
from gateway.process.preflight import bind, reachable_url

OPERATOR_NAME = "operator"
YOUR_AGENT = "my-agent"  # the agent name the banner's and the quickstart's examples raise under
YOUR_NAME = "you"  # who starts their runs: pick this name in the chat to answer
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "require_approval.py"


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to its caller (the demo stops its agent first)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass(frozen=True, slots=True)
class Demo:
    """A running demo: where it listens, and the tokens its agent, its inbox and your own agent use."""

    base_url: str
    room: str
    agent_token: str
    operator_token: str
    platform: str  # the local platform's name: the prefix of the room's thread id and of the operator
    your_token: str = ""  # an agent token for any agent name, printed for the examples

    @property
    def you(self) -> str:
        """Who the examples' runs are started by: the name to pick in the chat to answer them."""
        return f"{self.platform}:{YOUR_NAME}"

    def curl_line(self) -> str:
        """One shell line that starts a run in the room and raises an approval there (THREADGATE_URL and
        THREADGATE_TOKEN exported), printing the prompt."""
        auth = '-H "Authorization: Bearer $THREADGATE_TOKEN" -H "Content-Type: application/json"'
        run = f'{{"thread_id": "{self.your_thread_id}", "agent": "{YOUR_AGENT}", "started_by": "{self.you}"}}'
        prompt = '{"kind": "approval", "questions": [{"question": "Deploy to production?"}]}'
        run_id = "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"run_id\"])'"
        return (
            f"RUN=$(curl -sf \"$THREADGATE_URL/v1/runs\" {auth} -d '{run}' | {run_id}) && "
            f"curl -sf \"$THREADGATE_URL/v1/runs/$RUN/prompts\" {auth} -d '{prompt}'"
        )

    @property
    def thread_id(self) -> str:
        """The lobby's thread: the chat page sends each visitor on to a room of their own from there."""
        return f"{self.platform}:{self.room}"

    def own_thread_id(self, name: str) -> str:
        """The room the chat sends ``name`` on to, where the demo agent tours them."""
        return f"{self.platform}:{self._local.visitor_room(self.room, name)}"

    @property
    def your_room(self) -> str:
        """Your own agent's room: apart from the tours, so its prompts and the tour's never supersede
        each other (no person's own room is named with an underscore after the lobby's name)."""
        return f"{self.room}_{YOUR_AGENT}"

    @property
    def your_thread_id(self) -> str:
        return f"{self.platform}:{self.your_room}"

    @property
    def your_chat_url(self) -> str:
        return self._local.room_url(self.base_url, self.your_room)

    def example_line(self) -> str:
        """The shell line that runs examples/require_approval.py in your agent's room with this Python
        (the one Threadgate is installed in; a bare ``python`` may be another), paths as short as the
        current directory allows."""
        env = f"THREADGATE_THREAD={self.your_thread_id} THREADGATE_STARTED_BY={self.you}"
        return f"{env} {_shown_path(Path(sys.executable))} {_shown_path(EXAMPLE)}"

    @property
    def operator(self) -> str:
        """The identity the inbox answers as: an approver of the demo agent."""
        return f"{self.platform}:{OPERATOR_NAME}"

    @property
    def chat_url(self) -> str:
        return self._local.room_url(self.base_url, self.room)

    @property
    def _local(self) -> LocalChat:
        spec = spec_for(self.platform)
        if spec is None or spec.local is None:
            raise ValueError(f"{self.platform} is no installed platform that runs on this machine alone")
        return spec.local

    @property
    def inbox_url(self) -> str:
        """The inbox, signed in through the URL fragment (never sent to the server, so never logged)."""
        return f"{self.base_url}/inbox#token={quote(self.operator_token)}&as={quote(self.operator)}"


@contextlib.asynccontextmanager
async def running_demo(
    host: str = "127.0.0.1",
    port: int = 8787,
    room: str = "demo",
    *,
    heartbeat_s: float = 15.0,
    poll_s: float = 25.0,
    grace_s: float = 1.0,
) -> AsyncIterator[Demo]:
    """Serve the demo for the duration of the block: state lives in this process and dies with it.

    ``heartbeat_s`` paces idle event streams, ``poll_s`` the agent's long-polls; open streams and
    long-polls get ``grace_s`` to finish when the block ends.
    """
    from gateway.api import create_app
    from gateway.api.client_address import proxy_options
    from gateway.api.deps import ApiOptions
    from gateway.base.ids import parse_thread_id
    from gateway.base.settings import Settings
    from gateway.process.runtime import Runtime

    local, chat = local_spec()
    parse_thread_id(f"{local.name}:{room}")
    agent_token, operator_token, your_token = (secrets.token_urlsafe(24) for _ in range(3))
    settings = Settings(
        _env_file=None,
        redis_url=None,
        # One machine's playground: its agent's token (never shown) and yours (printed, for the examples)
        # may raise under any agent name.
        threadgate_api_tokens=f"demo-agent:agent:{agent_token}:*,demo-inbox:operator:{operator_token},"
        f"demo-you:agent:{your_token}:*",
        threadgate_webhooks=None,
        threadgate_host=host,  # an allowed Host, with the loopback names
    )
    sock = bind(host, port)
    base_url = reachable_url(host, sock.getsockname()[1])
    # The local chat, open to anyone on this machine; each visitor tours in a room of their own.
    channels = [chat.build(room, heartbeat_s)]
    runtime = Runtime.build(settings, channels=channels, public_url=base_url)
    app = create_app(runtime, ApiOptions(sse_heartbeat_s=heartbeat_s))
    # Logging stays as the command configured it (log_level None). uvicorn types the grace as int but
    # hands it to asyncio.wait_for, which takes fractions (tests stop in a tenth of a second).
    config = uvicorn.Config(app, lifespan="on", log_level=None, log_config=None, **proxy_options(settings))
    config.timeout_graceful_shutdown = grace_s  # type: ignore[assignment]
    server = _Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()
                raise RuntimeError("the demo gateway stopped while starting")
            await asyncio.sleep(0.01)
        demo = Demo(base_url, room, agent_token, operator_token, local.name, your_token)
        async with (
            Threadgate(demo.base_url, agent_token) as agent_client,
            Threadgate(demo.base_url, operator_token) as operator_client,
        ):
            for name in (AGENT, YOUR_AGENT, HUMAN_AGENT):  # the inbox answers them all
                await operator_client.put_agent(name, approvers=[demo.operator])
            agent = asyncio.create_task(
                DemoAgent(agent_client, platform=local.name, room=room, poll_s=poll_s).run(),
                name="threadgate.demo",
            )
            try:
                yield demo
            finally:
                agent.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await agent
    finally:
        server.should_exit = True
        await serving
        sock.close()


def local_spec() -> tuple[ChannelSpec, LocalChat]:
    """The installed platform that runs with no outside service and how, or an error that says what to
    install."""
    for spec in specs():
        if spec.local is not None:
            return spec, spec.local
    raise ValueError("no installed chat platform runs on this machine alone; reinstall threadgate")


def _shown_path(path: Path) -> str:
    """``path`` relative to the current directory when it is under it, quoted for a shell."""
    try:
        shown = path.relative_to(Path.cwd()) if path.is_absolute() else path
    except ValueError:
        shown = path
    return shlex.quote(str(shown) if shown.is_absolute() or os.sep in str(shown) else f".{os.sep}{shown}")


def banner(demo: Demo) -> str:
    return "\n".join(
        [
            "Threadgate demo is running on the embedded store: nothing is kept once you stop it.",
            "",
            f"  Chat:   {demo.chat_url}",
            "          pick a name and say hello; the demo agent walks you through every kind of prompt",
            "          in a room of your own (each name gets one: open it in another browser to try two).",
            f"  Inbox:  {demo.inbox_url}",
            f"          every pending prompt, answered as {demo.operator} (a demo agent approver).",
            "",
            "Your own agent: this demo's agent token acts for any agent name.",
            f"  export THREADGATE_URL={demo.base_url} THREADGATE_TOKEN={demo.your_token}",
            f"  Its room: {demo.your_chat_url}",
            f'          sign in there as "{YOUR_NAME}" (who its runs are started by) to answer, '
            "or use the inbox.",
            "  Raise an approval into it:",
            f"  {demo.curl_line()}",
            "  Or run a Python script that waits for one:",
            f"  {demo.example_line()}",
            "",
            "Press Ctrl+C to stop.",
        ]
    )


async def serve_demo(host: str, port: int, room: str) -> None:
    """Run the demo until SIGINT or SIGTERM, printing where to open it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with running_demo(host, port, room) as demo:
        print(banner(demo), flush=True)
        await stop.wait()
        print("Stopping the demo…", flush=True)


__all__ = [
    "OPERATOR_NAME",
    "YOUR_AGENT",
    "YOUR_NAME",
    "Demo",
    "banner",
    "local_spec",
    "running_demo",
    "serve_demo",
]
