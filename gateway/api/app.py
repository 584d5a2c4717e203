"""The ASGI application: lifespan starts the runtime; routes come from the API and the channels."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI

from gateway import __version__
from gateway.api import (
    claims,
    events,
    grants,
    groups,
    inputs,
    people,
    policy,
    push,
    respond,
    runs,
    sessions,
    threads,
)
from gateway.api.admission import Admission
from gateway.api.allowed_hosts import AllowedHosts, HostAllowList
from gateway.api.auth import TokenTable
from gateway.api.deps import ApiOptions
from gateway.api.errors import install_error_handlers
from gateway.api.history import router as history_router
from gateway.api.limits import BodyLimit
from gateway.api.mcp_http import McpEndpoint
from gateway.api.ops import router as ops_router
from gateway.api.outage import StoreOutageGuard
from gateway.api.pages import router as pages_router
from gateway.api.same_origin import SameOriginWrites, origin_of
from gateway.api.signin import build_signin, session_write_refusal
from gateway.api.signin import me_router as me_router
from gateway.api.signin import router as signin_router
from gateway.api.waiting import WaitPaths
from gateway.base.ratelimit import RateLimiter
from gateway.delivery.channel_services import SignedInPeople
from gateway.delivery.plugins import route_refusal, same_origin_prefixes, spec_for
from gateway.process.runtime import Runtime

DESCRIPTION = (
    "Threadgate's HTTP API: agents raise prompts into chat threads and wait for people's answers; "
    'people (through an operator) answer them. Every error is `{"error": {code, message, details}}`.'
)


def create_app(runtime: Runtime, options: ApiOptions | None = None) -> FastAPI:
    """The app for one runtime. Tokens are read from the runtime's settings (bad ones refuse to start)."""
    options = options or ApiOptions()
    mcp = McpEndpoint(
        progress_s=options.mcp_progress_s,
        max_body_bytes=options.max_body_bytes,
        sessions_per_token=runtime.settings.threadgate_mcp_sessions_per_token,
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await runtime.start()
        try:
            async with mcp.running():
                yield
        finally:
            await runtime.stop()

    app = FastAPI(title="Threadgate", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    app.state.runtime = runtime
    app.state.options = options
    app.state.tokens = TokenTable(runtime.settings.api_tokens())
    app.state.limiter = RateLimiter(
        runtime.store, limit=options.respond_limit, window_s=options.respond_window_s
    )
    app.state.signin, app.state.oauth_resource = build_signin(runtime.settings, runtime.store.signins)
    public_url = runtime.settings.threadgate_public_url
    public_origin = origin_of(public_url) if public_url else None
    if app.state.signin is not None:  # the person signed in is the directory's, found by email
        app.state.signin.directory = runtime.store.people
        runtime.signed_in = SignedInPeople(
            app.state.signin,
            partial(session_write_refusal, public_origin=public_origin),
            runtime.receive_signed_in,
        )
    install_error_handlers(app)
    app.add_middleware(WaitPaths, runtime=runtime, options=options)  # innermost: the caller is known
    app.add_middleware(  # inside the body limit, which bounds its read
        Admission,
        tokens=app.state.tokens,
        signin=app.state.signin,
        oauth=app.state.oauth_resource,
        public_origin=public_origin,
    )
    app.add_middleware(BodyLimit, max_bytes=options.max_body_bytes)
    app.add_middleware(StoreOutageGuard, health=runtime.health)
    app.add_middleware(
        SameOriginWrites,
        public_origin=public_origin,
        channel_prefixes=same_origin_prefixes([channel.platform for channel in runtime.channels]),
    )
    app.add_middleware(AllowedHosts, hosts=HostAllowList.from_settings(runtime.settings))  # outermost

    app.include_router(ops_router)
    app.include_router(pages_router)
    app.include_router(signin_router)
    app.include_router(me_router)
    for api in (
        runs,
        threads,
        events,
        inputs,
        respond,
        sessions,
        grants,
        policy,
        people,
        groups,
        push,
        claims,
    ):
        app.include_router(api.router)
    app.include_router(history_router)
    app.router.routes.append(mcp.route())

    _mount_channels(app, runtime)
    return app


def _mount_channels(app: FastAPI, runtime: Runtime) -> None:
    """Each channel's ingress routes, each under its platform's prefix (a ``ValueError`` otherwise, which
    stops ``serve`` with one line): a plugin cannot take ``/v1/...`` or another platform's paths."""
    core_paths = list(_paths(app.router.routes))
    for channel in runtime.channels:
        spec = spec_for(channel.platform)
        routes = channel.routes()
        for route in routes:
            path: str = getattr(route, "path", "")
            refused = route_refusal(spec, path, core_paths) if spec else f"{channel.platform} has no spec"
            if refused:
                raise ValueError(refused)
        app.router.routes.extend(routes)


def _paths(routes: Iterable[object], prefix: str = "") -> Iterator[str]:
    """Every path the routes serve, through included routers and mounts."""
    for route in routes:
        path = getattr(route, "path", None) or ""
        if path:
            yield prefix + path
        router = getattr(route, "original_router", None)  # FastAPI's included router
        inner = getattr(router or route, "routes", None)
        if inner:
            context = getattr(route, "include_context", None)
            yield from _paths(inner, prefix + path + (getattr(context, "prefix", "") or ""))
