"""What the store can keep, checked in one place: the values a person's edit makes are held to a request
body's limits (valid Unicode, depth, finite numbers), and refused as "not taken" instead of failing later."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.base import storable
from gateway.base.jsonbody import parse_typed
from gateway.base.models import APPROVE, Prompt, PromptKind, Question, ToolCall
from gateway.rules.replies import ReplyAction, read_reply
from gateway.rules.verdicts import EditRefused, check_edit

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def deep_object(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "naïve ✓ 😀",
        {"command": "ls", "n": 3, "ok": True, "x": None, "f": 1.5},
        nested(storable.MAX_DEPTH - 1),
        deep_object(storable.MAX_DEPTH - 1),
        [1e308, -1e308],
    ],
)
def test_values_the_store_can_keep_pass(value: Any) -> None:
    storable.check(value)
    assert storable.problem(value) is None


@pytest.mark.parametrize(
    ("value", "problem", "path"),
    [
        ("ls \ud800", storable.LONE_SURROGATE, ""),
        ("\udfff", storable.LONE_SURROGATE, ""),
        ({"command": "ls \udc00"}, storable.LONE_SURROGATE, "command"),
        ({"a": [1, {"b": "x\ud83d"}]}, storable.LONE_SURROGATE, "a.1.b"),
        ({"key \ud800": 1}, storable.LONE_SURROGATE, ""),
        ({"n": float("inf")}, storable.TOO_LARGE, "n"),
        ([float("-inf")], storable.TOO_LARGE, "0"),
        ({"n": float("nan")}, storable.TOO_LARGE, "n"),
        (nested(storable.MAX_DEPTH + 1), storable.too_deep(), "0." * 7 + "0.…"),
        (deep_object(900), storable.too_deep(), "k." * 7 + "k.…"),
        (nested(100_000), storable.too_deep(), "0." * 7 + "0.…"),
    ],
)
def test_values_the_store_cannot_keep_are_refused_saying_what_and_where(
    value: Any, problem: str, path: str
) -> None:
    with pytest.raises(storable.NotStorable) as raised:
        storable.check(value)
    assert (raised.value.problem, raised.value.path) == (problem, path)


def test_the_first_part_of_a_message_that_cannot_be_kept_is_named() -> None:
    assert storable.first_problem("hi", None, {"a": 1}) is None
    found = storable.first_problem("hi", "\ud800", nested(40))
    assert found is not None and found.problem == storable.LONE_SURROGATE


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"command": "ls \\ud800"}', storable.LONE_SURROGATE),
        ('{"command": "\\udc00"}', storable.LONE_SURROGATE),
        ('{"command": ' + "[" * 900 + "]" * 900 + "}", storable.too_deep()),
        ("[" * 100_000, storable.too_deep()),
        ('{"n": 1e999}', storable.TOO_LARGE),
        ('{"n": NaN}', "NaN is not JSON"),
        ("{x", "Expecting property name enclosed in double quotes"),
    ],
)
def test_typed_json_is_held_to_a_bodys_limits(text: str, why: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_typed(text)
    assert str(raised.value) == why


def editable(arguments: dict[str, Any], schema: dict[str, Any] | None = None) -> Prompt:
    return Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="web:room",
        agent="ops",
        kind=PromptKind.APPROVAL,
        questions=[Question(question="Allow it?")],
        tool_call=ToolCall(name="Bash", arguments=arguments),
        editable=True,
        input_schema=schema,
        created_at=NOW,
        expires_at=NOW,
    )


POISON_EDITS = [
    pytest.param('edit {"command": "ls \\ud800"}', id="lone-surrogate-escape"),
    pytest.param('edit {"command": "\\udfff"}', id="low-surrogate-escape"),
    pytest.param('edit {"command": ' + "[" * 900 + "]" * 900 + "}", id="nested-900"),
    pytest.param('edit {"command": ' + "[" * 33 + "]" * 33 + "}", id="nested-33"),
    pytest.param('edit {"command": 1e999}', id="infinite-number"),
    pytest.param('timeout: {"a": "\\ud800"}', id="line-value-surrogate"),
    pytest.param("timeout: " + "[" * 40 + "]" * 40, id="line-value-deep"),
]


@pytest.mark.parametrize("text", POISON_EDITS)
def test_a_typed_edit_the_store_cannot_keep_is_not_taken(text: str) -> None:
    reading = read_reply(editable({"command": "ls", "timeout": 30}), text, None)
    assert reading.action is ReplyAction.INVALID
    assert reading.edited is None
    assert reading.notice is not None and reading.notice.startswith("Not taken: ")


@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "ls \ud800"},
        {"command": nested(40)},
        {"command": deep_object(storable.MAX_DEPTH)},
        {"timeout": float("inf")},
        {"k\udc00": "v"},
    ],
)
@pytest.mark.parametrize("schema", [None, {"type": "object"}])
def test_edited_arguments_from_a_control_or_rest_are_checked_before_anything_else(
    arguments: dict[str, Any], schema: dict[str, Any] | None
) -> None:
    prompt = editable({"command": "ls", "timeout": 30}, schema)
    with pytest.raises(EditRefused) as raised:
        check_edit(prompt, arguments)
    assert raised.value.code == "VALIDATION_FAILED"
    assert "cannot be kept" in raised.value.message
    reading = read_reply(prompt, APPROVE, None, arguments=arguments)
    assert (reading.action, reading.edited) == (ReplyAction.INVALID, None)
