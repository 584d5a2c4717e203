"""What every signature check shares: a timestamp read strictly and text compared in constant time.

A verifier answers False for anything it cannot read; these helpers never raise on any input.
"""

from __future__ import annotations

import hmac

MAX_TIMESTAMP_DIGITS = 12  # unix seconds for the next 30,000 years; longer is not a timestamp


def unix_seconds(value: str | None) -> int | None:
    """``value`` as unix seconds when it is 1–12 plain ASCII digits (``²`` and ``٣`` are not), else None."""
    if not value or len(value) > MAX_TIMESTAMP_DIGITS or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def fresh(value: str | None, now: float, tolerance_s: float) -> bool:
    """True when ``value`` is a timestamp ``unix_seconds`` reads, within ``tolerance_s`` of ``now``."""
    seconds = unix_seconds(value)
    return seconds is not None and abs(now - seconds) <= tolerance_s


def same_text(presented: str | None, expected: str) -> bool:
    """Constant-time equality of two strings, whatever characters (even lone surrogates) they hold."""
    return hmac.compare_digest(
        (presented or "").encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )
