"""A form field's string formats (email, uri, RFC 3339 date and date-time), checked in linear time.

Pure functions over text a person typed: no backtracking pattern, no lax parser (``fromisoformat`` takes
ISO week dates and basic formats, which RFC 3339 does not), one fixed shape per format.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from urllib.parse import urlsplit

PROBLEMS = {
    "email": "must be an email address (format email)",
    "uri": "must be a URI such as https://example.com (format uri)",
    "date": "must be a date such as 2025-01-31 (format date)",
    "date-time": "must be a date and time such as 2025-01-31T09:30:00Z (format date-time)",
}


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def is_email(value: str) -> bool:
    """``local@domain.tld``: one ``@``, no white space, a dot inside the domain (not at either end)."""
    local, at, domain = value.partition("@")
    if not at or not local or "@" in domain or value.split() != [value]:
        return False
    return "." in domain[1:-1]


def is_uri(value: str) -> bool:
    """A scheme, then an authority or a path (``urlsplit`` is linear; its ``ValueError`` is a no)."""
    try:
        parts = urlsplit(value)
    except ValueError:  # an unclosed "[" in the authority, say
        return False
    return bool(parts.scheme) and bool(parts.netloc or parts.path)


def _full_date(text: str) -> date | None:
    """RFC 3339 ``full-date``: exactly ``YYYY-MM-DD`` in ASCII digits, a real calendar day."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    year, month, day = text[:4], text[5:7], text[8:]
    if not (_digits(year) and _digits(month) and _digits(day)):
        return None
    try:
        return date(int(year), int(month), int(day))
    except ValueError:  # month 13, February 30, year 0
        return None


def is_date(value: str) -> bool:
    return _full_date(value) is not None


def _two(text: str, limit: int) -> int | None:
    """Two ASCII digits naming a number up to ``limit``."""
    return int(text) if len(text) == 2 and _digits(text) and int(text) <= limit else None


def _offset(text: str) -> timezone | None:
    """``Z`` or ``z``, or ``+HH:MM`` / ``-HH:MM``."""
    if text in ("Z", "z"):
        return UTC
    if len(text) != 6 or text[0] not in "+-" or text[3] != ":":
        return None
    hours, minutes = _two(text[1:3], 23), _two(text[4:], 59)
    if hours is None or minutes is None:
        return None
    delta = timedelta(hours=hours, minutes=minutes)
    return timezone(-delta if text[0] == "-" else delta)


def is_date_time(value: str) -> bool:
    """RFC 3339 ``date-time``: ``YYYY-MM-DDTHH:MM:SS[.frac]``, then ``Z`` or ``±HH:MM`` (any case)."""
    day = _full_date(value[:10])
    if day is None or value[10:11] not in ("T", "t") or len(value) < 20:
        return False
    clock, rest = value[11:19], value[19:]
    if clock[2] != ":" or clock[5] != ":":
        return False
    hour, minute, second = _two(clock[:2], 23), _two(clock[3:5], 59), _two(clock[6:], 59)
    if hour is None or minute is None or second is None:
        return False
    if rest.startswith("."):
        end = 1
        while end < len(rest) and "0" <= rest[end] <= "9":
            end += 1
        if end == 1:
            return False
        rest = rest[end:]
    zone = _offset(rest)
    if zone is None:
        return False
    try:  # the moment must exist in UTC too (year 1 at +01:00 does not)
        datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=zone).timestamp()
    except (OverflowError, ValueError):
        return False
    return True


CHECKS = {"email": is_email, "uri": is_uri, "date": is_date, "date-time": is_date_time}


def format_problem(fmt: str, value: str) -> str | None:
    """Why ``value`` is not of format ``fmt``; None when it is (or the format is not one of ours)."""
    check = CHECKS.get(fmt)
    return PROBLEMS[fmt] if check is not None and not check(value) else None
