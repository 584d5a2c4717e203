"""Telling whoever runs a script or hook where its prompt waits, so they know where to answer."""

from __future__ import annotations

import sys

from gateway.base.models import Prompt

GAVE_UP_REASON = "the agent stopped waiting for an answer"  # why a prompt nobody answered in time is closed


def where_it_waits(prompt: Prompt) -> str:
    """``waiting for an answer in <thread id> at <link>`` (the link when the thread's platform gives one)."""
    at = f" at {prompt.thread_url}" if prompt.thread_url else ""
    return f"threadgate: waiting for an answer in {prompt.thread_id}{at}"


def say_where(prompt: Prompt) -> None:
    """On stderr: stdout is the program's own (a hook's decision, an MCP server's protocol)."""
    print(where_it_waits(prompt), file=sys.stderr, flush=True)
