"""The thread an agent session's prompts go to: a fixed one, or the session's own, started with a header."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.integrations.settings import Target

if TYPE_CHECKING:  # the client package imports these helpers: no import at run time
    from gateway.client.async_client import Threadgate

MAX_KEY = 160
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]")


class NotConfigured(Exception):
    """Neither a fixed thread nor a session channel is set: there is nowhere to ask."""


def session_key(agent: str, session_id: str) -> str:
    """``<agent>:<session id>`` (``claude-code:1b2c…``), restricted to the characters a session key may hold.

    The gateway knows a session by the agent its key names: only tokens acting for that agent reach it.
    """
    return _KEY_UNSAFE.sub("-", f"{agent}:{session_id}")[:MAX_KEY]


def repo_name(cwd: str | None) -> str:
    """The name of the repository holding ``cwd`` (the folder with ``.git``), else of ``cwd`` itself."""
    if not cwd:
        return "an unknown folder"
    start = Path(cwd)
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder.name or str(folder)
    return start.name or str(start)


def session_header(product: str, cwd: str | None, session_id: str) -> str:
    """The message that starts a session's thread, e.g. ``Claude Code in api, session 1b2c3d4e``."""
    short = session_id[:8] if len(session_id) > 8 else session_id
    return f"{product} in {repo_name(cwd)}, session {short}"


async def thread_for(tg: Threadgate, target: Target, *, key: str, header: str) -> str:
    """The fixed thread if one is named, else the session's thread (the gateway starts it on first use)."""
    if target.thread is not None:
        return target.thread
    if target.session_channel is None:
        raise NotConfigured(
            "Set THREADGATE_SESSION_CHANNEL (a channel, <platform>:<channel>) or THREADGATE_THREAD to say "
            "where to ask."
        )
    return await tg.session_thread(key, target.session_channel, header)
