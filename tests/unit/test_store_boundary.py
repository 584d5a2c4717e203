"""Redis is spoken in gateway/store/ only: channels never import the store, the API never reaches
through to the Redis client, no Lua lives outside the store's scripts, and no module outside the store
imports redis or sends a command on a client (the runtime only makes, hands over and closes it)."""

from __future__ import annotations

import ast

import redis.asyncio as aioredis

from tests.unit.test_imports import ROOT, import_graph

# Names a Redis client goes by: a command called on anything reached through one of these is Redis I/O.
CLIENT_NAMES = {"redis", "_redis", "client", "_client"}
# What a client, its pipelines and its subscriptions offer beyond the command methods of redis-py.
CLIENT_CALLS = {
    "pipeline",
    "pubsub",
    "client",
    "execute_command",
    "transaction",
    "lock",
    "monitor",
    "execute",
    "multi",
    "subscribe",
    "psubscribe",
    "ssubscribe",
    "unsubscribe",
    "get_message",
    "listen",
}


def redis_command_names() -> set[str]:
    """Every command method redis-py's client has (xread, eval, hgetall, publish ...), and CLIENT_CALLS."""
    names = {
        name
        for cls in aioredis.Redis.__mro__
        if cls.__module__.startswith("redis.commands")
        for name in vars(cls)
        if not name.startswith("_")
    }
    return names | CLIENT_CALLS


COMMANDS = redis_command_names()
CLIENT_FACTORIES = {"pipeline", "pubsub", "client", "monitor", "lock"}  # calls that give a client-like object


def _sources(*folders: str) -> dict[str, ast.AST]:
    return {
        str(path.relative_to(ROOT)): ast.parse(path.read_text("utf-8"))
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
    }


def _outside_the_store() -> dict[str, ast.AST]:
    return {
        path: tree
        for path, tree in _sources("gateway", "channels").items()
        if not path.startswith("gateway/store/")
    }


def _reaches_a_client(node: ast.AST, held: set[str]) -> bool:
    """Whether ``node`` is a client, or reached through one (``self.redis``, ``conn.client.x``, ``pipe``)."""
    while True:
        if isinstance(node, ast.Attribute):
            if node.attr in CLIENT_NAMES or node.attr in held:
                return True
            node = node.value
        elif isinstance(node, (ast.Call, ast.Await)):
            node = node.func if isinstance(node, ast.Call) else node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id in CLIENT_NAMES or node.id in held
        else:
            return False


def _yields_a_client(value: ast.AST, held: set[str]) -> bool:
    """Whether ``value`` is a client under another name, or a pipeline or subscription taken from one (a
    command's reply is not)."""
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Call):
        func = value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in CLIENT_FACTORIES
            and _reaches_a_client(func, held)
        )
    return isinstance(value, (ast.Name, ast.Attribute)) and _reaches_a_client(value, held)


def _holders(tree: ast.AST) -> set[str]:
    """Names and attributes given a client (``pipe = self.redis.pipeline()``, ``self._conn = self.redis``)."""
    held: set[str] = set()
    while True:
        found = set(held)
        for node in ast.walk(tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None and _yields_a_client(item.context_expr, held):
                        found |= _target_names(item.optional_vars)
            elif isinstance(node, ast.Assign) and _yields_a_client(node.value, held):
                found |= {name for target in node.targets for name in _target_names(target)}
            elif (
                isinstance(node, (ast.AnnAssign, ast.NamedExpr))
                and node.value is not None
                and _yields_a_client(node.value, held)
            ):
                found |= _target_names(node.target)
        if found == held:
            return held
        held = found


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Attribute):
        return {target.attr}
    return set()


def redis_calls(tree: ast.AST) -> list[str]:
    """The Redis commands a module sends itself, as written (``self.redis.xread`` ...)."""
    held = _holders(tree)
    return sorted(
        ast.unparse(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in COMMANDS
        and _reaches_a_client(node.func.value, held)
    )


def test_channels_never_import_the_store() -> None:
    graph = import_graph()
    reaching = {
        name: sorted(target for target in targets if target.startswith("gateway.store"))
        for name, targets in graph.items()
        if name.startswith("channels")
    }
    assert {name: targets for name, targets in reaching.items() if targets} == {}


def test_the_api_and_channels_never_reach_the_redis_client() -> None:
    reaching = sorted(
        path
        for path, tree in _sources("gateway/api", "channels").items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("redis", "_redis")
    )
    assert reaching == []


def test_no_lua_outside_the_store_scripts() -> None:
    inline = {
        path
        for path, tree in _outside_the_store().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ("redis.call(" in node.value or "redis.pcall(" in node.value)
    }
    assert inline == set()


def test_only_the_store_imports_redis() -> None:
    importing = set()
    for path, tree in _outside_the_store().items():
        for node in ast.walk(tree):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(name.split(".")[0] in ("redis", "fakeredis") for name in names):
                importing.add(path)
    assert importing == set()


def test_no_module_outside_the_store_sends_a_redis_command() -> None:
    sending = {path: calls for path, tree in _outside_the_store().items() if (calls := redis_calls(tree))}
    assert sending == {}


def test_the_command_rule_sees_every_way_a_client_is_reached() -> None:
    """What makes the test above a proof: commands sent through an attribute, a parameter, a pipeline or
    subscription taken from a client, or a client held under another name are all seen."""
    source = """
async def f(self, redis, connection):
    await self.redis.xreadgroup("g", "c", {"s": ">"})
    await self._redis.xrange("s")
    await redis.eval("return 1", 0)
    await connection.client.ping()
    pipe = self.redis.pipeline(transaction=True)
    pipe.hset("k", "f", 1)
    self._dedicated = self._redis.client()
    await self._dedicated.xread({"s": "0-0"})
    async with self._redis.pubsub() as pubsub:
        await pubsub.subscribe("tg:settled")
"""
    assert redis_calls(ast.parse(source)) == [
        "connection.client.ping",
        "pipe.hset",
        "pubsub.subscribe",
        "redis.eval",
        "self._dedicated.xread",
        "self._redis.client",
        "self._redis.pubsub",
        "self._redis.xrange",
        "self.redis.pipeline",
        "self.redis.xreadgroup",
    ]


def test_the_command_rule_leaves_the_stores_own_methods_and_plain_objects_alone() -> None:
    source = """
async def f(self, settings):
    await self.store.watch("t", "p", 1000)
    await self.queue.enqueue("{}", [], 0, 60)
    settings.get("x")
    await self.connection.client.aclose()
    Feeds(self.store.redis)
    who = await client.auth_test()  # a reply, not a client
    who.get("user")
"""
    assert redis_calls(ast.parse(source)) == []
