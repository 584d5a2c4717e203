"""The ``threadgate`` command."""

from __future__ import annotations

import sys

from gateway import __version__

# A hook answered by its policy imports this module and little else (gateway/integrations/quick_hook.py):
# argparse, socket and typing load only for the commands that use them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import socket
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any

    import uvicorn

    from gateway.base.settings import Settings


def listen_address(args: argparse.Namespace, settings: Settings) -> tuple[str, int]:
    """``--host``/``--port`` when given, else ``THREADGATE_HOST``/``THREADGATE_PORT`` (environment, .env)."""
    host: str = args.host if args.host is not None else settings.threadgate_host
    port: int = args.port if args.port is not None else settings.threadgate_port
    return host, port


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.base.cores import worker_count
    from gateway.base.logs import configure
    from gateway.base.settings import Settings
    from gateway.delivery.webhook_targets import refuse_or_warn
    from gateway.process.commands import Exit, fail
    from gateway.process.preflight import CannotListen, bind, store_problem

    settings = Settings()
    host, port = listen_address(args, settings)
    settings = settings.model_copy(update={"threadgate_host": host})  # the bound address is an allowed Host
    if args.worker is not None:
        return _serve_worker(settings, host, port, args.worker)
    configure(settings.threadgate_log_level)
    refuse_or_warn(settings)
    workers = (
        worker_count(args.workers)
        if args.workers is not None
        else worker_count(settings.threadgate_workers, "THREADGATE_WORKERS")
    )
    if workers > 1 and not settings.redis_url:
        return fail(
            f"{workers} workers need REDIS_URL: on the embedded store each would keep state of its own",
            Exit.USAGE,
        )
    try:
        sock = bind(host, port)
    except CannotListen as exc:
        return fail(str(exc), Exit.CANNOT_LISTEN)
    with sock:
        if settings.redis_url and (problem := asyncio.run(store_problem(settings.redis_url))):
            return fail(problem, Exit.STORE_UNREACHABLE)
        bound = sock.getsockname()[1]
        if workers > 1:
            return _supervise(settings, sock, host, bound, workers)
        _serve_one(settings, sock, host, bound)
    return 0


def _serve_one(settings: Settings, sock: socket.socket, host: str, bound: int) -> None:
    """One process serves the bound socket until stopped."""
    from gateway.api import create_app
    from gateway.process import serving
    from gateway.process.preflight import reachable_url
    from gateway.process.runtime import Runtime

    runtime = Runtime.build(settings, public_url=settings.threadgate_public_url or reachable_url(host, bound))
    app = create_app(runtime)
    warnings = start_warnings(settings)

    def announce() -> None:
        platforms = [channel.platform for channel in runtime.channels]
        print_banner(host, bound, runtime.connection.description, warnings, platforms)

    # On SIGTERM the server stops accepting, ends every long-poll and event stream at once (answered
    # as a timeout would be), gives in-flight requests the grace period, then the runtime stops.
    serving.DrainingServer(_server_config(app, settings, host, bound), runtime, announce).run(sockets=[sock])


def _supervise(settings: Settings, sock: socket.socket, host: str, bound: int, count: int) -> int:
    """Start ``count`` workers on the bound socket and watch over them (see ``gateway.process.workers``)."""
    from gateway.process.commands import Exit, fail
    from gateway.process.workers import STOP_MARGIN_S, Supervisor, shared_dir, worker_command

    warnings = start_warnings(settings)

    def announce(ready: list[dict[str, Any]]) -> None:
        first = ready[0]
        print_banner(host, bound, str(first.get("store")), warnings, list(first.get("channels", [])))
        pids = ", ".join(str(worker.get("pid")) for worker in ready)
        print(f"Workers: {len(ready)} (pids {pids})", flush=True)

    try:
        metrics_dir = shared_dir()
    except OSError as exc:
        return fail(f"cannot make a directory for the workers' metrics ({exc}); set TMPDIR", Exit.FAILED)
    supervisor = Supervisor(
        sock,
        count,
        lambda seat: worker_command(seat, host, bound),
        announce,
        stop_timeout_s=settings.threadgate_shutdown_grace_s + STOP_MARGIN_S,
        metrics_dir=metrics_dir,
    )
    return supervisor.run()


