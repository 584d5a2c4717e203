"""Redis is spoken in gateway/store/ only: channels never import the store, the API never reaches
through to the Redis client, and no Lua lives outside the store's scripts."""

from __future__ import annotations

import ast

from tests.unit.test_imports import ROOT, import_graph

# Redis users that are not in the store yet: each still keeps its own Lua and commands.
NOT_YET_IN_THE_STORE = {"gateway/webhooks.py"}


def _sources(*folders: str) -> dict[str, ast.AST]:
    return {
        str(path.relative_to(ROOT)): ast.parse(path.read_text("utf-8"))
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
    }


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
        for path, tree in _sources("gateway", "channels").items()
        if not path.startswith("gateway/store/")
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "redis.call(" in node.value
    }
    assert inline == NOT_YET_IN_THE_STORE
