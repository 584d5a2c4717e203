"""The ``threadgate hook`` and ``threadgate mcp`` commands: read the process's stdio, run an integration."""

from __future__ import annotations

import asyncio
import sys

from gateway.integrations.hook_output import Tool, Unanswered
from gateway.integrations.hooks import run_hook


def _warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def hook_command(
    tool: Tool, wait_s: float | None = None, unanswered: Unanswered | None = None, raw: str | None = None
) -> int:
    """Read the hook's JSON from stdin (unless ``raw`` holds it), print the decision (or nothing), and
    always exit 0.

    A failure of this command must never turn into a denial: whatever goes wrong, the tool asks itself.
    """
    try:
        raw = sys.stdin.read() if raw is None else raw
        output = asyncio.run(run_hook(tool, raw, wait_s=wait_s, unanswered=unanswered, warn=_warn))
    except Exception as exc:  # the tool's own prompt is the fallback for anything unforeseen
        _warn(f"threadgate hook: unavailable ({type(exc).__name__}: {exc})")
        return 0
    if output:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()
    return 0


def mcp_command() -> int:
    """Serve the MCP tools over stdio until the client closes the connection."""
    import anyio

    from gateway.integrations.mcp_server import (
        build_server,
        progress_from_env,
        quiet_stderr,
        serve_stdio,
        stdio_asker,
    )

    asker = stdio_asker()
    server = build_server(lambda _ctx: asker, progress_s=progress_from_env())
    quiet_stderr()
    anyio.run(serve_stdio, server)
    return 0
