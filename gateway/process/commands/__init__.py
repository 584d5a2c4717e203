"""The operator's commands (``threadgate prompts``, ``approvers``): API calls with script-friendly exits."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from enum import IntEnum
from typing import Any

import httpx

from gateway.client import Threadgate, ThreadgateError


class Exit(IntEnum):
    """Exit codes a script can branch on (``docs/cli.md``)."""

    OK = 0
    FAILED = 1  # doctor found a problem
    USAGE = 2  # bad arguments or settings
    UNREACHABLE = 3  # no gateway answered at THREADGATE_URL
    REFUSED = 4  # the gateway refused the call (bad token, not allowed, invalid answer)
    NOT_FOUND = 5  # no such prompt or agent
    CONFLICT = 6  # the prompt had already settled otherwise
    CANNOT_LISTEN = 7  # serve, demo: the address is in use or not this machine's
    STORE_UNREACHABLE = 8  # serve: the Redis of REDIS_URL did not answer


def emit_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def fail(message: str, code: Exit) -> int:
    print(f"threadgate: {message}", file=sys.stderr)
    return int(code)


def exit_for(error: ThreadgateError) -> Exit:
    if error.status == 404:
        return Exit.NOT_FOUND
    if error.status == 409:
        return Exit.CONFLICT
    return Exit.REFUSED


def run_api(url: str | None, work: Callable[[Threadgate], Awaitable[int]]) -> int:
    """Run ``work`` with a client for THREADGATE_URL (or ``url``) and THREADGATE_TOKEN; map failures."""

    async def main() -> int:
        async with Threadgate(url, timeout=15.0) as client:
            try:
                return await work(client)
            except ThreadgateError as exc:
                return fail(f"{exc.message} ({exc.code})", exit_for(exc))
            except httpx.TransportError as exc:
                reason = str(exc) or type(exc).__name__
                return fail(
                    f"cannot reach the gateway at {client.url} ({reason}); is it running? "
                    "Set THREADGATE_URL or pass --url.",
                    Exit.UNREACHABLE,
                )

    return asyncio.run(main())


def command_actions(commands: Any, name: str, *, help: str, description: str) -> Any:
    """Add the command ``name``, whose actions are its subcommands (``threadgate <name> ACTION``), and
    return the parsers to add its actions to."""
    command = commands.add_parser(name, help=help, description=description)
    return command.add_subparsers(dest="action", required=True, metavar="ACTION")
