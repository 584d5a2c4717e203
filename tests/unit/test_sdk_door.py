"""Channels reach the core through one door, ``gateway.sdk``: the plugin API, versioned and documented."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.util import find_spec

import gateway.sdk as sdk
from tests.unit.test_imports import ROOT, import_graph


def test_channels_import_nothing_of_the_core_but_the_sdk() -> None:
    graph = import_graph()
    reaching = {
        name: sorted(target for target in targets if target.startswith("gateway") and target != "gateway.sdk")
        for name, targets in graph.items()
        if name.startswith("channels")
    }
    assert {name: targets for name, targets in reaching.items() if targets} == {}


def test_every_name_of_the_sdk_resolves_to_its_own_module() -> None:
    for name in sdk.__all__:
        assert getattr(sdk, name) is not None, name
    assert sdk.ChannelSpec.__module__ == "gateway.delivery.plugins"
    assert sdk.notices.__name__ == "gateway.rules.notices"


def _is_module(name: str) -> bool:
    try:
        return find_spec(name) is not None
    except ModuleNotFoundError:  # a name in a module, not a package
        return False


def test_what_type_checkers_see_is_what_the_sdk_serves() -> None:
    """The type-only imports and the lazy table name the same things from the same modules."""
    tree = ast.parse((ROOT / "gateway" / "sdk.py").read_text("utf-8"))
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    whole = f"{statement.module}.{alias.name}"
                    typed[alias.name] = f"{whole}#module" if _is_module(whole) else statement.module
    assert typed == sdk._WHERE


def test_a_name_outside_the_sdk_is_an_attribute_error() -> None:
    try:
        sdk.Store  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as refused:
        assert "Store" in str(refused)
    else:
        raise AssertionError("gateway.sdk served a name it does not export")


def test_importing_the_sdk_loads_only_what_is_named() -> None:
    """A platform's light spec module imports the SDK at every start: naming the spec builder must not
    load the answer step, the renderers or the API."""
    probe = (
        "import sys\n"
        "from gateway.sdk import ChannelSpec, channel_spec, PlatformSettings\n"
        "heavy = [m for m in ('gateway.decision.answer_step', 'gateway.rules.render', 'gateway.api.auth',"
        " 'gateway.decision.service') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert shown.stdout.strip() == ""
