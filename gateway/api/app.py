"""The ASGI application: lifespan starts the runtime; routes come from the API and the channels."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from gateway import __version__
from gateway.api.ops import router as ops_router
from gateway.runtime import Runtime


def create_app(runtime: Runtime) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await runtime.start()
        try:
            yield
        finally:
            await runtime.stop()

    app = FastAPI(title="Threadgate", version=__version__, lifespan=lifespan)
    app.state.runtime = runtime

    app.include_router(ops_router)

    for channel in runtime.channels:
        app.router.routes.extend(channel.routes())
    return app
