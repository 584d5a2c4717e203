"""A pydantic model as a flat form (MCP elicitation's restricted schema), refused at the call when it
cannot be one.

Each field becomes one property: ``str`` (``min_length``/``max_length``; ``EmailStr``, ``AnyUrl``, ``date``
and ``datetime`` as formats), ``int`` and ``float`` (``ge``/``le``, and ``gt``/``lt`` on integers),
``bool``, a ``Literal`` of strings or a string ``Enum`` (a single choice), and a ``list`` of those (a
multi-select, ``min_length``/``max_length`` as its item counts), each ``Optional`` or not, with its title,
description and default. Anything else (nested models, dicts, tuples, sets, lists of free values, unions,
patterns, exclusive bounds on floats) raises ``FormNotFlat`` naming the field, before any request is sent.
The result is checked by the gateway's own rule (``gateway.base.forms.check_schema``) on the way out.
"""

from __future__ import annotations

import datetime
import enum
import types
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import AnyUrl, BaseModel, EmailStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from gateway.base.forms import SchemaError, check_schema

M = TypeVar("M", bound=BaseModel)
FLAT = "a flat form holds text, numbers, yes/no, one choice of strings, or a list of such choices"


class FormNotFlat(TypeError):
    """A model a flat form cannot carry; the message names the model and the field."""


class NotTaken(ValueError):
    """A filled-in form the model's own validators refused; the message is theirs, naming the field."""


