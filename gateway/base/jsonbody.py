"""Parse a JSON request body once, within limits: UTF-8, nesting depth, finite numbers, valid Unicode text."""

from __future__ import annotations

import json
import re
from typing import Any

from gateway.base import storable
from gateway.base.errors import GatewayError
from gateway.base.storable import MAX_DEPTH as MAX_DEPTH

JSON_MEDIA_TYPE = "application/json"
# A string runs to its closing quote, or to the end of the body when it has none: matching once, never
# re-scanning, so a body of many unclosed strings stays linear (the old pattern backtracked from each).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.S)
_BRACKET = re.compile(rb"[\[\]{}]")


def _refused(message: str, status: int = 400) -> GatewayError:
    return GatewayError("VALIDATION_FAILED", message, status)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_json_media_type(content_type: str | None) -> bool:
    """``application/json`` or ``application/<x>+json``, any parameters; a missing type counts as JSON."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == JSON_MEDIA_TYPE or (media.startswith("application/") and media.endswith("+json"))


def unsupported_media_type(content_type: str | None) -> GatewayError:
    return GatewayError(
        "UNSUPPORTED_MEDIA_TYPE",
        "Send the body as JSON with Content-Type: application/json.",
        415,
        {"content_type": (content_type or "")[:100]},
    )


def _check_shape(value: Any, max_depth: int) -> None:
    """Refuse what the store could not keep: deep nesting, lone surrogates, infinite numbers."""
    try:
        storable.check(value, max_depth)
    except storable.NotStorable as exc:
        if exc.problem == storable.LONE_SURROGATE:
            raise _refused(f"The body contains {exc.problem}.") from None
        if exc.problem == storable.TOO_LARGE:
            raise _refused(f"The body holds {exc.problem}.") from None
        raise _refused(f"The body is nested deeper than {max_depth} levels.") from None


def _too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether the brackets outside strings nest deeper than ``max_depth``, read from the bytes alone.

    Checked before ``json.loads``, which would otherwise recurse as deep as the body asks: its
    RecursionError is caught, but it leaves the interpreter's recursion bookkeeping off.
    """
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b"", raw)):
        if bracket.group() in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def parse_json(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The body's JSON value, or a 400 VALIDATION_FAILED GatewayError saying what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refused(f"The body is not UTF-8 (bad byte at offset {exc.start}).") from None
    if _too_deep(raw, max_depth):
        raise _refused(f"The body is nested deeper than {max_depth} levels.")
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise _refused(f"The body is nested deeper than {max_depth} levels.") from None
    except ValueError as exc:
        position = getattr(exc, "pos", None)
        where = f" (at character {position})" if isinstance(position, int) else ""
        raise _refused(f"The body is not valid JSON{where}.") from None
    _check_shape(value, max_depth)
    return value


def parse_typed(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """JSON a person typed (an edit's arguments, an input of an edit form), held to a body's limits;
    ValueError saying in a few words what is wrong ("Expecting value", "values nested deeper than 32
    levels")."""
    if not storable.text_ok(text):
        raise ValueError(storable.LONE_SURROGATE)
    if _too_deep(text.encode("utf-8"), max_depth):
        raise ValueError(storable.too_deep(max_depth))
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise ValueError(storable.too_deep(max_depth)) from None
    except json.JSONDecodeError as exc:
        raise ValueError(exc.msg) from None
    try:
        storable.check(value, max_depth)
    except storable.NotStorable as exc:
        raise ValueError(exc.problem) from None
    return value
