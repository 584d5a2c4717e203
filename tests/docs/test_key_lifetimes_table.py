"""docs/operations.md's lifetime table names every kind of key the store writes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from gateway.store import keys

TABLE = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
NOT_KEYS = {"SETTLED_CHANNEL", "WEBHOOK_GROUP", "WEBHOOK_PREFIX"}  # a pub/sub channel, a group, a prefix
NOT_BUILDERS = {"partition", "partition_prefix", "thread_prefix", "is_history"}  # not keys of their own
STREAM = {"stream": keys.events_feed(3)}  # a feed's once-markers are named after one of its streams


def _documented() -> list[re.Pattern[str]]:
    """Each key pattern in the table's code spans: ``<name>`` stands for a value, ``*`` and ``…`` for more."""
    section = TABLE.read_text("utf-8").split("### What Redis keeps, and for how long", 1)[1]
    lines = section.split("| data | key | lifetime |", 1)[1].splitlines()
    rows = [line for line in lines[1 : lines.index("", 1)] if line.startswith("| ")]
    patterns = []
    for span in re.findall(r"`([^`]+)`", "\n".join(rows)):
        if not span.startswith(("tg:", "…")):
            continue
        text = re.escape(span).replace(re.escape("…"), ".*").replace(re.escape("*"), ".*")
        text = re.sub(r"<[^>]+>", "[^:]+", text.replace("\\<", "<").replace("\\>", ">"))
        patterns.append(re.compile(text + "$" if span.startswith("…") else "^" + text + "$"))
    return patterns


def _written() -> dict[str, str]:
    """A sample of every key: each constant, and each builder called with placeholder values."""
    found = {
        name: value
        for name, value in vars(keys).items()
        if name.isupper() and isinstance(value, str) and value.startswith("tg:") and name not in NOT_KEYS
    }
    for name, function in inspect.getmembers(keys, inspect.isfunction):
        if function.__module__ != keys.__name__ or name.startswith("_") or name in NOT_BUILDERS:
            continue
        params = inspect.signature(function).parameters
        args = [3 if param == "part" else STREAM.get(param, f"x{i}") for i, param in enumerate(params)]
        found[name] = function(*args)
    return found


@pytest.mark.parametrize(("name", "key"), sorted(_written().items()))
def test_the_lifetime_table_lists_the_key(name: str, key: str) -> None:
    assert any(pattern.search(key) for pattern in _documented()), f"{name}: {key} is not in the table"
