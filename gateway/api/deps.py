"""What routes share: the API's tunable limits and the running core."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from gateway.api.limits import DEFAULT_MAX_BODY_BYTES
from gateway.base.ratelimit import RateLimiter
from gateway.decision.service import Gateway
from gateway.delivery.feeds import StreamCaps
from gateway.process.runtime import Runtime

MAX_WAIT_S = 60


@dataclass(frozen=True, slots=True)
class ApiOptions:
    """Limits of the HTTP API. The defaults are the contract's; tests shorten the waits."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_wait_s: float = MAX_WAIT_S  # the longest a long-poll is held, whatever ``wait`` asks
    sse_heartbeat_s: float = 15.0  # comment lines on idle event streams; also how often SSE re-marks waits
    respond_limit: int = 30  # respond calls per token and person per window
    respond_token_limit: int = 300  # respond calls per token per window, whoever it names
    respond_window_s: int = 60
    mcp_progress_s: float = 10.0  # how often /mcp tool calls waiting on a person report progress


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def gateway_of(request: Request) -> Gateway:
    return runtime_of(request).gateway


def streams_of(request: Request) -> StreamCaps:
    """The process's count of open streams (SSE and long-polls), capped per credential and in all."""
    return runtime_of(request).streams


def options_of(request: Request) -> ApiOptions:
    options: ApiOptions = request.app.state.options
    return options


def limiter_of(request: Request) -> RateLimiter:
    limiter: RateLimiter = request.app.state.limiter
    return limiter


Core = Annotated[Gateway, Depends(gateway_of)]
Options = Annotated[ApiOptions, Depends(options_of)]
