"""Operations endpoints: liveness, readiness, Prometheus metrics. No token: keep them inside the network."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from gateway.base import metrics
from gateway.base.errors import GatewayError
from gateway.base.logs import event
from gateway.delivery.lease import Lease
from gateway.process.runtime import Runtime
from gateway.store.outage import is_store_outage

router = APIRouter(include_in_schema=False)

CHECK_TIMEOUT_S = 1.0


@router.get("/healthz")
async def healthz() -> dict[str, str | int]:
    """The process is up and serving; ``pid`` tells the workers of ``serve --workers`` apart."""
    return {"status": "ok", "pid": os.getpid()}


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """Ready: Redis answers, and each channel's platform connection is held here or by another process.

    503 with the failing checks otherwise, and while the process is shutting down (so traffic drains).
    """
    runtime: Runtime = request.app.state.runtime
    checks = await readiness(runtime)
    if all(check["ok"] for check in checks.values()):
        return JSONResponse({"status": "ready", "checks": checks})
    failing = ", ".join(name for name, check in checks.items() if not check["ok"])
    error = GatewayError("NOT_READY", f"Not ready: {failing}. See details for each check.", 503, checks)
    return JSONResponse(error.envelope(), status_code=503)


async def readiness(runtime: Runtime) -> dict[str, dict[str, Any]]:
    """Each check as ``{"ok": bool, "detail": str}``, keyed ``process``, ``redis``, ``adoption`` (always
    ok) and ``lease:<name>``."""
    checks: dict[str, dict[str, Any]] = {
        "process": {"ok": not runtime.stopping, "detail": "shutting down" if runtime.stopping else "running"}
    }
    began_at = runtime.health.clock()
    try:
        # A round trip now, on a pooled connection as requests use them (a dead one is replaced first).
        await asyncio.wait_for(runtime.store.ping(), CHECK_TIMEOUT_S)
        runtime.health.answered()
        checks["redis"] = {"ok": True, "detail": runtime.connection.description}
    except Exception as exc:
        if isinstance(exc, TimeoutError) or is_store_outage(exc):  # logged once, by the health record
            runtime.health.failed(exc, "readiness", began_at)
        else:
            event("readiness.redis_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
        checks["redis"] = {"ok": False, "detail": f"Redis did not answer: {type(exc).__name__}"}
        return checks
    # Informational: the process serves every prompt while it still adopts the waiting ones.
    checks["adoption"] = {"ok": True, "detail": runtime.gateway.adoption.describe()}
    for name, lease in runtime.leases.items():
        checks[f"lease:{name}"] = await _lease_check(lease)
    return checks


async def _lease_check(lease: Lease) -> dict[str, Any]:
    """A channel's long-lived connection (a socket or a polling loop to its platform) runs under a lease:
    held here means this process runs it; held elsewhere is fine too; held by nobody means nobody does."""
    if lease.held:
        return {"ok": True, "detail": "connected here"}
    try:
        holder = await asyncio.wait_for(lease.current_holder(), CHECK_TIMEOUT_S)
    except Exception as exc:
        return {"ok": False, "detail": f"could not read the lease: {type(exc).__name__}"}
    if holder:
        return {"ok": True, "detail": "held by another process"}
    return {"ok": False, "detail": "no process holds this channel's connection"}


@router.get("/metrics")
async def prometheus_metrics(request: Request) -> Response:
    """Prometheus text exposition; the outbox and webhook queue gauges are read from Redis now."""
    runtime: Runtime = request.app.state.runtime
    try:
        await asyncio.wait_for(metrics.refresh(runtime.store), CHECK_TIMEOUT_S)
    except Exception as exc:  # the counters are still worth serving while Redis is away
        event("metrics.refresh_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
