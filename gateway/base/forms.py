"""Flat forms (MCP elicitation's form mode): the restricted schema, its questions, and the one validator.

Pure functions, no I/O. Every path that fills a form (a chat reply, a 002 accept, a 003 respond, a
channel's control) turns what it has into values with ``parse_text`` or ``value_from_answer`` and settles
only what ``validate_content`` accepts.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from typing import Any

from gateway.base.formats import format_problem
from gateway.base.named_lines import named_lines

MAX_FIELDS = 10
MAX_CHOICES = 25
MAX_NAME_CHARS = 64
MAX_LABEL_CHARS = 100
MAX_TITLE_CHARS = 2000
# No value is longer than this (a string field's own maxLength may be lower): every check after the
# length one then does bounded work, and ten fields stay far under the body limit.
MAX_VALUE_CHARS = 4096
# JSON numbers a float holds; a bigger integer is refused, not handed to float() or math.
MAX_NUMBER = sys.float_info.max
NUMBER_WORDS = "a number between -1.8e308 and 1.8e308"
FORMATS = ("email", "uri", "date", "date-time")
FORMAT_WORDS = {
    "email": "an email address",
    "uri": "a URI",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (RFC 3339, with offset)",
}
TYPES = ("string", "number", "integer", "boolean", "array")
YES, NO = "Yes", "No"
TRUE_TOKENS = frozenset({"yes", "y", "true", "1"})
FALSE_TOKENS = frozenset({"no", "n", "false", "2"})
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_SEPARATORS = re.compile(r"[,\s]+")
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")
_COMMON_KEYS = frozenset({"type", "title", "description", "default"})
_ALLOWED_KEYS = {
    "string": _COMMON_KEYS | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _COMMON_KEYS | {"minimum", "maximum"},
    "integer": _COMMON_KEYS | {"minimum", "maximum"},
    "boolean": _COMMON_KEYS,
    "array": _COMMON_KEYS | {"items", "minItems", "maxItems"},
}


@dataclass(frozen=True, slots=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True, slots=True)
class FormField:
    """One property of a form, read from its checked schema."""

    name: str
    type: str
    title: str
    required: bool
    description: str | None = None
    choices: tuple[Choice, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: Any = None

    @property
    def labels(self) -> list[str]:
        if self.type == "boolean":
            return [YES, NO]
        return [choice.label for choice in self.choices]


@dataclass(frozen=True, slots=True)
class FieldError:
    """A value a field refused: the property and a sentence naming the constraint it broke."""

    property: str
    problem: str

    def as_dict(self) -> dict[str, str]:
        return {"property": self.property, "problem": self.problem}


class SchemaError(ValueError):
    """A requested_schema outside the flat subset forms allow."""


# The schema ---------------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    """A JSON number a float holds: not a bool, not NaN or infinite, not an integer past about 1.8e308.

    Compared, not converted: ``float()`` or ``math.isfinite`` of a huge integer raises OverflowError.
    """
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and -MAX_NUMBER <= value <= MAX_NUMBER
    )


def _count(name: str, schema: dict[str, Any], key: str, limit: int | None = None) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SchemaError(f"property {name!r}: {key} must be a whole number of at least 0")
    if limit is not None and value > limit:
        raise SchemaError(f"property {name!r}: {key} must be at most {limit}")
    return value


def _bound(name: str, schema: dict[str, Any], key: str) -> float | None:
    value = schema.get(key)
    if value is None:
        return None
    if not _is_number(value):
        raise SchemaError(f"property {name!r}: {key} must be {NUMBER_WORDS}")
    return float(value)


def _text(name: str, schema: dict[str, Any], key: str, limit: int) -> str | None:
    value = schema.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise SchemaError(
            f"property {name!r}: {key} must be a non-blank string of at most {limit} characters"
        )
    return value


def _const_choices(name: str, entries: Any, where: str) -> tuple[Choice, ...]:
    if not isinstance(entries, list) or not entries:
        raise SchemaError(f"property {name!r}: {where} must be a non-empty list of {{const, title}}")
    choices = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or set(entry) - {"const", "title"}
            or not isinstance(entry.get("const"), str)
        ):
            raise SchemaError(
                f"property {name!r}: each entry of {where} is {{const: string, title?: string}}"
            )
        title = entry.get("title", entry["const"])
        if not isinstance(title, str):
            raise SchemaError(f"property {name!r}: a title in {where} must be a string")
        choices.append(Choice(entry["const"], title))
    return tuple(choices)


def _enum_choices(name: str, schema: dict[str, Any]) -> tuple[Choice, ...]:
    enum, names = schema["enum"], schema.get("enumNames")
    if not isinstance(enum, list) or not enum or not all(isinstance(value, str) for value in enum):
        raise SchemaError(f"property {name!r}: enum must be a non-empty list of strings")
    if names is None:
        return tuple(Choice(value, value) for value in enum)
    if not isinstance(names, list) or len(names) != len(enum) or not all(isinstance(n, str) for n in names):
        raise SchemaError(f"property {name!r}: enumNames must be a list of strings as long as enum")
    return tuple(Choice(value, label) for value, label in zip(enum, names, strict=True))


def _check_choices(name: str, choices: tuple[Choice, ...]) -> tuple[Choice, ...]:
    if len(choices) > MAX_CHOICES:
        raise SchemaError(f"property {name!r}: at most {MAX_CHOICES} choices fit in a chat message")
    values = [choice.value for choice in choices]
    labels = [choice.label.strip().casefold() for choice in choices]
    if len(set(values)) != len(values) or len(set(labels)) != len(labels):
        raise SchemaError(f"property {name!r}: choices and their titles must be unique")
    if any(not choice.label.strip() or len(choice.label) > MAX_LABEL_CHARS for choice in choices):
        raise SchemaError(f"property {name!r}: each choice's title has 1 to {MAX_LABEL_CHARS} characters")
    if any(len(choice.value) > MAX_VALUE_CHARS for choice in choices):
        raise SchemaError(f"property {name!r}: each choice's value has at most {MAX_VALUE_CHARS} characters")
    return tuple(Choice(choice.value, choice.label.strip()) for choice in choices)


def _array_choices(name: str, items: Any) -> tuple[Choice, ...]:
    if not isinstance(items, dict):
        raise SchemaError(f"property {name!r}: an array's items are {{type: string, enum}} or {{anyOf}}")
    if "anyOf" in items:
        if set(items) - {"anyOf"}:
            raise SchemaError(f"property {name!r}: items with anyOf take nothing else")
        return _const_choices(name, items["anyOf"], "items.anyOf")
    if (
        set(items) - {"type", "enum", "enumNames"}
        or items.get("type", "string") != "string"
        or "enum" not in items
    ):
        raise SchemaError(f"property {name!r}: an array is a multi-select of string enums (items.enum)")
    return _enum_choices(name, items)


def _field(name: str, schema: Any, required: bool) -> FormField:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > MAX_NAME_CHARS:
        raise SchemaError(
            f"property {name!r}: names have 1 to {MAX_NAME_CHARS} letters, digits, '_', '.' or '-'"
        )
    if not isinstance(schema, dict):
        raise SchemaError(f"property {name!r}: must be an object with a type")
    kind = schema.get("type")
    if kind not in TYPES:
        raise SchemaError(
            f"property {name!r}: type must be one of {', '.join(TYPES)} (a flat form has no objects)"
        )
    extra = sorted(set(schema) - _ALLOWED_KEYS[kind])
    if extra:
        raise SchemaError(
            f"property {name!r}: {', '.join(extra)} is not allowed on a {kind} field; "
            f"it takes {', '.join(sorted(_ALLOWED_KEYS[kind]))}"
        )
    title = _text(name, schema, "title", MAX_TITLE_CHARS) or name
    description = _text(name, schema, "description", MAX_TITLE_CHARS)
    choices: tuple[Choice, ...] = ()
    fmt = None
    if kind == "string":
        if "enum" in schema and "oneOf" in schema:
            raise SchemaError(f"property {name!r}: give enum or oneOf, not both")
        if "enumNames" in schema and "enum" not in schema:
            raise SchemaError(f"property {name!r}: enumNames needs enum")
        if "enum" in schema:
            choices = _check_choices(name, _enum_choices(name, schema))
        elif "oneOf" in schema:
            choices = _check_choices(name, _const_choices(name, schema["oneOf"], "oneOf"))
        fmt = schema.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise SchemaError(f"property {name!r}: format must be one of {', '.join(FORMATS)}")
    elif kind == "array":
        choices = _check_choices(name, _array_choices(name, schema.get("items")))
    field = FormField(
        name=name,
        type=kind,
        title=title.strip(),
        required=required,
        description=description,
        choices=choices,
        min_length=_count(name, schema, "minLength"),
        max_length=_count(name, schema, "maxLength", MAX_VALUE_CHARS),
        format=fmt,
        minimum=_bound(name, schema, "minimum"),
        maximum=_bound(name, schema, "maximum"),
        min_items=_count(name, schema, "minItems"),
        max_items=_count(name, schema, "maxItems"),
    )
    if "default" in schema:
        problem = check_value(field, schema["default"])
        if problem:
            raise SchemaError(f"property {name!r}: its default {problem}")
        field = replace(field, default=schema["default"])
    return field


def check_schema(schema: Any) -> list[FormField]:
    """The form's fields, in order; SchemaError (naming the property) for anything outside the subset."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SchemaError('requested_schema is {"type": "object", "properties": {...}, "required": [...]}')
    extra = sorted(set(schema) - {"type", "properties", "required"})
    if extra:
        raise SchemaError(
            f"requested_schema takes type, properties and required only, not {', '.join(extra)}"
        )
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not 1 <= len(properties) <= MAX_FIELDS:
        raise SchemaError(f"requested_schema has 1 to {MAX_FIELDS} properties")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise SchemaError("required is a list of property names")
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise SchemaError(f"property {unknown[0]!r}: listed in required but not in properties")
    fields = [_field(name, value, name in required) for name, value in properties.items()]
    names = {field.name.casefold(): field.name for field in fields}
    titles: set[str] = set()
    for field in fields:
        folded = field.title.casefold()
        if folded in titles:
            raise SchemaError(f"property {field.name!r}: its title repeats another field's")
        if names.get(folded, field.name) != field.name:
            # `name: value` lines name a field by name or title: one key must mean one field.
            raise SchemaError(
                f"property {field.name!r}: its title is another field's name ({names[folded]!r})"
            )
        titles.add(folded)
    return fields