def _serve_worker(settings: Settings, host: str, port: int, seat_text: str) -> int:
    """One worker of ``serve --workers``: serve the inherited socket, tell the parent once it does."""
    import contextlib

    from gateway.api import create_app
    from gateway.base.logs import configure
    from gateway.process import serving
    from gateway.process.preflight import reachable_url
    from gateway.process.runtime import Runtime
    from gateway.process.workers import WorkerSeat, report_ready

    seat = WorkerSeat.parse(seat_text)
    configure(settings.threadgate_log_level, worker=seat.index)
    import socket

    sock = socket.socket(fileno=seat.listen_fd)
    parent = socket.socket(fileno=seat.control_fd)
    runtime = Runtime.build(
        settings,
        public_url=settings.threadgate_public_url or reachable_url(host, port),
        adopts=seat.index == 0,  # one adoption per start is enough: it only repairs the shared indexes
    )
    app = create_app(runtime)

    def announce() -> None:
        channels = [channel.platform for channel in runtime.channels]
        with contextlib.suppress(OSError):  # the parent is gone: the server sees that and stops
            report_ready(parent, store=runtime.connection.description, channels=channels)

    config = _server_config(app, settings, host, port)
    serving.DrainingServer(config, runtime, announce, parent=parent).run(sockets=[sock])
    return 0


def _server_config(app: Any, settings: Settings, host: str, port: int) -> uvicorn.Config:
    import uvicorn

    from gateway.api.client_address import proxy_options

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,  # its warnings go out as our JSON lines (configured above)
        lifespan="on",
        timeout_graceful_shutdown=settings.threadgate_shutdown_grace_s,
        **proxy_options(settings),
    )


def print_banner(host: str, port: int, store: str, warnings: list[str], platforms: list[str]) -> None:
    """What ``serve`` prints once it accepts connections: the address, the store, warnings, channels."""
    print(f"Threadgate {__version__} listening on http://{host}:{port}", flush=True)
    print(f"Store: {store}", flush=True)
    for warning in warnings:
        print(f"Warning: {warning}", flush=True)
    print(f"Channels: {', '.join(platforms) or 'none configured'}", flush=True)


def start_warnings(settings: Settings) -> list[str]:
    """Settings ``serve`` starts with although something will not work: one sentence each."""
    from gateway.base.settings import API_TOKENS_EXAMPLE
    from gateway.delivery.plugins import settings_checks, specs

    warnings = []
    if not settings.redis_url:
        warnings.append("REDIS_URL is unset, so state will not survive a restart.")
    if not settings.api_tokens():
        warnings.append(
            "THREADGATE_API_TOKENS is unset, so every API call will be refused (401); set name:role:token "
            f"entries, such as {API_TOKENS_EXAMPLE}"
        )
    warnings += [check.detail for spec in specs() for check in settings_checks(spec, settings)]
    return warnings


