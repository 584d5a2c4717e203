"""A decorated function's parameter types as the gateway checks an edit of its call: a JSON Schema per
parameter (pydantic's, from the annotations), and the edited values read as the call would read them."""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

SKIPPED = ("self", "cls")
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_DEFS = "#/$defs/{model}"


@dataclass(frozen=True, slots=True)
class _Typed:
    adapter: TypeAdapter[Any]
    schema: dict[str, Any]
    defs: dict[str, Any]


class CallTypes:
    """The parameters of one function, each with its pydantic adapter and schema where it has one."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.signature = inspect.signature(func)
        self.parameters = [p for p in self.signature.parameters.values() if p.name not in SKIPPED]
        try:
            hints = typing.get_type_hints(func)
        except Exception:  # a hint that does not resolve: that parameter is untyped, as without one
            hints = {}
        self.typed: dict[str, _Typed] = {}
        for parameter in self.parameters:
            if parameter.name in hints and parameter.kind not in VARIADIC:
                typed = _typed(hints[parameter.name])
                if typed is not None:
                    self.typed[parameter.name] = typed

    def schema(self, shown: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON Schema an edit must fit: each parameter typed by its annotation (a type the value
        shown cannot fit, one JSON shows only as its ``repr``, is left open), those without a default
        required, and no other name unless the function takes ``**kwargs``."""
        properties: dict[str, Any] = {}
        defs: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.kind is parameter.VAR_KEYWORD:
                continue
            typed = self.typed.get(parameter.name)
            fits = shown is None or parameter.name not in shown or _reads(typed, shown[parameter.name])
            if typed is None or not fits:
                properties[parameter.name] = {}
                continue
            prop = typed.schema
            if parameter.default is None and not _reads(typed, None):  # ``x: int = None``: None is shown
                prop = {"anyOf": [prop, {"type": "null"}]}
            properties[parameter.name] = prop
            defs.update(typed.defs)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [p.name for p in self.parameters if p.default is p.empty and p.kind not in VARIADIC]
        if required:
            schema["required"] = required
        if all(p.kind is not p.VAR_KEYWORD for p in self.parameters):
            schema["additionalProperties"] = False
        if defs:
            schema["$defs"] = defs
        return schema

    def read(self, name: str, value: Any) -> Any:
        """An edited argument's value as the function's annotation reads it from JSON (``"2026-01-01"``
        for a date is a date); ValueError saying why when it does not fit."""
        typed = self.typed.get(name)
        if typed is None:
            return value
        try:
            return typed.adapter.validate_json(json.dumps(value, ensure_ascii=False))
        except ValidationError as exc:
            first = exc.errors()[0]["msg"] if exc.errors() else str(exc)
            raise ValueError(first) from None


def _typed(annotation: Any) -> _Typed | None:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        schema = adapter.json_schema(ref_template=_DEFS)
    except Exception:  # a type pydantic cannot describe in JSON Schema: the parameter stays untyped
        return None
    defs = schema.pop("$defs", {})
    return _Typed(adapter, schema, defs)


def _reads(typed: _Typed | None, value: Any) -> bool:
    if typed is None:
        return True
    try:
        typed.adapter.validate_json(json.dumps(value, ensure_ascii=False))
    except (ValidationError, ValueError, TypeError):
        return False
    return True
