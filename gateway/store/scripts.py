"""The Lua scripts, one per state change, loaded once and called by SHA in one round trip."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any, NamedTuple

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

from gateway.store import keys
from gateway.store.quickpool import QuickBlockingPool


def thread_lead(idle_ms: int, now_ms: int | None = None, claim: str = "") -> list[int | str]:
    """The three arguments every thread script starts with (``_lib.lua`` takes them off): the caller's
    clock, how long the thread's keys live after its last write, and an outbox claim ('' for none; only
    the settling scripts act on one)."""
    return [now_ms if now_ms is not None else int(time.time() * 1000), idle_ms, claim]


class ScriptCall(NamedTuple):
    """One script call: the script's name, its KEYS and its ARGV (see ``gateway.store.calls``)."""

    name: str
    keys: list[str]
    args: list[Any]


THREAD_SCRIPTS = (
    "open_prompt",
    "resolve_prompt",
    "cancel_prompt",
    "expire_prompt",
    "end_run",
    "receive_message",
    "take_outbox",
    "read_prompt",
    "start_run",
    "append_item",
    "save_draft",
    "add_grant",
    "use_grant",
    "revoke_grant",
    "take_escalation",
    "record_copy",
    "mirror_prompt",
    "adopt_session_run",
    "claim_prompt",
)
PLAIN_SCRIPTS = (
    "drop_dirty",
    "publish_feed",
    "release_held",
    "count_hit",
    "claim_escalations",
    "page_index",
)
LEASE_SCRIPTS = ("take_lease", "renew_lease")
WEBHOOK_SCRIPTS = ("enqueue_webhooks", "claim_webhooks")
PEOPLE_SCRIPTS = ("put_person", "remove_person", "link_identity", "new_link_code", "use_link_code")


def _read(name: str) -> str:
    return resources.files("gateway.store").joinpath("scripts", f"{name}.lua").read_text("utf-8")


KEY_TABLES = "-- K, ID, SETTLED: written here by scripts.py"


def key_tables() -> str:
    """The Lua tables of a thread's key names (``keys.THREAD_KEYS``, ``keys.ID_KEYS``) and the settled
    channel's name, for ``_lib.lua``."""
    own = ", ".join(f"{name} = P .. '{suffix}'" for name, suffix in keys.THREAD_KEYS.items())
    ids = ", ".join(f"{name} = '{suffix}'" for name, suffix in keys.ID_KEYS.items())
    return f"local K = {{{own}}}\nlocal ID = {{{ids}}}\nlocal SETTLED = '{keys.SETTLED_CHANNEL}'"


def _source(name: str) -> str:
    body = _read(name)
    if name not in THREAD_SCRIPTS:
        return body
    return f"{_read('_lib').replace(KEY_TABLES, key_tables())}\n{body}"


class Scripts:
    """Script sources by name, their SHAs, and EVALSHA that reloads once after a Redis restart."""

    def __init__(self) -> None:
        names = (*THREAD_SCRIPTS, *PLAIN_SCRIPTS, *LEASE_SCRIPTS, *WEBHOOK_SCRIPTS, *PEOPLE_SCRIPTS)
        self.sources = {name: _source(name) for name in names}
        self.shas = {name: hashlib.sha1(src.encode()).hexdigest() for name, src in self.sources.items()}

    async def load(self, client: Any) -> None:
        """SCRIPT LOAD every script (after startup, and again when Redis lost its script cache)."""
        for source in self.sources.values():
            await client.script_load(source)

    async def call(self, client: Any, name: str, keys: list[str], args: list[Any]) -> Any:
        return (await self.call_many(client, [(name, keys, args)]))[0]

    async def call_many(self, client: Any, calls: Sequence[tuple[str, list[str], list[Any]]]) -> list[Any]:
        """Run many scripts, each on its own keys, in one pipelined round trip; their replies in order.

        A script that failed raises its error after the others ran. On a Redis Cluster they go out
        concurrently instead, each to its own node.
        """
        if isinstance(client, RedisCluster):
            return list(await asyncio.gather(*(self._call_one(client, *one) for one in calls)))
        commands = [self.command(name, keys, args) for name, keys, args in calls]
        return (await self.run_commands(client, commands))[: len(calls)]

    def command(self, name: str, keys: list[str], args: list[Any]) -> tuple[Any, ...]:
        """The EVALSHA command for a script call, to send among plain commands (``run_commands``)."""
        return ("EVALSHA", self.shas[name], len(keys), *keys, *args)

    async def run_after(
        self, client: Any, commands: list[tuple[Any, ...]], name: str, keys: list[str], args: list[Any]
    ) -> Any:
        """Run plain commands (``("ZADD", key, score, member)``...) then a script in one pipelined round
        trip; returns the script's reply.

        On a Redis Cluster the commands live in other slots than the script, and a cluster pipeline
        neither carries EVALSHA nor keeps order across nodes: there the commands go first as one
        pipeline, then the script, so what they write is in place before the script's change exists.
        """
        if isinstance(client, RedisCluster):
            pipe = client.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            await pipe.execute()
            return await self._call_one(client, name, keys, args)
        return (await self.run_commands(client, [*commands, self.command(name, keys, args)]))[-1]

    async def _call_one(self, client: Any, name: str, keys: list[str], args: list[Any]) -> Any:
        try:
            return await client.evalsha(self.shas[name], len(keys), *keys, *args)
        except NoScriptError:
            await self.load(client)
            return await client.evalsha(self.shas[name], len(keys), *keys, *args)

    async def run_commands(self, client: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Commands in one round trip; a script Redis no longer has is loaded and run again (it did not
        run). The first error reply is raised after every command ran."""
        replies = await execute(client, commands)
        missing = [index for index, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if missing:
            await self.load(client)
            for index, reply in zip(
                missing, await execute(client, [commands[i] for i in missing]), strict=True
            ):
                replies[index] = reply
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies


async def execute(client: Any, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Raw commands in one round trip (error replies in their place): the pool's lean path where the
    client is ours, redis-py's pipeline otherwise (the embedded store)."""
    pool = getattr(client, "connection_pool", None)
    if isinstance(pool, QuickBlockingPool):
        return await pool.execute(commands)
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return list(await pipe.execute(raise_on_error=False))
