"""What every client reads from the environment: where the gateway is and which agent asks.

Standard library only, and no more of it than ``os``: a hook process reads it before anything else loads.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_URL = "http://127.0.0.1:8787"  # THREADGATE_URL when unset


def gateway_url(environ: Mapping[str, str] | None = None) -> str:
    """``THREADGATE_URL``, else the local default, without a trailing slash."""
    env = os.environ if environ is None else environ
    return (env.get("THREADGATE_URL", "").strip() or DEFAULT_URL).rstrip("/")


def agent_from_env(default: str, environ: Mapping[str, str] | None = None) -> str:
    """``THREADGATE_AGENT``, else ``default`` (the integration's own agent name)."""
    env = os.environ if environ is None else environ
    return env.get("THREADGATE_AGENT", "").strip() or default
