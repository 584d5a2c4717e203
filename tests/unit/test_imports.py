"""The gateway's and channels' modules import one another without a circle; metrics and models are leaves."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gateway", "channels")
# The models, a leaf in topics: each topic may use the others, and nothing of the project above them.
MODEL_TOPICS = {
    f"gateway.base.models.{topic}"
    for topic in ("base", "people", "groups", "prompts", "requests", "runs", "items")
}
MODELS_USE = {
    "gateway.base.ids",
    "gateway.base.plaintext",
    "gateway.base.forms",
    "gateway.base.weburl",
    "gateway.base.call_schema",
    "gateway.base.printable",
    *MODEL_TOPICS,
}
# Leaves everything may use: they import nothing of the project but these.
LEAVES = {
    "gateway.base.models": MODELS_USE,
    **dict.fromkeys(MODEL_TOPICS, MODELS_USE),
    "gateway.base.metrics": set(),
    "gateway.base.printable": set(),
    "gateway.base.plaintext": {"gateway.base.forms"},
    "gateway.base.forms": {"gateway.base.formats", "gateway.base.named_lines"},
    "gateway.base.named_lines": set(),
    "gateway.base.formats": set(),
    "gateway.base.weburl": set(),
    "gateway.base.call_schema": set(),
    "gateway.base.checks": set(),
    "gateway.client.target": {"gateway.client.env"},
    "gateway.client.env": set(),
    "gateway.rules.outcomes": {"gateway.base.models", "gateway.base.forms"},
}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The project module an imported name lives in (its longest prefix that is a module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Each module's project imports: every import statement, at the top, in functions, type-only ones too."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                # ``from pkg import sub`` depends on the submodule, not on the package's own code.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                known = _known(target, modules)
                if known is not None and known != name:
                    graph[name].add(known)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles_in_gateway_or_channels() -> None:
    assert circles(import_graph()) == []


def test_leaf_modules_import_nothing_above_them() -> None:
    graph = import_graph()
    extra = {name: sorted(graph[name] - allowed) for name, allowed in LEAVES.items() if graph[name] - allowed}
    assert extra == {}


def test_the_walk_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_client_imports_nothing_from_the_integrations_built_on_it() -> None:
    graph = import_graph()
    upward = {
        name: sorted(target for target in targets if target.startswith("gateway.integrations"))
        for name, targets in graph.items()
        if name.startswith("gateway.client")
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}