def _without_none(annotation: Any) -> Any:
    """``X`` of ``X | None``; a union of several types is left as it is."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _choices(annotation: Any) -> list[str] | None:
    """The string values of a ``Literal`` of strings or a string ``Enum``; None for any other type."""
    if get_origin(annotation) is Literal:
        values = list(get_args(annotation))
        return values if all(isinstance(value, str) for value in values) else None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        return values if all(isinstance(value, str) for value in values) else None
    return None


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, AnyUrl):
        return str(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [_json_default(item) for item in value]
    return value


class _Field:
    """One model field read into one property, or refused with the reason."""

    def __init__(self, model: type[BaseModel], name: str, info: FieldInfo) -> None:
        self.where = f"{model.__name__}.{name}"
        self.info = info
        self.constraints: dict[str, Any] = {}
        for item in info.metadata:
            for key in ("ge", "le", "gt", "lt", "min_length", "max_length", "pattern", "multiple_of"):
                value = getattr(item, key, None)
                if value is not None:
                    self.constraints[key] = value

    def refuse(self, why: str) -> FormNotFlat:
        return FormNotFlat(f"field {self.where}: {why}; {FLAT}")

    def property(self) -> dict[str, Any]:
        annotation = _without_none(self.info.annotation)
        for key in ("pattern", "multiple_of"):
            if key in self.constraints:
                raise self.refuse(f"{key} cannot be asked on a flat form")
        prop = self._typed(annotation)
        if self.info.title:
            prop["title"] = self.info.title
        if self.info.description:
            prop["description"] = self.info.description
        default = self.info.default
        if default is not PydanticUndefined and default is not None:
            prop["default"] = _json_default(default)
        return prop

    def _typed(self, annotation: Any) -> dict[str, Any]:
        choices = _choices(annotation)
        if choices is not None:
            return self._text({"type": "string", "enum": choices}, lengths=False)
        origin = get_origin(annotation)
        if origin is list:
            (item,) = get_args(annotation) or (Any,)
            picks = _choices(item)
            if picks is None:
                raise self.refuse("a list is a multi-select of a Literal of strings or a string Enum")
            return self._counts({"type": "array", "items": {"type": "string", "enum": picks}})
        if origin in (Union, types.UnionType):
            raise self.refuse("a union of several types cannot be one field (only X | None can)")
        if origin is not None or not isinstance(annotation, type):
            raise self.refuse(f"{annotation!r} is not a type a flat form can hold")
        return self._scalar(annotation)

    def _scalar(self, kind: type) -> dict[str, Any]:
        if kind is bool:
            return self._plain({"type": "boolean"})
        if kind is int:
            return self._bounds({"type": "integer"}, whole=True)
        if kind is float:
            return self._bounds({"type": "number"}, whole=False)
        if issubclass(kind, EmailStr):
            return self._text({"type": "string", "format": "email"})
        if issubclass(kind, datetime.datetime):  # before date: a datetime is a date too
            return self._plain({"type": "string", "format": "date-time"})
        if issubclass(kind, datetime.date):
            return self._plain({"type": "string", "format": "date"})
        if issubclass(kind, AnyUrl):
            return self._plain({"type": "string", "format": "uri"})
        if issubclass(kind, str) and not issubclass(kind, enum.Enum):
            return self._text({"type": "string"})
        if issubclass(kind, BaseModel):
            raise self.refuse("a nested model cannot be asked on a flat form")
        if issubclass(kind, dict | tuple | set | frozenset | list):
            raise self.refuse(f"a {kind.__name__} cannot be asked on a flat form")
        if issubclass(kind, enum.Enum):
            raise self.refuse("an Enum on a flat form has string values")
        raise self.refuse(f"{kind.__name__} is not a type a flat form can hold")

    def _plain(self, prop: dict[str, Any], allowed: tuple[str, ...] = ()) -> dict[str, Any]:
        extra = sorted(set(self.constraints) - set(allowed))
        if extra:
            raise self.refuse(f"{', '.join(extra)} does not apply to a {prop['type']} field on a flat form")
        return prop

    def _text(self, prop: dict[str, Any], *, lengths: bool = True) -> dict[str, Any]:
        self._plain(prop, ("min_length", "max_length") if lengths else ())
        if "min_length" in self.constraints:
            prop["minLength"] = self.constraints["min_length"]
        if "max_length" in self.constraints:
            prop["maxLength"] = self.constraints["max_length"]
        return prop

    def _counts(self, prop: dict[str, Any]) -> dict[str, Any]:
        self._plain(prop, ("min_length", "max_length"))
        if "min_length" in self.constraints:
            prop["minItems"] = self.constraints["min_length"]
        if "max_length" in self.constraints:
            prop["maxItems"] = self.constraints["max_length"]
        return prop

    def _bounds(self, prop: dict[str, Any], *, whole: bool) -> dict[str, Any]:
        self._plain(prop, ("ge", "le", "gt", "lt"))
        bounds = self.constraints
        if not whole and ("gt" in bounds or "lt" in bounds):
            raise self.refuse("gt and lt (bounds the value may not equal) on a float; use ge and le")
        low = bounds["gt"] + 1 if "gt" in bounds else bounds.get("ge")
        high = bounds["lt"] - 1 if "lt" in bounds else bounds.get("le")
        if "ge" in bounds and "gt" in bounds:
            low = max(bounds["ge"], low)
        if "le" in bounds and "lt" in bounds:
            high = min(bounds["le"], high)
        if low is not None:
            prop["minimum"] = low
        if high is not None:
            prop["maximum"] = high
        return prop


def form_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The flat form ``model`` asks for (properties named by each field's alias, as ``model_validate``
    reads them back); FormNotFlat naming the first field it cannot carry."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise FormNotFlat(f"{model!r} is not a pydantic model class")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        properties[key] = _Field(model, name, info).property()
        if info.is_required():
            required.append(key)
    schema = {"type": "object", "properties": properties, "required": required}
    try:
        check_schema(schema)
    except SchemaError as exc:
        raise FormNotFlat(f"{model.__name__}: {exc}") from None
    return schema


def _why(model: type[BaseModel], error: Any) -> str:
    """One refusal in the validator's own words (not pydantic's "Value error, " prefix), after the
    title of the field it is about."""
    raised = (error.get("ctx") or {}).get("error")
    words = str(raised) if isinstance(raised, Exception) and str(raised) else str(error["msg"])
    location = error.get("loc") or ()
    if not location:  # a model validator's: about the form as a whole
        return words
    name = str(location[0])
    info = next((f for key, f in model.model_fields.items() if name in (key, f.alias)), None)
    return f"{(info.title if info is not None else None) or name}: {words}"


def reader(model: type[M]) -> Callable[[dict[str, Any]], M]:
    """The content of a filled-in form as an instance of ``model``; NotTaken when its validators refuse
    it, in their words."""

    def read(content: dict[str, Any]) -> M:
        try:
            return model.model_validate(content)
        except ValidationError as exc:
            raise NotTaken("; ".join(_why(model, error) for error in exc.errors())) from None

    return read


def prefilled(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each value the person gave as its field's default, so asking again keeps them."""
    properties = {
        name: {**prop, "default": content[name]} if name in content else prop
        for name, prop in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}
