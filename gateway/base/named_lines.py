"""Text typed as ``name: value`` lines, read against the names it may use (a form's fields, a call's
arguments)."""

from __future__ import annotations


def named_lines(by_key: dict[str, str], text: str) -> dict[str, str] | None:
    """Every non-empty line as ``key: value``, gathered as {name: value} where ``by_key`` maps each
    casefolded key to its name; None when a line is not one (no colon, or a key it does not know)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        name = by_key.get(key.strip().casefold())
        if not colon or name is None:
            return None
        found[name] = value.strip()
    return found or None
