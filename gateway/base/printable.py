"""Free text a person wrote, made safe to print on an agent's terminal: control characters (C0 but tab and
newline, DEL, C1) and bidirectional overrides (U+202A–202E, U+2066–2069) are removed, since they can move
the cursor, rewrite what was shown before or reorder what the agent's operator reads."""

from __future__ import annotations

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_REMOVED: dict[int, None] = dict.fromkeys([*_CONTROLS, *_BIDI])


def printable(text: str) -> str:
    """``text`` without control characters or bidi overrides (tab and newline kept); linear."""
    return text.translate(_REMOVED)
