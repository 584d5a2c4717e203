"""Shared by the platforms' ``threadgate doctor`` checks: a token's text, and an unreachable service."""

from __future__ import annotations

from typing import Any

from gateway.checks import Check
from gateway.logs import redact

TIMEOUT_S = 10.0


def secret_text(value: Any) -> str:
    return str(value.get_secret_value()) if value is not None else ""


def unreachable(platform: str, knob: str, url: str, exc: BaseException) -> Check:
    reason = redact(str(exc)) or type(exc).__name__
    return Check.fail(platform, f"could not reach {url} ({reason}); check the network or {knob}")
