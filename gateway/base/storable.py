"""What the store can keep: JSON values whose text is valid Unicode (no lone surrogate, which neither
UTF-8 nor Redis can carry), nested at most ``MAX_DEPTH`` deep, with finite numbers.

Request bodies are held to this when parsed (``gateway.base.jsonbody``); values made later from a person's
words (an edit typed as JSON, a form's or card's inputs) are held to it again before they are kept, so a
poison value is refused as a 400 or a "not taken" notice instead of failing in the store.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 32

LONE_SURROGATE = "text that is not valid Unicode (a lone surrogate such as \\ud800)"
TOO_LARGE = "a number too large to represent"


def too_deep(max_depth: int = MAX_DEPTH) -> str:
    return f"values nested deeper than {max_depth} levels"


class NotStorable(ValueError):
    """A value the store cannot keep; ``problem`` says why, ``path`` where (``a.0.b``, '' for the top)."""

    def __init__(self, problem: str, path: str = "") -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.problem = problem
        self.path = path


def text_ok(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``NotStorable`` unless ``value`` can be kept. Walked without recursion, linear in its size."""
    if value is None or (type(value) is str and value.isascii()):  # most of a message's parts
        return
    pending: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 1, ())]
    while pending:
        item, depth, path = pending.pop()
        if isinstance(item, str):
            if not text_ok(item):
                raise NotStorable(LONE_SURROGATE, _dotted(path))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise NotStorable(TOO_LARGE, _dotted(path))
        elif isinstance(item, dict):
            if depth > max_depth:
                raise NotStorable(too_deep(max_depth), _dotted(path))
            for key, child in item.items():
                if isinstance(key, str) and not text_ok(key):
                    raise NotStorable(LONE_SURROGATE, _dotted(path))
                pending.append((child, depth + 1, (*path, key)))
        elif isinstance(item, (list, tuple)):
            if depth > max_depth:
                raise NotStorable(too_deep(max_depth), _dotted(path))
            pending.extend((child, depth + 1, (*path, index)) for index, child in enumerate(item))


def problem(value: Any, max_depth: int = MAX_DEPTH) -> NotStorable | None:
    """Why ``value`` cannot be kept, or None when it can."""
    try:
        check(value, max_depth)
    except NotStorable as exc:
        return exc
    return None


def first_problem(*values: Any, max_depth: int = MAX_DEPTH) -> NotStorable | None:
    """Why the first of ``values`` (the parts of one message) that cannot be kept cannot; None if all can."""
    for value in values:
        if (found := problem(value, max_depth)) is not None:
            return found
    return None


def _dotted(path: tuple[str | int, ...]) -> str:
    # Only the first few steps: a path is shown to people, and a deep one says nothing more.
    shown = ".".join(str(part) for part in path[:8])
    return shown + ".…" if len(path) > 8 else shown
