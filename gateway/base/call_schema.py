"""A tool's ``input_schema`` (JSON Schema of its arguments): checked when raised, edits checked against it.

The schema comes from the agent and the arguments from a person, so both are read with bounds: patterns
run on a linear-time regex engine (no backtracking), no reference is ever fetched (only ``#`` pointers
into the schema itself resolve), and a schema's size and nesting are capped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

MAX_SCHEMA_BYTES = 64 * 1024
MAX_ERRORS = 10


@dataclass(frozen=True, slots=True)
class ArgumentError:
    """One reason the edited arguments do not fit the schema: ``field`` is the argument's path."""

    field: str
    problem: str


def _no_fetch(uri: str) -> Any:
    raise ValueError(f"references outside the schema are not followed ({uri})")


def _validator(schema: dict[str, Any]) -> Any:
    return jsonschema_rs.validator_for(
        schema, retriever=_no_fetch, pattern_options=jsonschema_rs.RegexOptions(size_limit=1 << 20)
    )


def check(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` if it is a usable JSON Schema for a call's arguments; ValueError saying why not."""
    size = len(json.dumps(schema, ensure_ascii=False))
    if size > MAX_SCHEMA_BYTES:
        raise ValueError(f"input_schema is {size} bytes; at most {MAX_SCHEMA_BYTES}")
    if schema.get("type", "object") != "object":
        raise ValueError("input_schema describes the call's arguments, so its type is object")
    try:
        jsonschema_rs.meta.validate(schema)
        _validator(schema)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"input_schema is not a usable JSON Schema: {first}") from None
    return schema


def argument_errors(schema: dict[str, Any] | None, arguments: dict[str, Any]) -> list[ArgumentError]:
    """Why ``arguments`` do not fit ``schema`` (none when they do, or when there is no schema)."""
    if schema is None:
        return []
    try:
        validator = _validator(schema)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
        return [ArgumentError("arguments", "cannot be checked: the tool's input_schema is not usable")]
    errors: list[ArgumentError] = []
    for error in validator.iter_errors(arguments):
        path = ".".join(str(part) for part in error.instance_path) or "arguments"
        errors.append(ArgumentError(path, _plain(error.message)))
        if len(errors) >= MAX_ERRORS:
            break
    return errors


def _plain(message: str) -> str:
    """The validator's message on one line, cut to a readable length."""
    line = " ".join(message.split())
    return line if len(line) <= 200 else line[:199] + "…"


# Without a schema, an edit keeps each argument's JSON type: what the tool was called with is all that
# says what it takes, and a person's "many" must not reach a tool that was given 5.
_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "true or false"),
    (int, "a whole number"),
    (float, "a number"),
    (str, "text"),
    (dict, "a JSON object"),
    (list, "a JSON list"),
)


def _kind(value: Any) -> str | None:
    """What a value of the argument's kind is called; None for null (any value may replace it)."""
    for kind, name in _KINDS:
        if isinstance(value, kind):
            return name
    return None


def _fits_kind(original: Any, edited: Any) -> bool:
    if original is None:
        return True
    if isinstance(original, bool) or isinstance(edited, bool):
        return isinstance(original, bool) and isinstance(edited, bool)
    if isinstance(original, float):
        return isinstance(edited, (int, float))
    return _kind(original) == _kind(edited)


def type_errors(original: dict[str, Any], edited: dict[str, Any]) -> list[ArgumentError]:
    """The arguments whose edited value is not of the JSON type the call gave them."""
    errors: list[ArgumentError] = []
    for name, value in edited.items():
        if name in original and not _fits_kind(original[name], value):
            shown = json.dumps(value, ensure_ascii=False)
            shown = shown if len(shown) <= 40 else shown[:39] + "…"
            errors.append(
                ArgumentError(name, f"must be {_kind(original[name])}, as the call gave it; not {shown}")
            )
            if len(errors) >= MAX_ERRORS:
                break
    return errors
