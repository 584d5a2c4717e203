"""Where an integration's prompts go and who may answer them, read from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


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
    """An integration's configuration.

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
            agent=text("THREADGATE_AGENT") or agent,
            thread=text("THREADGATE_THREAD"),
            session_channel=text("THREADGATE_SESSION_CHANNEL"),
            started_by=text("THREADGATE_STARTED_BY"),
            wait_s=waited if waited is not None else wait_s,
        )

    @property
    def configured(self) -> bool:
        return self.thread is not None or self.session_channel is not None