# Values -------------------------------------------------------------------------------------------


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _range_problem(field: FormField, value: float) -> str | None:
    if field.minimum is not None and value < field.minimum:
        return f"must be at least {_number_text(field.minimum)} (minimum {_number_text(field.minimum)})"
    if field.maximum is not None and value > field.maximum:
        return f"must be at most {_number_text(field.maximum)} (maximum {_number_text(field.maximum)})"
    return None


def _choice_list(field: FormField) -> str:
    return ", ".join(field.labels)


def value_limit(field: FormField) -> int:
    """The most characters a value of ``field`` may have: its maxLength, else ``MAX_VALUE_CHARS``."""
    return field.max_length if field.max_length is not None else MAX_VALUE_CHARS


def _too_long(field: FormField) -> str:
    limit = value_limit(field)
    if field.max_length is not None:
        return f"must have at most {limit} characters (maxLength {limit})"
    return f"must have at most {limit} characters"


def _number_problem(field: FormField, value: Any) -> str | None:
    whole = field.type == "integer"
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and value == value and not _is_number(value):  # too large (NaN is not a number at all)
        return f"must be {NUMBER_WORDS}"
    if not _is_number(value) or (whole and not float(value).is_integer()):
        return "must be a whole number (integer)" if whole else "must be a number"
    return _range_problem(field, value)


