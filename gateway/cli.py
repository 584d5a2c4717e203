"""The ``threadgate`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from gateway import __version__
from gateway.logs import configure, redact


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gateway.api import create_app
    from gateway.runtime import Runtime
    from gateway.settings import Settings

    settings = Settings()
    host = args.host or settings.threadgate_host
    port = args.port or settings.threadgate_port
    configure(settings.threadgate_log_level)
    runtime = Runtime.build(settings)
    app = create_app(runtime)
    platforms = ", ".join(channel.platform for channel in runtime.channels) or "none configured"
    print(f"Threadgate {__version__} listening on http://{host}:{port}", flush=True)
    print(f"Store: {runtime.connection.description}", flush=True)
    if not runtime.connection.durable:
        print("Warning: REDIS_URL is unset, so state will not survive a restart.", flush=True)
    print(f"Channels: {platforms}", flush=True)
    # On SIGTERM the server stops accepting, gives in-flight requests this long (long-polls and event
    # streams would otherwise hold it open for as long as they last), then the runtime stops gracefully.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,  # its warnings go out as our JSON lines (configured above)
        lifespan="on",
        timeout_graceful_shutdown=settings.threadgate_shutdown_grace_s,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="threadgate",
        description="A gateway between AI agent runs and the people who answer them in chat.",
    )
    parser.add_argument("--version", action="version", version=f"threadgate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the gateway: HTTP API, platform ingress and channels")
    serve.add_argument("--host", help="address to listen on (default THREADGATE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default THREADGATE_PORT or 8787)")
    serve.set_defaults(handler=_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except ValidationError as exc:
        print(f"threadgate: bad settings: {redact(str(exc))}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"threadgate: {redact(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
