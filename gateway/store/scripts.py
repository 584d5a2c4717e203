"""The Lua scripts, one per state change, loaded once and called by SHA in one round trip."""

from __future__ import annotations

import asyncio
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

    async def call_many(self, client: Any, calls: list[tuple[str, list[str], list[Any]]]) -> list[Any]:
        """Run many scripts, each on its own keys, in one pipelined round trip; their replies in order.

        A script that failed raises its error after the others ran. On a Redis Cluster they go out
        concurrently instead, each to its own node.
        """
        if len(calls) == 1:
            return [await self.call(client, *calls[0])]
        if isinstance(client, RedisCluster):
            return list(await asyncio.gather(*(self.call(client, *one) for one in calls)))
        replies: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        for attempt in range(2):
            pipe = client.pipeline(transaction=False)
            for index in todo:
                name, keys, args = calls[index]
                pipe.evalsha(self.shas[name], len(keys), *keys, *args)
            results = await pipe.execute(raise_on_error=False)
            missing = []
            for index, result in zip(todo, results, strict=True):
                if isinstance(result, NoScriptError) and not attempt:
                    missing.append(index)  # this script did not run: load the scripts, run it again
                replies[index] = result
            if not missing:
                break
            await self.load(client)
            todo = missing
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

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
