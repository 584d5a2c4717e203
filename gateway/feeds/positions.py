"""Redis stream ids (``<ms>-<seq>``) as comparable pairs of numbers."""

from __future__ import annotations

Position = tuple[int, int]
START: Position = (0, 0)


def position(entry_id: str | None) -> Position:
    """``"1712345678901-3"`` → ``(1712345678901, 3)``; no id is the start of the stream."""
    if not entry_id:
        return START
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)