def _add_integration_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``hook claude|codex`` and ``mcp``: agents ask people in chat (see docs/integrations.md)."""
    hook = commands.add_parser(
        "hook",
        help="a Claude Code or Codex hook (PermissionRequest, PreToolUse, Elicitation): ask in chat, "
        "print the decision",
    )
    hook.add_argument("tool", choices=["claude", "codex"], help="the tool running the hook")
    hook.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="stop waiting after this long; default THREADGATE_WAIT_SECONDS or 590",
    )
    hook.add_argument(
        "--unanswered",
        choices=["defer", "ask", "none"],
        default="defer",
        help="PreToolUse, when nobody answered in time or the gateway is down: defer (headless runs stop and "
        "resume later), ask (the terminal asks), none (print nothing); default defer",
    )
    hook.set_defaults(
        handler=lambda args: _integrations().hook_command(
            args.tool, args.wait, args.unanswered, getattr(args, "hook_input", None)
        ),
        # A hook that exits 2 blocks the tool call: an option this version no longer knows (--approve)
        # must not turn every call into a denial.
        lenient=True,
    )
    mcp = commands.add_parser(
        "mcp", help="an MCP server on stdio: ask_user, request_approval and a permission prompt tool"
    )
    mcp.set_defaults(handler=lambda _args: _integrations().mcp_command())


def _integrations() -> ModuleType:
    from gateway.integrations import commands

    return commands


def _demo(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.base.logs import configure
    from gateway.base.settings import Settings
    from gateway.demo import serve_demo
    from gateway.process.commands import Exit, fail
    from gateway.process.preflight import CannotListen

    host, port = listen_address(args, Settings())
    configure("INFO" if args.verbose else "CRITICAL")  # the demo speaks in its own words
    try:
        asyncio.run(serve_demo(host, port, args.room))
    except CannotListen as exc:
        return fail(str(exc), Exit.CANNOT_LISTEN)
    return 0


def _add_operator_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``demo``, ``prompts``, ``approvers``, ``people``, ``history``, ``push`` and ``doctor``: trying it
    out and running it day to day."""
    from gateway.process.commands import approvers, history, people, prompts, push
    from gateway.process.doctor import doctor_command

    demo = commands.add_parser(
        "demo",
        help="try it on this machine: a local chat, a demo agent and the inbox, no tokens needed",
        description="Start a gateway on the embedded store with a local chat and a demo agent that walks "
        "you through every kind of prompt, then print the chat and inbox URLs. Nothing is kept after it "
        "stops; REDIS_URL and platform settings are ignored.",
    )
    demo.add_argument("--host", help="address to listen on (default THREADGATE_HOST or 127.0.0.1)")
    demo.add_argument(
        "--port", type=int, help="port to listen on (default THREADGATE_PORT or 8787; 0 = any free)"
    )
    demo.add_argument("--room", default="demo", help="the chat room to open (default demo)")
    demo.add_argument("--verbose", action="store_true", help="show the gateway's log lines")
    demo.set_defaults(handler=_demo)

    import argparse

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url", help="the gateway's address (default THREADGATE_URL or http://127.0.0.1:8787)"
    )
    common.add_argument("--json", action="store_true", help="print JSON for scripts")
    prompts.add_parsers(commands, common)
    approvers.add_parsers(commands, common)
    people.add_parsers(commands, common)
    history.add_parsers(commands)
    push.add_parsers(commands)

    doctor = commands.add_parser(
        "doctor",
        help="check the settings, Redis and each configured platform's credentials",
        description="Check the settings (environment and .env), Redis, and each configured platform's "
        "credentials with the platform itself. Exits 0 when nothing failed (warnings allowed), 1 otherwise.",
    )
    doctor.add_argument("--json", action="store_true", help="print JSON for scripts")
    doctor.set_defaults(handler=doctor_command)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="threadgate",
        description="A gateway between AI agent runs and the people who answer them in chat.",
        epilog="New here? Run `threadgate demo`. Exit codes: 0 ok, 1 doctor found a problem, 2 bad "
        "arguments or settings, 3 gateway unreachable, 4 refused, 5 not found, 6 already settled otherwise, "
        "7 cannot listen on the address, 8 the store (REDIS_URL) did not answer.",
    )
    parser.add_argument("--version", action="version", version=f"threadgate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the gateway: HTTP API, platform ingress and channels")
    serve.add_argument("--host", help="address to listen on (default THREADGATE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default THREADGATE_PORT or 8787)")
    serve.add_argument(
        "--workers",
        metavar="N",
        help="processes serving the port, each a whole gateway on the same Redis: a number, or auto for "
        "one per core (default THREADGATE_WORKERS or 1)",
    )
    serve.add_argument("--worker", help=argparse.SUPPRESS)  # set by the parent of --workers on its workers
    serve.set_defaults(handler=_serve)
    _add_operator_commands(commands)
    _add_integration_commands(commands)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; words after the options of a command that takes free text (``prompts answer
    PROMPT_ID --as X approve``) join its text, since argparse alone would refuse them."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "lenient", False):
        print(f"threadgate: ignoring unknown arguments: {' '.join(extra)}", file=sys.stderr)
        return args
    rest = getattr(args, "rest", None)
    if extra and (rest is None or any(word.startswith("-") for word in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if rest is not None:
        setattr(args, rest, getattr(args, rest) + extra)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    hook_input = _quick_hook(words)
    if hook_input is True:
        return 0  # the policy lets the call run: nothing to print, and nothing more was loaded
    args = parse(words)
    if isinstance(hook_input, str):
        args.hook_input = hook_input
    try:
        code: int = args.handler(args)
    except ValueError as exc:  # pydantic's ValidationError is one: bad settings
        from pydantic import ValidationError

        from gateway.base.logs import redact
        from gateway.base.settings import settings_problems

        problem = f"bad settings: {settings_problems(exc)}" if isinstance(exc, ValidationError) else str(exc)
        print(f"threadgate: {redact(problem)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


def _quick_hook(words: list[str]) -> str | bool | None:
    """For ``hook claude|codex``: True when the agent's policy lets the call on stdin run (one small
    request, the standard library only), else the stdin read, for the whole path. None for other commands."""
    if len(words) < 2 or words[0] != "hook" or any(word in ("-h", "--help") for word in words):
        return None
    from gateway.integrations.quick_hook import TOOLS, allowed_by_policy

    if words[1] not in TOOLS:
        return None
    try:
        raw = sys.stdin.read()
    except (OSError, ValueError):
        return None
    return True if allowed_by_policy(words[1], raw) else raw


if __name__ == "__main__":
    sys.exit(main())