def check_value(field: FormField, value: Any) -> str | None:
    """Why ``value`` (a typed JSON value) does not fit ``field``, naming the constraint; None when it does.

    A string's length is checked first, so no later check works on more than ``value_limit`` characters.
    """
    if field.type == "string":
        if not isinstance(value, str):
            return "must be a string"
        if len(value) > value_limit(field):
            return _too_long(field)
        if field.choices:
            return (
                None
                if value in {c.value for c in field.choices}
                else f"must be one of: {_choice_list(field)}"
            )
        if field.min_length is not None and len(value) < field.min_length:
            return f"must have at least {field.min_length} characters (minLength {field.min_length})"
        return format_problem(field.format, value) if field.format else None
    if field.type in ("integer", "number"):
        return _number_problem(field, value)
    if field.type == "boolean":
        return None if isinstance(value, bool) else "must be true or false (yes or no)"
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return "must be a list of choices"
    allowed = {choice.value for choice in field.choices}
    if any(item not in allowed for item in value):
        return f"may only hold: {_choice_list(field)}"
    if len(set(value)) != len(value):
        return "must not pick a choice twice"
    if field.min_items is not None and len(value) < field.min_items:
        return f"must pick at least {field.min_items} (minItems {field.min_items})"
    if field.max_items is not None and len(value) > field.max_items:
        return f"must pick at most {field.max_items} (maxItems {field.max_items})"
    return None


