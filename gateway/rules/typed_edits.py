"""A typed edit of an approval's call: ``edit {"command": "ls"}`` (the arguments in full, as JSON) or
``name: value`` lines (``edit`` first, or not), each naming an argument the call (or its schema) has.

Pure and linear in the reply's length. A reply that is not an edit is read as the approval reads any other
reply: approve tokens approve, anything else denies.
"""

from __future__ import annotations

from typing import Any

from gateway.base.jsonbody import parse_typed
from gateway.base.models import Prompt
from gateway.base.named_lines import named_lines

EDIT_WORD = "edit"


class NotAnEdit(Exception):
    """Raised with what is wrong when a reply starts with ``edit`` but gives no usable arguments."""


def argument_names(prompt: Prompt) -> list[str]:
    """The argument names a typed line may set: the call's own, then those its schema declares."""
    names = list(prompt.tool_call.arguments) if prompt.tool_call else []
    properties = (prompt.input_schema or {}).get("properties")
    if isinstance(properties, dict):
        names += [name for name in properties if isinstance(name, str) and name not in names]
    return names


def typed_edit(prompt: Prompt, text: str) -> dict[str, Any] | None:
    """The call's arguments as ``text`` edits them; None when ``text`` is not an edit (or the prompt takes
    none); ``NotAnEdit`` when it starts with ``edit`` but cannot be read."""
    if not prompt.editable or prompt.tool_call is None:
        return None
    stripped = text.strip()
    head = stripped.split(None, 1)[0] if stripped else ""
    explicit = head.casefold() == EDIT_WORD
    body = stripped[len(head) :].strip() if explicit else stripped
    if explicit and body.startswith("{"):
        try:
            value = parse_typed(body)
        except ValueError as exc:
            raise NotAnEdit(f"the arguments after edit are not usable JSON ({exc})") from None
        if not isinstance(value, dict):
            raise NotAnEdit("the arguments after edit must be a JSON object")
        return value
    lines = _lines(argument_names(prompt), body)
    if lines is None:
        if explicit:
            raise NotAnEdit(f"write edit {{…}} or lines like {_example(prompt)}")
        return None
    edited = dict(prompt.tool_call.arguments)
    for name, raw in lines.items():
        edited[name] = _value(prompt.tool_call.arguments.get(name), raw)
    return edited


def form_arguments(prompt: Prompt, fields: dict[str, list[str]]) -> dict[str, Any]:
    """The call's arguments as an edit form gives them (each argument's value as typed, in a list, as
    platform forms hand them over); ``NotAnEdit`` when the prompt takes no edits or a name is not one of
    its arguments. Values are read as a typed line's are (text where the argument was text)."""
    if not prompt.editable or prompt.tool_call is None:
        raise NotAnEdit("this approval was not raised editable")
    names = argument_names(prompt)
    unknown = [name for name in fields if name not in names]
    if unknown:
        raise NotAnEdit(f"{unknown[0]} is not an argument of {prompt.tool_call.name}")
    edited = dict(prompt.tool_call.arguments)
    for name, given in fields.items():
        edited[name] = _value(prompt.tool_call.arguments.get(name), given[0] if given else "")
    return edited


def _lines(names: list[str], text: str) -> dict[str, str] | None:
    """``name: value`` lines as {name: raw}; None unless every non-empty line names an argument."""
    return named_lines({name.casefold(): name for name in names}, text)


def _value(current: Any, raw: str) -> Any:
    """A typed value: text where the argument was text (or absent), else read as JSON when it parses
    (what does not is kept as typed, for the edit's check to refuse as not of the argument's type)."""
    if current is None or isinstance(current, str):
        return raw
    try:
        return parse_typed(raw)
    except ValueError:
        return raw


def _example(prompt: Prompt) -> str:
    names = argument_names(prompt)
    return f"{names[0]}: …" if names else "name: value"
