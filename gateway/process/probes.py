"""What the platforms' ``threadgate doctor`` checks share: a secret's text, and asking a platform who a
credential is, with a refusal told apart from a service out of reach."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gateway.base.checks import Check
from gateway.base.logs import redact

PROBE_TIMEOUT_S = 10.0
T = TypeVar("T")


def secret_text(value: Any) -> str:
    """A secret setting's text ('' when unset)."""
    return str(value.get_secret_value()) if value is not None else ""


def unreachable(platform: str, setting: str, url: str, exc: BaseException) -> Check:
    reason = redact(str(exc)) or type(exc).__name__
    return Check.fail(platform, f"could not reach {url} ({reason}); check the network or {setting}")


async def probe(
    platform: str,
    ask: Callable[[], Awaitable[T]],
    works: Callable[[T], str],
    refusals: tuple[type[BaseException], ...],
    refused: Callable[[BaseException], str],
    where: tuple[str, str],
) -> Check:
    """Ask a platform who a credential is, within ``PROBE_TIMEOUT_S``: ok with what ``works`` says of the
    answer; one of ``refusals`` fails with what ``refused`` says of it; anything else fails as the
    service being out of reach (``where``: the setting that names its URL, and that URL)."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            answer = await ask()
    except refusals as exc:
        return Check.fail(platform, refused(exc))
    except Exception as exc:
        return unreachable(platform, *where, exc)
    return Check.ok(platform, works(answer))
