"""The core's folders are layers: each imports only the ones below it, as its package docstring says.

Every import counts, those made inside a function or for type checkers only included: a lazy import up a
layer is still an arrow the wrong way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = ROOT / "gateway"

# From the bottom up. A room may import any room listed before it, never one after it.
LAYERS = (
    "base",
    "rules",
    "store",
    "client",
    "people",
    "delivery",
    "decision",
    "integrations",
    "process",
    "api",
    "demo",
    "sdk",
    "cli",
)


def _room(module: str) -> str | None:
    """The top-level room of ``gateway.<room>...``; None for anything else (``gateway``, its dunders)."""
    parts = module.split(".")
    if parts[0] != "gateway" or len(parts) < 2 or parts[1].startswith("__"):
        return None
    return parts[1]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module == "gateway":
                found.update(f"gateway.{alias.name}" for alias in node.names)
    return found


def test_every_top_level_room_of_the_core_is_a_known_layer() -> None:
    rooms = {
        path.stem for path in GATEWAY.iterdir() if path.suffix == ".py" or (path / "__init__.py").exists()
    }
    assert rooms - {"__init__"} == set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    below = set(LAYERS[: LAYERS.index(layer)])
    place = GATEWAY / layer
    files = sorted(place.rglob("*.py")) if place.is_dir() else [GATEWAY / f"{layer}.py"]
    wrong = {
        f"{path.relative_to(ROOT)} imports {module}"
        for path in files
        for module in _imports(path)
        if (room := _room(module)) is not None and room != layer and room not in below
    }
    assert not wrong, sorted(wrong)


def test_each_layer_package_says_what_it_owns_and_what_it_may_import() -> None:
    for layer in ("base", "rules", "people", "delivery", "decision", "process"):
        doc = ast.get_docstring(ast.parse((GATEWAY / layer / "__init__.py").read_text("utf-8")))
        assert doc is not None and "Imports:" in doc, layer


MAX_LINES = 600  # a module over this does more than one job: split it by job


def test_no_module_of_the_core_or_a_channel_is_a_hub() -> None:
    long = {
        f"{path.relative_to(ROOT)}: {lines}"
        for place in (GATEWAY, ROOT / "channels")
        for path in place.rglob("*.py")
        if (lines := len(path.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert not long, sorted(long)
