"""The Lua scripts, one per state change, loaded once and called by SHA in one round trip."""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

THREAD_SCRIPTS = (
    "open_prompt",
    "resolve_prompt",
    "cancel_prompt",
    "expire_prompt",
    "end_run",
    "receive_message",
    "take_outbox",
    "read_prompt",
)
PLAIN_SCRIPTS = ("drop_dirty",)


def _read(name: str) -> str:
    return resources.files("gateway.store").joinpath("scripts", f"{name}.lua").read_text("utf-8")


def _source(name: str) -> str:
    body = _read(name)
    return f"{_read('_lib')}\n{body}" if name in THREAD_SCRIPTS else body


class Scripts:
    """Script sources by name, their SHAs, and EVALSHA that reloads once after a Redis restart."""

    def __init__(self) -> None:
        self.sources = {name: _source(name) for name in (*THREAD_SCRIPTS, *PLAIN_SCRIPTS)}
        self.shas = {name: hashlib.sha1(src.encode()).hexdigest() for name, src in self.sources.items()}

    async def load(self, client: Any) -> None:
        """SCRIPT LOAD every script (after startup, and again when Redis lost its script cache)."""
        for source in self.sources.values():
            await client.script_load(source)

    async def call(self, client: Any, name: str, keys: list[str], args: list[Any]) -> Any:
        try:
            return await client.evalsha(self.shas[name], len(keys), *keys, *args)
        except NoScriptError:
            await self.load(client)
            return await client.evalsha(self.shas[name], len(keys), *keys, *args)

    async def call_after(
        self,
        client: Any,
        prelude: list[tuple[str, tuple[Any, ...]]],
        name: str,
        keys: list[str],
        args: list[Any],
    ) -> Any:
        """Run plain commands then a script in one pipelined round trip; returns the script's reply.

        On a Redis Cluster the commands live in other slots than the script, and a cluster pipeline
        neither carries EVALSHA nor keeps order across nodes: there the commands go first as one
        pipeline, then the script, so what they write is in place before the script's change exists.
        """
        if isinstance(client, RedisCluster):
            pipe = client.pipeline(transaction=False)
            for command, command_args in prelude:
                getattr(pipe, command)(*command_args)
            await pipe.execute()
            return await self.call(client, name, keys, args)
        for attempt in range(2):
            pipe = client.pipeline(transaction=False)
            for command, command_args in prelude:
                getattr(pipe, command)(*command_args)
            pipe.evalsha(self.shas[name], len(keys), *keys, *args)
            try:
                replies = await pipe.execute()
            except NoScriptError:
                if attempt:
                    raise
                await self.load(client)
                continue
            return replies[-1]
        raise AssertionError("unreachable")
