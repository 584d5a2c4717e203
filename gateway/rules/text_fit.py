"""Text fitted to a chat platform's message limit: cut at line breaks, parts marked, cuts said. Pure.

Each platform measures text its own way (characters, UTF-16 units, escaped characters) and words its
marks its own way; the rules for where to cut and what to say about it are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

Cost = Callable[[str], int]  # what one character counts for against a limit


def one(_char: str) -> int:
    return 1


def utf16_units(char: str) -> int:
    """Characters outside the BMP are two UTF-16 code units."""
    return 2 if ord(char) > 0xFFFF else 1


def measure(text: str, cost: Cost = one) -> int:
    return len(text) if cost is one else sum(cost(char) for char in text)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (how some platforms count a message's length)."""
    return measure(text, utf16_units)


def _within(text: str, start: int, limit: int, cost: Cost) -> int:
    """The end of the longest run of ``text`` from ``start`` whose cost is at most ``limit``."""
    end, spent = start, 0
    while end < len(text) and spent + cost(text[end]) <= limit:
        spent += cost(text[end])
        end += 1
    return end


def _spans(text: str, limit: int, cost: Cost) -> Iterator[tuple[int, int]]:
    """Each piece's ``(start, end)``: at most ``limit``, ending at a line break, else a space, else
    anywhere. The line break or space a piece ends at belongs to no piece: the boundary shows it."""
    start = 0
    while start < len(text):
        end = _within(text, start, limit, cost)
        if end == len(text):
            yield start, end
            return
        cut = text.rfind("\n", start, end + 1)
        if cut <= start:
            cut = text.rfind(" ", start, end + 1)
        if cut <= start:
            yield start, end
            start = end
        else:
            yield start, cut
            start = cut + 1


def split_text(text: str, limit: int, cost: Cost = one) -> list[str]:
    """``text`` in pieces of at most ``limit``, cut at a line break, else a space, else anywhere."""
    return [text[start:end] for start, end in _spans(text, limit, cost)] or [""]


@dataclass(frozen=True, slots=True)
class Marks:
    """How a platform marks fitted text: ``part`` ends each of several parts (``{number}``, ``{total}``),
    ``cut`` ends the last when the rest is left out and ``earlier`` starts a text whose start is left out
    (``{count}`` characters); ``cost`` is how the platform counts a character."""

    part: str
    cut: str
    earlier: str
    cost: Cost = one


def split_marked(text: str, limit: int, max_parts: int, marks: Marks) -> list[str]:
    """``text`` whole when it fits; else in parts within ``limit``, each marked, cut at line breaks.
    Past ``max_parts`` the rest is left out and the last part says how many characters were not shown."""
    cost = marks.cost
    if measure(text, cost) <= limit:
        return [text]
    budget = limit - measure(marks.part.format(number=max_parts, total=max_parts), cost)
    parts: list[str] = []
    shown = 0
    for start, end in _spans(text, budget, cost):
        if len(parts) == max_parts - 1 and end < len(text):
            room = budget - measure(marks.cut.format(count=len(text)), cost)
            kept = split_text(text[start:], room, cost)[0]
            parts.append(kept + marks.cut.format(count=len(text) - shown - len(kept)))
            break
        parts.append(text[start:end])
        shown += end - start
    total = len(parts)
    return [part + marks.part.format(number=number, total=total) for number, part in enumerate(parts, 1)]


def keep_end(text: str, limit: int, marks: Marks) -> str:
    """``text`` whole when it fits; else its end (where a settled prompt's outcome is), from the start of
    a line when one is near, after a note of how many characters of the start were left out."""
    cost = marks.cost
    if measure(text, cost) <= limit:
        return text
    room = limit - measure(marks.earlier.format(count=len(text)), cost)
    start = len(text) - _within(text[::-1], 0, room, cost)
    line = text.find("\n", start)
    if 0 <= line - start < (len(text) - start) // 2:
        start = line + 1
    return marks.earlier.format(count=start) + text[start:]
