"""The models live in one module a topic, and ``gateway.base.models`` serves every public name of each."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import gateway.base.models as models


def _topics() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(models.__path__)]


def _defined(path: Path) -> list[str]:
    """The names a module's own top-level statements define (classes, functions, assignments)."""
    names: list[str] = []
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                elements = target.elts if isinstance(target, ast.Tuple) else [target]
                names += [element.id for element in elements if isinstance(element, ast.Name)]
    return [name for name in names if not name.startswith("_")]


def test_every_public_name_of_a_topic_is_served_by_gateway_models() -> None:
    missing = []
    for topic in _topics():
        module = importlib.import_module(f"gateway.base.models.{topic}")
        assert module.__file__ is not None
        for name in _defined(Path(module.__file__)):
            if getattr(models, name, None) is not getattr(module, name) or name not in models.__all__:
                missing.append(f"{topic}.{name}")
    assert missing == []


def test_a_model_names_the_topic_it_lives_in() -> None:
    assert sorted(_topics()) == ["base", "groups", "items", "people", "prompts", "requests", "runs"]
    assert models.Person.__module__ == "gateway.base.models.people"
    assert models.Group.__module__ == "gateway.base.models.groups"
    assert models.Prompt.__module__ == "gateway.base.models.prompts"
    assert models.PromptRequest.__module__ == "gateway.base.models.requests"
    assert models.InboundMessage.__module__ == "gateway.base.models.items"
    assert models.AgentDefinition.__module__ == "gateway.base.models.runs"