def _typed(field: FormField, value: Any) -> Any:
    """JSON numbers as the field's type: ``3.0`` for an integer field is ``3``."""
    if field.type == "integer" and isinstance(value, float):
        return int(value)
    return value


def validate_content(fields: list[FormField], content: Any) -> tuple[dict[str, Any], list[FieldError]]:
    """The one check every path uses: types, constraints and ``required``; one error per property."""
    if not isinstance(content, dict):
        return {}, [FieldError("", "content is an object of property values")]
    by_name = {field.name: field for field in fields}
    errors = [FieldError(str(name), "is not a field of this form") for name in content if name not in by_name]
    accepted: dict[str, Any] = {}
    for field in fields:
        value = content.get(field.name)
        if value is None:
            if field.required:
                errors.append(FieldError(field.name, "is required"))
            continue
        problem = check_value(field, value)
        if problem:
            errors.append(FieldError(field.name, problem))
        else:
            accepted[field.name] = _typed(field, value)
    return accepted, errors


def _choice_for(field: FormField, token: str, *, by_position: bool = True) -> Choice | None:
    """The choice a title, a value or (``by_position``) a 1-based number names, in that order.

    A title or value wins over a position, so an enum of ``["2", "1"]`` reads ``1`` as ``"1"``.
    Positions count only where the person saw them numbered (the form's text), not in shown answers.
    """
    stripped = token.strip()
    wanted = stripped.casefold()
    found = (
        next((choice for choice in field.choices if choice.label.casefold() == wanted), None)
        or next((choice for choice in field.choices if choice.value == stripped), None)
        or next((choice for choice in field.choices if choice.value.casefold() == wanted), None)
    )
    if found is not None:
        return found
    if by_position and stripped.isascii() and stripped.isdigit() and len(stripped) <= 3:
        number = int(stripped)
        return field.choices[number - 1] if 1 <= number <= len(field.choices) else None
    return None


def _parse_number(field: FormField, text: str) -> tuple[Any, str | None]:
    """A JSON-like number from text already cut to ``MAX_VALUE_CHARS``; whole numbers stay ints."""
    try:
        number = float(text)
    except ValueError:
        return None, "must be a number" if field.type == "number" else "must be a whole number (integer)"
    # int() of a long digit string is slow and past 4300 digits raises; 30 digits is plenty for a count.
    return (int(text) if _WHOLE.fullmatch(text) else number), None


def parse_text(field: FormField, text: str, *, by_position: bool = True) -> tuple[Any, str | None]:
    """A typed value from what a person typed (or a shown answer), then checked: (value, problem).

    Text longer than the field's ``value_limit`` is refused before any other work.
    """
    stripped = text.strip()
    if len(stripped) > value_limit(field):
        return None, _too_long(field)
    value: Any
    if field.type == "boolean":
        folded = stripped.casefold()
        if folded in TRUE_TOKENS:
            value = True
        elif folded in FALSE_TOKENS:
            value = False
        else:
            return None, "must be yes or no"
    elif field.type in ("number", "integer"):
        value, problem = _parse_number(field, stripped)
        if problem is not None:
            return None, problem
    elif field.type == "array":
        picked = _pick_many(field, stripped, by_position)
        if picked is None:
            return None, f"may only hold: {_choice_list(field)}{_how(by_position)}"
        value = list(dict.fromkeys(choice.value for choice in picked))
    elif field.choices:
        choice = _choice_for(field, stripped, by_position=by_position)
        if choice is None:
            return None, f"must be one of: {_choice_list(field)}{_how(by_position)}"
        value = choice.value
    else:
        value = stripped
    problem = check_value(field, value)
    return (None, problem) if problem else (_typed(field, value), None)


def _how(by_position: bool) -> str:
    return " (by number or name)" if by_position else ""


def _pick_many(field: FormField, text: str, by_position: bool) -> list[Choice] | None:
    """The choices text names: all of it one title (it may hold a space), else one per line (titles
    with commas), else one per comma- or space-separated token; None when some piece names none."""
    whole = _choice_for(field, text, by_position=by_position)
    if whole is not None or not text:
        return [whole] if whole is not None else []
    for pieces in (text.splitlines(), _SEPARATORS.split(text)):
        picked = [_choice_for(field, piece, by_position=by_position) for piece in pieces if piece.strip()]
        if picked and all(choice is not None for choice in picked):
            return [choice for choice in picked if choice is not None]
    return None


