"""The floor for the HTTP figure: a bare FastAPI app under uvicorn whose one endpoint does one Redis GET."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from fastapi import FastAPI


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    client = aioredis.Redis.from_url(os.environ["REDIS_URL"], decode_responses=True)
    app.state.redis = client
    try:
        yield
    finally:
        await client.aclose()


app = FastAPI(lifespan=_lifespan)


@app.get("/get")
async def get_one() -> dict[str, str | None]:
    """One Redis GET, answered as JSON: what any endpoint of this HTTP stack costs at least."""
    value: str | None = await app.state.redis.get("bench:floor")
    return {"value": value}
