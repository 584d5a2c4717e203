"""The answer routes' rules live in the core (``gateway.decision.answering``); the API only parses,
authorizes and
calls them."""

from __future__ import annotations

import ast

from tests.unit.test_imports import ROOT, import_graph


def test_the_answer_rules_import_nothing_of_the_api() -> None:
    graph = import_graph()
    upward = {
        name: sorted(target for target in targets if target.startswith("gateway.api"))
        for name, targets in graph.items()
        if name.startswith("gateway.decision.answering")
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}


def test_the_api_side_of_answering_reads_no_store() -> None:
    tree = ast.parse((ROOT / "gateway" / "api" / "answering.py").read_text("utf-8"))
    reads = [
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "store"
    ]
    assert reads == []
