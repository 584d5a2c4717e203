"""Where a client's prompts go (a fixed thread, or each agent session's own), read from the environment,
and the key and header that name a session's thread."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gateway.client.env import DEFAULT_URL as DEFAULT_URL
from gateway.client.env import agent_from_env

MAX_KEY = 160
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]")


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


def _float_or_none(raw: str | None, name: str) -> float | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive number of seconds")
    return value


@dataclass(frozen=True, slots=True)
class Target:
    """Where a client or integration asks, and who may answer.

    ``thread`` is a fixed thread (``THREADGATE_THREAD``); otherwise each agent session gets its own
    thread, started in ``session_channel`` (``THREADGATE_SESSION_CHANNEL``). ``started_by``
    (``THREADGATE_STARTED_BY``) may answer, with the agent's approvers. ``wait_s``
    (``THREADGATE_WAIT_SECONDS``) is how long to wait for an answer before giving up; None waits as long
    as it takes.
    """

    agent: str
    thread: str | None = None
    session_channel: str | None = None
    started_by: str | None = None
    wait_s: float | None = None

    @classmethod
    def from_env(
        cls, agent: str, *, wait_s: float | None = None, environ: Mapping[str, str] | None = None
    ) -> Target:
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        waited = _float_or_none(env.get("THREADGATE_WAIT_SECONDS"), "THREADGATE_WAIT_SECONDS")
        return cls(
            agent=agent_from_env(agent, env),
            thread=text("THREADGATE_THREAD"),
            session_channel=text("THREADGATE_SESSION_CHANNEL"),
            started_by=text("THREADGATE_STARTED_BY"),
            wait_s=waited if waited is not None else wait_s,
        )

    @property
    def configured(self) -> bool:
        return self.thread is not None or self.session_channel is not None