def value_from_answer(
    field: FormField, answer: list[str], *, by_position: bool = False
) -> tuple[Any, str | None]:
    """A typed value from an answer list as shown to people (a control press, a 003 selection).

    Each entry of a multi-select is one choice by title or value (a title may hold commas); a number
    is a position only for text typed against the numbered form (``by_position``).
    """
    if not answer:
        return None, None
    if field.type == "array":
        if len(answer) == 1 and by_position:
            return parse_text(field, answer[0])
        if sum(len(entry) for entry in answer) > MAX_VALUE_CHARS:
            return None, _too_long(field)
        picked = [_choice_for(field, entry, by_position=by_position) for entry in answer]
        if any(choice is None for choice in picked):
            return None, f"may only hold: {_choice_list(field)}"
        value = list(dict.fromkeys(choice.value for choice in picked if choice is not None))
        problem = check_value(field, value)
        return (None, problem) if problem else (value, None)
    if len(answer) != 1:
        return None, "takes exactly one value"
    return parse_text(field, answer[0], by_position=by_position)


def shown(field: FormField, value: Any) -> list[str]:
    """A typed value as people see it: a choice's title, Yes/No, a number without a needless ``.0``."""
    if value is None:
        return []
    if field.type == "boolean":
        return [YES if value else NO]
    if field.type in ("number", "integer"):
        return [_number_text(value) if float(value).is_integer() else str(value)]
    labels = {choice.value: choice.label for choice in field.choices}
    if field.type == "array":
        return [labels.get(item, item) for item in value]
    return [labels.get(value, value)]


def parse_lines(fields: list[FormField], text: str) -> dict[str, str] | None:
    """``name: value`` lines (name or title, any case) as {property: text}; None unless every line is one.

    A name wins over a title that reads the same (``check_schema`` refuses such forms; this keeps any
    stored before that rule deterministic).
    """
    by_key = {field.title.casefold(): field.name for field in fields}
    by_key.update({field.name.casefold(): field.name for field in fields})
    return named_lines(by_key, text)


# Description --------------------------------------------------------------------------------------


def constraints(field: FormField) -> list[str]:
    """What a person needs to know to give a valid value, in words."""
    parts: list[str] = []
    if field.type == "array":
        parts.append("pick any")
        if field.min_items is not None:
            parts.append(f"at least {field.min_items}")
        if field.max_items is not None:
            parts.append(f"at most {field.max_items}")
    elif field.choices or field.type == "boolean":
        parts.append("pick one")
    if field.type == "string" and not field.choices:
        parts.append(FORMAT_WORDS.get(field.format or "", "text"))
        if field.min_length is not None:
            parts.append(f"at least {field.min_length} characters")
        if field.max_length is not None:
            parts.append(f"at most {field.max_length} characters")
    if field.type in ("number", "integer"):
        parts.append("a whole number" if field.type == "integer" else "a number")
        if field.minimum is not None:
            parts.append(f"at least {_number_text(field.minimum)}")
        if field.maximum is not None:
            parts.append(f"at most {_number_text(field.maximum)}")
    if field.default is not None:
        parts.append(f"default {', '.join(shown(field, field.default))}")
    parts.append("required" if field.required else "optional")
    return parts


def field_line(number: int, field: FormField) -> str:
    """``2. Replicas (replicas) — integer: a whole number, at least 1, required``."""
    name = "" if field.title == field.name else f" ({field.name})"
    return f"{number}. {field.title}{name} — {field.type}: {', '.join(constraints(field))}"


def field_text(number: int, field: FormField) -> str:
    """A field as the text rendering shows it: its line, its description, then its options numbered."""
    lines = [field_line(number, field)]
    if field.description:
        lines.append(f"   {field.description}")
    lines.extend(f"     {index}. {label}" for index, label in enumerate(field.labels, start=1))
    return "\n".join(lines)


def form_text(message: str, fields: list[FormField]) -> str:
    """The form as text (seed 000 style): the message, then each field numbered."""
    return "\n\n".join(
        [message, *(field_text(number, field) for number, field in enumerate(fields, start=1))]
    )
